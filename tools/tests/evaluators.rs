//! The evaluators against each other: sweep and differential agree on every
//! query along random playouts, the lanes evaluator makes exactly the scalar
//! driver's moves on the same random streams, and flat Monte-Carlo with a
//! playout budget is deterministic for a seed and a thread count. Run on the
//! built-in game and, when the corpus is present, on tic-tac-toe, breakthrough,
//! a game whose circuit has cycles, three games whose legality the
//! differential evaluator keeps through guards (gomoku, hex, speedChess), and
//! reversi, whose goals (piece counts) it evaluates only when asked, and
//! amazons_10x10, whose terminal test reads every legal move.

use ggpnet::propnet::driver::{monte_carlo, Budget, McConfig};
use ggpnet::propnet::evaluator::EvaluatorKind;
use ggpnet::propnet::random::Stream;
use ggpnet::propnet::{load, Loaded, Move, StateMachine};
use ggpnet_tools::differential::lanes_against_scalar;
use std::sync::Arc;

/// The built-in game, and the corpus games when the corpus is present.
fn games() -> Vec<(String, Loaded)> {
    let mut sources = vec![("connect_four".to_owned(), ggpnet::DEFAULT_GAME.to_owned())];
    if let Some(corpus) = ggpnet_tools::corpus::for_test("testing the evaluators on the built-in game only") {
        for name in [
            "ticTacToe",
            "breakthrough",
            "atariGoVariant_7x7",
            "gomoku_15x15",
            "hex",
            "speedChess",
            "englishDraughts",
            "reversi",
            "amazons_10x10",
        ] {
            let path = corpus.join("games").join(format!("{name}.kif"));
            let source = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            sources.push((name.to_owned(), source));
        }
    }
    sources
        .into_iter()
        .map(|(name, source)| {
            let loaded = load(&source, &Default::default()).unwrap_or_else(|e| panic!("{name}: {e}"));
            (name, loaded)
        })
        .collect()
}

#[test]
fn cyclic_game_has_cycles() {
    // The game chosen to exercise cyclic components must still have some.
    if let Some((_, loaded)) = games().into_iter().find(|(n, _)| n == "atariGoVariant_7x7") {
        assert!(
            loaded.report.sccs > 0,
            "atariGoVariant_7x7 no longer has cyclic components"
        );
    }
}

#[test]
fn sweep_and_differential_agree_along_random_playouts() {
    for (name, loaded) in games() {
        let mut sweep = StateMachine::with_evaluator(Arc::clone(&loaded.game), EvaluatorKind::Sweep);
        let mut differential =
            StateMachine::with_evaluator(Arc::clone(&loaded.game), EvaluatorKind::Differential);
        let mut rng = Stream::new(3, 0);
        let roles = sweep.roles().len();
        let mut steps = 0;
        for playout in 0..20 {
            let mut state = sweep.initial_state();
            for step in 0..300 {
                let at = format!("{name} playout {playout} step {step}");
                let terminal = sweep.is_terminal(&state);
                assert_eq!(terminal, differential.is_terminal(&state), "{at}: terminal");
                assert_eq!(sweep.goals(&state), differential.goals(&state), "{at}: goals");
                if terminal {
                    break;
                }
                let mut joint: Vec<Move> = Vec::new();
                for role in 0..roles {
                    let legal = sweep.legal_moves(&state, role);
                    assert_eq!(
                        legal,
                        differential.legal_moves(&state, role),
                        "{at}: legal moves of role {role}"
                    );
                    assert!(!legal.is_empty(), "{at}: role {role} has no legal move");
                    // A random legal move is the drawn entry of the legal list, in both.
                    let expected = legal[rng.clone().draw(legal.len())];
                    for machine in [&mut sweep, &mut differential] {
                        let drawn = machine.random_legal_move(&state, role, &mut rng.clone());
                        assert_eq!(drawn, Some(expected), "{at}: random legal move of role {role}");
                    }
                    joint.push(legal[rng.draw(legal.len())]);
                }
                let next = sweep.next_state(&state, &joint).expect("legal joint move");
                assert_eq!(
                    next,
                    differential.next_state(&state, &joint).expect("legal"),
                    "{at}: next state"
                );
                state = next;
                steps += 1;
            }
        }
        assert!(steps > 20, "{name}: only {steps} steps compared");
    }
}

#[test]
fn lanes_make_the_scalar_drivers_moves() {
    for (name, loaded) in games() {
        for seed in [1, 99] {
            let report = lanes_against_scalar(&loaded.game, seed, 120);
            assert_eq!(report.first_difference, None, "{name}, seed {seed}");
            assert_eq!(
                report.steps,
                report.playouts * 120,
                "{name}: every checked step compared"
            );
            assert!(report.playouts >= 16, "{name}: {} lanes checked", report.playouts);
        }
    }
}

/// A game of `cells` cells that two roles mark in turn, one each turn, until
/// none is empty: the role to move has one legal move per empty cell.
fn marking_game(cells: usize) -> String {
    let mut kif = String::from("(role a) (role b) (init (control a))\n");
    for c in 1..=cells {
        kif.push_str(&format!("(init (cell {c} e)) "));
    }
    kif.push_str(
        "(<= (legal ?r (mark ?c)) (true (control ?r)) (true (cell ?c e)))
         (<= (legal a noop) (true (control b))) (<= (legal b noop) (true (control a)))
         (<= (next (cell ?c ?r)) (does ?r (mark ?c)))
         (<= (next (cell ?c ?x)) (true (cell ?c ?x)) (not (marked ?c)))
         (<= (marked ?c) (does ?r (mark ?c)))
         (<= (next (control a)) (true (control b))) (<= (next (control b)) (true (control a)))
         (<= open (true (cell ?c e))) (<= terminal (not open))
         (goal a 50) (goal b 50)",
    );
    kif
}

#[test]
fn lanes_make_the_scalar_drivers_moves_among_hundreds() {
    // 600 moves per role: counts of legal moves take two bytes (10 planes).
    let loaded = load(&marking_game(600), &Default::default()).expect("the marking game loads");
    let report = lanes_against_scalar(&loaded.game, 5, 40);
    assert_eq!(report.first_difference, None);
    assert_eq!(report.steps, report.playouts * 40);
}

#[test]
fn playout_budget_runs_are_deterministic() {
    let (_, loaded) = games().into_iter().next().expect("the built-in game");
    for evaluator in EvaluatorKind::ALL {
        let run = |seed, threads| {
            let config = McConfig::new(Budget::Playouts(600))
                .expect("a valid budget")
                .evaluator(evaluator.into())
                .threads(threads)
                .expect("valid threads")
                .seed(seed);
            monte_carlo(&loaded.game, &config).expect("a run").totals
        };
        let first = run(7, 2);
        assert!(first.playouts >= 600, "{evaluator}: {} playouts", first.playouts);
        assert_eq!(
            first,
            run(7, 2),
            "{evaluator}: same seed and threads, same totals"
        );
        assert_ne!(
            first.transitions,
            run(8, 2).transitions,
            "{evaluator}: another seed, other playouts"
        );
    }
}

#[test]
fn scalar_and_lanes_statistics_agree() {
    // Different random streams, the same game: mean depth and goals within noise.
    let (_, loaded) = games().into_iter().next().expect("the built-in game");
    let run = |evaluator: EvaluatorKind| {
        let config = McConfig::new(Budget::Playouts(4000))
            .expect("a valid budget")
            .evaluator(evaluator.into())
            .seed(5);
        monte_carlo(&loaded.game, &config).expect("a run")
    };
    let (scalar, lanes) = (run(EvaluatorKind::Differential), run(EvaluatorKind::Lanes));
    assert!(
        (scalar.avg_depth() - lanes.avg_depth()).abs() < 1.5,
        "{} vs {}",
        scalar.avg_depth(),
        lanes.avg_depth()
    );
    assert_eq!(scalar.totals.missing_goals, lanes.totals.missing_goals);
    for (a, b) in scalar.avg_goals().iter().zip(lanes.avg_goals()) {
        let (a, b) = (a.expect("a goal"), b.expect("a goal"));
        assert!((a - b).abs() < 5.0, "mean goals {a} vs {b}");
    }
}

#[test]
fn unknown_evaluator_is_refused() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_ggpnet"))
        .args(["mc", "--evaluator", "quantum", "--seconds", "0.1"])
        .output()
        .expect("ggpnet runs");
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("unknown evaluator 'quantum'"), "{stderr}");
}

#[test]
fn optimizer_pass_options_are_checked() {
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_ggpnet"))
            .args(args)
            .output()
            .expect("ggpnet runs")
    };
    for switch in ["--with", "--without"] {
        let output = run(&[switch, "quantum", "stats"]);
        assert_eq!(output.status.code(), Some(2), "{switch}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("unknown optimizer pass 'quantum'"), "{stderr}");
    }
    // Every pass name is accepted both ways, and a run with more passes is never larger.
    let components = |args: &[&str]| -> u64 {
        let output = run(args);
        assert!(
            output.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let json: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
        json["components"]
            .as_object()
            .expect("components")
            .values()
            .map(|v| v.as_u64().unwrap())
            .sum()
    };
    let default = components(&["stats", "--json"]);
    let all = components(&[
        "--with",
        "exclusive-bases",
        "stats",
        "--json",
        "--ground-threads",
        "2",
    ]);
    assert!(all <= default, "{all} > {default}");
    let without_all = components(&[
        "--without",
        "constants,collapse,merge,dead,factor,exclusive-inputs,reachable,exclusive-bases",
        "stats",
        "--json",
    ]);
    assert!(default < without_all, "{default} >= {without_all}");
}

/// Marking game whose "cell c is blank and it is x's turn" is both x's legality
/// of `(mark c)` and the next value of `(seen c)`: the differential evaluator,
/// which leaves an `and` read only as legality unevaluated under a guard (here,
/// whose turn it is), must still compute it for the next state. Found by the
/// `game` fuzz target; its goals and terminal read such gates too.
const LEGALITY_THAT_IS_A_NEXT_VALUE: &str = "
    (role x) (role o)
    (cell 1) (cell 2) (cell 3) (cell 4) (cell 5) (cell 6) (cell 7) (cell 8) (cell 9)
    (init (control x))
    (<= (init (blank ?c)) (cell ?c))
    (<= (legal ?p (mark ?c)) (true (blank ?c)) (true (control ?p)))
    (<= (legal x noop) (true (control o)))
    (<= (legal o noop) (true (control x)))
    (<= (next (blank ?c)) (true (blank ?c)) (not (marked ?c)))
    (<= (marked ?c) (does ?p (mark ?c)))
    (<= (next (owner ?c ?p)) (does ?p (mark ?c)))
    (<= (next (owner ?c ?p)) (true (owner ?c ?p)))
    (<= (next (control o)) (true (control x)))
    (<= (next (control x)) (true (control o)))
    (<= (next (seen ?c)) (true (blank ?c)) (true (control x)))
    (<= open (true (blank ?c)))
    (<= terminal (not open))
    (<= terminal (true (blank 9)) (true (control o)) (true (owner 1 x)))
    (<= (goal x 50) (true (blank 5)) (true (control x)))
    (<= (goal x 0) (not (true (blank 5))))
    (<= (goal x 0) (true (control o)))
    (<= (goal o 50) (true (control x)))
    (<= (goal o 0) (true (control o)))";

#[test]
fn a_legality_that_is_also_a_next_value_goal_or_terminal_is_computed() {
    let loaded = load(LEGALITY_THAT_IS_A_NEXT_VALUE, &Default::default()).expect("the game loads");
    let description = ggpnet::kif::parse(LEGALITY_THAT_IS_A_NEXT_VALUE).expect("the game parses");
    let reference = ggpnet_reference::Reference::new(&description).expect("the reference loads it");
    let report = ggpnet_tools::differential::differential(&loaded, &reference, 20, 30, 1);
    assert_eq!(report.first_difference, None);
    let report = ggpnet_tools::differential::evaluators_agree(&loaded.game, 20, 30, 1);
    assert_eq!(report.first_difference, None);
}
