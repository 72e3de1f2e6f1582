//! The agent API of the facade (`ggpnet::Game`, `Machine`, playouts): the two
//! engines agree move by move, requests that make no sense are refused with an
//! error, and a game too large for the propnet falls back to the interpreter.

use ggpnet::{
    Budget, Config, Engine, EngineChoice, Error, Game, LoadError, Machine, MachineError, Move, PlayoutEnd,
    Playouts, State, Stream,
};
use std::collections::HashSet;

/// Tic-tac-toe, written for this project's tests.
const TIC_TAC_TOE: &str = include_str!("../games/tic_tac_toe.kif");

fn load(text: &str, engine: EngineChoice) -> Game {
    let config = Config::new().engine(engine);
    Game::load(text, &config).unwrap_or_else(|e| panic!("{e}"))
}

/// Sorted move texts of `role` in `state`.
fn legal_texts(game: &Game, machine: &mut Machine, state: &State, role: usize) -> Vec<String> {
    let mut texts: Vec<String> = machine
        .legal_moves(state, role)
        .unwrap()
        .iter()
        .map(|m| game.move_to_kif(m).unwrap())
        .collect();
    texts.sort();
    texts
}

/// Plays random games on the propnet and, move for move, on the interpreter,
/// comparing states, legal moves, terminal and goals at every step.
#[test]
fn the_engines_agree_move_by_move() {
    for text in [TIC_TAC_TOE, ggpnet::DEFAULT_GAME] {
        let fast = load(text, EngineChoice::Propnet);
        let slow = load(text, EngineChoice::Interpreter);
        assert_eq!(fast.engine(), Engine::Propnet);
        assert_eq!(slow.engine(), Engine::Interpreter);
        assert_eq!(fast.roles(), slow.roles());
        let (mut fm, mut sm) = (fast.machine(), slow.machine());
        let mut rng = Stream::new(7, 0);
        for _ in 0..5 {
            let (mut f, mut s) = (fast.initial_state(), slow.initial_state());
            loop {
                assert_eq!(fast.state_to_kif(&f).unwrap(), slow.state_to_kif(&s).unwrap());
                assert_eq!(fm.goals(&f).unwrap(), sm.goals(&s).unwrap());
                let terminal = fm.is_terminal(&f).unwrap();
                assert_eq!(terminal, sm.is_terminal(&s).unwrap());
                if terminal {
                    break;
                }
                let (mut fj, mut sj) = (Vec::new(), Vec::new());
                for role in 0..fast.roles().len() {
                    let legal = legal_texts(&fast, &mut fm, &f, role);
                    assert_eq!(legal, legal_texts(&slow, &mut sm, &s, role));
                    let chosen = &legal[rng.draw(legal.len())];
                    fj.push(fast.parse_move(role, chosen).unwrap());
                    sj.push(slow.parse_move(role, chosen).unwrap());
                }
                f = fm.next_state(&f, &fj).unwrap();
                s = sm.next_state(&s, &sj).unwrap();
            }
        }
    }
}

/// The state after `x` marks the centre and `o` a corner.
fn mid_game(game: &Game, machine: &mut Machine) -> State {
    let mut state = game.initial_state();
    for (x, o) in [("(mark 2 2)", "noop"), ("noop", "(mark 1 1)")] {
        let joint = [game.parse_move(0, x).unwrap(), game.parse_move(1, o).unwrap()];
        state = machine.next_state(&state, &joint).unwrap();
    }
    state
}

#[test]
fn states_compare_and_hash_by_content_for_transposition_tables() {
    for engine in [EngineChoice::Propnet, EngineChoice::Interpreter] {
        let game = load(TIC_TAC_TOE, engine);
        let mut machine = game.machine();
        let a = mid_game(&game, &mut machine);
        let facts = game.state_to_kif(&a).unwrap();
        let b = game.state_from_kif(&facts).unwrap();
        assert_eq!(a, b);
        let seen: HashSet<State> = [a, b, game.initial_state()].into_iter().collect();
        assert_eq!(seen.len(), 2);
    }
}

#[test]
fn requests_that_make_no_sense_are_refused_by_kind() {
    for engine in [EngineChoice::Propnet, EngineChoice::Interpreter] {
        let game = load(TIC_TAC_TOE, engine);
        let other = load(TIC_TAC_TOE, engine);
        let mut machine = game.machine();
        let start = game.initial_state();
        let foreign = other.initial_state();
        let kind = |e: Error, expected: fn(&Error) -> bool, text: &str| {
            assert!(expected(&e), "{engine:?}: {e:?}");
            assert!(e.to_string().contains(text), "{engine:?}: {e}");
        };
        let foreign_state = |e: &Error| matches!(e, Error::ForeignState);
        kind(
            machine.legal_moves(&foreign, 0).unwrap_err(),
            foreign_state,
            "another game",
        );
        kind(
            machine.is_terminal(&foreign).unwrap_err(),
            foreign_state,
            "another game",
        );
        kind(
            game.state_to_kif(&foreign).unwrap_err(),
            foreign_state,
            "another game",
        );
        let no_role = |e: &Error| matches!(e, Error::NoSuchRole { role: 2, roles: 2 });
        kind(
            machine.legal_moves(&start, 2).unwrap_err(),
            no_role,
            "no role number 2",
        );
        let x_mark = game.parse_move(0, "(mark 1 1)").unwrap();
        let o_noop = game.parse_move(1, "noop").unwrap();
        let foreign_noop = other.parse_move(1, "noop").unwrap();
        let mut refused = |joint: &[Move]| machine.next_state(&start, joint).unwrap_err();
        let foreign_move = |e: &Error| matches!(e, Error::ForeignMove);
        kind(
            refused(&[x_mark.clone(), foreign_noop]),
            foreign_move,
            "another game",
        );
        let wrong_role = |e: &Error| matches!(e, Error::Refused(MachineError::WrongRole { owner, role, .. }) if owner == "o" && role == "x");
        kind(
            refused(&[o_noop.clone(), x_mark.clone()]),
            wrong_role,
            "belongs to role o, not to role x",
        );
        let length = |e: &Error| {
            matches!(
                e,
                Error::Refused(MachineError::WrongJointLength {
                    expected: 2,
                    found: 1
                })
            )
        };
        kind(
            refused(std::slice::from_ref(&x_mark)),
            length,
            "one move per role (2), got 1",
        );
        let o_mark = game.parse_move(1, "(mark 1 1)").unwrap();
        let x_noop = game.parse_move(0, "noop").unwrap();
        let illegal = |e: &Error| matches!(e, Error::Refused(MachineError::IllegalMove { role, text }) if role == "x" && text == "noop");
        kind(
            refused(&[x_noop, o_mark]),
            illegal,
            "illegal move noop for role x in this state",
        );
        let unreadable = |e: &Error| matches!(e, Error::Refused(MachineError::Unreadable { .. }));
        kind(
            game.parse_move(0, "(mark 1").unwrap_err(),
            unreadable,
            "cannot read '(mark 1'",
        );
        let fact = |e: &Error| {
            matches!(
                e,
                Error::Refused(MachineError::UnknownFact { .. }) | Error::Interpreter(_)
            )
        };
        kind(
            game.state_from_kif(&["(cell 9 9 q)".to_owned()]).unwrap_err(),
            fact,
            "(cell 9 9 q)",
        );
        assert!(machine.next_state(&start, &[x_mark, o_noop]).is_ok());
    }
}

/// What an agent sees when a game does not load: a parse error with its line
/// and column, and a grounding limit with its name and value, as kinds.
#[test]
fn load_errors_are_matched_by_kind() {
    use ggpnet::grounder::ErrorKind;
    use ggpnet::propnet::LoadError as Propnet;
    match Game::load("(role r)\n(init (p 1)\n", &Config::default()) {
        Err(LoadError::Propnet(Propnet::Parse(e))) => {
            assert_eq!((e.span.line, e.span.column), (2, 1), "{e}");
        }
        other => panic!("a parse error expected: {other:?}"),
    }
    let config = Config::new().engine(EngineChoice::Propnet).max_ground_rules(10);
    match Game::load(TIC_TAC_TOE, &config) {
        Err(e @ LoadError::Propnet(Propnet::Gdl(_))) => {
            assert!(e.is_limit(), "{e}");
            let LoadError::Propnet(Propnet::Gdl(gdl)) = &e else {
                unreachable!()
            };
            let limit = ggpnet::grounder::Limit::Rules;
            assert_eq!(gdl.kind, ErrorKind::TooLarge { limit, max: 10 });
            assert!(e.to_string().contains("10"), "the limit's value is named: {e}");
            assert!(
                std::error::Error::source(&e).is_some(),
                "the propnet's error is the source"
            );
        }
        other => panic!("a limit expected: {other:?}"),
    }
}

#[test]
fn playouts_from_a_state_start_there_on_both_engines() {
    for engine in [EngineChoice::Propnet, EngineChoice::Interpreter] {
        let game = load(TIC_TAC_TOE, engine);
        let mut machine = game.machine();
        let mid = mid_game(&game, &mut machine);
        let mut rng = Stream::new(3, 0);
        for _ in 0..50 {
            match machine.playout(&mid, &mut rng).unwrap() {
                // Seven cells are left: the game ends within seven moves, and
                // after at least three (a line needs three marks of one player).
                PlayoutEnd::Terminal { depth, goals } => {
                    assert!((3..=7).contains(&depth), "depth {depth}");
                    assert!(goals.iter().all(Option::is_some));
                }
                PlayoutEnd::Abandoned { depth } => panic!("abandoned at {depth}"),
            }
        }
        let how = Playouts::new(Budget::Playouts(100)).threads(2).seed(5);
        let report = game.playouts(&mid, &how).unwrap();
        let t = &report.totals;
        assert!(t.playouts >= 100 && t.abandoned == 0);
        assert!(t.depth_sum >= 3 * t.playouts && t.depth_sum <= 7 * t.playouts);
        assert_eq!(report.engine, game.engine());
        // Goals of x and o sum to 100 in every terminal state of tic-tac-toe.
        let avg = report.avg_goals();
        let sum = avg[0].unwrap() + avg[1].unwrap();
        assert!((sum - 100.0).abs() < 1e-9, "{avg:?}");
    }
}

#[test]
fn a_playout_from_a_terminal_state_has_depth_zero() {
    let game = load(TIC_TAC_TOE, EngineChoice::Interpreter);
    let mut machine = game.machine();
    let mut state = game.initial_state();
    let mut rng = Stream::new(1, 0);
    while !machine.is_terminal(&state).unwrap() {
        let joint: Vec<_> = (0..2)
            .map(|r| machine.random_move(&state, r, &mut rng).unwrap().unwrap())
            .collect();
        state = machine.next_state(&state, &joint).unwrap();
    }
    let goals = machine.goals(&state).unwrap();
    assert_eq!(
        machine.playout(&state, &mut rng).unwrap(),
        PlayoutEnd::Terminal { depth: 0, goals }
    );
}

#[test]
fn bad_playout_settings_are_refused() {
    let game = load(TIC_TAC_TOE, EngineChoice::Propnet);
    let start = game.initial_state();
    for how in [
        Playouts::new(Budget::Playouts(1)).threads(0),
        Playouts::new(Budget::Playouts(1)).threads(ggpnet::MAX_THREADS + 1),
        Playouts::new(Budget::Seconds(f64::NAN)),
        Playouts::new(Budget::Seconds(-1.0)),
    ] {
        let refused = game.playouts(&start, &how).expect_err("refused");
        assert!(
            matches!(refused, Error::InvalidSetting { .. }),
            "{how:?}: {refused:?}"
        );
    }
    let refused = game.playouts(&start, &Playouts::new(Budget::Playouts(1)).threads(0));
    let expected = format!("error: threads must be 1 to {}, not 0", ggpnet::MAX_THREADS);
    assert_eq!(refused.unwrap_err().to_string(), expected);
}

/// A game whose grounding passes a small rule limit loads on the interpreter
/// under `Auto`, says why, and plays; `Propnet` refuses it.
#[test]
fn a_game_past_the_grounding_limits_falls_back_to_the_interpreter() {
    let config = Config::new().max_ground_rules(10);
    let game = Game::load(TIC_TAC_TOE, &config).unwrap();
    assert_eq!(game.engine(), Engine::Interpreter);
    let why = game.fallback_reason().expect("a reason");
    assert!(why.contains("--max-ground-rules"), "{why}");
    assert!(game.propnet().is_none() && game.evaluator().is_none());
    let report = game
        .playouts(&game.initial_state(), &Playouts::new(Budget::Playouts(20)))
        .unwrap();
    assert_eq!(report.totals.playouts, 20);

    let error = Game::load(TIC_TAC_TOE, &config.engine(EngineChoice::Propnet)).unwrap_err();
    assert!(error.is_limit(), "{error}");
}

#[test]
fn invalid_games_are_refused_by_either_engine() {
    for engine in [EngineChoice::Auto, EngineChoice::Interpreter] {
        let config = Config::new().engine(engine);
        let missing_paren = Game::load("(role r", &config).unwrap_err();
        assert!(missing_paren.to_string().contains("1:"), "{missing_paren}");
        let no_terminal = Game::load("(role r) (init a) (<= (legal r go) (true a)) (goal r 0)", &config);
        assert!(no_terminal.is_err());
    }
}

/// The interpreter's refusals are kinds too: a parse error with its place, a
/// role without a move.
#[test]
fn the_interpreters_refusals_are_matched_by_kind() {
    let config = Config::new().engine(EngineChoice::Interpreter);
    match Game::load("(role r)\n(init a", &config) {
        Err(LoadError::Interpreter {
            propnet: None,
            refusal: ggpnet::Refusal::Parse(e),
        }) => assert_eq!(e.span.line, 2, "{e}"),
        other => panic!("a parse error expected: {other:?}"),
    }
    let stuck = "(role r) (role s) (init a) (<= (legal r go) (true a)) (<= (legal s go) (true b)) \
                 (<= terminal (true b)) (goal r 0) (goal s 0)";
    match Game::load(stuck, &config) {
        Err(LoadError::Interpreter {
            refusal: ggpnet::Refusal::NoLegalMove { role },
            ..
        }) => assert_eq!(role, "s"),
        other => panic!("a role without a move expected: {other:?}"),
    }
}

#[test]
fn games_and_machines_cross_threads() {
    fn shared<T: Send + Sync + Clone>() {}
    fn sent<T: Send>() {}
    shared::<Game>();
    sent::<Machine>();
    shared::<State>();
    shared::<ggpnet::Move>();
}

/// The states of one random game of tic-tac-toe played on both engines at
/// once (the same moves), from the initial state to the terminal one.
fn states_of_a_game(fast: &Game, slow: &Game, seed: u64) -> Vec<(State, State)> {
    let (mut fm, mut sm) = (fast.machine(), slow.machine());
    let mut rng = Stream::new(seed, 0);
    let mut states = vec![(fast.initial_state(), slow.initial_state())];
    loop {
        let (f, s) = states.last().unwrap().clone();
        if fm.is_terminal(&f).unwrap() {
            return states;
        }
        let joint = fm.random_joint_move(&f, &mut rng).unwrap().unwrap();
        let texts: Vec<String> = joint.iter().map(|m| fast.move_to_kif(m).unwrap()).collect();
        let sj: Vec<Move> = texts
            .iter()
            .enumerate()
            .map(|(role, text)| slow.parse_move(role, text).unwrap())
            .collect();
        states.push((
            fm.next_state(&f, &joint).unwrap(),
            sm.next_state(&s, &sj).unwrap(),
        ));
    }
}

/// The successors of `state` as KIF: each joint move's texts and the next
/// state's facts, sorted.
fn successors_as_kif(game: &Game, machine: &mut Machine, state: &State) -> Vec<(Vec<String>, Vec<String>)> {
    let mut kif: Vec<_> = machine
        .successors(state)
        .unwrap()
        .iter()
        .map(|(joint, next)| {
            let texts = joint.iter().map(|m| game.move_to_kif(m).unwrap()).collect();
            (texts, game.state_to_kif(next).unwrap())
        })
        .collect();
    kif.sort();
    kif
}

#[test]
fn successors_and_legal_joint_moves_agree_between_the_engines() {
    let fast = load(TIC_TAC_TOE, EngineChoice::Propnet);
    let slow = load(TIC_TAC_TOE, EngineChoice::Interpreter);
    let (mut fm, mut sm) = (fast.machine(), slow.machine());
    let mut compared = 0;
    for seed in 0..3 {
        for (f, s) in states_of_a_game(&fast, &slow, seed) {
            let successors = successors_as_kif(&fast, &mut fm, &f);
            assert_eq!(successors, successors_as_kif(&slow, &mut sm, &s));
            compared += successors.len();
        }
    }
    assert!(compared > 50, "{compared} successors compared");
}

#[test]
fn legal_joint_moves_are_every_combination_in_role_order() {
    for engine in [EngineChoice::Propnet, EngineChoice::Interpreter] {
        let game = load(TIC_TAC_TOE, engine);
        let mut machine = game.machine();
        let mid = mid_game(&game, &mut machine);
        for state in [game.initial_state(), mid] {
            let x = machine.legal_moves(&state, 0).unwrap();
            let o = machine.legal_moves(&state, 1).unwrap();
            let expected: Vec<Vec<Move>> = x
                .iter()
                .flat_map(|a| o.iter().map(move |b| vec![a.clone(), b.clone()]))
                .collect();
            let joints = machine.legal_joint_moves(&state).unwrap();
            assert_eq!(
                joints, expected,
                "{engine:?}: the first role's move changes slowest"
            );
            let successors = machine.successors(&state).unwrap();
            assert_eq!(successors.len(), joints.len());
            for ((joint, next), expected) in successors.iter().zip(&joints) {
                assert_eq!(joint, expected);
                assert_eq!(*next, machine.next_state(&state, joint).unwrap());
            }
        }
        let foreign = load(TIC_TAC_TOE, engine).initial_state();
        assert_eq!(machine.successors(&foreign).unwrap_err(), Error::ForeignState);
        assert_eq!(
            machine.legal_joint_moves(&foreign).unwrap_err(),
            Error::ForeignState
        );
    }
}

/// A game whose only role has no legal move once it has moved (and which is
/// not over then, to be played past its end by mistake).
const STUCK: &str = "(role r) (init a) (<= (legal r go) (true a)) (<= (next b) (does r go))
    (<= terminal (true c)) (goal r 0)";

#[test]
fn a_state_where_a_role_has_no_legal_move_has_no_joint_move() {
    for engine in [EngineChoice::Propnet, EngineChoice::Interpreter] {
        let game = load(STUCK, engine);
        let mut machine = game.machine();
        let start = game.initial_state();
        let mut rng = Stream::new(1, 0);
        let go = machine.random_joint_move(&start, &mut rng).unwrap().unwrap();
        let stuck = machine.next_state(&start, &go).unwrap();
        assert!(!machine.is_terminal(&stuck).unwrap());
        assert_eq!(machine.random_joint_move(&stuck, &mut rng).unwrap(), None);
        assert_eq!(
            machine.legal_joint_moves(&stuck).unwrap(),
            Vec::<Vec<Move>>::new()
        );
        assert!(machine.successors(&stuck).unwrap().is_empty());
    }
}

/// Four roles with 33 moves each: 33^4 = 1,185,921 joint moves.
fn crowded() -> String {
    let mut text = String::from("(role a) (role b) (role c) (role d) (init s) (<= terminal (true t))");
    for n in 1..=33 {
        text += &format!(" (num {n})");
    }
    text + " (<= (legal ?r (pick ?n)) (role ?r) (num ?n)) (<= (next t) (does a (pick 1))) (<= (next s) (true s)) (<= (goal ?r 0) (role ?r))"
}

#[test]
fn too_many_joint_moves_are_refused_by_kind_not_listed() {
    for engine in [EngineChoice::Propnet, EngineChoice::Interpreter] {
        let game = load(&crowded(), engine);
        let mut machine = game.machine();
        let start = game.initial_state();
        let count = 33u128.pow(4);
        assert!(count > ggpnet::MAX_JOINT_MOVES as u128);
        let refused = machine.legal_joint_moves(&start).unwrap_err();
        assert_eq!(refused, Error::TooManyJointMoves { count }, "{engine:?}");
        assert!(refused.to_string().contains("1185921 joint moves"), "{refused}");
        assert_eq!(machine.successors(&start).unwrap_err(), refused);
        // One joint move at random is still fine.
        let joint = machine.random_joint_move(&start, &mut Stream::new(1, 0)).unwrap();
        assert_eq!(joint.map(|j| j.len()), Some(4));
    }
}

#[test]
fn random_joint_moves_are_legal_and_cover_the_moves() {
    for engine in [EngineChoice::Propnet, EngineChoice::Interpreter] {
        let game = load(TIC_TAC_TOE, engine);
        let mut machine = game.machine();
        let start = game.initial_state();
        let legal: HashSet<Vec<Move>> = machine.legal_joint_moves(&start).unwrap().into_iter().collect();
        let mut rng = Stream::new(9, 0);
        let drawn: HashSet<Vec<Move>> = (0..300)
            .map(|_| machine.random_joint_move(&start, &mut rng).unwrap().unwrap())
            .collect();
        assert_eq!(drawn, legal, "{engine:?}: all nine marks drawn, nothing else");
        let o_noop = game.parse_move(1, "noop").unwrap();
        let fixed = [None, Some(o_noop.clone())];
        for _ in 0..20 {
            let joint = machine
                .random_joint_move_with(&start, &fixed, &mut rng)
                .unwrap()
                .unwrap();
            assert_eq!(joint[1], o_noop);
            assert!(legal.contains(&joint));
        }
    }
}

#[test]
fn fixed_moves_of_a_random_joint_move_are_refused_by_kind() {
    for engine in [EngineChoice::Propnet, EngineChoice::Interpreter] {
        let game = load(TIC_TAC_TOE, engine);
        let other = load(TIC_TAC_TOE, engine);
        let mut machine = game.machine();
        let start = game.initial_state();
        let mut rng = Stream::new(1, 0);
        let mut refused = |fixed: &[Option<Move>]| {
            machine
                .random_joint_move_with(&start, fixed, &mut rng)
                .unwrap_err()
        };
        let foreign = other.parse_move(1, "noop").unwrap();
        assert_eq!(refused(&[None, Some(foreign)]), Error::ForeignMove, "{engine:?}");
        let x_mark = game.parse_move(0, "(mark 1 1)").unwrap();
        let wrong_role = refused(&[None, Some(x_mark)]);
        assert!(
            matches!(&wrong_role, Error::Refused(MachineError::WrongRole { owner, role, .. }) if owner == "x" && role == "o"),
            "{engine:?}: {wrong_role:?}"
        );
        let x_noop = game.parse_move(0, "noop").unwrap();
        let illegal = refused(&[Some(x_noop), None]);
        assert!(
            matches!(&illegal, Error::Refused(MachineError::IllegalMove { role, text }) if role == "x" && text == "noop"),
            "{engine:?}: {illegal:?}"
        );
        let short = refused(&[None]);
        assert!(
            matches!(
                short,
                Error::Refused(MachineError::WrongJointLength {
                    expected: 2,
                    found: 1
                })
            ),
            "{engine:?}: {short:?}"
        );
        let foreign_state = other.initial_state();
        assert_eq!(
            machine.random_joint_move(&foreign_state, &mut rng).unwrap_err(),
            Error::ForeignState
        );
    }
}

#[test]
fn moves_and_states_print_as_kif_and_foreign_ones_as_a_marker() {
    for engine in [EngineChoice::Propnet, EngineChoice::Interpreter] {
        let game = load(TIC_TAC_TOE, engine);
        let other = load(TIC_TAC_TOE, engine);
        let mut machine = game.machine();
        let mid = mid_game(&game, &mut machine);
        let shown = game.display_state(&mid).to_string();
        assert_eq!(shown, game.state_to_kif(&mid).unwrap().join(" "));
        assert!(
            shown.contains("(cell 2 2 x) ") && shown.contains("(control x)"),
            "{shown}"
        );
        let m = game.parse_move(0, "(mark  3 1)").unwrap();
        assert_eq!(format!("{}", game.display_move(&m)), "(mark 3 1)");
        assert_eq!(other.display_move(&m).to_string(), "<move of another game>");
        assert_eq!(
            format!("[{}]", other.display_state(&mid)),
            "[<state of another game>]"
        );
    }
}

#[test]
fn legal_moves_into_clears_and_fills_the_buffer() {
    for engine in [EngineChoice::Propnet, EngineChoice::Interpreter] {
        let game = load(TIC_TAC_TOE, engine);
        let mut machine = game.machine();
        let mid = mid_game(&game, &mut machine);
        let mut buffer = vec![game.parse_move(1, "noop").unwrap(); 20];
        for (state, role) in [(game.initial_state(), 1), (mid.clone(), 1), (mid.clone(), 0)] {
            machine.legal_moves_into(&state, role, &mut buffer).unwrap();
            assert_eq!(buffer, machine.legal_moves(&state, role).unwrap(), "{engine:?}");
        }
        assert_eq!(buffer.len(), 7, "{engine:?}: x marks one of seven cells");
        let kept = buffer.clone();
        let foreign = load(TIC_TAC_TOE, engine).initial_state();
        let refused = machine.legal_moves_into(&foreign, 0, &mut buffer);
        assert_eq!(refused, Err(Error::ForeignState));
        let no_role = machine.legal_moves_into(&mid, 2, &mut buffer).unwrap_err();
        assert!(matches!(no_role, Error::NoSuchRole { role: 2, roles: 2 }));
        assert_eq!(buffer, kept, "a refused request leaves the buffer alone");
    }
}

#[test]
fn a_playout_to_the_end_gives_its_last_state() {
    for engine in [EngineChoice::Propnet, EngineChoice::Interpreter] {
        let game = load(TIC_TAC_TOE, engine);
        let mut machine = game.machine();
        let mid = mid_game(&game, &mut machine);
        for seed in 0..20 {
            let (end, last) = machine.playout_to_end(&mid, &mut Stream::new(seed, 0)).unwrap();
            assert_eq!(end, machine.playout(&mid, &mut Stream::new(seed, 0)).unwrap());
            let PlayoutEnd::Terminal { depth, goals } = end else {
                panic!("{engine:?}: tic-tac-toe ends")
            };
            assert!(machine.is_terminal(&last).unwrap());
            assert_eq!(machine.goals(&last).unwrap(), goals);
            let marks = game.state_to_kif(&last).unwrap();
            let marks = marks
                .iter()
                .filter(|f| f.starts_with("(cell") && !f.ends_with(" b)"));
            assert_eq!(marks.count() as u64, 2 + depth, "{engine:?}: one mark per move");
        }
        let foreign = load(TIC_TAC_TOE, engine).initial_state();
        let refused = machine.playout_to_end(&foreign, &mut Stream::new(1, 0));
        assert_eq!(refused.unwrap_err(), Error::ForeignState);
    }
}

#[test]
fn a_playout_cut_at_the_depth_limit_gives_the_state_it_stopped_in() {
    for engine in [EngineChoice::Propnet, EngineChoice::Interpreter] {
        let config = Config::new().engine(engine).max_playout_depth(2).unwrap();
        let game = Game::load(TIC_TAC_TOE, &config).unwrap();
        let mut machine = game.machine();
        let (end, last) = machine
            .playout_to_end(&game.initial_state(), &mut Stream::new(4, 0))
            .unwrap();
        assert_eq!(end, PlayoutEnd::Abandoned { depth: 2 }, "{engine:?}");
        let facts = game.state_to_kif(&last).unwrap();
        assert!(facts.contains(&"(control x)".to_owned()), "{facts:?}");
        assert_eq!(
            facts.iter().filter(|f| f.ends_with(" b)")).count(),
            7,
            "{facts:?}"
        );
    }
}

#[test]
fn playouts_run_on_every_core_by_default() {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    for engine in [EngineChoice::Propnet, EngineChoice::Interpreter] {
        let game = load(TIC_TAC_TOE, engine);
        let how = Playouts::new(Budget::Playouts(40));
        let report = game.playouts(&game.initial_state(), &how).unwrap();
        assert_eq!(report.threads, cores.min(ggpnet::MAX_THREADS), "{engine:?}");
        assert!(report.totals.playouts >= 40);
    }
}

#[test]
fn calibration_runs_when_asked_and_is_reported_once() {
    let game = load(TIC_TAC_TOE, EngineChoice::Propnet);
    let first = game.calibrate().unwrap();
    assert!(ggpnet::EvaluatorKind::ALL.contains(&first.evaluator));
    assert!(first.seconds > 0.0, "the first call measures: {first:?}");
    let again = game.calibrate().unwrap();
    assert_eq!((again.evaluator, again.seconds), (first.evaluator, 0.0));
    assert_eq!(game.evaluator(), Some(first.evaluator));
    let report = game
        .playouts(
            &game.initial_state(),
            &Playouts::new(Budget::Playouts(10)).threads(1),
        )
        .unwrap();
    assert_eq!(report.evaluator, Some(first.evaluator));
    assert!(load(TIC_TAC_TOE, EngineChoice::Interpreter).calibrate().is_none());
}

#[test]
fn a_machine_honours_the_native_setting() {
    let interpreted = Game::load(
        TIC_TAC_TOE,
        &Config::new().engine(EngineChoice::Propnet).native(false),
    )
    .unwrap();
    let native = load(TIC_TAC_TOE, EngineChoice::Propnet);
    let (mut im, mut nm) = (interpreted.machine(), native.machine());
    assert!(format!("{im:?}").contains("interpreted"), "{im:?}");
    assert!(format!("{nm:?}").contains("native"), "{nm:?}");
    let start = (interpreted.initial_state(), native.initial_state());
    assert_eq!(
        successors_as_kif(&interpreted, &mut im, &start.0),
        successors_as_kif(&native, &mut nm, &start.1)
    );
}
