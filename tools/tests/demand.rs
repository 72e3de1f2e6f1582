//! Grounding on demand: a recursive count that walks the cells with an
//! accumulator, `(count_loop 1 0 ?n)`, is instantiated only for the partial
//! counts its callers can pass (grounder `demand`), not for every start value
//! of the accumulator at every cell. The game below needs 3,474 ground rules
//! without demand (main at 3d32fd7) and 390 with it: it grounds under a limit
//! of 1,000, and plays as the reference interpreter does (playouts and perft).

use ggpnet::propnet::evaluator::EvaluatorKind;
use ggpnet::propnet::{load, LoadConfig};
use ggpnet::{Config, Engine, EngineChoice, Game};

/// Eight cells marked one a turn; the game ends when five are marked (counted
/// by a walk over the cells) or after seven turns.
const TALLY: &str = "
    (role r)
    (init (step 0))
    (legal r noop)
    (<= (legal r (mark ?c)) (cell ?c) (not (true (marked ?c))))
    (<= (next (marked ?c)) (does r (mark ?c)))
    (<= (next (marked ?c)) (true (marked ?c)))
    (<= (next (step ?y)) (true (step ?x)) (succ ?x ?y))
    (<= (marks ?n) (count_loop 1 0 ?n))
    (<= (count_loop ?c ?acc ?n) (add_cell ?c ?acc ?acc2) (next_cell ?c ?c2) (count_loop ?c2 ?acc2 ?n))
    (<= (count_loop 8 ?acc ?n) (add_cell 8 ?acc ?n))
    (<= (add_cell ?c ?acc ?acc2) (true (marked ?c)) (succ ?acc ?acc2))
    (<= (add_cell ?c ?acc ?acc) (cell ?c) (num ?acc) (not (true (marked ?c))))
    (<= terminal (true (step 7)))
    (<= terminal (marks 5))
    (<= (goal r 100) (marks 5))
    (<= (goal r 0) (not (marks 5)))
    (cell 1) (cell 2) (cell 3) (cell 4) (cell 5) (cell 6) (cell 7) (cell 8)
    (next_cell 1 2) (next_cell 2 3) (next_cell 3 4) (next_cell 4 5) (next_cell 5 6) (next_cell 6 7) (next_cell 7 8)
    (succ 0 1) (succ 1 2) (succ 2 3) (succ 3 4) (succ 4 5) (succ 5 6) (succ 6 7) (succ 7 8) (succ 8 9) (succ 9 10) (succ 10 11) (succ 11 12) (succ 12 13) (succ 13 14) (succ 14 15) (succ 15 16) (succ 16 17) (succ 17 18) (succ 18 19) (succ 19 20) (succ 20 21) (succ 21 22) (succ 22 23) (succ 23 24) (succ 24 25) (succ 25 26) (succ 26 27) (succ 27 28) (succ 28 29) (succ 29 30) (succ 30 31) (succ 31 32) (succ 32 33) (succ 33 34) (succ 34 35) (succ 35 36) (succ 36 37) (succ 37 38) (succ 38 39) (succ 39 40)
    (num 0) (num 1) (num 2) (num 3) (num 4) (num 5) (num 6) (num 7) (num 8) (num 9) (num 10) (num 11) (num 12) (num 13) (num 14) (num 15) (num 16) (num 17) (num 18) (num 19) (num 20) (num 21) (num 22) (num 23) (num 24) (num 25) (num 26) (num 27) (num 28) (num 29) (num 30) (num 31) (num 32) (num 33) (num 34) (num 35) (num 36) (num 37) (num 38) (num 39) (num 40)";

/// At most this many rule instances: 390 on demand, 3,474 without.
const LOW_LIMIT: usize = 1_000;

#[test]
fn a_recursive_count_grounds_on_demand() {
    let config = LoadConfig::new().ground(ggpnet::grounder::Config::new().max_ground_rules(LOW_LIMIT));
    let loaded = load(TALLY, &config).expect("the count grounds on demand under the low limit");
    assert!(loaded.report.ground_rules <= LOW_LIMIT);
    let description = ggpnet::kif::parse(TALLY).expect("the game parses");
    let reference = ggpnet_reference::Reference::new(&description).expect("the reference loads it");
    let report = ggpnet_tools::differential::differential(&loaded, &reference, 30, 8, 7);
    assert_eq!(report.first_difference, None);
}

#[test]
fn an_unbound_caller_needs_the_whole_count() {
    // Read with the accumulator unbound, `count_loop` is needed for every start value.
    let everywhere = format!("{TALLY} (<= (goal r 50) (count_loop 1 ?a 9) (marks 4))");
    let config = LoadConfig::new().ground(ggpnet::grounder::Config::new().max_ground_rules(LOW_LIMIT));
    let error = load(&everywhere, &config).err().expect("past the limit");
    assert!(error.is_limit(), "{error}");
}

#[test]
fn the_count_has_the_interpreter_s_perft() {
    let propnet = Config::new()
        .engine(EngineChoice::Propnet)
        .max_ground_rules(LOW_LIMIT);
    let propnet = Game::load(TALLY, &propnet).expect("on the propnet");
    assert_eq!(propnet.engine(), Engine::Propnet);
    let interpreter = Game::load(TALLY, &Config::new().engine(EngineChoice::Interpreter)).unwrap();
    let counts = propnet.perft(4, EvaluatorKind::Differential).unwrap();
    assert_eq!(counts, interpreter.perft(4, EvaluatorKind::Differential).unwrap());
    assert!(counts[3] > 1000, "{counts:?}");
}
