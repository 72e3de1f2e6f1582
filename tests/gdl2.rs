//! GDL-II (`random`, `sees`): the checks refuse each restriction with the
//! rule and the reason, accept what real GDL-II games write, and the state
//! machine answers percept queries alike on both engines, every evaluator and
//! a circuit read back from JSON.

use ggpnet::grounder::ErrorKind;
use ggpnet::propnet::engine::EvaluatorKind;
use ggpnet::propnet::{load, LoadError};
use ggpnet::{Config, Engine, EngineChoice, Game, Machine, State};

/// Monty Hall in GDL-II, written for this project.
const MONTY_HALL: &str = include_str!("../games/montyhall.kif");

const PRELUDE: &str = "(role r) (init s) (<= (legal r go) (true s)) (<= (next s) (does r go))
    (<= terminal (not (true s))) (goal r 100)\n";

fn gdl_error(body: &str) -> ggpnet::grounder::GdlError {
    match load(&format!("{PRELUDE}{body}"), &Default::default()) {
        Err(LoadError::Gdl(e)) => e,
        Err(other) => panic!("expected a GDL error, got {other}"),
        Ok(_) => panic!("expected a GDL error for {body}"),
    }
}

fn game(text: &str, engine: EngineChoice) -> Game {
    let config = Config {
        engine,
        ..Config::default()
    };
    Game::load(text, &config).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn each_restriction_is_refused_with_the_rule_and_the_reason() {
    for (rule, kind, message) in [
        (
            "(<= (legal r stop) (true s) (next s))",
            ErrorKind::Keyword,
            "'legal' depends on 'next' (only 'sees' may",
        ),
        (
            "(<= (next t) (next s))",
            ErrorKind::Keyword,
            "'next' depends on 'next'",
        ),
        (
            "(<= (p) (next s))\n(<= terminal (p))",
            ErrorKind::Keyword,
            "'terminal' depends on 'next'",
        ),
        (
            "(<= (init t) (next s))",
            ErrorKind::Keyword,
            "'init' depends on 'next'",
        ),
        (
            "(<= (sees r moved) (does r go))\n(<= (goal r 50) (sees r moved))",
            ErrorKind::Keyword,
            "'goal' depends on 'does'",
        ),
        (
            "(<= (random x) (true s))",
            ErrorKind::Keyword,
            "'random' is the name of the random role (GDL-II), not a relation",
        ),
        (
            "(<= (p) (true s) (random))",
            ErrorKind::Keyword,
            "'random' is the name of the random role (GDL-II), not a relation",
        ),
        (
            "(<= (sees r) (true s))",
            ErrorKind::Arity,
            "'sees' takes 2 argument(s), found 1",
        ),
        (
            "(<= (sees ?r (saw ?x)) (true s))",
            ErrorKind::Unsafe,
            "variable ?x in the head is not bound",
        ),
    ] {
        let e = gdl_error(rule);
        assert_eq!(e.kind, kind, "{rule}: {e}");
        assert!(e.message.contains(message), "{rule}: {e}");
        let span = e.span.unwrap_or_else(|| panic!("{rule}: no place in {e}"));
        assert!(span.line >= 3, "{rule}: the place is the rule's: {e}");
        assert!(e.rule.is_some(), "{rule}: the rule is named: {e}");
    }
}

#[test]
fn what_real_gdl2_games_write_is_accepted() {
    // `sees` reading `next` and relations derived from `does`; a percept
    // role left unbound (every role); an unsafe `base` nobody reads; a random
    // role with no goal.
    let text = "(role r) (role random) (init s)
        (base (cell ?x))
        (<= (legal r go) (true s)) (<= (legal random (pick ?n)) (true s) (num ?n)) (num 1) (num 2)
        (<= (next (got ?n)) (does random (pick ?n)))
        (<= (moved ?n) (does random (pick ?n)))
        (<= (sees r (picked ?n)) (next (got ?n)))
        (<= (sees ?who moved) (moved ?n))
        (<= terminal (not (true s))) (goal r 100)";
    for engine in [EngineChoice::Propnet, EngineChoice::Interpreter] {
        let game = game(text, engine);
        assert!(game.is_gdl2());
        assert_eq!(game.random_role(), Some(1));
        let mut machine = game.machine();
        let start = game.initial_state();
        let joint = vec![
            game.parse_move(0, "go").unwrap(),
            game.parse_move(1, "(pick 2)").unwrap(),
        ];
        let seen = machine.percepts(&start, &joint).unwrap();
        assert_eq!(seen, [vec!["(picked 2)", "moved"], vec!["moved"]], "{engine:?}");
    }
}

#[test]
fn a_gdl_game_is_not_gdl2_and_sees_nothing() {
    let game = game(include_str!("../games/tic_tac_toe.kif"), EngineChoice::Auto);
    assert!(!game.is_gdl2());
    assert_eq!(game.random_role(), None);
    let mut machine = game.machine();
    let start = game.initial_state();
    let joint: Vec<_> = (0..2)
        .map(|r| machine.legal_moves(&start, r).unwrap()[0].clone())
        .collect();
    assert_eq!(
        machine.percepts(&start, &joint).unwrap(),
        vec![Vec::<String>::new(); 2]
    );
}

/// Plays `moves` (one text per role per step) and returns the percepts of each step.
fn percepts_of(game: &Game, machine: &mut Machine, moves: &[[&str; 2]]) -> (State, Vec<Vec<Vec<String>>>) {
    let mut state = game.initial_state();
    let mut seen = Vec::new();
    for step in moves {
        let joint: Vec<_> = step
            .iter()
            .enumerate()
            .map(|(role, text)| game.parse_move(role, text).unwrap())
            .collect();
        seen.push(machine.percepts(&state, &joint).unwrap());
        state = machine.next_state(&state, &joint).unwrap();
    }
    (state, seen)
}

#[test]
fn monty_hall_percepts_on_both_engines_and_every_evaluator() {
    let moves = [
        ["wait", "(hide 2)"],
        ["(choose 1)", "wait"],
        ["wait", "(open 3)"],
        ["switch", "wait"],
    ];
    let expected: Vec<Vec<Vec<&str>>> = vec![
        vec![vec!["(does candidate wait)"], vec![]],
        vec![vec!["(does candidate (choose 1))"], vec![]],
        vec![vec!["(does candidate wait)", "(opened 3)"], vec![]],
        vec![vec!["(car 2)", "(does candidate switch)"], vec!["(car 2)"]],
    ];
    let propnet = game(MONTY_HALL, EngineChoice::Propnet);
    let interpreter = game(MONTY_HALL, EngineChoice::Interpreter);
    assert_eq!(propnet.engine(), Engine::Propnet);
    assert_eq!(interpreter.engine(), Engine::Interpreter);
    let mut machines = vec![(interpreter.clone(), interpreter.machine())];
    for kind in EvaluatorKind::ALL {
        machines.push((propnet.clone(), propnet.machine_with_evaluator(kind)));
    }
    for (game, mut machine) in machines {
        assert!(game.is_gdl2());
        assert_eq!(game.random_role(), Some(1));
        let (end, seen) = percepts_of(&game, &mut machine, &moves);
        assert_eq!(seen, expected, "{:?}", game.engine());
        assert!(machine.is_terminal(&end).unwrap());
        assert_eq!(machine.goals(&end).unwrap(), [Some(100), None]);
    }
}

#[test]
fn percept_queries_refuse_bad_joint_moves() {
    for engine in [EngineChoice::Propnet, EngineChoice::Interpreter] {
        let game = game(MONTY_HALL, engine);
        let mut machine = game.machine();
        let start = game.initial_state();
        let wait = game.parse_move(0, "wait").unwrap();
        let e = machine.percepts(&start, &[wait.clone()]).unwrap_err();
        assert!(e.message().contains("one move per role"), "{e}");
        let e = machine
            .percepts(&start, &[wait.clone(), wait.clone()])
            .unwrap_err();
        assert!(e.message().contains("candidate"), "{e}");
        // Legal for the random role later, not now.
        let open = game.parse_move(1, "(open 3)").unwrap();
        let e = machine.percepts(&start, &[wait, open]).unwrap_err();
        assert!(e.message().contains("(open 3)"), "{e}");
    }
}

#[test]
fn percepts_survive_the_json_circuit_file() {
    let original = game(MONTY_HALL, EngineChoice::Propnet);
    let loaded = original.propnet().unwrap();
    let text = ggpnet::propnet::export::json::write(&loaded.circuit, &loaded.layering);
    assert!(text.contains("\"percepts\""));
    let back = Game::from_loaded(
        ggpnet::propnet::export::json::load(&text).unwrap(),
        &Config::default(),
    );
    assert!(back.is_gdl2());
    let moves = [
        ["wait", "(hide 3)"],
        ["(choose 3)", "wait"],
        ["wait", "(open 1)"],
        ["stay", "wait"],
    ];
    let (_, ours) = percepts_of(&original, &mut original.machine(), &moves);
    let (_, theirs) = percepts_of(&back, &mut back.machine(), &moves);
    assert_eq!(ours, theirs);
    assert_eq!(theirs[3][0], ["(car 3)", "(does candidate stay)"]);
}
