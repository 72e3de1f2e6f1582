//! The lanes state machine (`LaneMachine`) against the scalar `StateMachine`:
//! on corpus games (turn-taking, simultaneous, three roles), random walks of
//! partly filled batches, where some lanes stay put, lanes sit in terminal
//! states and lanes restart, give in every lane the states, legal moves (one
//! by one and as bits), terminal flags, goals and observations the scalar
//! machine gives; and every misuse is refused with its error, no lane moved.
//! Perft with its last ply on the lanes counts as the scalar perft.
//! Without the corpus (`../shared` or `$GGPNET_CORPUS`) only the built-in
//! connect four runs.

use ggpnet::propnet::driver::{perft, LaneError, LaneMachine};
use ggpnet::propnet::evaluator::{EvaluatorConfig, EvaluatorKind, Lanes, LANES};
use ggpnet::propnet::random::Stream;
use ggpnet::propnet::{load, Game, MachineError, Move, State, StateMachine};
use std::sync::Arc;

fn load_game(text: &str) -> Arc<Game> {
    load(text, &Default::default()).expect("the game loads").game
}

/// The games of the comparison: the built-in one, and the corpus's when present.
fn games() -> Vec<(String, Arc<Game>)> {
    let mut games = vec![(
        "connect_four (built in)".to_owned(),
        load_game(ggpnet::DEFAULT_GAME),
    )];
    if let Some(corpus) = ggpnet_tools::corpus::for_test("only the built-in game is compared") {
        for name in [
            "connectFour",
            "breakthrough",
            "blockerParallel",
            "3pConnectFour",
            "biddingTicTacToe",
            "minichess",
        ] {
            let path = corpus.join("games").join(format!("{name}.kif"));
            let text = std::fs::read_to_string(&path).expect("the corpus game reads");
            games.push((name.to_owned(), load_game(&text)));
        }
    }
    games
}

/// Checks every lane of `lanes` against `states` on the scalar machine.
fn compare(name: &str, step: usize, lanes: &mut LaneMachine, machine: &mut StateMachine, states: &[State]) {
    let game = Arc::clone(lanes.game());
    let roles = game.roles().len();
    let stride = game.role_moves().iter().map(Vec::len).max().unwrap_or(0) + 3;
    let words = (roles * stride).div_ceil(64);
    let bases = game.facts().len();
    let mut terminal = vec![false; states.len()];
    let mut legal = vec![0u64; states.len() * words];
    let mut observations = vec![7u8; states.len() * bases];
    lanes.terminal_into(&mut terminal).expect("terminal flags");
    lanes.legal_into(stride, &mut legal).expect("legal bits");
    lanes.observations_into(&mut observations).expect("observations");
    let mut best = Vec::new();
    for (lane, state) in states.iter().enumerate() {
        let at = format!("{name}, step {step}, lane {lane}");
        assert_eq!(&lanes.state(lane).expect("a lane"), state, "{at}: state");
        let row = &observations[lane * bases..(lane + 1) * bases];
        assert!(
            row.iter().enumerate().all(|(b, &v)| v == u8::from(state.0[b])),
            "{at}: observation"
        );
        let is_terminal = machine.is_terminal(state);
        assert_eq!(lanes.is_terminal(lane), Ok(is_terminal), "{at}: terminal");
        assert_eq!(terminal[lane], is_terminal, "{at}: terminal flag");
        assert_eq!(
            lanes.goals(lane).expect("goals"),
            machine.goals(state),
            "{at}: goals"
        );
        let mut scalar_best = Vec::new();
        machine.best_goals_into(state, &mut scalar_best);
        lanes.best_goals_into(lane, &mut best).expect("best goals");
        assert_eq!(best, scalar_best, "{at}: best goals");
        for role in 0..roles {
            let expected = machine.legal_moves(state, role);
            assert_eq!(
                lanes.legal_moves(lane, role).expect("legal"),
                expected,
                "{at}: role {role}"
            );
            let bits = &legal[lane * words..(lane + 1) * words];
            for (a, m) in game.role_moves()[role].iter().enumerate() {
                let at_bit = role * stride + a;
                let set = (bits[at_bit / 64] >> (at_bit % 64)) & 1 == 1;
                assert_eq!(set, expected.contains(m), "{at}: role {role}'s move {a} as a bit");
            }
            for a in game.role_moves()[role].len()..stride {
                let at_bit = role * stride + a;
                assert_eq!((bits[at_bit / 64] >> (at_bit % 64)) & 1, 0, "{at}: padding bit");
            }
        }
    }
}

/// A uniformly random legal joint move in `state`, or `None` when a role has none.
fn random_joint(machine: &mut StateMachine, state: &State, rng: &mut Stream) -> Option<Vec<Move>> {
    (0..machine.roles().len())
        .map(|role| {
            let legal = machine.legal_moves(state, role);
            (!legal.is_empty()).then(|| legal[rng.draw(legal.len())])
        })
        .collect()
}

/// A random walk of `count` lanes on `game`: each step some lanes stay, the
/// others play a random legal joint move; ended lanes stay a step, then
/// restart (or some go to a state set by hand).
fn walk(name: &str, game: &Arc<Game>, count: usize, steps: usize, seed: u64) {
    let mut machine = StateMachine::new(Arc::clone(game));
    let mut lanes = LaneMachine::new(Arc::clone(game));
    let mut states = vec![game.initial().clone(); count];
    lanes.load(&states).expect("the states load");
    let mut rng = Stream::new(seed, 0);
    let filler = game.role_moves().iter().map(|moves| moves[0]).collect::<Vec<_>>();
    for step in 0..steps {
        compare(name, step, &mut lanes, &mut machine, &states);
        let mut joints = Vec::new();
        let mut moving = vec![false; count];
        let mut restart = vec![false; count];
        for (lane, state) in states.iter_mut().enumerate() {
            let joint = random_joint(&mut machine, state, &mut rng).filter(|_| rng.draw(8) != 0);
            let ended = machine.is_terminal(state) || random_joint(&mut machine, state, &mut rng).is_none();
            match joint {
                Some(joint) if !ended || rng.draw(2) == 0 => {
                    *state = machine.next_state(state, &joint).expect("a legal joint move");
                    joints.extend(joint);
                    moving[lane] = true;
                }
                _ => {
                    joints.extend(&filler);
                    restart[lane] = ended && rng.draw(2) == 0;
                }
            }
        }
        lanes.step_some(&joints, &moving).expect("legal joint moves");
        compare(name, step, &mut lanes, &mut machine, &states);
        lanes.restart(&restart).expect("one flag per lane");
        for (state, _) in states.iter_mut().zip(&restart).filter(|&(_, &r)| r) {
            *state = game.initial().clone();
        }
    }
}

#[test]
fn lanes_agree_with_the_scalar_machine_on_random_walks() {
    for (name, game) in games() {
        walk(&name, &game, 100, 40, 1);
        walk(&name, &game, LANES, 12, 2);
    }
}

#[test]
fn restarts_go_to_the_start_state_set() {
    let game = load_game(ggpnet::DEFAULT_GAME);
    let mut machine = StateMachine::new(Arc::clone(&game));
    let mut rng = Stream::new(3, 0);
    let start = game.initial().clone();
    let joint = random_joint(&mut machine, &start, &mut rng).expect("moves");
    let after = machine.next_state(&start, &joint).expect("legal");
    let mut lanes = LaneMachine::new(Arc::clone(&game));
    lanes.load(&[start.clone(), start.clone()]).expect("loads");
    lanes.set_start(&after).expect("a state of the game");
    lanes.is_terminal(0).expect("a lane"); // evaluated: the restart blends
    lanes.restart(&[false, true]).expect("flags");
    compare(
        "restart",
        0,
        &mut lanes,
        &mut machine,
        &[start.clone(), after.clone()],
    );
    lanes.set_state(0, &after).expect("a lane");
    lanes.restart(&[false, false]).expect("flags");
    compare("set_state", 1, &mut lanes, &mut machine, &[after.clone(), after]);
}

#[test]
fn misuse_is_refused_and_moves_nothing() {
    let game = load_game(ggpnet::DEFAULT_GAME);
    let machine = StateMachine::new(Arc::clone(&game));
    let start = game.initial().clone();
    let mut lanes = LaneMachine::new(Arc::clone(&game));
    let too_many = vec![start.clone(); LANES + 1];
    assert_eq!(
        lanes.load(&too_many),
        Err(LaneError::TooManyLanes { lanes: LANES + 1 })
    );
    lanes.load(&[start.clone(), start.clone()]).expect("two lanes");
    let other = load_game(
        "(role r) (init a) (<= (legal r go) (true a)) (<= (next b) (does r go))
         (<= terminal (true b)) (goal r 100)",
    );
    let foreign = other.initial().clone();
    let refused = lanes.set_state(1, &foreign);
    assert!(
        matches!(refused, Err(LaneError::ForeignState { .. })),
        "{refused:?}"
    );
    assert!(matches!(
        LaneMachine::with_evaluator(Arc::new(Lanes::new(other.net())), Arc::clone(&game)),
        Err(LaneError::ForeignEvaluator)
    ));
    assert_eq!(lanes.state(2), Err(LaneError::NoSuchLane { lane: 2, lanes: 2 }));
    assert_eq!(
        lanes.legal_moves(0, 2),
        Err(LaneError::NoSuchRole { role: 2, roles: 2 })
    );
    assert!(matches!(
        lanes.legal_into(1, &mut [0; 2]),
        Err(LaneError::NarrowStride { stride: 1, .. })
    ));
    let red = |text: &str| machine.parse_move(0, text).expect("red's move");
    let yellow_wait = machine.parse_move(1, "wait").expect("yellow's move");
    let drop = red("(drop 1)");
    assert!(matches!(
        lanes.step(&[drop, yellow_wait]),
        Err(LaneError::WrongLength {
            expected: 4,
            found: 2,
            ..
        })
    ));
    let illegal = lanes.step(&[drop, yellow_wait, red("wait"), yellow_wait]);
    let Err(LaneError::Move {
        lane: 1,
        error: MachineError::IllegalMove { role, text },
    }) = &illegal
    else {
        panic!("red's wait refused in lane 1, not {illegal:?}");
    };
    assert_eq!((role.as_str(), text.as_str()), ("red", "wait"));
    let swapped = lanes.step(&[yellow_wait, drop, drop, yellow_wait]);
    assert!(matches!(
        swapped,
        Err(LaneError::Move {
            lane: 0,
            error: MachineError::WrongRole { .. }
        })
    ));
    let unknown = lanes.step(&[Move(u32::MAX), yellow_wait, drop, yellow_wait]);
    assert!(matches!(
        unknown,
        Err(LaneError::Move {
            lane: 0,
            error: MachineError::NoSuchMove { .. }
        })
    ));
    assert_eq!(lanes.state(0).as_ref(), Ok(&start), "no lane moved");
    assert_eq!(lanes.state(1).as_ref(), Ok(&start), "no lane moved");
    assert!(illegal.unwrap_err().to_string().contains("lane 1"));
    lanes
        .step(&[drop, yellow_wait, drop, yellow_wait])
        .expect("legal");
    assert_ne!(lanes.state(1).as_ref(), Ok(&start), "the lanes moved");
}

/// Perft with its last ply in batches on the lanes counts what the scalar
/// perft counts (paths per depth and states expanded), on every game of the
/// comparison, to depth 2 and deeper up to 4 while the last ply has at most
/// [`LAST_PLY_PAIRS`] (state, joint move) pairs (a few batches, some partly
/// filled); and `Auto` (scalar evaluator chosen, then the lanes raced) too,
/// saying which scalar evaluator ran. The depth is bounded by the pairs, not
/// fixed: blockerParallel (simultaneous) has 65,536 joint moves at the start
/// and 2.6 billion pairs at depth 3's last ply, which a fixed depth 3 would
/// enumerate (a depth-3 perft over the corpus took minutes for such games).
#[test]
fn perft_on_the_lanes_counts_as_the_scalar_perft() {
    for (name, game) in games() {
        let mut depth = 2;
        while depth < 4 && perft(&game, depth, EvaluatorKind::Sweep).counts[depth - 1] <= LAST_PLY_PAIRS {
            depth += 1;
        }
        let scalar = perft(&game, depth, EvaluatorKind::Sweep);
        let lanes = perft(&game, depth, EvaluatorKind::Lanes);
        assert_eq!(lanes.counts, scalar.counts, "{name}, depth {depth}");
        assert_eq!(lanes.nodes, scalar.nodes, "{name}, depth {depth}");
        assert!(lanes.last_ply_on_lanes && !scalar.last_ply_on_lanes, "{name}");
        let auto = perft(&game, depth, EvaluatorConfig::default());
        assert_eq!(auto.counts, scalar.counts, "{name}: auto");
        assert_eq!(auto.nodes, scalar.nodes, "{name}: auto");
        assert!(auto.evaluator.is_some_and(EvaluatorKind::is_scalar), "{name}");
    }
}

/// The most (state, joint move) pairs of the last ply of the perft compared.
const LAST_PLY_PAIRS: u128 = 3000;
