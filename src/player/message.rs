//! The messages of the GGP match protocol as managers send them (ggp-base's
//! game server and the Dresden GameController, `shared/PROTOCOL.md`): verbs in
//! any case, any spacing, rules and moves as KIF. An rtGDL manager adds the
//! game time as a third argument of PLAY and STOP (`docs/LANGUAGES.md`).

use crate::realtime::{Time, MAX_UNITS, TICKS_PER_UNIT};
use ggpnet_kif::SExpr;
use std::time::Duration;

/// A message from a game manager.
#[derive(Clone, PartialEq, Debug)]
pub enum Message {
    /// `( INFO )`: is the player there, and free?
    Info,
    /// `( PREVIEW (rules) clock )`: a game to look at before a match.
    Preview,
    /// `( START id role (rules) startclock playclock )`.
    Start {
        /// The match id.
        id: String,
        /// The role this player plays.
        role: String,
        /// The rules, as KIF text.
        rules: String,
        /// Time to prepare.
        start_clock: Duration,
        /// Time for each move.
        play_clock: Duration,
    },
    /// `( PLAY id ... )`: choose a move.
    Play {
        /// The match id.
        id: String,
        /// What the manager tells of the last step.
        news: News,
    },
    /// `( STOP id ... )`: the match is over.
    Stop {
        /// The match id.
        id: String,
        /// What the manager tells of the last step.
        news: News,
    },
    /// `( ABORT id )`: the match is abandoned.
    Abort {
        /// The match id.
        id: String,
    },
}

/// What a PLAY or STOP tells of the step just played, in one of the forms
/// managers send (`shared/PROTOCOL.md`).
#[derive(Clone, PartialEq, Debug)]
pub enum News {
    /// `NIL` (`None`, before the first move) or a list: in a GDL-I game the
    /// joint move, in role order (ggp-base); in a GDL-II game this player's
    /// percepts (the Dresden GameController's 2010 form).
    List(Option<Vec<String>>),
    /// The 2013 GDL-II form `turn ownLastMove (percepts)`: the number of moves
    /// played, this player's move as applied (`None` before the first), and
    /// its percepts.
    Turn {
        /// Moves played so far.
        turn: u64,
        /// This player's last move, as the manager applied it.
        own: Option<String>,
        /// This player's percepts after the last joint move.
        percepts: Vec<String>,
    },
    /// The rtGDL form `MOVES GAMETIME`: the moves of the update just done
    /// (`None` for `NIL`: the first PLAY, or the answer to an illegal move),
    /// one entry per role in role order, `None` for a role that did not
    /// move; and the game time, in lifetime units.
    Timed {
        /// The moves of the update, if any.
        moves: Option<Vec<Option<String>>>,
        /// The game time of the message, in lifetime units.
        time: Time,
    },
}

/// Longest clock a message may give, in seconds (a day).
const MAX_CLOCK_SECONDS: f64 = 86_400.0;

impl Message {
    /// Reads one message; the error says what is wrong with it.
    ///
    /// ```
    /// use ggpnet::player::{Message, News};
    /// let play = Message::parse("( PLAY cap.1 (( mark 3 1 ) noop ) )").unwrap();
    /// assert_eq!(play, Message::Play {
    ///     id: "cap.1".into(),
    ///     news: News::List(Some(vec!["(mark 3 1)".into(), "noop".into()])),
    /// });
    /// assert!(Message::parse("( DANCE )").is_err());
    /// ```
    pub fn parse(text: &str) -> Result<Message, String> {
        let exprs = ggpnet_kif::sexprs(text).map_err(|e| e.to_string())?;
        let [SExpr::List(items, _)] = exprs.as_slice() else {
            return Err("a message is one parenthesized list".to_owned());
        };
        let Some(SExpr::Symbol(verb, _)) = items.first() else {
            return Err("a message starts with its verb".to_owned());
        };
        let args = &items[1..];
        let arity = |n: usize| match args.len() == n {
            true => Ok(()),
            false => Err(format!(
                "{} takes {n} arguments, not {}",
                verb.to_uppercase(),
                args.len()
            )),
        };
        match verb.to_ascii_lowercase().as_str() {
            "info" => arity(0).map(|_| Message::Info),
            "preview" => arity(2).map(|_| Message::Preview),
            "start" => {
                arity(5)?;
                Ok(Message::Start {
                    id: symbol(&args[0], "the match id")?,
                    role: symbol(&args[1], "the role")?,
                    rules: rules(&args[2])?,
                    start_clock: clock(&args[3])?,
                    play_clock: clock(&args[4])?,
                })
            }
            "play" | "stop" => {
                let (id, news) = match args {
                    [id, list] => (id, News::List(list_or_nil(list, "a joint move or percepts")?)),
                    [id, moves, time] => (id, timed_news(moves, time)?),
                    [id, turn, own, percepts] => (id, turn_news(turn, own, percepts)?),
                    _ => {
                        return Err(format!(
                            "{} takes 2 arguments (3 in rtGDL, 4 in the GDL-II form of 2013), not {}",
                            verb.to_uppercase(),
                            args.len()
                        ))
                    }
                };
                let id = symbol(id, "the match id")?;
                Ok(match verb.eq_ignore_ascii_case("play") {
                    true => Message::Play { id, news },
                    false => Message::Stop { id, news },
                })
            }
            "abort" => {
                arity(1)?;
                Ok(Message::Abort {
                    id: symbol(&args[0], "the match id")?,
                })
            }
            _ => Err(format!("unknown message {verb}")),
        }
    }
}

fn symbol(expr: &SExpr<'_>, what: &str) -> Result<String, String> {
    match expr {
        SExpr::Symbol(s, _) => Ok((*s).to_owned()),
        SExpr::List(..) => Err(format!("{what} must be a symbol, not {expr}")),
    }
}

/// The rules of a START or PREVIEW as KIF text, one per line.
fn rules(expr: &SExpr<'_>) -> Result<String, String> {
    match expr {
        SExpr::List(rules, _) => Ok(rules.iter().map(|r| format!("{r}\n")).collect()),
        SExpr::Symbol(..) => Err("the rules must be a list".to_owned()),
    }
}

fn clock(expr: &SExpr<'_>) -> Result<Duration, String> {
    let text = symbol(expr, "a clock")?;
    match text.parse::<f64>() {
        Ok(s) if s > 0.0 && s <= MAX_CLOCK_SECONDS => Ok(Duration::from_secs_f64(s)),
        _ => Err(format!(
            "a clock is a number of seconds above 0 and at most {MAX_CLOCK_SECONDS}, not {text}"
        )),
    }
}

/// `NIL`, or a list of terms (`what` names them in errors).
fn list_or_nil(expr: &SExpr<'_>, what: &str) -> Result<Option<Vec<String>>, String> {
    match expr {
        SExpr::Symbol(s, _) if s.eq_ignore_ascii_case("nil") => Ok(None),
        SExpr::Symbol(..) => Err(format!("{what} is NIL or a list, not {expr}")),
        SExpr::List(items, _) => Ok(Some(items.iter().map(|m| m.to_string()).collect())),
    }
}

/// The rtGDL form's `MOVES GAMETIME`: `NIL` or a list whose `NIL` entries are no move.
fn timed_news(moves: &SExpr<'_>, time: &SExpr<'_>) -> Result<News, String> {
    let nil = |e: &SExpr<'_>| matches!(e, SExpr::Symbol(s, _) if s.eq_ignore_ascii_case("nil"));
    let moves = match moves {
        m if nil(m) => None,
        SExpr::List(items, _) => Some(items.iter().map(|m| (!nil(m)).then(|| m.to_string())).collect()),
        SExpr::Symbol(..) => {
            return Err(format!(
                "the moves of an rtGDL PLAY are NIL or a list, not {moves}"
            ))
        }
    };
    let text = symbol(time, "the game time")?;
    Ok(News::Timed {
        moves,
        time: game_time(&text)?,
    })
}

/// A game time in lifetime units: exact when it has at most six fraction
/// digits, else the nearest tick.
pub(crate) fn game_time(text: &str) -> Result<Time, String> {
    if let Ok(t) = Time::parse(text) {
        return Ok(t);
    }
    match text.parse::<f64>() {
        Ok(units) if units.is_finite() && units >= 0.0 && units <= MAX_UNITS as f64 => {
            let ticks = (units * TICKS_PER_UNIT as f64).round() as u64;
            Time::from_ticks(ticks).ok_or_else(|| format!("the game time {text} is too large"))
        }
        _ => Err(format!(
            "the game time is a number of lifetime units from 0 to {MAX_UNITS}, not {text}"
        )),
    }
}

/// The 2013 GDL-II form's `turn ownLastMove (percepts)`.
fn turn_news(turn: &SExpr<'_>, own: &SExpr<'_>, percepts: &SExpr<'_>) -> Result<News, String> {
    let text = symbol(turn, "the turn")?;
    let turn = text
        .parse::<u64>()
        .map_err(|_| format!("the turn is a number of moves, not {text}"))?;
    let own = match own {
        SExpr::Symbol(s, _) if s.eq_ignore_ascii_case("nil") => None,
        m => Some(m.to_string()),
    };
    let percepts = list_or_nil(percepts, "the percepts")?.unwrap_or_default();
    Ok(News::Turn { turn, own, percepts })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_bytes_managers_send() {
        let start = Message::parse(
            "( START m.1 xplayer ((role xplayer) (role oplayer) (<= (legal ?p noop) (role ?p))) 10 5 )",
        )
        .unwrap();
        assert_eq!(
            start,
            Message::Start {
                id: "m.1".into(),
                role: "xplayer".into(),
                rules: "(role xplayer)\n(role oplayer)\n(<= (legal ?p noop) (role ?p))\n".into(),
                start_clock: Duration::from_secs(10),
                play_clock: Duration::from_secs(5),
            }
        );
        assert_eq!(
            Message::parse("(START M ROBOT ((ROLE ROBOT)) 1.5 2)")
                .map(|m| matches!(m, Message::Start { .. })),
            Ok(true)
        );
        assert_eq!(
            Message::parse("( PLAY cap.1 NIL )"),
            Ok(Message::Play {
                id: "cap.1".into(),
                news: News::List(None)
            })
        );
        assert_eq!(
            Message::parse("(PLAY mh 0 NIL NIL)"),
            Ok(Message::Play {
                id: "mh".into(),
                news: News::Turn {
                    turn: 0,
                    own: None,
                    percepts: vec![]
                }
            })
        );
        assert_eq!(
            Message::parse("(STOP mh 2 (CHOOSE 1) ((OPEN_DOOR 2) (CAR 3) ))"),
            Ok(Message::Stop {
                id: "mh".into(),
                news: News::Turn {
                    turn: 2,
                    own: Some("(CHOOSE 1)".into()),
                    percepts: vec!["(OPEN_DOOR 2)".into(), "(CAR 3)".into()]
                }
            })
        );
        assert_eq!(Message::parse("( info )"), Ok(Message::Info));
        assert_eq!(Message::parse("( PREVIEW ((role r)) 30 )"), Ok(Message::Preview));
        assert_eq!(
            Message::parse("( ABORT x )"),
            Ok(Message::Abort { id: "x".into() })
        );
    }

    #[test]
    fn reads_the_rtgdl_form() {
        let tick = |t: u64| Time::from_ticks(t).unwrap();
        assert_eq!(
            Message::parse("( PLAY m.1 NIL 0 )"),
            Ok(Message::Play {
                id: "m.1".into(),
                news: News::Timed {
                    moves: None,
                    time: Time::ZERO
                }
            })
        );
        assert_eq!(
            Message::parse("( PLAY m.1 ( NIL ( mark 1 1 ) ) 1.25 )"),
            Ok(Message::Play {
                id: "m.1".into(),
                news: News::Timed {
                    moves: Some(vec![None, Some("(mark 1 1)".into())]),
                    time: tick(1_250_000)
                }
            })
        );
        assert_eq!(
            Message::parse("(STOP M ((GO 1 2) nil) 3)"),
            Ok(Message::Stop {
                id: "M".into(),
                news: News::Timed {
                    moves: Some(vec![Some("(GO 1 2)".into()), None]),
                    time: tick(3_000_000)
                }
            })
        );
        // A float with more digits than a tick: the nearest tick.
        assert_eq!(game_time("0.1234567"), Ok(tick(123_457)));
        assert_eq!(game_time("2.5e0"), Ok(tick(2_500_000)));
        // Without the game time, a list with NIL entries reads as a GDL joint move;
        // the player of an rtGDL match reads the entries.
        assert_eq!(
            Message::parse("( PLAY m ( NIL noop ) )"),
            Ok(Message::Play {
                id: "m".into(),
                news: News::List(Some(vec!["NIL".into(), "noop".into()]))
            })
        );
    }

    #[test]
    fn refuses_what_is_not_a_message() {
        for (text, error) in [
            ("", "one parenthesized list"),
            ("GET / HTTP/1.1", "one parenthesized list"),
            ("( START m r ((role r)) 0 5 )", "above 0"),
            ("( START m r ((role r)) nan 5 )", "above 0"),
            ("( START m r ((role r)) 10 )", "takes 5 arguments"),
            ("( PLAY m ( noop )", "parse error"),
            ("( PLAY (m) NIL )", "must be a symbol"),
            ("( PLAY m noop )", "NIL or a list"),
            ("( PLAY m 1 noop )", "NIL or a list, not 1"),
            ("( PLAY m 1 noop p q )", "3 in rtGDL, 4 in the GDL-II form"),
            ("( PLAY m (noop) x )", "game time is a number"),
            ("( PLAY m (noop) -1 )", "game time is a number"),
            ("( PLAY m (noop) inf )", "game time is a number"),
            ("( PLAY m (noop) (1) )", "must be a symbol"),
            ("( STOP m NIL 1e300 )", "game time is a number"),
            ("( PLAY m x noop () )", "number of moves"),
            ("( PLAY m 1 noop p )", "percepts is NIL or a list"),
            ("( (PLAY) m NIL )", "starts with its verb"),
        ] {
            let e = Message::parse(text).unwrap_err();
            assert!(e.contains(error), "{text}: {e}");
        }
    }
}
