//! `Machine::successors` lists what the naive expansion lists, in the same
//! order: for every state of seeded random walks on corpus games (turn
//! taking, simultaneous moves, three roles), its successors equal each of the
//! roles' legal moves combined (the first role's move changing slowest) with
//! the state `next_state` makes of it, on both scalar evaluators and on the
//! interpreter; and on the lanes (`Expansion::Lanes`, in batches of 512
//! pairs) they are the same as one at a time (`Expansion::Scalar`), also
//! across batches. The corpus games need the corpus (`../shared` or
//! `$GGPNET_CORPUS`); without it that test prints a notice and passes,
//! unless `GGPNET_REQUIRE_CORPUS=1`.

use ggpnet::{Config, EngineChoice, EvaluatorKind, Expansion, Game, Machine, Move, State, Stream};

/// The games walked, and for how many moves each: turn taking, large
/// branching, simultaneous moves, more than two roles.
const GAMES: [(&str, usize); 6] = [
    ("connectFour", 60),
    ("breakthroughSmall", 40),
    ("connectFourSimultaneous", 40),
    ("blockerParallel", 30),
    ("tictactoe_3player", 30),
    ("3pConnectFour", 30),
];

/// Every joint move of the roles' legal moves, the first role's slowest, each
/// with its next state, one `next_state` (checked) at a time.
fn naive(machine: &mut Machine, state: &State) -> Vec<(Vec<Move>, State)> {
    let roles = machine.game().roles().len();
    let mut joints: Vec<Vec<Move>> = vec![Vec::new()];
    for role in 0..roles {
        let legal = machine.legal_moves(state, role).expect("legal moves");
        joints = joints
            .iter()
            .flat_map(|joint| {
                legal.iter().map(move |m| {
                    let mut longer = joint.clone();
                    longer.push(m.clone());
                    longer
                })
            })
            .collect();
    }
    joints
        .into_iter()
        .map(|joint| {
            let next = machine.next_state(state, &joint).expect("a legal joint move");
            (joint, next)
        })
        .collect()
}

/// Walks `steps` random moves (fewer when the game ends) from the initial
/// state of `game` on `machine`, checking every state's successors and
/// joint moves against [`naive`]; how many successors were checked.
fn walk(game: &Game, machine: &mut Machine, steps: usize, seed: u64) -> usize {
    let mut rng = Stream::new(seed, 0);
    let mut state = game.initial_state();
    let mut checked = 0;
    for _ in 0..steps {
        let successors = machine.successors(&state).expect("successors");
        assert_eq!(
            successors,
            naive(machine, &state),
            "{:?}",
            game.state_to_kif(&state)
        );
        let joints: Vec<Vec<Move>> = successors.iter().map(|(j, _)| j.clone()).collect();
        assert_eq!(machine.legal_joint_moves(&state).expect("joint moves"), joints);
        checked += successors.len();
        if successors.is_empty() || machine.is_terminal(&state).expect("terminal") {
            break;
        }
        state = successors[rng.draw(successors.len())].1.clone();
    }
    checked
}

#[test]
fn successors_are_the_naive_expansion_in_its_order() {
    let Some(corpus) = ggpnet_tools::corpus::for_test("skipping the successors test") else {
        return;
    };
    for (name, steps) in GAMES {
        let path = corpus.join("games").join(format!("{name}.kif"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let propnet = Game::load(&text, &Config::new().engine(EngineChoice::Propnet)).expect("loads");
        for kind in [EvaluatorKind::Differential, EvaluatorKind::Sweep] {
            let mut machine = propnet.machine_with_evaluator(kind);
            for seed in 1..=2 {
                let checked = walk(&propnet, &mut machine, steps, seed);
                assert!(checked > 0, "{name}: no successors checked");
            }
        }
        if name == "tictactoe_3player" || name == "connectFourSimultaneous" {
            let slow = Game::load(&text, &Config::new().engine(EngineChoice::Interpreter)).expect("loads");
            walk(&slow, &mut slow.machine(), 10, 1);
        }
    }
}

#[test]
fn successors_of_a_state_of_another_game_are_refused() {
    let game = Game::load(ggpnet::DEFAULT_GAME, &Config::default()).expect("loads");
    let other = Game::load(ggpnet::DEFAULT_GAME, &Config::default()).expect("loads");
    let refused = game.machine().successors(&other.initial_state());
    assert_eq!(refused, Err(ggpnet::Error::ForeignState));
}

/// Two roles moving at once, each picking one of `n` numbers; the state
/// remembers both picks (and the turn, to end after two).
fn picks(n: usize) -> String {
    let mut text =
        String::from("(role a) (role b) (init (turn 0)) (succ 0 1) (succ 1 2) (<= terminal (true (turn 2)))");
    for k in 1..=n {
        text += &format!(" (num {k})");
    }
    text + " (<= (legal ?r (pick ?n)) (role ?r) (num ?n)) (<= (next (picked ?r ?n)) (does ?r (pick ?n)))
        (<= (next (turn ?y)) (true (turn ?x)) (succ ?x ?y)) (<= (goal ?r 0) (role ?r))"
}

#[test]
fn successors_on_the_lanes_span_batches_in_order() {
    let game = Game::load(&picks(40), &Config::new().engine(EngineChoice::Propnet)).expect("loads");
    let mut machine = game.machine();
    let start = game.initial_state();
    let one_by_one = machine
        .successors_with(&start, Expansion::Scalar)
        .expect("successors");
    assert_eq!(one_by_one.len(), 40 * 40, "more than three batches of 512");
    assert_eq!(one_by_one, naive(&mut machine, &start));
    let on_lanes = machine
        .successors_with(&start, Expansion::Lanes)
        .expect("successors");
    assert_eq!(on_lanes, one_by_one);
    // A second state on the same lanes machine, after a smaller batch.
    let next = &one_by_one[777].1;
    let again = machine
        .successors_with(next, Expansion::Lanes)
        .expect("successors");
    assert_eq!(
        again,
        machine
            .successors_with(next, Expansion::Scalar)
            .expect("successors")
    );
    assert_eq!(machine.successors(next).expect("successors"), again);
}
