//! Real-time GDL: the example games of games/rtgdl/ computed by hand, the
//! timed playouts checked event by event, the refused constructs (reason and
//! line:col) and the API's validation.

mod scratch;

use ggpnet::realtime::{Engine, EngineChoice, RtGame, TimeModel, TimedEnd, TimedState};
use ggpnet::realtime::{Lifetime, Time};
use ggpnet::Stream;

/// Every example game.
const GAMES: [&str; 6] = ["tictactoe", "chessclock", "cheshire", "respawn", "xwing", "rts"];

fn t(text: &str) -> Time {
    Time::parse(text).unwrap()
}

fn source(name: &str) -> String {
    let path = format!(
        "{}/games/rtgdl/{name}.kif",
        ggpnet_tools::corpus::project_root().display()
    );
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

fn game(name: &str) -> RtGame {
    RtGame::load(&source(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// The game on the interpreter and on the propnet.
fn engines(name: &str) -> [RtGame; 2] {
    let on = |engine| RtGame::load_with(&source(name), engine).unwrap_or_else(|e| panic!("{name}: {e}"));
    [on(EngineChoice::Interpreter), on(EngineChoice::Propnet)]
}

/// A game outside the fragment the propnet compiles: it compares a lifetime (3:1).
const OUTSIDE: &str =
    "(role r) (legal r go) (goal r 0) (<= terminal (true ?t x))\n(init 1 a)\n(<= (next 1 b) (true 1 a))";

/// The pairs of `state` as `lifetime fact`, sorted by fact.
fn shown(game: &RtGame, state: &TimedState) -> Vec<String> {
    let pairs = game.pairs(state).unwrap();
    pairs.iter().map(|(l, f)| format!("{l} {f}")).collect()
}

fn update(game: &RtGame, state: &TimedState, elapsed: &str, moves: &[Option<&str>]) -> TimedState {
    let moves: Vec<Option<String>> = moves.iter().map(|m| m.map(str::to_owned)).collect();
    game.update(state, t(elapsed), &moves).unwrap()
}

#[test]
fn cheshire_cat_appears_and_disappears_by_hand() {
    for game in engines("cheshire") {
        let s0 = game.initial_state();
        assert_eq!(shown(&game, &s0), ["1 (appear cat)", "10 daylight"]);
        assert_eq!(game.next_expiry(&s0).unwrap(), Some(t("1")));
        assert_eq!(game.legal_moves(&s0, 0).unwrap(), ["(catch cat)"]);
        // After 1.0 the cat disappears for 3.0; daylight is lowered to 9.
        let s1 = update(&game, &s0, "1.0", &[None, None]);
        assert_eq!(shown(&game, &s1), ["3 (disappear cat)", "9 daylight"]);
        assert!(game.legal_moves(&s1, 0).unwrap().is_empty());
        // After 3.0 more it is back for 1.0.
        let s2 = update(&game, &s1, "3", &[None, None]);
        assert_eq!(shown(&game, &s2), ["1 (appear cat)", "6 daylight"]);
        // The Hatter catches it 0.37 later: caught holds forever, the cat is gone.
        let s3 = update(&game, &s2, "0.37", &[None, Some("(catch cat)")]);
        assert_eq!(shown(&game, &s3), ["infinity (caught hatter)", "5.63 daylight"]);
        assert!(game.is_terminal(&s3).unwrap());
        assert_eq!(game.goals(&s3).unwrap(), [Some(0), Some(100)]);
        // Nobody catches it: it is visible over [0,1), [4,5), [8,9), and night falls at 10.
        let mut state = s0;
        let mut clock = Time::ZERO;
        while !game.is_terminal(&state).unwrap() {
            let expiry = game.next_expiry(&state).unwrap().unwrap();
            clock = clock.checked_add(expiry).unwrap();
            state = game.update(&state, expiry, &[None, None]).unwrap();
        }
        assert_eq!(clock, t("10"));
        assert_eq!(shown(&game, &state), ["2 (disappear cat)", "infinity night"]);
        assert_eq!(game.goals(&state).unwrap(), [Some(0), Some(0)]);
    }
}

#[test]
fn tic_tac_toe_control_and_timeout_by_hand() {
    for game in engines("tictactoe") {
        let s0 = game.initial_state();
        assert_eq!(game.legal_moves(&s0, 0).unwrap().len(), 9);
        assert!(game.legal_moves(&s0, 1).unwrap().is_empty());
        let s1 = update(&game, &s0, "0.5", &[Some("(mark 2 2)"), None]);
        let facts = shown(&game, &s1);
        assert!(
            facts.contains(&"infinity (cell 2 2 xplayer)".to_owned()),
            "{facts:?}"
        );
        assert!(facts.contains(&"1 (control oplayer)".to_owned()), "{facts:?}");
        assert_eq!(facts.len(), 10);
        // The o player lets its control expire: it loses.
        let s2 = update(&game, &s1, "1", &[None, None]);
        assert!(shown(&game, &s2).contains(&"infinity (timeout oplayer)".to_owned()));
        assert!(game.is_terminal(&s2).unwrap());
        assert_eq!(game.goals(&s2).unwrap(), [Some(100), Some(0)]);
        // A move arriving exactly as control expires: both in the same update.
        let s3 = update(&game, &s0, "1", &[Some("(mark 1 1)"), None]);
        let facts = shown(&game, &s3);
        assert!(
            facts.contains(&"infinity (timeout xplayer)".to_owned()),
            "{facts:?}"
        );
        assert!(facts.contains(&"1 (control oplayer)".to_owned()), "{facts:?}");
        assert_eq!(game.goals(&s3).unwrap(), [Some(0), Some(100)]);
    }
}

#[test]
fn chess_clock_copies_lifetimes_by_hand() {
    for game in engines("chessclock") {
        let s0 = game.initial_state();
        assert_eq!(game.next_expiry(&s0).unwrap(), Some(t("3")));
        let s1 = update(&game, &s0, "0.75", &[Some("(take 2)"), None]);
        assert_eq!(
            shown(&game, &s1),
            [
                "infinity (control black)",
                "infinity (sticks 5)",
                "infinity (timer black 3.0)",
                "infinity (timer white 2.25)",
                "3 clock"
            ]
        );
        let s2 = update(&game, &s1, "1.5", &[None, Some("(take 1)")]);
        assert_eq!(
            shown(&game, &s2),
            [
                "infinity (control white)",
                "infinity (sticks 4)",
                "infinity (timer black 1.5)",
                "infinity (timer white 2.25)",
                "2.25 clock"
            ]
        );
        // White's flag falls 2.25 later.
        let s3 = update(&game, &s2, "2.25", &[None, None]);
        assert!(shown(&game, &s3).contains(&"infinity (flagfall white)".to_owned()));
        assert_eq!(game.goals(&s3).unwrap(), [Some(0), Some(100)]);
    }
}

#[test]
fn build_order_takes_time_by_hand() {
    for game in engines("rts") {
        let s0 = game.initial_state();
        assert_eq!(game.legal_moves(&s0, 0).unwrap(), ["(build barracks)", "scout"]);
        let s1 = update(&game, &s0, "0.5", &[Some("(build barracks)")]);
        assert_eq!(
            shown(&game, &s1),
            [
                "infinity (constructed none)",
                "infinity (gold 340)",
                "6 (underConstruction barracks)",
                "14.5 deadline"
            ]
        );
        assert_eq!(game.legal_moves(&s1, 0).unwrap(), ["scout"]);
        let s2 = update(&game, &s1, "6", &[None]);
        assert_eq!(game.legal_moves(&s2, 0).unwrap(), ["(build blacksmith)", "scout"]);
        assert_eq!(game.goals(&s2).unwrap(), [Some(50)]);
        assert!(shown(&game, &s2).contains(&"8.5 deadline".to_owned()));
    }
}

#[test]
fn respawn_times_come_from_fact_arguments_by_hand() {
    for game in engines("respawn") {
        let s0 = game.initial_state();
        // Blue steps onto the yellow armor at (1,2); it is picked up at the next update.
        let s1 = update(&game, &s0, "0.5", &[Some("(go 1 2)"), None]);
        let s2 = update(&game, &s1, "0.25", &[None, Some("(go 2 1)")]);
        let facts = shown(&game, &s2);
        assert!(
            facts.contains(&"2.5 (toRespawn 1 2 yellowArmor 2.5)".to_owned()),
            "{facts:?}"
        );
        assert!(facts.contains(&"infinity (score blue 1)".to_owned()), "{facts:?}");
        assert!(!facts.iter().any(|f| f.contains("(onMap 1 2")), "{facts:?}");
        // Green, now on the red armor, takes it at the next event, blue's move at 0.5.
        let s3 = update(&game, &s2, "0.5", &[Some("(go 1 1)"), None]);
        let facts = shown(&game, &s3);
        assert!(
            facts.contains(&"2 (toRespawn 1 2 yellowArmor 2.5)".to_owned()),
            "{facts:?}"
        );
        assert!(
            facts.contains(&"4 (toRespawn 2 1 redArmor 4.0)".to_owned()),
            "{facts:?}"
        );
        // The yellow armor respawns when its lifetime ends.
        let s4 = update(&game, &s3, "2", &[None, None]);
        assert!(shown(&game, &s4).contains(&"infinity (onMap 1 2 yellowArmor 2.5)".to_owned()));
    }
}

#[test]
fn xwing_moves_on_refresh_by_hand() {
    for game in engines("xwing") {
        let s0 = game.initial_state();
        let s1 = update(&game, &s0, "0.5", &[None]);
        assert!(shown(&game, &s1).contains(&"infinity (space 1 xwing)".to_owned()));
        assert!(shown(&game, &s1).contains(&"0.5 refresh".to_owned()));
        // A shot from 4 misses at 1; the gun cools down for 1.0.
        let s2 = update(&game, &s1, "0.1", &[Some("shoot")]);
        assert!(shown(&game, &s2).contains(&"1 cooldown".to_owned()));
        assert!(!game.legal_moves(&s2, 0).unwrap().contains(&"shoot".to_owned()));
        assert!(!game.is_terminal(&s2).unwrap());
        // Expiries: refresh at 0.4 (x-wing at 2), refresh at 0.5 (at 3), cooldown
        // at 0.1, refresh at 0.4 (at 4, aligned with the gun): then a shot hits.
        let mut state = s2;
        for (elapsed, at) in [("0.4", "2"), ("0.5", "3"), ("0.1", "3"), ("0.4", "4")] {
            assert_eq!(game.next_expiry(&state).unwrap(), Some(t(elapsed)));
            state = game.update(&state, t(elapsed), &[None]).unwrap();
            assert!(
                shown(&game, &state).contains(&format!("infinity (space {at} xwing)")),
                "{:?}",
                shown(&game, &state)
            );
        }
        assert!(game.legal_moves(&state, 0).unwrap().contains(&"shoot".to_owned()));
        let hit = update(&game, &state, "0.01", &[Some("shoot")]);
        assert_eq!(game.goals(&hit).unwrap(), [Some(100)]);
    }
}

/// Every event of 20 timed playouts per game and time model: Δt positive and
/// at most t_u, every move legal before, the state after recomputed by
/// `update`, and every playout ending in a terminal state with a goal for
/// every role (each game ends surely).
#[test]
fn timed_playouts_follow_the_update_event_by_event() {
    for name in GAMES {
        let game = game(name);
        for model in ["uniform:1", "exp:0.5"] {
            let model: TimeModel = model.parse().unwrap();
            for seed in 0..20 {
                let mut rng = Stream::new(seed, 0);
                let mut events = 0;
                let playout = game
                    .playout_with(&game.initial_state(), model, 10_000, &mut rng, |event| {
                        events += 1;
                        let expiry = game.next_expiry(&event.before).unwrap();
                        assert!(!event.elapsed.is_zero());
                        assert!(expiry.is_none_or(|t| event.elapsed <= t), "{name}");
                        assert!(
                            event.moves.iter().any(Option::is_some) || expiry == Some(event.elapsed),
                            "{name}: an update without an event"
                        );
                        for (role, chosen) in event.moves.iter().enumerate() {
                            if let Some(chosen) = chosen {
                                assert!(game.legal_moves(&event.before, role).unwrap().contains(chosen));
                            }
                        }
                        let again = game.update(&event.before, event.elapsed, &event.moves).unwrap();
                        assert_eq!(again, event.after, "{name}");
                    })
                    .unwrap();
                assert_eq!(playout.events, events);
                assert_eq!(playout.end, TimedEnd::Terminal, "{name} {model} seed {seed}");
                assert!(
                    playout.goals.iter().all(Option::is_some),
                    "{name}: {:?}",
                    playout.goals
                );
            }
        }
    }
}

#[test]
fn pending_moves_that_became_illegal_are_ignored() {
    // With long delays the cat often disappears before a catch arrives.
    let game = game("cheshire");
    let model: TimeModel = "exp:3".parse().unwrap();
    let run = || {
        game.playouts(
            &game.initial_state(),
            model,
            1000,
            ggpnet::Budget::Playouts(50),
            1,
            7,
        )
        .unwrap()
    };
    let report = run();
    assert!(report.totals.ignored_moves > 0);
    assert_eq!(report.totals.terminal, 50);
    // The same seed, budget and threads give the same totals.
    let again = run();
    assert_eq!(again.totals.events, report.totals.events);
    assert_eq!(again.totals.goal_sums, report.totals.goal_sums);
}

#[test]
fn playouts_say_why_they_stopped() {
    let stalled = RtGame::load(
        "(role r) (init infinity a) (<= (legal r go) (true ?t b)) (<= terminal (true ?t b)) (goal r 0)",
    )
    .unwrap();
    let mut rng = Stream::new(1, 0);
    let playout = stalled
        .playout(&stalled.initial_state(), TimeModel::Immediate, 100, &mut rng)
        .unwrap();
    assert_eq!((playout.end, playout.events), (TimedEnd::Stalled, 0));
    let endless = RtGame::load(
        "(role r) (init 1 tick) (<= (next 1 tick) (expired tick)) (<= terminal (true ?t b)) (goal r 0)",
    )
    .unwrap();
    let playout = endless
        .playout(&endless.initial_state(), TimeModel::Immediate, 25, &mut rng)
        .unwrap();
    assert_eq!((playout.end, playout.events), (TimedEnd::EventLimit, 25));
    assert_eq!(playout.game_ticks, 25 * 1_000_000);
}

#[test]
fn time_models_parse_and_draw_in_range() {
    let mut rng = Stream::new(3, 0);
    let uniform: TimeModel = "uniform:0.5".parse().unwrap();
    let exp: TimeModel = "exp:2".parse().unwrap();
    for _ in 0..1000 {
        let d = uniform.delay(&mut rng);
        assert!(!d.is_zero() && d <= t("0.5"));
        assert!(!exp.delay(&mut rng).is_zero());
    }
    assert_eq!(
        "immediate".parse::<TimeModel>().unwrap().delay(&mut rng),
        Time::TICK
    );
    assert_eq!(uniform.to_string(), "uniform:0.5");
    for bad in [
        "uniform",
        "uniform:0",
        "exp:-1",
        "exp:1.0000001",
        "normal:1",
        "uniform:2000000",
        "uniform:1:2",
    ] {
        assert!(bad.parse::<TimeModel>().is_err(), "{bad}");
    }
}

/// The first line of a refusal: `error at L:C: reason`.
fn refusal(text: &str) -> String {
    let e = RtGame::load(text).unwrap_err();
    e.to_string()
}

#[test]
fn refused_constructs_name_the_rule_and_the_reason() {
    let head = "(role r) (legal r go) (goal r 0) (<= terminal (true ?t x))\n";
    for (rules, place, reason) in [
        (
            "(init 1 a)\n(<= (next b) (true ?t a))",
            "3:1",
            "'next' has 1 argument(s)",
        ),
        (
            "(init a)\n(<= (next 1 b) (true ?t a))",
            "2:1",
            "'init' has 1 argument(s)",
        ),
        ("(init 0 a)", "2:1", "is zero"),
        ("(init 0.0 a)", "2:1", "is zero"),
        ("(init -1 a)", "2:1", "'-1' is not a decimal number"),
        ("(init abc a)", "2:1", "'abc' is not a decimal number"),
        ("(init 1e3 a)", "2:1", "not a decimal number"),
        ("(init (f 1) a)", "2:1", "is a compound term"),
        ("(init 1.0000001 a)", "2:1", "more than 6 fraction digits"),
        (
            "(init 1 a)\n(<= (next 1 a) (true 0 a))",
            "3:1",
            "the lifetime of 'true'",
        ),
        (
            "(init 1 a)\n(<= (next 0 a) (true ?t a))",
            "3:1",
            "the lifetime of 'next'",
        ),
        (
            "(init 1 a)\n(<= (expired a) (true ?t a))",
            "3:1",
            "'expired' may only appear in the body",
        ),
        (
            "(init 1 a)\n(<= (next 1 b) (expired a b))",
            "3:1",
            "'expired' has 2 argument(s)",
        ),
        ("(init 1 a)\n(role random)", "3:1", "rtGDL-II"),
        ("(init 1 a)\n(<= (sees r a) (true ?t a))", "3:1", "rtGDL-II"),
        (
            "(init 1 a)\n(<= (init 1 b) (expired a))",
            "3:1",
            "'init' depends on 'true'",
        ),
        (
            "(init 1 a)\n(<= (true 1 b) (true ?t a))",
            "3:1",
            "'true' may not be the head",
        ),
        (
            "(init 1 a)\n(<= (next 1 b) (next 1 a))",
            "3:1",
            "'next' may only appear in the head",
        ),
        ("(init 1 a)\n(<= (next 1 b) (not (expired ?x)))", "3:1", "unsafe"),
        ("(init 1 (rt:lifetime a))", "2:1", "reserved"),
        ("(init 1 a)\n(<= (next 1 b) (rt:finite a))", "3:1", "reserved"),
    ] {
        let text = format!("{head}{rules}");
        let shown = refusal(&text);
        assert!(
            shown.starts_with(&format!("error at {place}: ")) && shown.contains(reason),
            "{rules}: {shown}"
        );
    }
}

#[test]
fn derived_lifetimes_are_checked_when_derived() {
    let game = RtGame::load(
        "(role r) (init infinity (timer x)) (<= (legal r go) (true ?t (timer ?v)))
         (<= (next ?v clock) (does r go) (true ?t (timer ?v))) (<= terminal (true ?t clock)) (goal r 0)",
    )
    .unwrap();
    let e = game
        .update(&game.initial_state(), t("1"), &[Some("go".into())])
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "error: fact clock derived with lifetime x: 'x' is not a decimal number"
    );
    let e = RtGame::load("(role r) (<= (init ?x a) (v ?x)) (v 0) (<= terminal (true ?t a)) (goal r 0)")
        .unwrap_err();
    assert!(e.to_string().contains("fact a derived with lifetime 0"), "{e}");
}

#[test]
fn updates_are_validated() {
    let game = game("cheshire");
    let s0 = game.initial_state();
    let refused = |elapsed: &str, moves: &[Option<&str>]| {
        let moves: Vec<Option<String>> = moves.iter().map(|m| m.map(str::to_owned)).collect();
        game.update(&s0, t(elapsed), &moves).unwrap_err().to_string()
    };
    assert!(refused("0", &[None, None]).contains("must be positive"));
    assert!(refused("1.5", &[Some("(catch cat)"), None]).contains("past the next expiry at 1"));
    assert!(refused("0.5", &[None, None]).contains("no event"));
    assert!(refused("0.5", &[Some("(catch dog)"), None]).contains("not legal for role alice"));
    assert!(refused("0.5", &[Some("(catch"), None]).contains("not legal"));
    assert!(refused("0.5", &[None]).contains("one move per role"));
    let other = self::game("cheshire");
    assert!(other
        .legal_moves(&s0, 0)
        .unwrap_err()
        .to_string()
        .contains("another game"));
    assert!(game
        .legal_moves(&s0, 2)
        .unwrap_err()
        .to_string()
        .contains("no role number 2"));
    assert_eq!(
        game.pairs(&s0).unwrap()[0],
        (Lifetime::finite(t("1")).unwrap(), "(appear cat)".to_owned())
    );
}

#[test]
fn gdl_games_stay_gdl() {
    let gdl = std::fs::read_to_string(format!(
        "{}/games/tic_tac_toe.kif",
        ggpnet_tools::corpus::project_root().display()
    ))
    .unwrap();
    assert!(!ggpnet::realtime::is_rtgdl(&gdl));
    assert!(RtGame::load(&gdl)
        .unwrap_err()
        .to_string()
        .contains("not an rtGDL description"));
    let e = ggpnet::Game::load(&source("cheshire"), &ggpnet::Config::default()).unwrap_err();
    assert!(
        e.to_string().contains("load it with ggpnet::realtime::RtGame"),
        "{e}"
    );
}

/// Every example game agrees on the propnet with the interpreter on 20
/// random timed playouts per time model (see [`agree_on_timed_playouts`]).
#[test]
fn propnet_agrees_with_the_interpreter_on_timed_playouts() {
    for name in GAMES {
        let [oracle, propnet] = engines(name);
        agree_on_timed_playouts(name, &oracle, &propnet);
    }
}

/// A relay that carries times every way the circuit form knows: the baton's
/// lifetime copied into `stash` and `memo` arguments, a lifetime read from
/// `stash` (its constant, then held values), `memo` keeping a finite lifetime
/// and a held argument at once.
const RELAY: &str = "(role a) (role b) (other a b) (other b a)
    (init 2 (baton a)) (init infinity (stash 1.5))
    (<= passed (does ?r pass))
    (<= (legal ?r pass) (true ?t (baton ?r)))
    (<= (next infinity (stash ?t)) (does ?r pass) (true ?t (baton ?r)))
    (<= (next infinity (stash ?t)) (true infinity (stash ?t)) (not passed))
    (<= (next ?t (baton ?s)) (does ?r pass) (other ?r ?s) (true infinity (stash ?t)))
    (<= (next ?t (baton ?r)) (true ?t (baton ?r)) (not passed))
    (<= (next 3 (memo ?t)) (does ?r pass) (true ?t (baton ?r)))
    (<= (next ?t (memo ?x)) (true ?t (memo ?x)) (not passed))
    (<= (next infinity (dropped ?r)) (expired (baton ?r)))
    (<= terminal (true infinity (dropped ?r)))
    (<= (goal ?r 0) (true infinity (dropped ?r)))
    (<= (goal ?r 100) (role ?r) (not (true infinity (dropped ?r))))";

#[test]
fn time_arguments_agree_with_the_interpreter_on_timed_playouts() {
    let [oracle, propnet] = [EngineChoice::Interpreter, EngineChoice::Propnet]
        .map(|engine| RtGame::load_with(RELAY, engine).unwrap());
    // By hand: a passes at 0.25; the stash and the memo take the baton's
    // 1.75, b gets the stash's constant 1.5. Then b passes at 0.5: a gets the
    // stash's held 1.75, the stash and a new memo take b's 1.
    let pass = |by: usize| {
        let mut moves = vec![None, None];
        moves[by] = Some("pass".to_owned());
        moves
    };
    for game in [&oracle, &propnet] {
        let s1 = game.update(&game.initial_state(), t("0.25"), &pass(0)).unwrap();
        assert_eq!(
            shown(game, &s1),
            ["1.5 (baton b)", "3 (memo 1.75)", "infinity (stash 1.75)"]
        );
        let s2 = game.update(&s1, t("0.5"), &pass(1)).unwrap();
        assert_eq!(
            shown(game, &s2),
            ["1.75 (baton a)", "3 (memo 1)", "infinity (stash 1)"]
        );
    }
    agree_on_timed_playouts("relay", &oracle, &propnet);
}

/// `propnet` agrees with `oracle` on 20 random timed playouts per time model:
/// pairs (facts and lifetimes), the next expiry, legal moves, terminal and
/// goals, at the start and after every event (the interpreter replays each
/// event's time and moves).
fn agree_on_timed_playouts(name: &str, oracle: &RtGame, propnet: &RtGame) {
    let agree = |p: &TimedState, r: &TimedState, at: &str| {
        assert_eq!(propnet.pairs(p).unwrap(), oracle.pairs(r).unwrap(), "{name} {at}");
        assert_eq!(
            propnet.next_expiry(p).unwrap(),
            oracle.next_expiry(r).unwrap(),
            "{name} {at}"
        );
        assert_eq!(
            propnet.is_terminal(p).unwrap(),
            oracle.is_terminal(r).unwrap(),
            "{name} {at}"
        );
        assert_eq!(
            propnet.goal_values(p).unwrap(),
            oracle.goal_values(r).unwrap(),
            "{name} {at}"
        );
        for role in 0..propnet.roles().len() {
            let (pm, rm) = (propnet.legal_moves(p, role), oracle.legal_moves(r, role));
            assert_eq!(pm.unwrap(), rm.unwrap(), "{name} {at} role {role}");
        }
    };
    for model in ["uniform:1", "exp:0.5"] {
        let model: TimeModel = model.parse().unwrap();
        for seed in 0..20 {
            let mut reference = oracle.initial_state();
            agree(&propnet.initial_state(), &reference, "initially");
            let mut events = 0;
            let mut rng = Stream::new(seed, 1);
            let end = propnet
                .playout_with(&propnet.initial_state(), model, 10_000, &mut rng, |event| {
                    events += 1;
                    reference = oracle.update(&reference, event.elapsed, &event.moves).unwrap();
                    agree(
                        &event.after,
                        &reference,
                        &format!("{model} seed {seed} event {events}"),
                    );
                })
                .unwrap();
            assert_eq!(end.end, TimedEnd::Terminal, "{name}");
        }
    }
}

#[test]
fn games_outside_the_fragment_fall_back_to_the_interpreter() {
    for name in GAMES {
        assert_eq!(game(name).engine(), Engine::Propnet, "{name}");
    }
    let outside = RtGame::load(OUTSIDE).unwrap();
    assert_eq!(outside.engine(), Engine::Interpreter);
    let why = outside.fallback_reason().unwrap();
    assert!(
        why.starts_with("error at 3:1: a finite lifetime constant in 'true' compares lifetimes"),
        "{why}"
    );
    let refused = RtGame::load_with(OUTSIDE, EngineChoice::Propnet).unwrap_err();
    assert_eq!(refused.message(), why);
    let head = "(role r) (legal r go) (goal r 0) (<= terminal (true ?t x))\n";
    for (rules, place, reason) in [
        (
            "(init 1 a)\n(<= (next 1 b) (true 1 a))",
            "3:1",
            "a finite lifetime constant in 'true'",
        ),
        (
            "(init 1 a)\n(<= (next 1 b) (true ?t a) (true ?t c))",
            "3:1",
            "?t is compared",
        ),
        (
            "(init 1 a)\n(<= (next infinity b) (not (true 1 a)))",
            "3:1",
            "inside 'not' or 'or'",
        ),
        (
            "(init 1 a)\n(<= (next infinity (keep ?t)) (true ?t a))\n(<= (next infinity b) (true infinity (keep 2)))",
            "4:1",
            "the time argument 2 in 'true' compares times",
        ),
        (
            "(init 1 a)\n(<= (next infinity (keep ?t)) (true ?t a))\n(<= (next infinity b) (not (true infinity (keep ?u))) (true ?u a))",
            "4:1",
            "inside 'not' or 'or' with a lifetime other than infinity or a time argument",
        ),
        (
            "(init 1 a)\n(<= (next infinity (keep ?t ?t)) (true ?t a))",
            "3:1",
            "'keep' would have two time arguments (1 and 2)",
        ),
        (
            "(init 1 a)\n(<= (next infinity (keep ?t)) (true ?t a))\n(<= (next infinity (keep ?n)) (does r (set ?n)))",
            "4:1",
            "the time argument ?n is neither a constant lifetime nor a time read from the state",
        ),
        (
            "(init 1 a)\n(<= (next infinity (keep ?t)) (true ?t a))\n(<= (next infinity (keep go)) (true infinity b))",
            "4:1",
            "the time argument go is not a lifetime",
        ),
        (
            "(init 1 a)\n(<= (next infinity (keep ?t)) (true ?t a))\n(<= (next infinity (was ?t)) (expired (keep ?t)))",
            "4:1",
            "the time argument ?t of an expired fact is used",
        ),
        (
            "(init 1 a)\n(<= (next infinity (keep ?t)) (true ?t a))\n(<= (legal r (wait ?t)) (true infinity (keep ?t)))",
            "4:1",
            "the time ?t is compared, or copied elsewhere",
        ),
    ] {
        let text = format!("{head}{rules}");
        let e = RtGame::load_with(&text, EngineChoice::Propnet)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(&format!("error at {place}: ")) && e.contains(reason),
            "{rules}: {e}"
        );
        assert_eq!(RtGame::load(&text).unwrap().engine(), Engine::Interpreter);
    }
}

#[test]
fn two_lifetimes_for_one_slot_are_an_error_on_the_propnet_only() {
    let text = "(role r) (init 1 a) (init 2 a) (init infinity a) (init infinity x)
        (<= (legal r go) (true infinity x))
        (<= (next ?t b) (does r go) (true ?t a))
        (<= terminal (true ?t b)) (goal r 0)";
    let oracle = RtGame::load_with(text, EngineChoice::Interpreter).unwrap();
    let propnet = RtGame::load_with(text, EngineChoice::Propnet).unwrap();
    let go = [Some("go".to_owned())];
    let after = oracle.update(&oracle.initial_state(), t("0.5"), &go).unwrap();
    assert_eq!(shown(&oracle, &after), ["0.5 b", "1.5 b", "infinity b"]);
    let start = propnet.initial_state();
    assert_eq!(
        shown(&propnet, &start),
        ["1 a", "2 a", "infinity a", "infinity x"]
    );
    let e = propnet.update(&start, t("0.5"), &go).unwrap_err();
    assert_eq!(
        e.message(),
        "fact b would copy the lifetime of a, which has 2 finite lifetimes (0.5, 1.5): the propnet keeps one lifetime per source (the interpreter runs such games)"
    );
    // Once one of them expired, a single finite lifetime is copied.
    let later = propnet.update(&start, t("1"), &go).unwrap();
    assert_eq!(shown(&propnet, &later), ["1 b", "infinity b"]);
}

#[test]
fn two_time_arguments_for_one_key_are_an_error_on_the_propnet_only() {
    let text = "(role r) (init 1 a) (init 2 c) (init infinity x)
        (<= (legal r go) (true infinity x))
        (<= (next infinity x) (true infinity x))
        (<= (next infinity (keep ?t)) (does r go) (true ?t a))
        (<= (next infinity (keep ?t)) (does r go) (true ?t c))
        (<= (next infinity (keep ?t)) (true infinity (keep ?t)))
        (<= (next ?t d) (does r go) (true infinity (keep ?t)))
        (<= terminal (true ?t d)) (goal r 0)";
    let [oracle, propnet] = [EngineChoice::Interpreter, EngineChoice::Propnet]
        .map(|engine| RtGame::load_with(text, engine).unwrap());
    let go = [Some("go".to_owned())];
    let first = [&oracle, &propnet].map(|g| g.update(&g.initial_state(), t("0.5"), &go).unwrap());
    for (game, state) in [&oracle, &propnet].into_iter().zip(&first) {
        // Two facts (keep 0.5) and (keep 1.5): the propnet holds them in two bases.
        assert_eq!(
            shown(game, state),
            ["infinity (keep 0.5)", "infinity (keep 1.5)", "infinity x"]
        );
    }
    let after = oracle.update(&first[0], t("0.25"), &go).unwrap();
    assert_eq!(
        shown(&oracle, &after),
        [
            "infinity (keep 0.5)",
            "infinity (keep 1.5)",
            "0.5 d",
            "1.5 d",
            "infinity x"
        ]
    );
    // The carried argument of (keep _), into d's lifetime and into (keep _)
    // itself, would be 0.5 and 1.5 at once.
    let e = propnet.update(&first[1], t("0.25"), &go).unwrap_err();
    assert!(
        e.message().ends_with(
            " would take the time argument of (keep _), which has 2 values (0.5, 1.5): the propnet keeps one value per key (the interpreter runs such games)"
        ),
        "{e}"
    );
}

/// Runs the `ggpnet` command; its exit code, standard output and standard error.
fn ggpnet(args: &[&str]) -> (i32, String, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ggpnet"))
        .args(args)
        .output()
        .expect("ggpnet runs");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (
        out.status.code().unwrap_or(-1),
        text(&out.stdout),
        text(&out.stderr),
    )
}

#[test]
fn the_command_line_runs_rtgdl_games() {
    let path = |name: &str| {
        format!(
            "{}/games/rtgdl/{name}.kif",
            ggpnet_tools::corpus::project_root().display()
        )
    };
    let (code, out, _) = ggpnet(&["check", &path("tictactoe")]);
    assert_eq!(
        (code, out.as_str()),
        (
            0,
            "tictactoe: valid (rtGDL, real-time GDL; 0 warning(s); engine: propnet)\n"
        )
    );
    let outside = scratch::File::new("outside.kif", OUTSIDE);
    let outside_path = outside.to_str().unwrap().to_owned();
    let (code, out, err) = ggpnet(&["stats", &outside_path]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("engine: interpreter (the propnet does not compile it: error at 3:1"),
        "{out}"
    );
    let (code, out, err) = ggpnet(&["stats", &path("chessclock")]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("engine: propnet\n"), "{out}");
    let (code, out, err) = ggpnet(&[
        "mc",
        &path("cheshire"),
        "--playouts",
        "30",
        "--threads",
        "1",
        "--time-model",
        "exp:2",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["language"], "rtgdl");
    assert_eq!(report["engine"], "propnet");
    assert_eq!(report["time_model"], "exp:2");
    assert_eq!(report["playouts"], 30);
    assert_eq!(report["terminal"], 30);
    assert!(report["events"].as_u64().unwrap() >= 30);
    let paper = scratch::File::new(
        "paper.kif",
        "(role r) (init 1.0 (control r)) (<= (legal r go) (true ?t (control r)))\n(<= terminal (expired (control r)))\n(goal r 0)",
    );
    let (code, out, _) = ggpnet(&["check", paper.to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(
        out.starts_with("warning at 2:1: 'terminal' reads 'expired', which holds only during an update"),
        "{out}"
    );
    let gdl = format!(
        "{}/games/tic_tac_toe.kif",
        ggpnet_tools::corpus::project_root().display()
    );
    for (args, code, message) in [
        (
            vec!["mc", &gdl, "--time-model", "uniform:1"],
            2,
            "--time-model applies to rtGDL",
        ),
        (
            vec!["mc", &path("xwing"), "--time-model", "uniform:0"],
            2,
            "the value must be more than 0",
        ),
        (
            vec!["mc", &path("xwing"), "--time-model", "gauss:1"],
            2,
            "a time model is uniform:MAX, exp:MEAN or immediate",
        ),
        (
            vec!["perft", &path("xwing")],
            1,
            "only `ggpnet check`, `ggpnet stats` and `ggpnet mc` run rtGDL games",
        ),
        (
            vec!["--engine", "propnet", "mc", &outside_path],
            1,
            "error at 3:1: a finite lifetime constant in 'true'",
        ),
    ] {
        let (got, _, err) = ggpnet(&args);
        assert_eq!(got, code, "{args:?}: {err}");
        assert!(err.contains(message), "{args:?}: {err}");
    }
    std::fs::remove_file(&outside).unwrap();
}
