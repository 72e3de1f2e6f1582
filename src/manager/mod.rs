//! A game manager: runs a match between players as ggp-base's game server
//! does (`shared/PROTOCOL.md`). START to every player, then PLAY until the
//! game ends, then STOP; every reply is checked against the rules, and a late
//! (`TO`), failed (`CE`) or unparsable or illegal (`IL ...`) reply is replaced
//! by a random legal move and recorded. A role named `random` with no player
//! is played by the manager. The record has ggp-base's match keys.
//!
//! In a GDL-II game (one with `sees` or `random`) each player is told only its
//! own percepts, in one of the two forms of the Dresden GameController
//! ([`Gdl2Form`]), and the record holds every role's percepts at every step.
//!
//! A real-time GDL game runs on its own event loop ([`run_rt_match`]): moves
//! arrive whenever players send them, and facts expire on the manager's timer.

mod link;
mod realtime;
mod scramble;

pub use link::{Link, LinkError};
pub use realtime::{
    run_rt_match, RtEvent, RtEventKind, RtMatchRecord, RtMatchSetup, DEFAULT_MAX_OPEN, MAX_PLAY_CLOCK,
};
pub use scramble::Scrambler;

use crate::{Error, Game, Move, State, Stream};
use serde::Serialize;
use std::fmt;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Extra time a PLAY reply may take past the play clock (ggp-base's).
const PLAY_GRACE: Duration = Duration::from_secs(1);

/// Time an ABORT or a manager-side wait for a STOP reply may take at least.
const MIN_STOP_WAIT: Duration = Duration::from_secs(1);

/// What a match needs.
#[derive(Clone, Debug)]
pub struct MatchSetup {
    /// The game, as the manager evaluates it.
    pub game: Game,
    /// Its rules as KIF text, as sent to the players.
    pub rules: String,
    /// Per role, its player; `None` for a role the manager plays at random
    /// (allowed for a role named `random` only).
    pub players: Vec<Option<Link>>,
    /// Names of the players, for the record.
    pub player_names: Vec<String>,
    /// The match id.
    pub id: String,
    /// Time to prepare.
    pub start_clock: Duration,
    /// Time per move.
    pub play_clock: Duration,
    /// Scramble symbol names with this seed.
    pub scramble: Option<u64>,
    /// Seed of the manager's random moves.
    pub seed: u64,
    /// Moves after which the match is aborted.
    pub max_steps: u64,
    /// The form of PLAY and STOP in a GDL-II game.
    pub gdl2_form: Gdl2Form,
}

/// How PLAY and STOP tell a player of a GDL-II game its percepts
/// (`shared/PROTOCOL.md`, section GDL-II).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum Gdl2Form {
    /// `( PLAY id NIL )` first, then `( PLAY id (percepts) )`: the Dresden
    /// GameController of 2010.
    #[default]
    Form2010,
    /// `( PLAY id turn ownLastMove (percepts) )`, `( PLAY id 0 NIL NIL )`
    /// first: the Dresden GameController of 2013.
    Form2013,
}

/// A match record with ggp-base's keys (`Match.toJSON()`), plus the longest
/// reply time of each role's player.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MatchRecord {
    /// The match id.
    pub match_id: String,
    /// A random token, as ggp-base adds.
    pub random_token: String,
    /// Milliseconds since the epoch at the start.
    pub start_time: u128,
    /// Always empty: the game is given as a file.
    #[serde(rename = "gameMetaURL")]
    pub game_meta_url: String,
    /// Whether the game reached a terminal state.
    pub is_completed: bool,
    /// Whether it was stopped before (at the step limit).
    pub is_aborted: bool,
    /// Every state, rendered as ggp-base does: `( ( cell 1 1 b ) ( control x ) )`.
    pub states: Vec<String>,
    /// Every joint move played, in role order.
    pub moves: Vec<Vec<String>>,
    /// Milliseconds since the epoch at which each state was reached.
    pub state_times: Vec<u128>,
    /// Per phase (START, then each PLAY), per role: `""`, `TO`, `CE` or `IL <reply>`.
    pub errors: Vec<Vec<String>>,
    /// Per role, its goal in the final state (0 where none, or when aborted).
    pub goal_values: Vec<i64>,
    /// Not used: -1.
    pub preview_clock: i64,
    /// Seconds.
    pub start_clock: f64,
    /// Seconds.
    pub play_clock: f64,
    /// The player of each role.
    pub player_names_from_host: Vec<String>,
    /// Whether symbol names were scrambled.
    pub scrambled: bool,
    /// The roles, in order.
    pub roles: Vec<String>,
    /// Per role, the longest a PLAY of its player took to answer (or to fail), in seconds.
    pub max_reply_seconds: Vec<f64>,
    /// In a GDL-II game, per joint move, per role, the percepts it gave
    /// (absent in a GDL-I game).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub percepts: Option<Vec<Vec<Vec<String>>>>,
}

/// Why a match could not be run to its end.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum MatchError {
    /// The setup is refused: players, clocks, limits or rules.
    InvalidSetup {
        /// What is wrong with it.
        reason: String,
    },
    /// A role has no legal move in a non-terminal state: the game is broken.
    NoLegalMove {
        /// The role.
        role: String,
    },
    /// The game refused a state or move of the match (the source).
    Game(Error),
    /// The rtGDL engine refused an update (the source).
    RealTime(crate::realtime::RtError),
    /// The threads sending requests stopped.
    Stopped,
}

impl fmt::Display for MatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MatchError::InvalidSetup { reason } => write!(f, "error: {reason}"),
            MatchError::NoLegalMove { role } => {
                write!(f, "error: role {role} has no legal move in a non-terminal state")
            }
            MatchError::Game(e) => e.fmt(f),
            MatchError::RealTime(e) => e.fmt(f),
            MatchError::Stopped => f.write_str("error: the request threads stopped"),
        }
    }
}

impl std::error::Error for MatchError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            MatchError::Game(e) => Some(e),
            MatchError::RealTime(e) => Some(e),
            _ => None,
        }
    }
}

impl From<Error> for MatchError {
    fn from(e: Error) -> MatchError {
        MatchError::Game(e)
    }
}

/// A refused setup, saying why.
fn invalid(reason: impl fmt::Display) -> MatchError {
    MatchError::InvalidSetup {
        reason: reason.to_string(),
    }
}

/// Runs one match to its end (or the step limit).
pub fn run_match(setup: &MatchSetup) -> Result<MatchRecord, MatchError> {
    let game = &setup.game;
    let roles = game.roles().len();
    check_players(setup)?;
    let scrambler = match setup.scramble {
        Some(seed) => Some(Scrambler::new(&setup.rules, seed).map_err(invalid)?),
        None => None,
    };
    let show = |text: &str| scrambler.as_ref().map_or(text.to_owned(), |s| s.scramble(text));
    let read = |text: &str| scrambler.as_ref().map_or(text.to_owned(), |s| s.unscramble(text));
    let mut machine = game.machine();
    let mut rng = Stream::new(setup.seed, 0);
    let mut state = game.initial_state();
    let mut record = new_record(setup);
    // Re-printed from the parse, as ggp-base's server sends them: no comments,
    // one space between rules.
    let printed = ggpnet_kif::sexprs(&setup.rules).map_err(invalid)?;
    let printed: Vec<String> = printed.iter().map(ToString::to_string).collect();
    let rules = show(&printed.join(" "));
    let starts: Vec<String> = game
        .roles()
        .iter()
        .map(|role| {
            format!(
                "( START {} {} ({rules}) {} {} )",
                setup.id,
                show(role),
                seconds(setup.start_clock),
                seconds(setup.play_clock)
            )
        })
        .collect();
    let replies = broadcast(&setup.players, &starts, setup.start_clock);
    record.errors.push(replies.iter().map(start_error).collect());
    let mut last: Option<Step> = None;
    record_state(&mut record, game, &state)?;
    while !machine.is_terminal(&state)? {
        if record.moves.len() as u64 >= setup.max_steps {
            record.is_aborted = true;
            let aborts = vec![format!("( ABORT {} )", setup.id); roles];
            broadcast(&setup.players, &aborts, MIN_STOP_WAIT);
            return Ok(record);
        }
        let messages = news(setup, "PLAY", last.as_ref(), record.moves.len(), &show)?;
        let replies = broadcast(&setup.players, &messages, setup.play_clock + PLAY_GRACE);
        let mut joint = Vec::with_capacity(roles);
        let mut errors = Vec::with_capacity(roles);
        for (role, reply) in replies.iter().enumerate() {
            let legal = machine.legal_moves(&state, role)?;
            if legal.is_empty() {
                let name = &game.roles()[role];
                return Err(MatchError::NoLegalMove { role: name.clone() });
            }
            let fallback = legal[rng.draw(legal.len())].clone();
            if let Some((_, took)) = reply {
                record.max_reply_seconds[role] = record.max_reply_seconds[role].max(*took);
            }
            let (m, error) = match reply {
                None => (fallback, String::new()),
                Some((Err(LinkError::Timeout), _)) => (fallback, "TO".to_owned()),
                Some((Err(LinkError::Connection(_)), _)) => (fallback, "CE".to_owned()),
                Some((Ok(text), _)) => match legal_reply(game, role, &read(text), &legal) {
                    Some(m) => (m, String::new()),
                    None => (fallback, format!("IL {text}")),
                },
            };
            joint.push(m);
            errors.push(error);
        }
        let seen = match &mut record.percepts {
            Some(percepts) => {
                let seen = machine.percepts(&state, &joint)?;
                percepts.push(seen.clone());
                seen
            }
            None => Vec::new(),
        };
        state = machine.next_state(&state, &joint)?;
        record.moves.push(
            joint
                .iter()
                .map(|m| game.move_to_kif(m).map(|t| spaced(&t)))
                .collect::<Result<_, _>>()?,
        );
        record.errors.push(errors);
        record_state(&mut record, game, &state)?;
        last = Some(Step { joint, seen });
    }
    let stops = news(setup, "STOP", last.as_ref(), record.moves.len(), &show)?;
    broadcast(&setup.players, &stops, setup.play_clock.max(MIN_STOP_WAIT));
    record.is_completed = true;
    record.goal_values = machine
        .goals(&state)?
        .into_iter()
        .map(|g| g.unwrap_or(0))
        .collect();
    Ok(record)
}

/// A joint move played and the percepts it gave each role (none in a GDL-I game).
struct Step {
    joint: Vec<Move>,
    seen: Vec<Vec<String>>,
}

/// Per role, the PLAY or STOP (`verb`) that tells of the `last` step, the
/// `turn`-th: in a GDL-I game the joint move, in a GDL-II game the role's
/// percepts in the setup's form; scrambled by `show`.
fn news(
    setup: &MatchSetup,
    verb: &str,
    last: Option<&Step>,
    turn: usize,
    show: &impl Fn(&str) -> String,
) -> Result<Vec<String>, Error> {
    let (game, id) = (&setup.game, &setup.id);
    let roles = game.roles().len();
    if !game.is_gdl2() {
        let joint = match last {
            None => "NIL".to_owned(),
            Some(step) => rendered_joint(game, &step.joint, show)?,
        };
        return Ok(vec![format!("( {verb} {id} {joint} )"); roles]);
    }
    (0..roles)
        .map(|role| {
            // Each percept followed by a space, as the GameController prints them.
            let percepts = last.map(|step| {
                let each: String = step.seen[role].iter().map(|p| format!("{} ", show(p))).collect();
                format!("({each})")
            });
            Ok(match (setup.gdl2_form, last) {
                (Gdl2Form::Form2010, _) => {
                    format!("({verb} {id} {})", percepts.as_deref().unwrap_or("NIL"))
                }
                (Gdl2Form::Form2013, None) => format!("({verb} {id} 0 NIL NIL)"),
                (Gdl2Form::Form2013, Some(step)) => {
                    let own = show(&game.move_to_kif(&step.joint[role])?);
                    let percepts = percepts.expect("a step was played");
                    format!("({verb} {id} {turn} {own} {percepts})")
                }
            })
        })
        .collect()
}

/// Refuses a player list of the wrong length.
fn check_player_count(players: usize, roles: usize) -> Result<(), MatchError> {
    if players != roles {
        return Err(invalid(format!("{players} players for {roles} roles")));
    }
    Ok(())
}

/// Refuses a setup with a player list of the wrong length, or a role other
/// than `random` with no player.
fn check_players(setup: &MatchSetup) -> Result<(), MatchError> {
    let roles = setup.game.roles();
    check_player_count(setup.players.len(), roles.len())?;
    for (role, player) in roles.iter().zip(&setup.players) {
        if player.is_none() && !role.eq_ignore_ascii_case("random") {
            return Err(invalid(format!("role {role} has no player")));
        }
    }
    Ok(())
}

/// Milliseconds since the epoch now, as the records write their times.
pub(super) fn epoch_millis() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis())
}

fn new_record(setup: &MatchSetup) -> MatchRecord {
    let roles = setup.game.roles().len();
    let now = epoch_millis();
    MatchRecord {
        match_id: setup.id.clone(),
        random_token: format!("{:016x}", Stream::new(setup.seed, 1).next_u64()),
        start_time: now,
        game_meta_url: String::new(),
        is_completed: false,
        is_aborted: false,
        states: Vec::new(),
        moves: Vec::new(),
        state_times: Vec::new(),
        errors: Vec::new(),
        goal_values: vec![0; roles],
        preview_clock: -1,
        start_clock: setup.start_clock.as_secs_f64(),
        play_clock: setup.play_clock.as_secs_f64(),
        player_names_from_host: setup.player_names.clone(),
        scrambled: setup.scramble.is_some(),
        roles: setup.game.roles().to_vec(),
        max_reply_seconds: vec![0.0; roles],
        percepts: setup.game.is_gdl2().then(Vec::new),
    }
}

fn record_state(record: &mut MatchRecord, game: &Game, state: &State) -> Result<(), Error> {
    let facts: Vec<String> = game.state_to_kif(state)?.iter().map(|f| spaced(f)).collect();
    record.states.push(format!("( {} )", facts.join(" ")));
    let now = epoch_millis();
    record.state_times.push(now);
    Ok(())
}

/// A player's reply and the seconds it took; `None` for a role the manager plays.
type Replies = Vec<Option<(Result<String, LinkError>, f64)>>;

/// Sends each player its message at once and waits for every reply.
fn broadcast(players: &[Option<Link>], messages: &[String], timeout: Duration) -> Replies {
    std::thread::scope(|scope| {
        let handles: Vec<_> = players
            .iter()
            .zip(messages)
            .map(|(player, message)| {
                player.as_ref().map(|link| {
                    scope.spawn(move || {
                        let asked = Instant::now();
                        (link.send(message, timeout), asked.elapsed().as_secs_f64())
                    })
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.map(|h| {
                    h.join().unwrap_or_else(|_| {
                        let panicked = LinkError::Connection("the sender panicked".to_owned());
                        (Err(panicked), 0.0)
                    })
                })
            })
            .collect()
    })
}

fn start_error(reply: &Option<(Result<String, LinkError>, f64)>) -> String {
    match reply {
        Some((Err(LinkError::Timeout), _)) => "TO".to_owned(),
        Some((Err(LinkError::Connection(_)), _)) => "CE".to_owned(),
        _ => String::new(),
    }
}

/// The move `text` of `role` if it is one of `legal` (matched exactly, then in any case).
fn legal_reply(game: &Game, role: usize, text: &str, legal: &[Move]) -> Option<Move> {
    let parsed = game
        .parse_move(role, text)
        .or_else(|_| game.parse_move(role, &text.to_lowercase()))
        .ok()?;
    legal.contains(&parsed).then_some(parsed)
}

/// A joint move as PLAY and STOP send it: `(( mark 1 1 ) noop )`, scrambled by `show`.
fn rendered_joint(game: &Game, joint: &[Move], show: &impl Fn(&str) -> String) -> Result<String, Error> {
    let moves: Vec<String> = joint
        .iter()
        .map(|m| game.move_to_kif(m).map(|t| spaced(&show(&t))))
        .collect::<Result<_, _>>()?;
    Ok(format!("( {} )", moves.join(" ")))
}

/// KIF with a space inside each parenthesis, as ggp-base prints terms: `( mark 1 1 )`.
fn spaced(text: &str) -> String {
    text.replace('(', "( ").replace(')', " )")
}

/// A clock in whole seconds when it is one, else with decimals.
fn seconds(clock: Duration) -> String {
    let s = clock.as_secs_f64();
    match s.fract() == 0.0 {
        true => format!("{s:.0}"),
        false => format!("{s}"),
    }
}
