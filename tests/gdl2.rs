//! GDL-II (`random`, `sees`): the checks refuse each restriction with the
//! rule and the reason, accept what real GDL-II games write, and the state
//! machine answers percept queries alike on both engines, every evaluator and
//! a circuit read back from JSON.

use ggpnet::grounder::ErrorKind;
use ggpnet::propnet::evaluator::EvaluatorKind;
use ggpnet::propnet::{load, LoadError};
use ggpnet::{Config, Engine, EngineChoice, Error, Game, Machine, MachineError, State};

/// Monty Hall in GDL-II, written for this project.
const MONTY_HALL: &str = include_str!("../games/montyhall.kif");

/// A GDL-II game (it has a `sees` rule) to which each test adds rules.
const PRELUDE: &str = "(role r) (init s) (<= (legal r go) (true s)) (<= (next s) (does r go))
    (<= (sees r moved) (does r go)) (<= terminal (not (true s))) (goal r 100)\n";

fn gdl_error(body: &str) -> ggpnet::grounder::GdlError {
    match load(&format!("{PRELUDE}{body}"), &Default::default()) {
        Err(LoadError::Gdl(e)) => e,
        Err(other) => panic!("expected a GDL error, got {other}"),
        Ok(_) => panic!("expected a GDL error for {body}"),
    }
}

fn game(text: &str, engine: EngineChoice) -> Game {
    let config = Config::new().engine(engine);
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
            "(<= (goal r 50) (sees r moved))",
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
        assert!(span.line >= 3, "{rule}: the place is the added rule's: {e}");
        assert!(e.rule.is_some(), "{rule}: the rule is named: {e}");
    }
}

#[test]
fn gdl_keeps_next_in_heads_only() {
    let gdl = "(role r) (init s) (<= (legal r go) (true s)) (<= (next s) (does r go))
        (<= terminal (not (true s))) (goal r 100)\n(<= p (next s))";
    let Err(LoadError::Gdl(e)) = load(gdl, &Default::default()) else {
        panic!("a GDL body reading next is refused")
    };
    assert!(e.message.contains("'next' may only appear in the head"), "{e}");
    load(&format!("{PRELUDE}(<= p (next s))"), &Default::default()).unwrap_or_else(|e| panic!("{e}"));
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
        let e = machine.percepts(&start, std::slice::from_ref(&wait)).unwrap_err();
        assert!(
            matches!(
                e,
                Error::Refused(MachineError::WrongJointLength {
                    expected: 2,
                    found: 1
                })
            ),
            "{e:?}"
        );
        assert!(e.to_string().contains("one move per role"), "{e}");
        let e = machine
            .percepts(&start, &[wait.clone(), wait.clone()])
            .unwrap_err();
        assert!(
            matches!(e, Error::Refused(MachineError::WrongRole { .. })),
            "{e:?}"
        );
        assert!(e.to_string().contains("candidate"), "{e}");
        // Legal for the random role later, not now.
        let open = game.parse_move(1, "(open 3)").unwrap();
        let e = machine.percepts(&start, &[wait, open]).unwrap_err();
        assert!(
            matches!(&e, Error::Refused(MachineError::IllegalMove { text, .. }) if text == "(open 3)"),
            "{e:?}"
        );
        assert!(e.to_string().contains("(open 3)"), "{e}");
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

#[test]
fn a_percept_through_a_cycle_of_the_move_part() {
    // `reach` is recursive over a cycle of edges and depends on the move: its
    // gates form a cyclic component of the move part, evaluated to its least
    // fixpoint for the percepts.
    let text =
        "(role r) (init s) (edge 1 2) (edge 2 3) (edge 3 1) (edge 4 4) (node 1) (node 2) (node 3) (node 4)
        (<= (legal r (start ?n)) (true s) (node ?n))
        (<= (reach ?y) (does r (start ?y)))
        (<= (reach ?z) (reach ?y) (edge ?y ?z))
        (<= (sees r (reached ?z)) (reach ?z))
        (<= (next done) (does r (start ?n)))
        (<= terminal (true done)) (goal r 100)";
    for engine in [EngineChoice::Propnet, EngineChoice::Interpreter] {
        let game = game(text, engine);
        let mut machine = game.machine();
        let start = game.initial_state();
        for (chosen, seen) in [
            ("(start 2)", vec!["(reached 1)", "(reached 2)", "(reached 3)"]),
            ("(start 4)", vec!["(reached 4)"]),
        ] {
            let joint = [game.parse_move(0, chosen).unwrap()];
            assert_eq!(
                machine.percepts(&start, &joint).unwrap(),
                [seen],
                "{engine:?} {chosen}"
            );
        }
    }
}

#[test]
fn gdl2_descriptions_are_read_as_the_gamecontroller_reads_them() {
    // Overloaded `val`, a role variable of `legal` bound to the roles, an
    // existential negation, `and`, a rule that can never hold, and `?X` and
    // `?x` as one variable: each an error in GDL, the same on both engines here.
    let text = "(role p) (role random) (init (control p)) (val 1) (val 1 2)
        (<= (legal p (pick ?x)) (true (control p)) (val ?x))
        (<= (legal p (pair ?x ?y)) (true (control p)) (val ?x ?y))
        (<= (legal ?r noop) (not (true (control ?r))))
        (<= (sees p untouched) (not (does ?q (pick ?x))))
        (<= (sees p both) (or (and (does p (pair ?x ?y)) (val ?x)) (does p (pick 2))))
        (<= (sees p (never ?x)) impossible)
        (<= (next (chosen ?X)) (does p (pick ?x)))
        (<= (next (control p)) (true (control p)))
        (<= terminal (true (chosen ?c))) (goal p 100)";
    for engine in [EngineChoice::Propnet, EngineChoice::Interpreter] {
        let game = game(text, engine);
        let mut machine = game.machine();
        let start = game.initial_state();
        let texts = |machine: &mut Machine, role| {
            let mut moves: Vec<String> = machine
                .legal_moves(&start, role)
                .unwrap()
                .iter()
                .map(|m| game.move_to_kif(m).unwrap())
                .collect();
            moves.sort();
            moves
        };
        assert_eq!(texts(&mut machine, 0), ["(pair 1 2)", "(pick 1)"], "{engine:?}");
        assert_eq!(texts(&mut machine, 1), ["noop"], "{engine:?}");
        let noop = game.parse_move(1, "noop").unwrap();
        let pair = [game.parse_move(0, "(pair 1 2)").unwrap(), noop.clone()];
        let pick = [game.parse_move(0, "(pick 1)").unwrap(), noop];
        assert_eq!(
            machine.percepts(&start, &pair).unwrap(),
            [vec!["both", "untouched"], vec![]]
        );
        assert_eq!(
            machine.percepts(&start, &pick).unwrap(),
            [Vec::<String>::new(), vec![]]
        );
        let next = machine.next_state(&start, &pick).unwrap();
        assert_eq!(
            game.state_to_kif(&next).unwrap(),
            ["(chosen 1)", "(control p)"],
            "{engine:?}"
        );
    }
    let gdl = text
        .replace("(role random)", "(role q)")
        .replace("(sees p", "(seen p");
    assert!(
        load(&gdl, &Default::default()).is_err(),
        "the same rules are refused as GDL"
    );
}
