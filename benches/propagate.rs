//! Criterion benchmarks of the state machine on the built-in connect four and,
//! when the corpus is present, tic-tac-toe: one legal-move computation, one state
//! transition, one random playout.

use criterion::{criterion_group, criterion_main, Criterion};
use ggpnet::propnet::{load, Move, StateMachine};
use std::path::Path;

fn games() -> Vec<(String, String)> {
    let mut games = vec![("connect_four".to_owned(), ggpnet::DEFAULT_GAME.to_owned())];
    if let Some(corpus) = ggpnet::corpus::locate(Path::new(env!("CARGO_MANIFEST_DIR"))) {
        for name in ["ticTacToe", "breakthrough"] {
            if let Ok(source) = std::fs::read_to_string(corpus.join("games").join(format!("{name}.kif"))) {
                games.push((name.to_owned(), source));
            }
        }
    }
    games
}

fn playout(machine: &mut StateMachine, seed: &mut u64) -> usize {
    let mut state = machine.initial_state();
    let mut depth = 0;
    let roles = machine.roles().len();
    while !machine.is_terminal(&state) {
        let joint: Vec<Move> = (0..roles)
            .map(|r| {
                let legal = machine.legal_moves(&state, r);
                *seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                legal[(*seed >> 33) as usize % legal.len()]
            })
            .collect();
        state = machine.next_unchecked(&joint);
        depth += 1;
    }
    depth
}

fn bench(c: &mut Criterion) {
    for (name, source) in games() {
        let loaded = load(&source, &Default::default()).expect("benchmark game loads");
        let mut machine = loaded.machine();
        let start = machine.initial_state();
        let first: Vec<Move> = (0..machine.roles().len())
            .map(|r| machine.legal_moves(&start, r)[0])
            .collect();
        let second = machine.next_state(&start, &first).expect("legal");
        c.bench_function(&format!("{name}/legal_moves"), |b| {
            let mut flip = false;
            b.iter(|| {
                // Alternate states so the evaluator cannot reuse its last result.
                flip = !flip;
                let state = if flip { &start } else { &second };
                machine.legal_moves(state, 0).len()
            })
        });
        c.bench_function(&format!("{name}/next_state"), |b| {
            b.iter(|| {
                machine.legal_moves(&start, 0);
                machine.next_unchecked(&first)
            })
        });
        let mut seed = 1u64;
        c.bench_function(&format!("{name}/playout"), |b| {
            b.iter(|| playout(&mut machine, &mut seed))
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
