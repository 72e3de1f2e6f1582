//! Playouts from any state, as a tree search needs them: from a mid-game state
//! of the built-in connect four, every playout starts there, visits only states
//! reachable from it (each the legal successor of the one before), and gives
//! the result that replaying its moves from the initial state gives; the lanes
//! evaluator makes exactly the scalar driver's moves from that state, and flat
//! Monte-Carlo from it runs on every evaluator.

use ggpnet::propnet::driver::{
    monte_carlo, monte_carlo_from, Budget, McConfig, McError, Playout, PlayoutTotals, DEFAULT_MAX_DEPTH,
};
use ggpnet::propnet::evaluator::EvaluatorKind;
use ggpnet::propnet::random::Stream;
use ggpnet::propnet::{load, Loaded, Move, State, StateMachine};
use ggpnet_tools::differential::lanes_against_scalar_from;
use std::sync::Arc;

fn connect_four() -> Loaded {
    load(ggpnet::DEFAULT_GAME, &Default::default()).expect("the built-in game loads")
}

/// The state after `moves` random joint moves from the initial state, and those
/// moves (six of them cannot end the game: a line of four takes seven).
fn mid_game(machine: &mut StateMachine, moves: usize) -> (State, Vec<Vec<Move>>) {
    let mut rng = Stream::new(11, 0);
    let mut state = machine.initial_state();
    let mut path = Vec::new();
    for _ in 0..moves {
        let joint: Vec<Move> = (0..machine.roles().len())
            .map(|role| {
                let legal = machine.legal_moves(&state, role);
                legal[rng.draw(legal.len())]
            })
            .collect();
        state = machine.next_state(&state, &joint).expect("a legal joint move");
        path.push(joint);
    }
    assert!(!machine.is_terminal(&state), "the mid-game state is not terminal");
    (state, path)
}

#[test]
fn scalar_playouts_from_a_state_replay_from_the_initial_state() {
    let loaded = connect_four();
    for kind in [EvaluatorKind::Sweep, EvaluatorKind::Differential] {
        let mut machine = StateMachine::with_evaluator(Arc::clone(&loaded.game), kind);
        let (start, path) = mid_game(&mut machine, 6);
        let mut playout = Playout::new(&machine, DEFAULT_MAX_DEPTH);
        playout.start_from(&start);
        let mut rng = Stream::new(3, 0);
        for _ in 0..20 {
            let mut totals = PlayoutTotals::new(machine.roles().len());
            let mut moves: Vec<(State, Vec<Move>)> = Vec::new();
            playout.run(&mut machine, &mut rng, &mut totals, |state, joint| {
                moves.push((state.clone(), joint.to_vec()));
            });
            assert_eq!(
                moves.first().map(|(s, _)| s),
                Some(&start),
                "{kind}: starts at the state"
            );
            // Replay the path to the start, then the playout's moves, from the initial state.
            let mut state = machine.initial_state();
            for joint in &path {
                state = machine.next_state(&state, joint).expect("the path replays");
            }
            for (visited, joint) in &moves {
                assert_eq!(&state, visited, "{kind}: each state follows from the one before");
                state = machine
                    .next_state(&state, joint)
                    .expect("only legal moves are played");
            }
            assert_eq!(&state, playout.last_state(), "{kind}");
            assert!(machine.is_terminal(&state), "{kind}: the playout finished");
            assert_eq!(totals.playouts, 1, "{kind}");
            assert_eq!(totals.depth_sum, moves.len() as u64, "{kind}");
            let best: Vec<f64> = machine
                .goals(&state)
                .iter()
                .map(|g| *g.iter().max().expect("a goal") as f64)
                .collect();
            assert_eq!(totals.goal_sums, best, "{kind}: the goals of the replayed end");
        }
    }
}

#[test]
fn lanes_start_from_a_state_and_move_as_the_scalar_driver() {
    let loaded = connect_four();
    let mut machine = loaded.machine();
    let (start, _) = mid_game(&mut machine, 6);
    let report = lanes_against_scalar_from(&loaded.game, &start, 4, 60);
    assert_eq!(report.first_difference, None);
    assert!(report.steps >= 60 * 16);
}

#[test]
fn monte_carlo_from_a_state_on_every_evaluator() {
    let loaded = connect_four();
    let mut machine = loaded.machine();
    let (start, path) = mid_game(&mut machine, 6);
    for evaluator in EvaluatorKind::ALL {
        let config = McConfig::new(Budget::Playouts(1000))
            .expect("a valid budget")
            .evaluator(evaluator.into())
            .threads(2)
            .expect("valid threads")
            .seed(9);
        let from_start = monte_carlo_from(&loaded.game, &start, &config).expect("a run");
        let from_initial = monte_carlo(&loaded.game, &config).expect("a run");
        assert!(from_start.totals.playouts >= 1000, "{evaluator}");
        // Connect four fills at most 42 cells: 6 are taken before the start.
        let longest = 42.0 - path.len() as f64;
        assert!(
            from_start.avg_depth() <= longest,
            "{evaluator}: {}",
            from_start.avg_depth()
        );
        assert!(from_start.avg_depth() < from_initial.avg_depth(), "{evaluator}");
    }
}

#[test]
fn a_state_of_another_game_is_refused() {
    let loaded = connect_four();
    let other = load(
        "(role r) (init a) (<= (legal r go) (true a)) (<= (next b) (does r go))
         (<= terminal (true b)) (<= (goal r 100) (true b)) (<= (goal r 0) (true a))",
        &Default::default(),
    )
    .expect("the small game loads");
    let config = McConfig::new(Budget::Playouts(1))
        .expect("a valid budget")
        .evaluator(EvaluatorKind::Sweep.into())
        .seed(1);
    let foreign = other.machine().initial_state();
    let error = monte_carlo_from(&loaded.game, &foreign, &config).expect_err("refused");
    assert!(matches!(error, McError::ForeignState { bases: 2, .. }), "{error}");
}
