//! What flat Monte-Carlo counts: state transitions (joint moves applied) are
//! the sum of the playouts' depths, for every evaluator, and states visited are
//! the transitions plus one start state per playout begun. Checked against a
//! game whose every playout lasts exactly four moves, and on the built-in
//! connect four against a count made move by move outside the drivers.

use ggpnet::propnet::driver::LanePlayouts;
use ggpnet::propnet::driver::{monte_carlo, Budget, McConfig, Playout, PlayoutTotals, DEFAULT_MAX_DEPTH};
use ggpnet::propnet::evaluator::EvaluatorKind;
use ggpnet::propnet::evaluator::LANES;
use ggpnet::propnet::random::Stream;
use ggpnet::propnet::{load, Loaded, StateMachine};
use std::sync::Arc;

/// Four moves, whatever is chosen: `a` picks one of three marks, `b` one of two.
const FOUR_MOVES: &str = "
    (role a) (role b)
    (init (count 0))
    (succ 0 1) (succ 1 2) (succ 2 3) (succ 3 4)
    (mark x) (mark y) (mark z)
    (<= (legal a (pick ?m)) (true (count ?n)) (mark ?m))
    (<= (legal b (wait ?m)) (true (count ?n)) (mark ?m) (distinct ?m z))
    (<= (next (count ?o)) (true (count ?n)) (succ ?n ?o))
    (<= (next (last ?m)) (does a (pick ?m)))
    (<= terminal (true (count 4)))
    (<= (goal a 100) (true (last x)))
    (<= (goal a 0) (not (true (last x))))
    (<= (goal b 50) (true (count 4)))";

fn loaded(source: &str) -> Loaded {
    load(source, &Default::default()).expect("the test game loads")
}

fn totals(loaded: &Loaded, evaluator: EvaluatorKind, playouts: u64) -> PlayoutTotals {
    let config = McConfig::new(Budget::Playouts(playouts))
        .expect("a valid budget")
        .evaluator(evaluator.into())
        .seed(11);
    monte_carlo(&loaded.game, &config).expect("a run").totals
}

#[test]
fn a_playout_of_four_moves_counts_four_transitions_with_every_evaluator() {
    let game = loaded(FOUR_MOVES);
    for evaluator in EvaluatorKind::ALL {
        let t = totals(&game, evaluator, 100);
        assert!(t.playouts >= 100, "{evaluator}: {t:?}");
        assert_eq!(t.abandoned, 0, "{evaluator}");
        // The lanes begin all their playouts together and end them together.
        assert_eq!(t.transitions, 4 * t.playouts, "{evaluator}: {t:?}");
        assert_eq!(t.transitions, t.depth_sum, "{evaluator}: {t:?}");
        assert_eq!(t.states, 5 * t.playouts, "{evaluator}: {t:?}");
    }
}

#[test]
fn scalar_transitions_are_the_sum_of_playout_depths() {
    let game = loaded(ggpnet::DEFAULT_GAME);
    for evaluator in EvaluatorKind::ALL.into_iter().filter(|k| k.is_scalar()) {
        let t = totals(&game, evaluator, 300);
        assert_eq!(t.playouts, 300, "{evaluator}: {t:?}");
        assert_eq!(t.abandoned, 0, "{evaluator}");
        assert_eq!(t.transitions, t.depth_sum, "{evaluator}: {t:?}");
        assert_eq!(t.states, t.transitions + t.playouts, "{evaluator}: {t:?}");

        // The same through the playout driver, counting the joint moves it reports.
        let mut machine = StateMachine::with_evaluator(Arc::clone(&game.game), evaluator);
        let mut playout = Playout::new(&machine, DEFAULT_MAX_DEPTH);
        let mut rng = Stream::new(5, 0);
        let mut t = PlayoutTotals::new(game.game.roles().len());
        let mut moves = 0u64;
        for _ in 0..50 {
            playout.run(&mut machine, &mut rng, &mut t, |_, _| moves += 1);
        }
        assert_eq!(t.playouts, 50, "{evaluator}");
        assert_eq!(t.transitions, moves, "{evaluator}");
        assert_eq!(t.depth_sum, moves, "{evaluator}");
    }
}

#[test]
fn lanes_transitions_are_the_sum_of_playout_depths() {
    // Playouts of connect four end at different steps: count each lane's moves
    // from the joint move it reports after every step.
    let game = loaded(ggpnet::DEFAULT_GAME);
    let mut lanes = LanePlayouts::new(
        Arc::clone(&game.game),
        game.game.initial(),
        (9, 0),
        DEFAULT_MAX_DEPTH,
    );
    let mut depth = vec![0u64; LANES];
    let mut finished_depths = 0u64;
    for _ in 0..100 {
        lanes.step();
        for (lane, d) in depth.iter_mut().enumerate() {
            if lanes.last_joint(lane).is_some() {
                *d += 1;
            } else {
                // A terminal state: the playout ended and the lane starts over.
                finished_depths += std::mem::take(d);
            }
        }
    }
    let t = lanes.totals();
    assert!(t.playouts > LANES as u64, "{t:?}");
    assert_eq!(t.abandoned, 0);
    assert_eq!(t.depth_sum, finished_depths);
    let under_way: u64 = depth.iter().sum();
    assert_eq!(t.transitions, finished_depths + under_way, "{t:?}");
    assert_eq!(t.states, 100 * LANES as u64);
}
