//! Every check of the GDL spec, and every error path of the pipeline: each bad
//! input gets a clear error that names the place and the reason, never a panic.

use ggpnet::grounder::ErrorKind;
use ggpnet::kif::Span;
use ggpnet::propnet::opt::Pass;
use ggpnet::propnet::{load, LoadConfig, LoadError, Loaded, MachineError, OptimizeConfig};

const PRELUDE: &str = "(role r) (init s) (<= (legal r go) (true s)) (<= (next s) (does r go))
    (<= terminal (not (true s))) (goal r 100)\n";

fn gdl_error(body: &str) -> ggpnet::grounder::GdlError {
    match load(&format!("{PRELUDE}{body}"), &Default::default()) {
        Err(LoadError::Gdl(e)) => e,
        Err(other) => panic!("expected a GDL error, got {other}"),
        Ok(_) => panic!("expected a GDL error for {body}"),
    }
}

fn loads(source: &str) -> Loaded {
    load(source, &Default::default()).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn malformed_kif_names_line_and_column() {
    let Err(LoadError::Parse(e)) = load("(role r)\n(init (s)\n", &Default::default()) else {
        panic!("expected a parse error")
    };
    assert_eq!(e.span, Span { line: 2, column: 1 });
    assert!(
        e.to_string().contains("2:1") && e.to_string().contains("expected ')'"),
        "{e}"
    );
}

#[test]
fn arity_mismatch_names_both_places() {
    let e = gdl_error("(p a)\n(p a b)");
    assert_eq!(e.kind, ErrorKind::Arity);
    assert!(e.message.contains("relation 'p'"), "{e}");
    assert_eq!(e.span.unwrap().line, 4);
    let e = gdl_error("(q (f a))\n(q (f a b))");
    assert_eq!(e.kind, ErrorKind::Arity);
    assert!(e.message.contains("function 'f'"), "{e}");
    let e = gdl_error("(<= (legal r) (true s))");
    assert_eq!(e.kind, ErrorKind::Arity);
}

#[test]
fn unsafe_rules_are_rejected() {
    for (rule, var) in [
        ("(<= (p ?x) (true s))", "?x"),
        ("(<= (p a) (true s) (not (q ?y)))", "?y"),
        ("(<= (p a) (true s) (distinct ?z a))", "?z"),
    ] {
        let e = gdl_error(rule);
        assert_eq!(e.kind, ErrorKind::Unsafe, "{rule}");
        assert!(e.message.contains(var), "{e}");
        assert!(e.rule.as_deref().unwrap().starts_with("(<= (p"), "{e}");
    }
}

#[test]
fn unstratified_negation_is_rejected() {
    // Static relations: refused by the relation-level check.
    let e = gdl_error("(<= (p a) (d a) (not (q a))) (<= (q a) (d a) (not (p a))) (d a)");
    assert_eq!(e.kind, ErrorKind::Unstratified);
    // Dynamic relations: refused once ground, naming the sentences.
    let source = format!("{PRELUDE}(<= p (true s) (not q)) (<= q (true s) (not p)) (<= (goal r 0) p)");
    match load(&source, &Default::default()) {
        Err(LoadError::Cycle(e)) => assert!(e.sentences.contains(&"p".to_owned()), "{e}"),
        Err(e) => panic!("expected a cycle error, got {e}"),
        Ok(_) => panic!("expected a cycle error"),
    }
}

#[test]
fn ground_stratified_negation_is_accepted() {
    // Relation-level recursion through `not`, stratified atom by atom (as in hexPie).
    let loaded = loads(
        "(role r) (init s) (<= (legal r go) (true s)) (<= (next s) (does r go)) (<= terminal (not (true s)))
         (<= (goal r 100) (true z)) (<= (goal r 0) (true s) (not (goal r 100)))",
    );
    let mut machine = loaded.machine();
    let start = machine.initial_state();
    assert_eq!(machine.goals(&start), vec![vec![0]]);
}

#[test]
fn recursion_restriction_is_enforced() {
    let e = gdl_error("(nat z) (<= (nat (s ?x)) (nat ?x))\n(<= (count ?y) (true s) (count ?x) (succ ?x ?y))");
    assert_eq!(e.kind, ErrorKind::RecursionRestriction);
    assert!(e.message.contains("?x"), "{e}");
}

#[test]
fn keyword_restrictions_are_enforced() {
    for (rule, needle) in [
        ("(<= (true t) (true s))", "'true' may not be the head"),
        ("(<= (does r go) (true s))", "'does' may not be the head"),
        ("(<= p (next s))", "'next' may only appear in the head"),
        ("(<= p (init s))", "'init' may only appear in the head"),
        ("(<= (role q) (true s))", "'role' may only appear in ground facts"),
        ("(<= (init t) (true s))", "'init' depends on 'true' or 'does'"),
        ("(<= (legal r stop) (does r go))", "'legal' depends on 'does'"),
        (
            "(<= (goal r 50) (moved)) (<= (moved) (does r go))",
            "'goal' depends on 'does'",
        ),
    ] {
        let e = gdl_error(rule);
        assert_eq!(e.kind, ErrorKind::Keyword, "{rule}");
        assert!(e.message.contains(needle), "{rule}: {e}");
    }
}

#[test]
fn illegal_and_unknown_moves_are_refused() {
    let loaded = loads(ggpnet::DEFAULT_GAME);
    let mut machine = loaded.machine();
    let start = machine.initial_state();
    let red = machine.role_index("red").unwrap();
    let yellow = machine.role_index("yellow").unwrap();
    let e = machine.role_index("blue").unwrap_err();
    assert!(
        matches!(&e, MachineError::UnknownRole { name, .. } if name == "blue"),
        "{e:?}"
    );
    assert!(e.to_string().contains("unknown role 'blue'"), "{e}");
    let drop = machine.parse_move(red, "( drop  1 )").unwrap();
    let wait = machine.parse_move(yellow, "wait").unwrap();
    let e = machine.parse_move(red, "(drop 9)").unwrap_err();
    assert!(
        matches!(&e, MachineError::UnknownMove { text, .. } if text == "(drop 9)"),
        "{e:?}"
    );
    assert!(e.to_string().contains("unknown move (drop 9)"), "{e}");
    // Yellow may not drop while red is to move.
    let yellow_drop = machine.parse_move(yellow, "(drop 1)").unwrap();
    let e = machine.next_state(&start, &[drop, yellow_drop]).unwrap_err();
    assert!(
        matches!(&e, MachineError::IllegalMove { role, text } if role == "yellow" && text == "(drop 1)"),
        "{e:?}"
    );
    assert!(
        e.to_string().contains("illegal move (drop 1) for role yellow"),
        "{e}"
    );
    let e = machine.next_state(&start, &[wait, wait]).unwrap_err();
    assert!(matches!(&e, MachineError::WrongRole { .. }), "{e:?}");
    assert!(
        e.to_string().contains("belongs to role yellow, not to role red"),
        "{e}"
    );
    let e = machine.next_state(&start, &[drop]).unwrap_err();
    assert_eq!(
        e,
        MachineError::WrongJointLength {
            expected: 2,
            found: 1
        }
    );
    assert!(e.to_string().contains("one move per role"), "{e}");
    assert!(machine.next_state(&start, &[drop, wait]).is_ok());
}

#[test]
fn warnings_for_accepted_deviations() {
    let loaded = loads(&format!(
        "{PRELUDE}(<= (q) (true s) (not (distinct s s))) (<= (legal r stay)) (<= (terminal) (true q))"
    ));
    let warnings = loaded.report.warnings.join("\n");
    assert!(
        warnings.contains("sentence (terminal) read as terminal"),
        "{warnings}"
    );
    assert!(warnings.contains("sentence (q) has no arguments"), "{warnings}");
    assert!(warnings.contains("(not (distinct a b)) is not GDL"), "{warnings}");
    assert!(warnings.contains("empty body read as a fact"), "{warnings}");
}

#[test]
fn constant_outputs_are_kept() {
    // Terminal, legal and goal that hold from constants alone (test_case_1a style).
    let loaded =
        loads("(role r) (init s) (legal r go) (<= (next s) (true s)) (<= terminal (true s)) (goal r 42)");
    let mut machine = loaded.machine();
    let start = machine.initial_state();
    assert!(machine.is_terminal(&start));
    assert_eq!(machine.goals(&start), vec![vec![42]]);
    assert_eq!(machine.legal_moves(&start, 0).len(), 1);
}

#[test]
fn recursion_inside_a_state_reaches_its_least_fixpoint() {
    // Connectivity over the state: a cyclic circuit. Edges a-b and b-a never change,
    // so the reachable pass folds most of the cycle away; without it the cycle stays.
    let game = "(role r) (init (edge a b)) (init (edge b a)) (init (edge b c))
         (<= (reach ?x ?y) (true (edge ?x ?y)))
         (<= (reach ?x ?z) (reach ?x ?y) (true (edge ?y ?z)))
         (<= (legal r go) (true (edge a b)))
         (<= (next (edge ?x ?y)) (true (edge ?x ?y)) (distinct ?y c))
         (<= terminal (not (reach a c)))
         (<= (goal r 100) (reach a a)) (<= (goal r 0) (not (reach c a)))";
    let cyclic = OptimizeConfig::default().disable(Pass::Reachable);
    for optimize in [cyclic, OptimizeConfig::default()] {
        let keeps_cycles = !optimize.is_enabled(Pass::Reachable);
        let loaded = load(game, &LoadConfig::new().optimize(optimize)).unwrap();
        if keeps_cycles {
            assert!(loaded.report.sccs >= 1, "expected a cyclic component");
        }
        let mut machine = loaded.machine();
        let start = machine.initial_state();
        assert!(!machine.is_terminal(&start));
        assert_eq!(machine.goals(&start), vec![vec![0, 100]]);
        let go = machine.legal_moves(&start, 0);
        let next = machine.next_state(&start, &go).unwrap();
        assert!(machine.is_terminal(&next));
    }
}

/// The error of loading `source`, which must be a GDL error.
fn load_gdl_error(source: &str) -> ggpnet::grounder::GdlError {
    match load(source, &Default::default()) {
        Err(LoadError::Gdl(e)) => e,
        Err(other) => panic!("expected a GDL error, got {other}"),
        Ok(_) => panic!("expected a GDL error for {source}"),
    }
}

#[test]
fn games_that_cannot_be_played_are_refused() {
    let cases = [
        ("", "error: the game description is empty (no rules)"),
        (
            "; nothing but a comment\n",
            "error: the game description is empty (no rules)",
        ),
        (
            "(init s) (<= terminal (true s)) (goal r 100)",
            "error: game has no role (no (role ...) fact)",
        ),
        (
            "(role r) (init s) (legal r go) (goal r 100)",
            "error: no rule defines terminal",
        ),
        (
            "(role r)\n(role b) (init s) (legal r go) (legal b go) (<= terminal (true s)) (goal r 100)",
            "error at 2:1: role b has no goal rule\n  in rule (role b)",
        ),
        (
            "(role r) (role b) (init s) (legal r go) (<= terminal (true t)) (<= (goal ?p 0) (role ?p))",
            "error: role b has no legal move in the initial state",
        ),
    ];
    for (source, expected) in cases {
        let e = load_gdl_error(source);
        assert_eq!(e.kind, ErrorKind::Unplayable, "{source}");
        assert_eq!(e.to_string(), expected, "{source}");
    }
    // A game that is over from the start needs no legal move.
    let loaded = loads("(role r) (init s) (<= terminal (true s)) (goal r 100)");
    assert!(loaded.machine().is_terminal(&loaded.machine().initial_state()));
}

#[test]
fn repeated_roles_and_goal_values_out_of_range_are_warned() {
    let loaded = loads("(role r) (init s) (legal r go) (<= terminal (true t)) (goal r 150)\n(role r)");
    assert_eq!(
        loaded.report.warnings,
        vec![
            "warning at 2:1: role r declared again (first at 1:1); the repeat is ignored".to_owned(),
            "warning: goal value 150 of role r is outside 0..=100 (kept as is)".to_owned(),
        ]
    );
    assert_eq!(loaded.game.roles(), ["r".to_owned()]);
    // A goal value that is not an integer stays an error.
    let Err(LoadError::Build(e)) = load(
        "(role r) (init s) (legal r go) (<= terminal (true t)) (goal r high)",
        &Default::default(),
    ) else {
        panic!("expected a build error")
    };
    assert_eq!(
        e.to_string(),
        "error: goal value 'high' in (goal r high) is not an integer"
    );
}

#[test]
fn grounding_limits_are_errors_callers_can_tell_apart() {
    let config = LoadConfig::new().ground(ggpnet::grounder::Config::new().max_ground_rules(10));
    let source = format!("{PRELUDE}(n 1) (n 2) (n 3) (n 4) (<= (pair ?x ?y) (n ?x) (n ?y))");
    let e = load(&source, &config).err().expect("over the limit");
    assert!(e.is_limit());
    assert_eq!(
        e.to_string(),
        "error: grounding too large: more than 10 ground rules (at relation `pair`); raise --max-ground-rules"
    );
    assert!(!load("(role r", &Default::default())
        .err()
        .expect("parse error")
        .is_limit());
}
