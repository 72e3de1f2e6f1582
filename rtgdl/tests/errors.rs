//! Every refusal of an rtGDL game or request is a kind of [`RtError`] a
//! caller can match on, with its message, and the error it wraps as its
//! source.

use ggpnet_propnet::driver::{Budget, SettingError, MAX_THREADS};
use ggpnet_rtgdl::{EngineChoice, RtError, RtGame, Time, TimeModel};
use std::error::Error;

/// One role catches a cat visible for 1.0; then the game ends.
const CAT: &str = "(role r) (init 1.0 (appear cat))
    (<= (next 3.0 (gone ?c)) (expired (appear ?c)))
    (<= (next ?t (gone ?c)) (true ?t (gone ?c)))
    (<= (legal r (catch ?c)) (true ?t (appear ?c)))
    (<= (next infinity caught) (does r (catch ?c)))
    (<= terminal (true infinity caught)) (goal r 100)";

fn t(text: &str) -> Time {
    Time::parse(text).unwrap()
}

/// The refusal of loading `text` on `engine`.
fn refused(text: &str, engine: EngineChoice) -> RtError {
    RtGame::load_with(text, engine).unwrap_err()
}

#[test]
fn refused_descriptions_say_which_check_refused_them() {
    let e = refused("(role r", EngineChoice::Auto);
    assert!(matches!(e, RtError::Parse(_)), "{e:?}");
    assert!(e.to_string().starts_with("error: parse error at "), "{e}");
    assert!(e.source().is_some());
    let e = refused(
        "(role r) (init a) (<= terminal (true a)) (goal r 0)",
        EngineChoice::Auto,
    );
    assert!(matches!(e, RtError::Invalid(_)), "{e:?}");
    assert!(e.to_string().contains("not an rtGDL description"), "{e}");
    let e = refused(
        "(role r) (init 1 a) (<= (init 1 b) (expired a)) (<= terminal (true ?t a)) (goal r 0)",
        EngineChoice::Auto,
    );
    assert!(matches!(e, RtError::Gdl(_)), "{e:?}");
    assert!(
        e.to_string().contains("(rtGDL's 'expired' counts as 'true')"),
        "{e}"
    );
    let outside = "(role r) (legal r go) (goal r 0) (<= terminal (true ?t x))
(init 1 a)
(<= (next 1 b) (true 1 a))";
    let e = refused(outside, EngineChoice::Propnet);
    assert!(matches!(e, RtError::OutsideFragment(_)), "{e:?}");
    assert!(e.to_string().starts_with("error at 3:1: "), "{e}");
    assert!(e.source().is_some());
    let game = RtGame::load(outside).unwrap();
    assert_eq!(game.fallback_reason(), Some(e.message().as_str()));
}

#[test]
fn refused_updates_say_what_is_wrong_with_them() {
    let game = RtGame::load(CAT).unwrap();
    let s0 = game.initial_state();
    let catch = || vec![Some("(catch cat)".to_owned())];
    let update = |elapsed: &str, moves: &[Option<String>]| game.update(&s0, t(elapsed), moves).unwrap_err();
    assert!(matches!(
        update("0.5", &[None, None]),
        RtError::WrongJointLength {
            expected: 1,
            found: 2
        }
    ));
    assert!(matches!(update("0", &catch()), RtError::NoElapsedTime));
    let e = update("1.5", &catch());
    assert!(
        matches!(e, RtError::PastExpiry { elapsed, expiry } if elapsed == t("1.5") && expiry == t("1")),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        "error: invalid update: 1.5 is past the next expiry at 1"
    );
    assert!(matches!(update("0.5", &[None]), RtError::NoEvent { elapsed } if elapsed == t("0.5")));
    let e = update("0.5", &[Some("(catch dog)".to_owned())]);
    assert!(matches!(&e, RtError::IllegalMove { role, chosen } if role == "r" && chosen == "(catch dog)"));
    assert_eq!(e.message(), "move (catch dog) is not legal for role r");
    assert!(e.source().is_none());
    let other = RtGame::load(CAT).unwrap();
    assert!(matches!(other.is_terminal(&s0), Err(RtError::ForeignState)));
    assert!(matches!(
        game.legal_moves(&s0, 1),
        Err(RtError::NoSuchRole { role: 1, roles: 1 })
    ));
}

#[test]
fn refused_settings_name_the_setting() {
    let game = RtGame::load_with(CAT, EngineChoice::Interpreter).unwrap();
    let s0 = game.initial_state();
    let run = |budget, threads| game.playouts(&s0, TimeModel::Immediate, 10, budget, threads, 1);
    let e = run(Budget::Playouts(1), MAX_THREADS + 1).unwrap_err();
    assert!(
        matches!(
            e,
            RtError::InvalidSetting(SettingError::Threads(n)) if n == MAX_THREADS + 1
        ),
        "{e:?}"
    );
    let e = run(Budget::Seconds(0.0), 1).unwrap_err();
    assert!(
        matches!(
            e,
            RtError::InvalidSetting(SettingError::Seconds(s)) if s == 0.0
        ),
        "{e:?}"
    );
    assert_eq!(run(Budget::Playouts(3), 1).unwrap().totals.playouts, 3);
}
