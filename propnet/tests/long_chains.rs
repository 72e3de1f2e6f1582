//! Circuits with chains of gates far deeper than a thread's stack would hold
//! if anything recursed once per gate: loaded, optimized, compiled, exported
//! and evaluated by every evaluator on a rayon worker thread (2 MiB of stack).

use ggpnet_propnet::driver::{monte_carlo, perft, Budget, McConfig};
use ggpnet_propnet::evaluator::EvaluatorKind;
use ggpnet_propnet::export::{aiger, cone, dot, json};
use ggpnet_propnet::inspect::breakdown;
use ggpnet_propnet::opt::Pass;
use ggpnet_propnet::{load, LoadConfig, Loaded, OptimizeConfig, StateMachine};
use std::sync::Arc;

/// How long the chains are.
const CHAIN: usize = 100_000;

/// A one-player game of three steps with three chains of `CHAIN` derived
/// propositions each, `(p 1)` from `(p 0)`, `(p 2)` from `(p 1)`, ... (one rule
/// over `link` facts, which grounds in linear time): `p` from the state to
/// terminal, `q` from a move to a next value (the part that depends on moves),
/// `g` from the state to the goal (read only on the way to goals). Each link
/// becomes a gate unless the optimizer collapses it.
fn chain_game() -> String {
    let mut gdl = String::from(
        "(role r) (init (step 0)) (succ 0 1) (succ 1 2) (succ 2 3)
         (<= (legal r go) (true (step ?x)))
         (<= (legal r wait) (true (step ?x)))
         (<= (next (step ?y)) (true (step ?x)) (succ ?x ?y))
         (<= (p 0) (true (step 3)))
         (<= (p ?y) (p ?x) (link ?x ?y))
         (<= (q 0) (does r wait))
         (<= (q ?y) (q ?x) (link ?x ?y))
         (<= (g 0) (true (step 3)))
         (<= (g ?y) (g ?x) (link ?x ?y))\n",
    );
    for i in 1..=CHAIN {
        gdl.push_str(&format!("(link {} {i})\n", i - 1));
    }
    gdl.push_str(&format!(
        "(<= terminal (p {CHAIN})) (<= (next flag) (q {CHAIN})) (<= (goal r 100) (g {CHAIN}))\n"
    ));
    gdl
}

/// Runs `f` on a worker of a rayon pool with the default stack.
fn on_worker<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("a pool of one thread")
        .install(f)
}

/// Plays the game with every scalar evaluator, and flat Monte-Carlo with each
/// evaluator: every playout takes three moves and ends with 100.
fn play_everywhere(loaded: &Loaded) {
    for kind in EvaluatorKind::ALL.into_iter().filter(|k| k.is_scalar()) {
        let mut machine = StateMachine::with_evaluator(Arc::clone(&loaded.game), kind);
        let mut state = machine.initial_state();
        let mut moves = 0;
        while !machine.is_terminal(&state) {
            let legal = machine.legal_moves(&state, 0);
            assert_eq!(legal.len(), 2, "{kind}: both moves legal until the end");
            state = machine.next_state(&state, &legal[..1]).expect("a legal move");
            moves += 1;
            assert!(moves <= 3, "{kind}: the chain ends the game after three moves");
        }
        assert_eq!(moves, 3, "{kind}");
        assert_eq!(machine.goals(&state), vec![vec![100]], "{kind}");
    }
    for kind in EvaluatorKind::ALL {
        let report = monte_carlo(
            &loaded.game,
            &McConfig::new(Budget::Playouts(200))
                .expect("a valid budget")
                .evaluator(kind.into())
                .seed(1),
        )
        .expect("a run");
        assert!(report.totals.playouts >= 200, "{kind}: {:?}", report.totals);
        assert_eq!(report.avg_depth(), 3.0, "{kind}");
        assert_eq!(report.avg_goals(), vec![Some(100.0)], "{kind}");
    }
}

#[test]
fn a_long_chain_without_collapse_is_evaluated_on_a_worker_thread() {
    let config = LoadConfig::new().optimize(OptimizeConfig::default().disable(Pass::Collapse));
    let gdl = chain_game();
    on_worker(|| {
        let loaded = load(&gdl, &config).expect("the chain game loads");
        assert!(
            loaded.layering.layers > CHAIN,
            "the chain is kept: {} layers",
            loaded.layering.layers
        );
        play_everywhere(&loaded);
    });
}

#[test]
fn a_long_chain_unoptimized_is_evaluated_on_a_worker_thread() {
    let config = LoadConfig::new().optimize(OptimizeConfig::none());
    let gdl = chain_game();
    on_worker(|| {
        let loaded = load(&gdl, &config).expect("the chain game loads");
        assert!(loaded.layering.layers > CHAIN);
        play_everywhere(&loaded);
    });
}

#[test]
fn a_long_chain_with_every_default_pass_is_evaluated_on_a_worker_thread() {
    let gdl = chain_game();
    on_worker(|| {
        let loaded = load(&gdl, &LoadConfig::default()).expect("the chain game loads");
        play_everywhere(&loaded);
    });
}

#[test]
fn a_long_chain_is_exported_and_inspected_on_a_worker_thread() {
    let config = LoadConfig::new().optimize(OptimizeConfig::default().disable(Pass::Collapse));
    let gdl = chain_game();
    on_worker(|| {
        let loaded = load(&gdl, &config).expect("the chain game loads");
        let (circuit, layering) = (&loaded.circuit, &loaded.layering);
        let outputs = cone::outputs(circuit);
        let terminal = cone::resolve(circuit, &["terminal".to_owned()]).expect("terminal is an output");
        let member = cone::cone(circuit, &terminal);
        assert!(
            member.iter().filter(|&&m| m).count() > CHAIN,
            "the chain feeds terminal"
        );
        let text = dot::write(
            circuit,
            layering,
            &vec![true; circuit.nodes.len()],
            &outputs,
            "chain",
        );
        assert!(text.starts_with("digraph"));
        let aig = aiger::build(circuit, layering, usize::MAX).expect("an and-inverter graph");
        assert!(aig.to_ascii().starts_with("aag"));
        assert!(breakdown(circuit, layering).layer_widths.len() > CHAIN);
    });
}

#[test]
fn a_long_chain_loads_back_from_json_on_a_worker_thread() {
    let config = LoadConfig::new().optimize(OptimizeConfig::default().disable(Pass::Collapse));
    let gdl = chain_game();
    on_worker(|| {
        let loaded = load(&gdl, &config).expect("the chain game loads");
        let text = json::write(&loaded.circuit, &loaded.layering);
        let back = json::load(&text).expect("the chain loads back");
        assert_eq!(back.layering.layers, loaded.layering.layers);
        play_everywhere(&back);
    });
}

/// A circuit file of a game that never ends: one role, one move always legal,
/// one base that toggles.
const ENDLESS: &str = r#"{"format": "ggpnet-circuit", "version": 1, "roles": ["r"],
    "nodes": [{"kind": "base", "inputs": [], "layer": 0}, {"kind": "input", "inputs": [], "layer": 0},
        {"kind": "not", "inputs": [0], "layer": 1}, {"kind": "true", "inputs": [], "layer": 0},
        {"kind": "false", "inputs": [], "layer": 0}],
    "bases": [{"node": 0, "fact": "on", "next": 2, "initial": false}],
    "inputs": [{"node": 1, "role": 0, "move": "go", "legal": 3}],
    "goals": [], "terminal": 4}"#;

#[test]
fn perft_deeper_than_the_stack_counts_on_a_worker_thread() {
    on_worker(|| {
        let loaded = json::load(ENDLESS).expect("the endless game loads");
        for kind in EvaluatorKind::ALL.into_iter().filter(|k| k.is_scalar()) {
            let report = perft(&loaded.game, CHAIN, kind);
            assert_eq!(report.nodes, CHAIN as u64, "{kind}");
            assert!(report.counts.iter().all(|&c| c == 1), "{kind}");
            assert_eq!(report.counts.len(), CHAIN, "{kind}");
        }
    });
}
