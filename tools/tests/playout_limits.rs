//! Playouts on games that never end, or end without a goal: every evaluator
//! stops each playout at the depth limit and counts it as abandoned, a time
//! budget holds inside a playout, the lanes evaluator cuts its playouts exactly
//! where the scalar driver does, and a role with no goal in a terminal state is
//! counted apart from a goal of 0.

use ggpnet::propnet::driver::{monte_carlo, Budget, McConfig, McReport};
use ggpnet::propnet::evaluator::EvaluatorKind;
use ggpnet::propnet::{load, Loaded};
use ggpnet_tools::differential::lanes_against_scalar;

/// A game whose terminal state can never be reached: every playout runs forever.
const ENDLESS: &str = "
    (role a) (role b)
    (init (step 0))
    (<= (legal a go) (true (step ?x)))
    (<= (legal b (wait ?y)) (true (step ?x)) (num ?y))
    (num 1) (num 2)
    (<= (next (step 0)) (true (step 0)))
    (<= terminal (true (step 5)))
    (<= (goal a 50) (true (step 0)))
    (<= (goal b 50) (true (step 0)))";

/// A game of three moves after which `quiet` has no goal value, while `loud`
/// has 0.
const NO_GOAL_AT_THE_END: &str = "
    (role loud) (role quiet)
    (init (count 0))
    (succ 0 1) (succ 1 2) (succ 2 3)
    (<= (legal loud tick) (true (count ?n)))
    (<= (legal quiet (pick ?m)) (true (count ?n)) (succ ?m ?o))
    (<= (next (count ?m)) (true (count ?n)) (succ ?n ?m))
    (<= terminal (true (count 3)))
    (<= (goal loud 0) (true (count 3)))
    (<= (goal quiet 100) (true (count 0)))";

fn loaded(source: &str) -> Loaded {
    load(source, &Default::default()).expect("the test game loads")
}

fn run(loaded: &Loaded, evaluator: EvaluatorKind, budget: Budget, max_depth: u64) -> McReport {
    let config = McConfig::new(budget)
        .expect("a valid budget")
        .evaluator(evaluator.into())
        .seed(3)
        .max_depth(max_depth)
        .expect("a valid depth");
    monte_carlo(&loaded.game, &config).expect("a run")
}

#[test]
fn endless_playouts_are_abandoned_at_the_depth_limit() {
    let game = loaded(ENDLESS);
    for evaluator in EvaluatorKind::ALL {
        let report = run(&game, evaluator, Budget::Playouts(7), 40);
        let totals = &report.totals;
        assert_eq!(totals.playouts, 0, "{evaluator}: no playout can finish");
        assert!(totals.abandoned >= 7, "{evaluator}: {totals:?}");
        assert_eq!(totals.abandoned, totals.at_depth_limit, "{evaluator}");
        // Every abandoned playout made its 40 moves and visited their 41 states
        // (the lanes all start together, so all of them stop at move 40 at once).
        assert_eq!(
            totals.transitions,
            40 * totals.abandoned,
            "{evaluator}: {totals:?}"
        );
        assert!(totals.states >= 41 * totals.abandoned, "{evaluator}: {totals:?}");
        if evaluator.is_scalar() {
            assert_eq!(totals.abandoned, 7, "{evaluator}");
            assert_eq!(totals.states, 41 * 7, "{evaluator}");
        }
        assert_eq!(report.avg_goals(), vec![None, None], "{evaluator}");
    }
}

#[test]
fn a_time_budget_holds_inside_an_endless_playout() {
    // With no depth limit to speak of, only the deadline can stop the playout under way.
    let game = loaded(ENDLESS);
    for evaluator in EvaluatorKind::ALL {
        let report = run(&game, evaluator, Budget::Seconds(0.2), u64::MAX);
        assert_eq!(report.totals.playouts, 0, "{evaluator}");
        assert_eq!(report.totals.abandoned, 0, "{evaluator}");
        assert!(report.totals.transitions > 0, "{evaluator}");
    }
}

#[test]
fn lanes_cut_endless_playouts_where_the_scalar_driver_does() {
    let game = loaded(ENDLESS);
    let report = lanes_against_scalar(&game.game, 5, 30);
    assert_eq!(report.first_difference, None);
    assert!(report.steps > 0);
}

#[test]
fn a_missing_goal_is_not_a_goal_of_zero() {
    let game = loaded(NO_GOAL_AT_THE_END);
    for evaluator in EvaluatorKind::ALL {
        let report = run(&game, evaluator, Budget::Playouts(20), 100);
        let totals = &report.totals;
        assert!(totals.playouts >= 20, "{evaluator}: {totals:?}");
        assert_eq!(totals.abandoned, 0, "{evaluator}");
        assert_eq!(
            totals.missing_goals,
            vec![0, totals.playouts],
            "{evaluator}: quiet never has a goal at the end"
        );
        assert_eq!(report.avg_goals(), vec![Some(0.0), None], "{evaluator}");
    }
}
