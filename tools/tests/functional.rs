//! Rule bodies split on values the state fixes (grounder `functional`): a
//! latin square whose rows and columns are each tested with `exactlyOne`
//! style tests over all the cells' marks of a line, as sudoku does. Grounded
//! as written, every test is a static relation over all the values of a line
//! and the line's rule has one instance per combination the tests accept;
//! split (each cell holds at most one mark in every reachable state, which
//! the grounder proves), each test reads each cell on its own. The 7x7 square
//! below grounds split under [`LOW_LIMIT`] and plays as the reference
//! interpreter does (playouts, a solved and an unsolved square). Where a cell
//! may be marked twice the split is not proved and the game stays past the
//! limit.

use ggpnet::propnet::evaluator::EvaluatorKind;
use ggpnet::propnet::{load, LoadConfig};
use ggpnet::{Config, Engine, EngineChoice, Game};

/// Side of the square.
const N: usize = 7;

/// The `exactlyOne` tests of one line whose cells' marks are `?m1 .. ?mN`.
fn line_tests() -> String {
    let marks: Vec<String> = (1..=N).map(|k| format!("?m{k}")).collect();
    (1..=N)
        .map(|z| format!("(one {z} {})", marks.join(" ")))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The static part: `index`, `eq`, `succ` up to N*N, and `first`/`one` (the
/// first argument equals exactly one of the others).
fn tests() -> String {
    let xs: Vec<String> = (1..=N).map(|k| format!("?x{k}")).collect();
    let mut text = format!("(<= (first ?z {}) (eq ?z ?x1)", xs.join(" "));
    for x in &xs[1..] {
        text += &format!(" (index {x}) (not (eq ?z {x}))");
    }
    text += ")\n";
    for k in 0..N {
        let mut order = vec![xs[k].clone()];
        order.extend(
            xs.iter()
                .enumerate()
                .filter(|&(j, _)| j != k)
                .map(|(_, x)| x.clone()),
        );
        text += &format!("(<= (one ?z {}) (first ?z {}))\n", xs.join(" "), order.join(" "));
    }
    for v in 1..=N {
        text += &format!("(index {v}) (eq {v} {v}) ");
    }
    for s in 0..N * N {
        text += &format!("(succ {s} {}) ", s + 1);
    }
    text
}

/// The game; with `guarded`, a move marks an empty cell only.
fn latin(guarded: bool) -> String {
    let legal = if guarded {
        "(<= (legal p (play ?i ?j ?m)) (index ?m) (empty ?i ?j))"
    } else {
        "(<= (legal p (play ?i ?j ?m)) (index ?i) (index ?j) (index ?m))"
    };
    let empty: String = (1..=N)
        .map(|v| format!(" (not (true (mark ?i ?j {v})))"))
        .collect();
    let row: String = (1..=N).map(|k| format!(" (true (mark ?i {k} ?m{k}))")).collect();
    let column: String = (1..=N).map(|k| format!(" (true (mark {k} ?j ?m{k}))")).collect();
    let lines: String = (1..=N)
        .map(|i| format!(" (goodRow {i}) (goodColumn {i})"))
        .collect();
    format!(
        "(role p) (init (step 0)) {legal}
        (<= (next (mark ?i ?j ?m)) (does p (play ?i ?j ?m)))
        (<= (next (mark ?i ?j ?m)) (true (mark ?i ?j ?m)))
        (<= (next (step ?y)) (true (step ?x)) (succ ?x ?y))
        (<= (empty ?i ?j) (index ?i) (index ?j){empty})
        (<= terminal (true (step {})))
        (<= (goal p 100) solved)
        (<= (goal p 0) (not solved))
        (<= (goodRow ?i){row} {tests})
        (<= (goodColumn ?j){column} {tests})
        (<= solved{lines})
        {}",
        N * N,
        tests(),
        tests = line_tests(),
    )
}

/// At most this many rule instances: the 7x7 square grounds split in
/// 27,213; as written (main at 1c3cec0) it needs 71,691 ground rules and
/// passes this limit while it evaluates `first`.
const LOW_LIMIT: usize = 50_000;

fn low_limit() -> LoadConfig {
    LoadConfig::new().ground(ggpnet::grounder::Config::new().max_ground_rules(LOW_LIMIT))
}

#[test]
fn a_square_of_line_tests_grounds_split_and_plays_as_the_interpreter() {
    let loaded = load(&latin(true), &low_limit()).expect("the square grounds split under the low limit");
    assert!(loaded.report.ground_rules <= LOW_LIMIT);
    let description = ggpnet::kif::parse(&latin(true)).expect("the game parses");
    let reference = ggpnet_reference::Reference::new(&description).expect("the reference loads it");
    let report = ggpnet_tools::differential::differential(&loaded, &reference, 20, N * N, 11);
    assert_eq!(report.first_difference, None);
}

/// The goal after marking every cell `(i, j)` with `mark(i, j)`, on `game`.
fn goal_after(game: &Game, mark: impl Fn(usize, usize) -> usize) -> Option<i64> {
    let mut machine = game.machine();
    let mut state = game.initial_state();
    for i in 1..=N {
        for j in 1..=N {
            let text = format!("(play {i} {j} {})", mark(i, j));
            let m = game.parse_move(0, &text).expect("a move of the game");
            state = machine.next_state(&state, &[m]).expect("a legal move");
        }
    }
    assert!(machine.is_terminal(&state).unwrap());
    machine.goals(&state).unwrap()[0]
}

#[test]
fn a_solved_square_wins_on_the_propnet_as_on_the_interpreter() {
    let propnet = Config::new()
        .engine(EngineChoice::Propnet)
        .max_ground_rules(LOW_LIMIT);
    let propnet = Game::load(&latin(true), &propnet).expect("on the propnet");
    assert_eq!(propnet.engine(), Engine::Propnet);
    let interpreter = Game::load(&latin(true), &Config::new().engine(EngineChoice::Interpreter)).unwrap();
    let solved = |i: usize, j: usize| (i + j) % N + 1;
    // Cell (1, 1) repeats the mark of (1, 2): its row and its column fail.
    let unsolved = |i: usize, j: usize| {
        if (i, j) == (1, 1) {
            solved(1, 2)
        } else {
            solved(i, j)
        }
    };
    for game in [&propnet, &interpreter] {
        assert_eq!(goal_after(game, solved), Some(100));
        assert_eq!(goal_after(game, unsolved), Some(0));
    }
    let counts = propnet.perft(1, EvaluatorKind::Differential).unwrap();
    assert_eq!(counts, interpreter.perft(1, EvaluatorKind::Differential).unwrap());
    assert_eq!(counts[0], (N * N * N) as u128);
}

#[test]
fn a_cell_that_may_hold_two_marks_is_not_split() {
    // Any cell may be marked again: a cell's marks are not a function of it.
    let error = load(&latin(false), &low_limit()).err().expect("past the limit");
    assert!(error.is_limit(), "{error}");
}
