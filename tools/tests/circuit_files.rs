//! Circuit files (the JSON export) broken on purpose, one invariant of the
//! evaluators at a time, starting from ticTacToe's real export: the library
//! refuses each with the place and the reason, and `ggpnet perft` and
//! `ggpnet mc` exit with that error (code 2), never a panic or an abort. And a
//! file with a chain of 100,000 negations in front of terminal plays like the
//! original on a rayon worker's stack.
//!
//! The game comes from the shared corpus (`../shared` or `$GGPNET_CORPUS`);
//! without it the tests print a notice and pass, unless `GGPNET_REQUIRE_CORPUS=1`.

mod scratch;

use ggpnet::propnet::driver::{monte_carlo, perft, Budget, McConfig};
use ggpnet::propnet::evaluator::EvaluatorKind;
use ggpnet::propnet::export::json;
use ggpnet::propnet::{load, LoadConfig};
use serde_json::{json, Value};
use std::process::{Command, Output};

/// ticTacToe's circuit as exported, or `None` without the corpus.
fn tic_tac_toe() -> Option<Value> {
    let corpus = ggpnet_tools::corpus::for_test("skipping the corpus circuit")?;
    let path = corpus.join("games").join("ticTacToe.kif");
    let source = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let loaded = load(&source, &LoadConfig::default()).expect("ticTacToe loads");
    Some(serde_json::from_str(&json::write(&loaded.circuit, &loaded.layering)).expect("the export is JSON"))
}

fn scratch(test: &str) -> scratch::Dir {
    scratch::dir(&format!("circuit-files-{test}"))
}

fn ggpnet(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ggpnet"))
        .args(args)
        .output()
        .unwrap()
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Appends a node and returns its id.
fn add_node(file: &mut Value, kind: &str, inputs: &[u64]) -> u64 {
    let nodes = file["nodes"].as_array_mut().unwrap();
    nodes.push(json!({"kind": kind, "inputs": inputs, "layer": 0}));
    nodes.len() as u64 - 1
}

fn count(file: &Value, list: &str) -> u64 {
    file[list].as_array().unwrap().len() as u64
}

/// The node of input `m`.
fn input_node(file: &Value, m: usize) -> u64 {
    file["inputs"][m]["node"].as_u64().unwrap()
}

/// Every output and transition read from node 0, and the nodes after the
/// bases and inputs gone: a circuit of nothing but its interface.
fn interface_only(file: &mut Value) {
    let interface = (count(file, "bases") + count(file, "inputs")) as usize;
    file["nodes"].as_array_mut().unwrap().truncate(interface);
    for base in file["bases"].as_array_mut().unwrap() {
        base["next"] = 0.into();
    }
    for input in file["inputs"].as_array_mut().unwrap() {
        input["legal"] = 0.into();
    }
    for goal in file["goals"].as_array_mut().unwrap() {
        goal["node"] = 0.into();
    }
    file["terminal"] = 0.into();
}

/// A broken copy of the circuit: what it breaks, the edit, and the error expected.
struct Broken {
    name: &'static str,
    edit: fn(&mut Value),
    expected: &'static [&'static str],
}

const BROKEN: &[Broken] = &[
    Broken {
        name: "terminal on a move",
        edit: |f| {
            let input = input_node(f, 0);
            f["terminal"] = add_node(f, "not", &[input]).into();
        },
        expected: &[
            "terminal: node ",
            " (not) depends on the move input 0 (does xplayer (mark 1 1))",
            "legality, goals and terminal may depend on the state only",
        ],
    },
    Broken {
        name: "legality on a move",
        edit: |f| {
            let input = input_node(f, 0);
            f["inputs"][3]["legal"] = add_node(f, "or", &[0, input]).into();
        },
        expected: &[
            "legality of input 3: node ",
            " (or) depends on the move input 0 (does xplayer (mark 1 1))",
        ],
    },
    Broken {
        name: "goal on a move",
        edit: |f| f["goals"][0]["node"] = input_node(f, 1).into(),
        expected: &["goal 0: is the move input 1 (does xplayer (mark 1 2))"],
    },
    Broken {
        name: "goal on a move through a cycle",
        edit: |f| {
            let input = input_node(f, 2);
            let or = add_node(f, "or", &[input]);
            let and = add_node(f, "and", &[or, 0]);
            f["nodes"][or as usize]["inputs"] = json!([input, and]);
            f["goals"][1]["node"] = and.into();
        },
        expected: &[
            "goal 1: node ",
            " (and) depends on the move input 2 (does xplayer (mark 1 3))",
        ],
    },
    Broken {
        name: "an input without a node",
        edit: |f| {
            interface_only(f);
            let node = count(f, "bases") + count(f, "inputs");
            let inputs = f["inputs"].as_array_mut().unwrap();
            inputs.push(json!({"node": node, "role": 0, "move": "(extra)", "legal": 0}));
        },
        expected: &["circuit: 29 bases and 21 inputs take the first nodes, but there are only 49 nodes"],
    },
    Broken {
        name: "a base without a node",
        edit: |f| {
            f["inputs"] = json!([]);
            interface_only(f);
            let node = count(f, "bases");
            let bases = f["bases"].as_array_mut().unwrap();
            bases.push(json!({"node": node, "fact": "(extra)", "next": 0, "initial": false}));
        },
        expected: &["circuit: 30 bases and 0 inputs take the first nodes, but there are only 29 nodes"],
    },
    Broken {
        name: "two bases of one fact",
        edit: |f| f["bases"][1]["fact"] = f["bases"][0]["fact"].clone(),
        expected: &["base 1: its fact (cell 1 1 b) is base 0's too"],
    },
    Broken {
        name: "two inputs of one move",
        edit: |f| f["inputs"][1]["move"] = f["inputs"][0]["move"].clone(),
        expected: &["input 1: its move (mark 1 1) of role 0 is input 0 too"],
    },
    Broken {
        name: "two roles of one name",
        edit: |f| f["roles"][1] = f["roles"][0].clone(),
        expected: &["role 1: xplayer is role 0 too"],
    },
    Broken {
        name: "a gate reading a missing node",
        edit: |f| {
            add_node(f, "or", &[0, 99_999]);
        },
        expected: &[": node 99999 does not exist"],
    },
    Broken {
        name: "a negation of two nodes",
        edit: |f| {
            add_node(f, "not", &[0, 1]);
        },
        expected: &["a 'not' node cannot read 2 node(s)"],
    },
    Broken {
        name: "a goal of no role",
        edit: |f| f["goals"][0]["role"] = 5.into(),
        expected: &["goal 0: role 5 does not exist (2 roles)"],
    },
    Broken {
        name: "a cycle through a negation",
        edit: |f| {
            let not = add_node(f, "not", &[0]);
            f["nodes"][not as usize]["inputs"] = json!([not]);
        },
        expected: &["unstratified negation"],
    },
];

#[test]
fn broken_circuit_files_are_refused_with_the_place_and_the_reason() {
    let Some(original) = tic_tac_toe() else {
        return;
    };
    assert_eq!(
        count(&original, "bases"),
        29,
        "ticTacToe as these tests expect it"
    );
    assert_eq!(
        count(&original, "inputs"),
        20,
        "ticTacToe as these tests expect it"
    );
    json::load(&original.to_string()).expect("the original loads");
    let dir = scratch("broken");
    for broken in BROKEN {
        let mut file = original.clone();
        (broken.edit)(&mut file);
        let text_of_file = file.to_string();
        let error = match json::load(&text_of_file) {
            Err(e) => e.message,
            Ok(_) => panic!("{}: accepted", broken.name),
        };
        for part in broken.expected {
            assert!(error.contains(part), "{}: {error}", broken.name);
        }
        let path = dir.join("broken.json");
        std::fs::write(&path, &text_of_file).unwrap();
        let path = path.to_str().unwrap();
        for args in [
            vec!["perft", path, "--depth", "2"],
            vec!["mc", path, "--playouts", "10", "--threads", "1"],
        ] {
            let out = ggpnet(&args);
            assert_eq!(
                out.status.code(),
                Some(2),
                "{} ({args:?}): {}",
                broken.name,
                text(&out)
            );
            assert!(
                text(&out).contains(broken.expected[0]),
                "{} ({args:?}): {}",
                broken.name,
                text(&out)
            );
        }
    }
    std::fs::remove_dir_all(dir).ok();
}

/// The interface-only copy loads: what the two files without a node break is the missing node alone.
#[test]
fn a_circuit_of_its_interface_only_loads() {
    let Some(mut file) = tic_tac_toe() else {
        return;
    };
    interface_only(&mut file);
    let loaded = json::load(&file.to_string()).expect("the interface alone loads");
    assert_eq!(loaded.circuit.nodes.len(), 49);
}

/// How long the chain in front of terminal is (even: terminal keeps its value).
const CHAIN: usize = 100_000;

#[test]
fn a_chain_of_negations_plays_like_the_original_on_a_worker_thread() {
    let Some(original) = tic_tac_toe() else {
        return;
    };
    let mut file = original.clone();
    let mut last = file["terminal"].as_u64().unwrap();
    for _ in 0..CHAIN {
        last = add_node(&mut file, "not", &[last]);
    }
    file["terminal"] = last.into();
    let (original, chained) = (original.to_string(), file.to_string());
    let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().unwrap();
    pool.install(|| {
        let plain = json::load(&original).expect("the original loads");
        let long = json::load(&chained).expect("the chained copy loads");
        assert!(long.layering.layers > CHAIN);
        for kind in EvaluatorKind::ALL.into_iter().filter(|k| k.is_scalar()) {
            assert_eq!(
                perft(&long.game, 4, kind).counts,
                perft(&plain.game, 4, kind).counts,
                "{kind}"
            );
        }
        for kind in EvaluatorKind::ALL {
            let config = McConfig::new(Budget::Playouts(300))
                .expect("a valid budget")
                .evaluator(kind.into())
                .seed(3);
            let (a, b) = (
                monte_carlo(&long.game, &config).expect("a run"),
                monte_carlo(&plain.game, &config).expect("a run"),
            );
            assert_eq!(a.totals, b.totals, "{kind}");
        }
    });
}
