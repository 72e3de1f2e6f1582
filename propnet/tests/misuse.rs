//! Misuse of the public evaluator API panics; it never reads or writes out of
//! bounds. Each class of misuse is tried on every scalar evaluator of two games,
//! in native code and interpreted: a cache made by another evaluator (of another
//! game, or another plan of the same game), a state of another game, state
//! words of the wrong length or with bits past the bases, a next state of the
//! wrong length, and move, role and slot indexes past the net's; and, in the
//! playout loop (which checks the cache once a playout), a foreign cache and a
//! start state of another game.

use ggpnet_propnet::driver::{Playout, PlayoutTotals};
use ggpnet_propnet::evaluator::{Differential, ScalarEvaluator, Sweep};
use ggpnet_propnet::layout::CompiledNet;
use ggpnet_propnet::random::Stream;
use ggpnet_propnet::{load, Game, LoadConfig};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

/// An evaluator kind's public constructor: its plans for a net, native or not.
type Candidates<E> = fn(&Arc<CompiledNet>, bool) -> Vec<E>;

/// Tic-tac-toe, written for this project's tests (one word of bases).
const SMALL: &str = include_str!("../../games/tic_tac_toe.kif");

/// A larger game: a hundred cells claimed by one player, so more than one
/// word of bases and far more slots than [`SMALL`].
fn large() -> String {
    let mut gdl = String::from(
        "(role r) (<= (legal r (claim ?c)) (cell ?c) (not (true (claimed ?c))))
         (<= (next (claimed ?c)) (does r (claim ?c)))
         (<= (next (claimed ?c)) (true (claimed ?c)))
         (<= open (cell ?c) (not (true (claimed ?c))))
         (<= terminal (not open)) (goal r 100)\n",
    );
    for c in 0..100 {
        gdl.push_str(&format!("(cell {c})\n"));
    }
    gdl
}

fn game(text: &str) -> Arc<Game> {
    load(text, &LoadConfig::default())
        .expect("the test game loads")
        .game
}

/// Whether `f` panics (the panic's message is printed by the test harness).
fn panics(f: impl FnOnce()) -> bool {
    catch_unwind(AssertUnwindSafe(f)).is_err()
}

/// Every scalar evaluator plan of `game`, native and interpreted, with a fresh
/// cache each, as the public constructors give them.
fn evaluators<E: ScalarEvaluator>(game: &Game, candidates: Candidates<E>) -> Vec<E> {
    [true, false]
        .into_iter()
        .flat_map(|native| candidates(game.net(), native))
        .collect()
}

/// Runs `check` over every pair of distinct plans of one evaluator kind across
/// the two games and within each game (native and interpreted plans differ).
fn every_pair<E: ScalarEvaluator>(candidates: Candidates<E>, check: impl Fn(&E, &E, &Game)) {
    let (small, large) = (game(SMALL), game(&large()));
    let mut all: Vec<(E, Arc<Game>)> = Vec::new();
    for g in [&small, &large] {
        all.extend(evaluators(g, candidates).into_iter().map(|e| (e, Arc::clone(g))));
    }
    assert!(all.len() >= 4, "two plans of each game at least");
    for (i, (user, user_game)) in all.iter().enumerate() {
        for (j, (maker, _)) in all.iter().enumerate() {
            if i != j {
                check(user, maker, user_game);
            }
        }
    }
}

/// A cache made by one evaluator, handed to another: every call panics.
fn foreign_caches_panic<E: ScalarEvaluator>(candidates: Candidates<E>) {
    every_pair(candidates, |user, maker, game| {
        let state = game.initial().0.as_raw_slice();
        let moves: Vec<u32> = game.role_moves().iter().map(|m| m[0].0).collect();
        let mut out = vec![0u64; state.len()];
        assert!(
            panics(|| user.load_state(&mut maker.cache(), state)),
            "load_state"
        );
        assert!(
            panics(|| user.load_moves(&mut maker.cache(), &moves)),
            "load_moves"
        );
        assert!(
            panics(|| {
                std::hint::black_box(user.value(&maker.cache(), 0));
            }),
            "value"
        );
        assert!(panics(|| user.refresh_goals(&mut maker.cache())), "refresh_goals");
        assert!(
            panics(|| {
                std::hint::black_box(user.legal_words(&maker.cache(), 0));
            }),
            "legal_words"
        );
        assert!(panics(|| user.next_state(&maker.cache(), &mut out)), "next_state");
    });
}

#[test]
fn a_foreign_sweep_cache_panics() {
    foreign_caches_panic(Sweep::candidates);
}

#[test]
fn a_foreign_differential_cache_panics() {
    foreign_caches_panic(Differential::candidates);
}

/// States of the wrong length or with bits past the bases, next states of the
/// wrong length, and indexes past the net's: each panics, and the evaluator's own
/// cache stays usable for a well-formed call after.
fn bad_arguments_panic<E: ScalarEvaluator>(candidates: Candidates<E>) {
    let (small, large) = (game(SMALL), game(&large()));
    for (g, other) in [(&small, &large), (&large, &small)] {
        for evaluator in evaluators(g, candidates) {
            let mut cache = evaluator.cache();
            let initial = g.initial().0.as_raw_slice().to_vec();
            let foreign = other.initial().0.as_raw_slice().to_vec();
            let bases = g.net().base_slots().len();
            let mut longer = initial.clone();
            longer.push(0);
            if !bases.is_multiple_of(64) {
                let mut padded = initial.clone();
                padded[bases / 64] |= 1 << (bases % 64);
                assert!(
                    panics(|| evaluator.load_state(&mut cache, &padded)),
                    "bits past the bases"
                );
            }
            assert!(
                panics(|| evaluator.load_state(&mut cache, &longer)),
                "a longer state"
            );
            assert!(panics(|| evaluator.load_state(&mut cache, &[])), "an empty state");
            if foreign.len() != initial.len() {
                assert!(
                    panics(|| evaluator.load_state(&mut cache, &foreign)),
                    "another game's state"
                );
            }
            let mut cache = evaluator.cache();
            evaluator.load_state(&mut cache, &initial);
            let moves = g.net().move_slots().len() as u32;
            assert!(
                panics(|| evaluator.load_moves(&mut cache, &[moves])),
                "a move past the net's"
            );
            assert!(
                panics(|| {
                    std::hint::black_box(evaluator.legal_words(&cache, g.roles().len()));
                }),
                "a role past the game's"
            );
            assert!(
                panics(|| {
                    std::hint::black_box(evaluator.value(&cache, g.net().slots() as u32));
                }),
                "a slot past the net's"
            );
            let mut cache = evaluator.cache();
            evaluator.load_state(&mut cache, &initial);
            let joint: Vec<u32> = g.role_moves().iter().map(|m| m[0].0).collect();
            evaluator.load_moves(&mut cache, &joint);
            let mut short = vec![0u64; initial.len() - 1];
            assert!(
                panics(|| evaluator.next_state(&cache, &mut short)),
                "a short next state"
            );
            let mut long = vec![0u64; initial.len() + 1];
            assert!(
                panics(|| evaluator.next_state(&cache, &mut long)),
                "a long next state"
            );
            let mut next = vec![0u64; initial.len()];
            evaluator.next_state(&cache, &mut next);
            assert_ne!(next, initial, "a move changes the state");
        }
    }
}

#[test]
fn bad_arguments_to_the_sweep_panic() {
    bad_arguments_panic(Sweep::candidates);
}

#[test]
fn bad_arguments_to_the_differential_evaluator_panic() {
    bad_arguments_panic(Differential::candidates);
}

/// The playout loop binds the cache to the evaluator once a playout: a foreign
/// cache, and a start state of another game, panic there too, and a playout on
/// the evaluator's own cache afterwards runs to the end.
fn foreign_playout_arguments_panic<E: ScalarEvaluator>(candidates: Candidates<E>) {
    every_pair(candidates, |user, maker, game| {
        let mut totals = PlayoutTotals::new(game.roles().len());
        let mut rng = Stream::new(1, 0);
        let mut playout = Playout::for_game(game, 1000);
        assert!(
            panics(|| playout.run_on(user, &mut maker.cache(), game, &mut rng, &mut totals, |_, _| {})),
            "a foreign cache in run_on"
        );
    });
    let (small, large) = (game(SMALL), game(&large()));
    for (g, other) in [(&small, &large), (&large, &small)] {
        for evaluator in evaluators(g, candidates) {
            let mut totals = PlayoutTotals::new(g.roles().len());
            let mut rng = Stream::new(1, 0);
            let mut playout = Playout::for_game(g, 1000);
            playout.start_from(other.initial());
            let mut cache = evaluator.cache();
            assert!(
                panics(|| playout.run_on(&evaluator, &mut cache, g, &mut rng, &mut totals, |_, _| {})),
                "a start state of another game"
            );
            let mut playout = Playout::for_game(g, 1000);
            let mut cache = evaluator.cache();
            playout.run_on(&evaluator, &mut cache, g, &mut rng, &mut totals, |_, _| {});
            assert_eq!(
                totals.playouts, 1,
                "the playout on the evaluator's own cache ends"
            );
        }
    }
}

#[test]
fn a_foreign_cache_or_state_in_a_sweep_playout_panics() {
    foreign_playout_arguments_panic(Sweep::candidates);
}

#[test]
fn a_foreign_cache_or_state_in_a_differential_playout_panics() {
    foreign_playout_arguments_panic(Differential::candidates);
}
