//! Criterion benchmarks of every evaluator on the built-in connect four and, when
//! the corpus is present, tic-tac-toe, connect four 7x6, breakthrough and
//! chess_200: one legal-move computation, one state transition and one random
//! playout with each scalar evaluator; one step of all 512 lanes with the lanes
//! evaluator (512 visited states).

use criterion::{criterion_group, criterion_main, Criterion};
use ggpnet::propnet::driver::LanePlayouts;
use ggpnet::propnet::driver::{Playout, PlayoutTotals, DEFAULT_MAX_DEPTH};
use ggpnet::propnet::evaluator::EvaluatorKind;
use ggpnet::propnet::random::Stream;
use ggpnet::propnet::{load, Move, StateMachine};
use std::sync::Arc;

fn games() -> Vec<(String, String)> {
    let mut games = vec![("connect_four".to_owned(), ggpnet::DEFAULT_GAME.to_owned())];
    match ggpnet_tools::corpus::locate(ggpnet_tools::corpus::project_root()) {
        Some(corpus) => {
            for name in ["ticTacToe", "connectFour_7x6", "breakthrough", "chess_200"] {
                let path = corpus.join("games").join(format!("{name}.kif"));
                match std::fs::read_to_string(&path) {
                    Ok(source) => games.push((name.to_owned(), source)),
                    Err(e) => eprintln!("note: skipping {}: {e}", path.display()),
                }
            }
        }
        None => eprintln!("note: no corpus found; benchmarking the built-in game only"),
    }
    games
}

fn bench(c: &mut Criterion) {
    for (name, source) in games() {
        let loaded = load(&source, &Default::default()).expect("benchmark game loads");
        let game = Arc::clone(&loaded.game);
        for kind in [EvaluatorKind::Sweep, EvaluatorKind::Differential] {
            let mut machine = StateMachine::with_evaluator(Arc::clone(&game), kind);
            let start = machine.initial_state();
            let first: Vec<Move> = (0..machine.roles().len())
                .map(|r| machine.legal_moves(&start, r)[0])
                .collect();
            let second = machine.next_state(&start, &first).expect("legal");
            c.bench_function(&format!("{name}/{kind}/legal_moves"), |b| {
                let mut flip = false;
                b.iter(|| {
                    // Alternate states so the evaluator cannot reuse its last result.
                    flip = !flip;
                    let state = if flip { &start } else { &second };
                    machine.legal_moves(state, 0).len()
                })
            });
            c.bench_function(&format!("{name}/{kind}/next_state"), |b| {
                let mut next = start.clone();
                b.iter(|| {
                    machine.legal_moves(&start, 0);
                    machine.next_into(&first, &mut next);
                })
            });
            c.bench_function(&format!("{name}/{kind}/playout"), |b| {
                let mut playout = Playout::new(&machine, DEFAULT_MAX_DEPTH);
                let mut rng = Stream::new(1, 0);
                let mut totals = PlayoutTotals::new(game.roles().len());
                b.iter(|| playout.run(&mut machine, &mut rng, &mut totals, |_, _| {}))
            });
        }
        let mut lanes = LanePlayouts::new(Arc::clone(&game), game.initial(), (1, 0), DEFAULT_MAX_DEPTH);
        c.bench_function(&format!("{name}/lanes/step_512"), |b| b.iter(|| lanes.step()));
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
