//! The rtGDL match runner: the execution model of the rtGDL spec (section
//! 4) over HTTP, as `docs/LANGUAGES.md` ("Match play") reads its protocol.
//!
//! START goes to every player as in GDL (PLAYCLOCK is the number of seconds
//! per lifetime unit); game time 0 is when `( PLAY id NIL 0 )` goes to every
//! player. From then on every reply to a PLAY is a move attempt at the moment
//! it arrives. Each open request is a thread that sends its message and posts
//! the reply and its arrival [`Instant`] to a channel; the event loop waits on
//! that channel until the next expiry (or the game time limit), and considers
//! the replies in arrival order:
//!
//! - wall time is turned into exact game time ([`Time`], millionths of a
//!   unit) at the PLAYCLOCK scale; the expiries due strictly before a reply
//!   are performed first (silent updates at their exact times), then the
//!   reply: a legal move is the update u(Δt, {role: move}, S), with Δt the
//!   time since the last update (at least a tick, so that two events are never
//!   at the same time), and `( PLAY id MOVES t )` goes to every player; an
//!   illegal or unreadable move changes nothing, and `( PLAY id NIL t )` goes
//!   to that player alone; `NIL` is no move.
//! - expiries with no reply before them are performed when the timer reaches
//!   them, and no message is sent.
//! - a terminal state ends the match: `( STOP id MOVES t )` to every player
//!   and the goals recorded. At the update limit or the game time limit the
//!   match is aborted (`( ABORT id )`) and the record gives the reason; so
//!   it is past [`EVENTS_PER_UPDATE`] times the update limit of events
//!   (illegal replies and failed requests included), which bounds the record.
//!
//! A player has at most [`RtMatchSetup::max_open`] open requests; its further
//! messages wait in order in a queue, and the next one is sent when one of
//! its requests is answered (so it misses no update). When the match ends,
//! every request still open is given up and its thread joined: none outlives
//! the match.

use super::{broadcast, spaced, start_error, Link, LinkError};
use super::{invalid, MatchError};
use crate::realtime::{RtGame, Time, TimedState, MAX_UNITS, TICKS_PER_UNIT};
use serde::{Deserialize, Serialize};
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// Time a STOP or ABORT reply may take at least.
const MIN_END_WAIT: Duration = Duration::from_secs(1);

/// What an rtGDL match needs.
#[derive(Clone, Debug)]
pub struct RtMatchSetup {
    /// The game, as the manager evaluates it.
    pub game: RtGame,
    /// Its rules as KIF text, as sent to the players.
    pub rules: String,
    /// Per role, its player.
    pub players: Vec<Link>,
    /// Names of the players, for the record.
    pub player_names: Vec<String>,
    /// The match id.
    pub id: String,
    /// Time to prepare.
    pub start_clock: Duration,
    /// PLAYCLOCK: the wall time of one lifetime unit.
    pub play_clock: Duration,
    /// Updates (moves and expiries) after which the match is aborted.
    pub max_updates: u64,
    /// Game time, in lifetime units, after which the match is aborted.
    pub max_game_time: Time,
    /// Open requests per player at most; more messages wait in a queue.
    pub max_open: usize,
}

/// Events recorded at most per update allowed: past this many, counting the
/// illegal replies and failed requests, the match is aborted (a player that
/// answers every PLAY at once with an illegal move makes no update).
pub const EVENTS_PER_UPDATE: u64 = 4;

/// Characters of a reply or failure kept in an event.
const MAX_EVENT_TEXT: usize = 200;

/// The longest PLAYCLOCK (wall time of a lifetime unit) a match accepts: a day.
pub const MAX_PLAY_CLOCK: Duration = Duration::from_secs(86_400);

/// The default of [`RtMatchSetup::max_open`].
pub const DEFAULT_MAX_OPEN: usize = 4;

/// What happened at one moment of an rtGDL match.
#[derive(Clone, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RtEvent {
    /// The game time, in lifetime units, exact (`1.25`).
    pub time: String,
    /// What it was.
    pub kind: RtEventKind,
    /// The role whose reply it was (none for an expiry).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub role: Option<String>,
    /// The move as applied, the reply as received, or the failure (at
    /// most 200 characters, then `...`).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub text: Option<String>,
}

/// The kinds of [`RtEvent`]: the first two are the updates of the match.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RtEventKind {
    /// A legal move, applied in an update.
    Move,
    /// A silent update: the earliest lifetime ran out.
    Expired,
    /// A reply that is no legal move now: no update.
    Illegal,
    /// A request that failed (`TO` when late, `CE ...` on a connection error): no update.
    Error,
}

/// The record of an rtGDL match: the keys of the GDL record that apply, and
/// every event in order.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RtMatchRecord {
    /// The match id.
    pub match_id: String,
    /// Always `rtgdl`.
    pub language: String,
    /// Milliseconds since the epoch at the start.
    pub start_time: u128,
    /// Whether the game reached a terminal state.
    pub is_completed: bool,
    /// Whether it was stopped before.
    pub is_aborted: bool,
    /// Why it was aborted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub abort_reason: Option<String>,
    /// The roles, in order.
    pub roles: Vec<String>,
    /// The player of each role.
    pub player_names_from_host: Vec<String>,
    /// Seconds.
    pub start_clock: f64,
    /// Seconds per lifetime unit.
    pub play_clock: f64,
    /// Per role, `""`, `TO` or `CE` for its START.
    pub start_errors: Vec<String>,
    /// Every event, in the order the manager considered them.
    pub events: Vec<RtEvent>,
    /// Updates performed (moves and expiries).
    pub updates: u64,
    /// Game time of the last update, in units.
    pub game_time: String,
    /// Per role, the replies it sent (failed requests aside).
    pub replies: Vec<u64>,
    /// Per role, its `NIL` replies.
    pub nil_replies: Vec<u64>,
    /// Per role, the longest time from a PLAY to a move attempt in reply
    /// (`NIL` replies aside), in seconds.
    pub max_reply_seconds: Vec<f64>,
    /// The last state: `[lifetime, fact]` pairs sorted by fact.
    pub final_state: Vec<(String, String)>,
    /// Per role, its goal in the final state (0 where none, or when aborted).
    pub goal_values: Vec<i64>,
}

/// A reply that came back, and when.
struct Arrival {
    role: usize,
    reply: Result<String, LinkError>,
    at: Instant,
    /// From sending the request to its reply.
    took: Duration,
}

/// How the event loop ended.
enum End {
    /// In a terminal state, the moves of its last update (none after an expiry).
    Terminal(Option<Vec<Option<String>>>),
    /// At a limit, for this reason.
    Aborted(String),
}

/// The match under way: the game state and the traffic.
struct Run<'a> {
    setup: &'a RtMatchSetup,
    state: TimedState,
    /// Game time of the last update.
    now: Time,
    /// When game time 0 was.
    start: Instant,
    record: RtMatchRecord,
    /// Per player: its open requests, and the messages waiting to be sent.
    open: Vec<usize>,
    queued: Vec<VecDeque<String>>,
    /// The moves of the last update (none after an expiry).
    last_moves: Option<Vec<Option<String>>>,
}

/// Runs one rtGDL match to its end (terminal, or a limit).
pub fn run_rt_match(setup: &RtMatchSetup) -> Result<RtMatchRecord, MatchError> {
    check(setup)?;
    let game = &setup.game;
    let players: Vec<Option<Link>> = setup.players.iter().cloned().map(Some).collect();
    let printed = ggpnet_kif::sexprs(&setup.rules).map_err(invalid)?;
    let printed: Vec<String> = printed.iter().map(ToString::to_string).collect();
    let rules = printed.join(" ");
    let starts: Vec<String> = game
        .roles()
        .iter()
        .map(|role| {
            format!(
                "( START {} {role} ({rules}) {} {} )",
                setup.id,
                super::seconds(setup.start_clock),
                super::seconds(setup.play_clock)
            )
        })
        .collect();
    let replies = broadcast(&players, &starts, setup.start_clock);
    let mut record = new_record(setup);
    record.start_errors = replies.iter().map(start_error).collect();
    let cancel = AtomicBool::new(false);
    let (send, receive) = channel();
    let record = std::thread::scope(|scope| {
        let mut run = Run {
            setup,
            state: game.initial_state(),
            now: Time::ZERO,
            start: Instant::now(),
            record,
            open: vec![0; setup.players.len()],
            queued: vec![VecDeque::new(); setup.players.len()],
            last_moves: None,
        };
        let mut spawn = |role: usize, message: String| {
            let (link, send, cancel) = (&setup.players[role], send.clone(), &cancel);
            // Bounded by the match's game time limit; given up when the match ends.
            let timeout = run_wall_bound(setup);
            scope.spawn(move || {
                let sent = Instant::now();
                let reply = link.send_unless(&message, timeout, cancel);
                let at = Instant::now();
                let took = at - sent;
                let _ = send.send(Arrival {
                    role,
                    reply,
                    at,
                    took,
                });
            });
        };
        let first = format!("( PLAY {} NIL 0 )", setup.id);
        for role in 0..setup.players.len() {
            run.queued[role].push_back(first.clone());
        }
        run.dispatch(&mut spawn);
        let end = run.event_loop(&receive, &mut spawn);
        let end = end.and_then(|end| run.finish(end, &players));
        cancel.store(true, Ordering::SeqCst);
        end.map(|()| run.record)
    })?;
    Ok(record)
}

/// The longest any request of the match may stay open: its game time limit
/// in wall time, plus a play clock and a second.
fn run_wall_bound(setup: &RtMatchSetup) -> Duration {
    let units = setup.max_game_time.ticks() as f64 / TICKS_PER_UNIT as f64;
    let wall = (units * setup.play_clock.as_secs_f64()).min(1e9);
    Duration::from_secs_f64(wall) + setup.play_clock + MIN_END_WAIT
}

/// Refuses a setup that cannot run: a player per role, a positive clock, limits.
fn check(setup: &RtMatchSetup) -> Result<(), MatchError> {
    super::check_player_count(setup.players.len(), setup.game.roles().len())?;
    if setup.play_clock.is_zero() || setup.play_clock > MAX_PLAY_CLOCK {
        return Err(invalid(
            "the play clock (seconds per lifetime unit) must be above 0 and at most a day",
        ));
    }
    if setup.max_open == 0 || setup.max_updates == 0 || setup.max_game_time.is_zero() {
        return Err(invalid(
            "the open requests, updates and game time of a match must be limited to at least 1",
        ));
    }
    Ok(())
}

fn new_record(setup: &RtMatchSetup) -> RtMatchRecord {
    let roles = setup.game.roles().len();
    let now = super::epoch_millis();
    RtMatchRecord {
        match_id: setup.id.clone(),
        language: "rtgdl".to_owned(),
        start_time: now,
        is_completed: false,
        is_aborted: false,
        abort_reason: None,
        roles: setup.game.roles().to_vec(),
        player_names_from_host: setup.player_names.clone(),
        start_clock: setup.start_clock.as_secs_f64(),
        play_clock: setup.play_clock.as_secs_f64(),
        start_errors: Vec::new(),
        events: Vec::new(),
        updates: 0,
        game_time: "0".to_owned(),
        replies: vec![0; roles],
        nil_replies: vec![0; roles],
        max_reply_seconds: vec![0.0; roles],
        final_state: Vec::new(),
        goal_values: vec![0; roles],
    }
}

impl Run<'_> {
    /// The exact game time of the instant `at` (the wall time since game time
    /// 0 over PLAYCLOCK, to the tick).
    fn game_time(&self, at: Instant) -> Time {
        let units =
            at.saturating_duration_since(self.start).as_secs_f64() / self.setup.play_clock.as_secs_f64();
        let ticks = (units * TICKS_PER_UNIT as f64)
            .round()
            .min((MAX_UNITS * TICKS_PER_UNIT) as f64);
        Time::from_ticks(ticks as u64).expect("at most the largest time")
    }

    /// The instant of game time `t`.
    fn wall(&self, t: Time) -> Instant {
        let seconds = t.ticks() as f64 / TICKS_PER_UNIT as f64 * self.setup.play_clock.as_secs_f64();
        self.start + Duration::from_secs_f64(seconds.min(1e9))
    }

    /// Waits for replies and expiries until the game ends or a limit is reached.
    fn event_loop(
        &mut self,
        receive: &Receiver<Arrival>,
        spawn: &mut impl FnMut(usize, String),
    ) -> Result<End, MatchError> {
        let game = &self.setup.game;
        loop {
            if let Some(end) = self.ended()? {
                return Ok(end);
            }
            let expiry = game
                .next_expiry(&self.state)
                .map_err(rt)?
                .and_then(|e| self.now.checked_add(e));
            let limit = self.setup.max_game_time;
            let wake = expiry.filter(|&e| e <= limit);
            let wait = self
                .wall(wake.unwrap_or(limit))
                .saturating_duration_since(Instant::now());
            match receive.recv_timeout(wait) {
                Ok(arrival) => {
                    // The replies in by now, in the order they arrived.
                    let mut arrivals = vec![arrival];
                    arrivals.extend(receive.try_iter());
                    arrivals.sort_by_key(|a| a.at);
                    for arrival in arrivals {
                        if let Some(end) = self.ended()? {
                            return Ok(end);
                        }
                        if let Some(end) = self.arrive(arrival)? {
                            return Ok(end);
                        }
                    }
                    self.dispatch(spawn);
                }
                Err(RecvTimeoutError::Timeout) => match wake {
                    Some(at) => self.expire(at)?,
                    None => return Ok(self.time_limit()),
                },
                Err(RecvTimeoutError::Disconnected) => return Err(MatchError::Stopped),
            }
        }
    }

    /// The end of the match if the state is terminal or the update limit is reached.
    fn ended(&self) -> Result<Option<End>, MatchError> {
        if self.setup.game.is_terminal(&self.state).map_err(rt)? {
            return Ok(Some(End::Terminal(self.last_moves.clone())));
        }
        if self.record.updates >= self.setup.max_updates {
            return Ok(Some(End::Aborted(format!(
                "the limit of {} updates",
                self.setup.max_updates
            ))));
        }
        let max_events = self.setup.max_updates.saturating_mul(EVENTS_PER_UPDATE);
        if self.record.events.len() as u64 >= max_events {
            return Ok(Some(End::Aborted(format!(
                "the limit of {max_events} events ({EVENTS_PER_UPDATE} times the update limit)"
            ))));
        }
        Ok(None)
    }

    fn time_limit(&self) -> End {
        End::Aborted(format!(
            "the limit of {} units of game time",
            self.setup.max_game_time
        ))
    }

    /// The silent update at game time `at`, the next expiry.
    fn expire(&mut self, at: Time) -> Result<(), MatchError> {
        let game = &self.setup.game;
        let elapsed = at
            .checked_sub(self.now)
            .expect("expiries come after the last update");
        self.state = game
            .update(&self.state, elapsed, &vec![None; game.roles().len()])
            .map_err(rt)?;
        self.now = at;
        self.last_moves = None;
        self.record.updates += 1;
        self.record.events.push(RtEvent {
            time: at.to_string(),
            kind: RtEventKind::Expired,
            role: None,
            text: None,
        });
        Ok(())
    }

    /// Considers one reply: the expiries before it, then the reply itself.
    fn arrive(&mut self, arrival: Arrival) -> Result<Option<End>, MatchError> {
        let game = &self.setup.game;
        let role = arrival.role;
        self.open[role] -= 1;
        let arrived = self.game_time(arrival.at);
        // The expiries due strictly before the reply happened first.
        while let Some(t_u) = game.next_expiry(&self.state).map_err(rt)? {
            let at = self.now.checked_add(t_u).expect("bounded game time");
            if at >= arrived {
                break;
            }
            if at > self.setup.max_game_time {
                return Ok(Some(self.time_limit()));
            }
            self.expire(at)?;
            if let Some(end) = self.ended()? {
                return Ok(Some(end));
            }
        }
        if arrived > self.setup.max_game_time {
            return Ok(Some(self.time_limit()));
        }
        // At least a tick after the last update; at most its next expiry (past which it is not).
        let at = arrived.max(self.now.checked_add(Time::TICK).expect("bounded game time"));
        let name = &game.roles()[role];
        let event = |kind, text: String| RtEvent {
            time: at.to_string(),
            kind,
            role: Some(name.clone()),
            text: Some(shortened(text)),
        };
        let text = match arrival.reply {
            Err(LinkError::Timeout) => {
                self.record
                    .events
                    .push(event(RtEventKind::Error, "TO".to_owned()));
                return Ok(None);
            }
            Err(LinkError::Connection(e)) => {
                self.record
                    .events
                    .push(event(RtEventKind::Error, format!("CE {e}")));
                return Ok(None);
            }
            Ok(text) => text,
        };
        self.record.replies[role] += 1;
        if text.trim().eq_ignore_ascii_case("nil") {
            self.record.nil_replies[role] += 1;
            return Ok(None);
        }
        let longest = &mut self.record.max_reply_seconds[role];
        *longest = longest.max(arrival.took.as_secs_f64());
        let legal = game.legal_moves(&self.state, role).map_err(rt)?;
        let Some(chosen) = legal_reply(&text, &legal) else {
            self.record.events.push(event(RtEventKind::Illegal, text));
            let message = format!("( PLAY {} NIL {at} )", self.setup.id);
            self.queued[role].push_back(message);
            return Ok(None);
        };
        let mut moves = vec![None; game.roles().len()];
        moves[role] = Some(chosen.clone());
        let elapsed = at.checked_sub(self.now).expect("after the last update");
        self.state = game.update(&self.state, elapsed, &moves).map_err(rt)?;
        self.now = at;
        self.record.updates += 1;
        self.record.events.push(event(RtEventKind::Move, chosen));
        // A terminal update is told by the STOP.
        if !game.is_terminal(&self.state).map_err(rt)? {
            let message = format!("( PLAY {} {} {at} )", self.setup.id, rendered(&moves));
            for queue in &mut self.queued {
                queue.push_back(message.clone());
            }
        }
        self.last_moves = Some(moves);
        Ok(None)
    }

    /// Sends each player its waiting messages, up to its open request limit.
    fn dispatch(&mut self, spawn: &mut impl FnMut(usize, String)) {
        for role in 0..self.queued.len() {
            while self.open[role] < self.setup.max_open {
                let Some(message) = self.queued[role].pop_front() else {
                    break;
                };
                self.open[role] += 1;
                spawn(role, message);
            }
        }
    }

    /// Ends the match: STOP (with the goals) or ABORT to every player, and the record completed.
    fn finish(&mut self, end: End, players: &[Option<Link>]) -> Result<(), MatchError> {
        let game = &self.setup.game;
        let id = &self.setup.id;
        self.record.game_time = self.now.to_string();
        self.record.final_state = game
            .pairs(&self.state)
            .map_err(rt)?
            .into_iter()
            .map(|(lifetime, fact)| (lifetime.to_string(), fact))
            .collect();
        match end {
            End::Terminal(moves) => {
                let moves = moves.map_or("NIL".to_owned(), |m| rendered(&m));
                let stop = format!("( STOP {id} {moves} {} )", self.now);
                broadcast(
                    players,
                    &vec![stop; players.len()],
                    self.setup.play_clock.max(MIN_END_WAIT),
                );
                self.record.is_completed = true;
                self.record.goal_values = game
                    .goals(&self.state)
                    .map_err(rt)?
                    .into_iter()
                    .map(|g| g.unwrap_or(0))
                    .collect();
            }
            End::Aborted(reason) => {
                let abort = format!("( ABORT {id} )");
                broadcast(players, &vec![abort; players.len()], MIN_END_WAIT);
                self.record.is_aborted = true;
                self.record.abort_reason = Some(reason);
            }
        }
        Ok(())
    }
}

/// The error of the rtGDL engine as the manager's.
fn rt(e: crate::realtime::RtError) -> MatchError {
    MatchError::RealTime(e)
}

/// The legal move (one of `legal`, canonical KIF) that `reply` names: the
/// same term, read as KIF, or else the same in any case.
fn legal_reply(reply: &str, legal: &[String]) -> Option<String> {
    let normal = |text: &str| match ggpnet_kif::sexprs(text).ok()?.as_slice() {
        [one] => Some(one.to_string()),
        _ => None,
    };
    let reply = normal(reply)?;
    let same = |m: &&String| normal(m).is_some_and(|n| n == reply);
    let alike = |m: &&String| normal(m).is_some_and(|n| n.eq_ignore_ascii_case(&reply));
    legal
        .iter()
        .find(same)
        .or_else(|| legal.iter().find(alike))
        .cloned()
}

/// `text` cut to [`MAX_EVENT_TEXT`] characters (a reply may be a megabyte).
fn shortened(text: String) -> String {
    match text.char_indices().nth(MAX_EVENT_TEXT) {
        Some((end, _)) => format!("{}...", &text[..end]),
        None => text,
    }
}

/// The moves of an update as PLAY and STOP send them: one entry per role,
/// `NIL` for a role that did not move: `( NIL ( mark 1 1 ) )`.
fn rendered(moves: &[Option<String>]) -> String {
    let each: Vec<String> = moves
        .iter()
        .map(|m| m.as_deref().map_or("NIL".to_owned(), spaced))
        .collect();
    format!("( {} )", each.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_are_matched_to_legal_moves() {
        let legal = vec![
            "(mark 1 1)".to_owned(),
            "(mark 2 2)".to_owned(),
            "noop".to_owned(),
        ];
        assert_eq!(legal_reply("( mark 2 2 )", &legal).as_deref(), Some("(mark 2 2)"));
        assert_eq!(legal_reply("(MARK 1 1)", &legal).as_deref(), Some("(mark 1 1)"));
        assert_eq!(legal_reply("NOOP", &legal).as_deref(), Some("noop"));
        assert_eq!(legal_reply("(mark 3 3)", &legal), None);
        assert_eq!(legal_reply("(mark 1", &legal), None);
        assert_eq!(legal_reply("noop noop", &legal), None);
        assert_eq!(shortened("noop".to_owned()), "noop");
        let long = shortened("é".repeat(1000));
        assert_eq!(long.chars().count(), MAX_EVENT_TEXT + 3);
        assert_eq!(
            rendered(&[None, Some("(mark 1 1)".to_owned())]),
            "( NIL ( mark 1 1 ) )"
        );
    }
}
