//! The player's side of rtGDL match play (`docs/LANGUAGES.md`, "Match play").
//!
//! A match keeps the updates the manager told (game time and moves), and the
//! timed state they lead to: the expiries between two updates are silent, so
//! the player performs them itself, strictly before the time of the next
//! update (as the manager does). Messages may arrive out of order (each is a
//! connection of its own): an update older than the last one known is put in
//! its place and the state replayed from the initial state. A PLAY without a
//! game time (a GDL manager's form) is placed by this player's own clock.
//!
//! Every PLAY is answered with a move attempt or `NIL`. A request is answered
//! `NIL` at once while the last move this player sent is not told yet (for
//! at most a lifetime unit's wall time: a move decided meanwhile would be
//! decided on a state that move changes), when a newer PLAY of the match has come (one with a later
//! game time, or as late and received after it: the newer one decides, on
//! fresher news), when the match has ended or when the state is
//! terminal. When this player's role has no legal move now, the request is
//! held until an expiry gives it one, a newer PLAY comes, the match ends, or
//! [`PlayerConfig::idle_timeout`] passes. Otherwise the player thinks: timed
//! flat Monte Carlo from the current state (the last known state with the
//! expiries due by now), [`THINK_FRACTION`] of a lifetime unit's wall time,
//! but never past the next expiry; each legal move is tried as arriving when
//! the thinking ends, followed by random timed playouts in which every role
//! moves after a delay drawn from [`simulated_players`]; the move with the
//! best average goal is sent, if it is still legal then (else `NIL`).

use super::{PlayerConfig, Reply, Search};
use crate::realtime::{RtGame, Time, TimeModel, TimedState, MAX_UNITS, TICKS_PER_UNIT};
use crate::{Budget, Stream, MAX_THREADS};
use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use super::message::News;

/// The share of a lifetime unit's wall time (PLAYCLOCK) spent thinking on a move.
pub const THINK_FRACTION: f64 = 0.25;

/// How long the other roles (and this one, later) take to move in the
/// playouts that judge a move: uniform up to half a unit.
pub fn simulated_players() -> TimeModel {
    TimeModel::Uniform(Time::from_ticks(TICKS_PER_UNIT / 2).expect("half a unit"))
}

/// Updates a judging playout performs at most.
const PLAYOUT_EVENTS: u64 = 200;

/// Updates a match keeps at most (a bound on its memory).
const MAX_HISTORY: usize = 1 << 20;

/// Expiries performed at most to catch up with one message or the clock
/// (a bound on the work a game time far ahead asks).
const MAX_EXPIRIES: u32 = 100_000;

/// The least time spent thinking, so that every candidate gets a playout or so.
const MIN_THINK: Duration = Duration::from_millis(2);

/// The rtGDL matches of a player.
#[derive(Default)]
pub(super) struct RtMatches {
    matches: Mutex<HashMap<String, Arc<RtMatch>>>,
}

/// One rtGDL match under way.
struct RtMatch {
    game: RtGame,
    role: usize,
    /// PLAYCLOCK: the wall time of one lifetime unit.
    unit: Duration,
    sync: Mutex<Sync>,
    /// Signalled when news comes or the match ends.
    changed: Condvar,
}

/// What the player knows of the match.
struct Sync {
    initial: TimedState,
    /// The updates told so far, by game time.
    history: Vec<(Time, Vec<Option<String>>)>,
    /// The state after them (and after the expiries before the last news).
    state: TimedState,
    /// The game time `state` is at.
    at: Time,
    /// The estimated instant of game time 0.
    zero: Option<Instant>,
    /// The newest PLAY: the greatest game time, the last of those to come.
    newest: (Time, u64),
    /// PLAYs received.
    plays: u64,
    ended: bool,
    last_seen: Instant,
    /// When this player sent a move the manager has not told of yet (in an
    /// update, or by a `NIL` answer to an illegal move).
    pending: Option<Instant>,
}

impl RtMatches {
    fn lock(&self) -> MutexGuard<'_, HashMap<String, Arc<RtMatch>>> {
        self.matches.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The number of matches under way.
    pub(super) fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether `id` is an rtGDL match of this player.
    pub(super) fn has(&self, id: &str) -> bool {
        self.lock().contains_key(id)
    }

    /// START: loads the game (grounding past half the start clock falls back
    /// to the interpreter) and answers `ready`, or says why it cannot play.
    pub(super) fn start(
        &self,
        id: String,
        role: String,
        rules: &str,
        start_clock: Duration,
        play_clock: Duration,
        config: &PlayerConfig,
    ) -> Reply {
        if self.has(&id) {
            return Reply::new("ready", format!("match {id} already started"));
        }
        let engine = config.game.get_engine();
        let ground = config
            .game
            .get_load()
            .get_ground()
            .clone()
            .max_time(Some(start_clock / 2));
        let game = match RtGame::load_limited(rules, engine, &ground) {
            Ok(game) => game,
            Err(e) => return Reply::new("error", format!("match {id}: cannot load the rtGDL game: {e}")),
        };
        let Some(index) = game.roles().iter().position(|r| r.eq_ignore_ascii_case(&role)) else {
            return Reply::new("error", format!("match {id}: the game has no role {role}"));
        };
        let initial = game.initial_state();
        let note = format!("match {id}: rtGDL on the {}", game.engine());
        let entry = RtMatch {
            game,
            role: index,
            unit: play_clock,
            sync: Mutex::new(Sync {
                initial: initial.clone(),
                history: Vec::new(),
                state: initial,
                at: Time::ZERO,
                zero: None,
                newest: (Time::ZERO, 0),
                plays: 0,
                ended: false,
                last_seen: Instant::now(),
                pending: None,
            }),
            changed: Condvar::new(),
        };
        self.lock().insert(id, Arc::new(entry));
        Reply::new("ready", note)
    }

    /// PLAY: takes in the news, then answers with a move attempt or `NIL`.
    pub(super) fn play(&self, id: &str, news: News, received: Instant, config: &PlayerConfig) -> Reply {
        let Some(entry) = self.lock().get(id).cloned() else {
            return Reply::new("NIL", format!("no match {id}"));
        };
        let (text, note) = entry.answer(news, received, config);
        Reply::new(text, format!("match {id}: {note}"))
    }

    /// STOP or ABORT: ends the match, and every request it holds is answered `NIL`.
    pub(super) fn end(&self, id: &str, reply: &str) -> Reply {
        match self.lock().remove(id) {
            Some(entry) => {
                entry.end();
                Reply::new(reply, format!("match {id} freed"))
            }
            None => Reply::new(reply, format!("no match {id}")),
        }
    }

    /// Ends the matches with no message for a lifetime unit plus `timeout`.
    pub(super) fn forget_idle(&self, now: Instant, timeout: Duration) {
        self.lock().retain(|_, entry| {
            let idle = match entry.sync.try_lock() {
                Ok(sync) => now.saturating_duration_since(sync.last_seen) >= entry.unit + timeout,
                Err(_) => false,
            };
            if idle {
                entry.end();
            }
            !idle
        });
    }
}

impl RtMatch {
    fn lock(&self) -> MutexGuard<'_, Sync> {
        self.sync.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn end(&self) {
        self.lock().ended = true;
        self.changed.notify_all();
    }

    /// The game time at `when`, from the estimated instant of game time 0.
    fn game_time(&self, zero: Option<Instant>, when: Instant) -> Time {
        let Some(zero) = zero else {
            return Time::ZERO;
        };
        let units = when.saturating_duration_since(zero).as_secs_f64() / self.unit.as_secs_f64();
        let ticks = (units * TICKS_PER_UNIT as f64)
            .round()
            .min((MAX_UNITS * TICKS_PER_UNIT) as f64);
        Time::from_ticks(ticks as u64).expect("at most the largest time")
    }

    /// The instant of game time `t`.
    fn wall(&self, zero: Instant, t: Time) -> Instant {
        let seconds = t.ticks() as f64 / TICKS_PER_UNIT as f64 * self.unit.as_secs_f64();
        zero + Duration::from_secs_f64(seconds.min(1e9))
    }

    /// Takes in `news` and answers the request: its text and a note.
    fn answer(&self, news: News, received: Instant, config: &PlayerConfig) -> (String, String) {
        let mut sync = self.lock();
        let (mine, told) = self.take_news(&mut sync, news, received);
        let hold_until = received + config.idle_timeout;
        let answer = self
            .wait_for_legal(sync, mine, hold_until)
            .and_then(|(state, at, legal, zero)| {
                let chosen = self.think(&state, at, zero.unwrap_or(received), legal, config, mine.1);
                self.confirm(chosen)
            });
        match answer {
            Ok((chosen, note)) => (chosen, format!("{told}{note}")),
            Err(why) => ("NIL".to_owned(), format!("{told}{why}")),
        }
    }

    /// Counts the request and takes in its `news` (a move of this role's clears
    /// the pending one): the request's place among the PLAYs (game time,
    /// count), and a note on news it could not take in (empty when none).
    fn take_news(&self, sync: &mut Sync, news: News, received: Instant) -> ((Time, u64), String) {
        sync.plays += 1;
        sync.last_seen = received;
        let ours = match &news {
            News::Timed {
                moves: Some(moves), ..
            } => moves.get(self.role).is_some_and(Option::is_some),
            News::List(Some(moves)) => moves
                .get(self.role)
                .is_some_and(|m| !m.eq_ignore_ascii_case("nil")),
            _ => true,
        };
        if ours {
            sync.pending = None;
        }
        let (time, told) = self.take(sync, news, received);
        let mine = (time, sync.plays);
        sync.newest = sync.newest.max(mine);
        self.changed.notify_all();
        let told = match told {
            Ok(()) => String::new(),
            Err(e) => format!("{e}; "),
        };
        (mine, told)
    }

    /// Waits until this role has a legal move in the current state (the last
    /// known one with the expiries due by now), until `hold_until` at the
    /// latest, then unlocks `sync`: that state, its game time, the legal moves
    /// and the estimated instant of game time 0; or why the request is answered
    /// `NIL` (the match ended, a newer PLAY than `mine` came, the last move is
    /// not told yet, terminal, held too long).
    fn wait_for_legal(
        &self,
        mut sync: MutexGuard<'_, Sync>,
        mine: (Time, u64),
        hold_until: Instant,
    ) -> Result<(TimedState, Time, Vec<String>, Option<Instant>), String> {
        loop {
            if sync.ended {
                return Err("the match ended".into());
            }
            if sync.newest != mine {
                return Err("a newer PLAY came".into());
            }
            if sync.pending.is_some_and(|sent| sent.elapsed() < self.unit) {
                return Err("its last move is not told yet".into());
            }
            let now = self.game_time(sync.zero, Instant::now());
            let (state, at) = self.advance(&sync.state, sync.at, now)?;
            let legal = match self.game.is_terminal(&state) {
                Ok(true) => return Err("terminal".into()),
                Ok(false) => self.game.legal_moves(&state, self.role),
                Err(e) => Err(e),
            };
            match legal {
                Err(e) => return Err(e.to_string()),
                Ok(legal) if !legal.is_empty() => return Ok((state, at, legal, sync.zero)),
                Ok(_) => {}
            }
            // No legal move now: wait for the next expiry or news.
            let expiry = match (self.game.next_expiry(&state), sync.zero) {
                (Ok(Some(e)), Some(zero)) => at
                    .checked_add(e)
                    .map(|t| self.wall(zero, t) + Duration::from_millis(1)),
                _ => None,
            };
            let wake = expiry.map_or(hold_until, |e| e.min(hold_until));
            let now = Instant::now();
            if now >= hold_until {
                return Err("held too long".into());
            }
            sync = self
                .changed
                .wait_timeout(sync, wake.saturating_duration_since(now))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// The move `chosen` by thinking (and its note), to send if the match goes
    /// on, no other request sent a move meanwhile and it is still legal in what
    /// is known now (it is then pending); else why the answer is `NIL`.
    fn confirm(&self, chosen: Result<(String, String), String>) -> Result<(String, String), String> {
        let mut sync = self.lock();
        if sync.ended {
            return Err("the match ended while thinking".into());
        }
        let (chosen, note) = chosen?;
        if sync.pending.is_some() {
            return Err(format!("{note}, but another request sent a move meanwhile"));
        }
        // Still legal in what is known now?
        let now = self.game_time(sync.zero, Instant::now());
        let still = self
            .advance(&sync.state, sync.at, now)
            .and_then(|(state, _)| {
                self.game
                    .legal_moves(&state, self.role)
                    .map_err(|e| e.to_string())
            })
            .is_ok_and(|legal| legal.contains(&chosen));
        match still {
            true => {
                sync.pending = Some(Instant::now());
                Ok((chosen, note))
            }
            false => Err(format!("{note}, no longer legal")),
        }
    }

    /// `state` at game time `at` with the expiries due strictly before `until` performed.
    /// At most [`MAX_EXPIRIES`] of them: a game time far ahead is an error.
    fn advance(&self, state: &TimedState, at: Time, until: Time) -> Result<(TimedState, Time), String> {
        let (mut state, mut at) = (state.clone(), at);
        let none = vec![None; self.game.roles().len()];
        let mut performed = 0;
        while let Some(t_u) = self.game.next_expiry(&state).map_err(|e| e.to_string())? {
            let when = at.checked_add(t_u).unwrap_or(Time::ZERO);
            if when >= until || when <= at || self.game.is_terminal(&state).map_err(|e| e.to_string())? {
                break;
            }
            if performed == MAX_EXPIRIES {
                return Err(format!(
                    "more than {MAX_EXPIRIES} expiries from game time {at} to {until}"
                ));
            }
            state = self.game.update(&state, t_u, &none).map_err(|e| e.to_string())?;
            at = when;
            performed += 1;
        }
        Ok((state, at))
    }

    /// Takes in what a PLAY tells: the update it reports, and the clock.
    /// Returns the game time of the PLAY (by this player's clock if it has none).
    fn take(&self, sync: &mut Sync, news: News, received: Instant) -> (Time, Result<(), String>) {
        let (moves, time) = match news {
            News::Timed { moves, time } => {
                let seconds = time.ticks() as f64 / TICKS_PER_UNIT as f64 * self.unit.as_secs_f64();
                let zero = received.checked_sub(Duration::from_secs_f64(seconds.min(1e9)));
                // The earliest estimate had the least delay.
                sync.zero = match (sync.zero, zero) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
                (moves, time)
            }
            News::List(moves) => {
                // No game time: this player's clock says when.
                let zero = *sync.zero.get_or_insert(received);
                let time = self.game_time(Some(zero), received);
                let moves = moves.map(|m| {
                    m.into_iter()
                        .map(|m| (!m.eq_ignore_ascii_case("nil")).then_some(m))
                        .collect()
                });
                (moves, time)
            }
            News::Turn { .. } => {
                return (
                    sync.at,
                    Err("a PLAY of the GDL-II form in an rtGDL match".to_owned()),
                )
            }
        };
        match moves {
            Some(moves) => (time, self.told(sync, time, moves)),
            None => (time, Ok(())),
        }
    }

    /// The update at game time `time` with `moves`: performed after the
    /// state (and its expiries) when it is the newest, else put in its place
    /// among those known and the state replayed. An update that cannot be
    /// performed (an illegal move, as far as this player knows) is kept, in
    /// case an older one told late makes it legal.
    fn told(&self, sync: &mut Sync, time: Time, moves: Vec<Option<String>>) -> Result<(), String> {
        let roles = self.game.roles().len();
        if moves.len() != roles {
            return Err(format!("an update of {} moves for {roles} roles", moves.len()));
        }
        if sync.history.len() >= MAX_HISTORY {
            return Err(format!("more than {MAX_HISTORY} updates in one match"));
        }
        let moves: Vec<Option<String>> = moves.into_iter().map(|m| m.map(|m| canonical(&m))).collect();
        let place = sync.history.partition_point(|(t, _)| *t < time);
        if sync.history.get(place).is_some_and(|(t, _)| *t == time) {
            return Ok(()); // told before
        }
        sync.history.insert(place, (time, moves));
        if place + 1 == sync.history.len() && time > sync.at {
            let (state, at) = self.advance(&sync.state, sync.at, time)?;
            let state = self.apply(&state, at, time, &sync.history[place].1)?;
            sync.state = state;
            sync.at = time;
            return Ok(());
        }
        // Out of order: replay every update known from the initial state.
        self.replay(sync)
    }
    /// The update at `time` of `state` (at `at`) with `moves`, their names
    /// matched to the legal moves in any case.
    fn apply(
        &self,
        state: &TimedState,
        at: Time,
        time: Time,
        moves: &[Option<String>],
    ) -> Result<TimedState, String> {
        let mut named = Vec::with_capacity(moves.len());
        for (role, m) in moves.iter().enumerate() {
            named.push(match m {
                None => None,
                Some(m) => {
                    let legal = self.game.legal_moves(state, role).map_err(|e| e.to_string())?;
                    Some(
                        legal
                            .iter()
                            .find(|l| l.eq_ignore_ascii_case(m))
                            .cloned()
                            .unwrap_or_else(|| m.clone()),
                    )
                }
            });
        }
        let elapsed = time.checked_sub(at).ok_or("an update before the state")?;
        self.game
            .update(state, elapsed, &named)
            .map_err(|e| format!("the update at {time}: {e}"))
    }

    /// The state after every update of the history, from the initial state;
    /// the updates that cannot be performed are passed over (the first
    /// such failure is the error).
    fn replay(&self, sync: &mut Sync) -> Result<(), String> {
        let (mut state, mut at) = (sync.initial.clone(), Time::ZERO);
        let mut failure = None;
        for (time, moves) in &sync.history {
            let (before, from) = self.advance(&state, at, *time)?;
            match self.apply(&before, from, *time, moves) {
                Ok(after) => (state, at) = (after, *time),
                Err(e) => failure = failure.or(Some(e)),
            }
        }
        sync.state = state;
        sync.at = at;
        failure.map_or(Ok(()), Err)
    }

    /// Chooses among `legal` (two or more, or one) in `state` at game time
    /// `at`: timed flat Monte Carlo (or a random move with the random search).
    fn think(
        &self,
        state: &TimedState,
        at: Time,
        zero: Instant,
        legal: Vec<String>,
        config: &PlayerConfig,
        seed: u64,
    ) -> Result<(String, String), String> {
        let mut rng = Stream::new(0x7274_6764_6c00, seed);
        if legal.len() == 1 {
            return Ok((legal[0].clone(), "the one legal move".to_owned()));
        }
        if config.search == Search::Random {
            return Ok((legal[rng.draw(legal.len())].clone(), "random".to_owned()));
        }
        let expiry = self.game.next_expiry(state).map_err(|e| e.to_string())?;
        let mut think = self.unit.mul_f64(THINK_FRACTION);
        if let Some(t_u) = expiry.and_then(|e| at.checked_add(e)) {
            // Never past the next expiry.
            let left = self.wall(zero, t_u).saturating_duration_since(Instant::now());
            think = think.min(left.saturating_sub(MIN_THINK));
        }
        let think = think.max(MIN_THINK);
        let start = Instant::now();
        let deadline = start + think;
        // The moves are judged as arriving when the thinking ends.
        let arrives = self.game_time(Some(zero), deadline);
        let elapsed = arrives.checked_sub(at).unwrap_or(Time::ZERO).max(Time::TICK);
        let elapsed = expiry.map_or(elapsed, |t_u| elapsed.min(t_u));
        let threads = config.threads.clamp(1, MAX_THREADS);
        let mut best: Option<(f64, &String)> = None;
        let mut playouts = 0;
        for (done, candidate) in legal.iter().enumerate() {
            let mut moves = vec![None; self.game.roles().len()];
            moves[self.role] = Some(candidate.clone());
            let next = self
                .game
                .update(state, elapsed, &moves)
                .map_err(|e| e.to_string())?;
            let value = match self.game.is_terminal(&next).map_err(|e| e.to_string())? {
                true => self.game.goals(&next).map_err(|e| e.to_string())?[self.role].unwrap_or(0) as f64,
                false => {
                    let share =
                        deadline.saturating_duration_since(Instant::now()) / (legal.len() - done) as u32;
                    let budget = Budget::Seconds(share.as_secs_f64().max(1e-3));
                    let report = self
                        .game
                        .playouts(
                            &next,
                            simulated_players(),
                            PLAYOUT_EVENTS,
                            budget,
                            threads,
                            rng.next_u64(),
                        )
                        .map_err(|e| e.to_string())?;
                    playouts += report.totals.playouts;
                    report.avg_goals()[self.role].unwrap_or(0.0)
                }
            };
            if best.is_none_or(|(b, _)| value > b) {
                best = Some((value, candidate));
            }
        }
        let (value, chosen) = best.expect("two legal moves or more");
        Ok((
            chosen.clone(),
            format!("mc, {playouts} timed playouts, best average {value:.1}"),
        ))
    }
}

/// A move as KIF in canonical spacing (`( mark 1 1 )` → `(mark 1 1)`).
fn canonical(text: &str) -> String {
    match ggpnet_kif::sexprs(text).ok().as_deref() {
        Some([one]) => one.to_string(),
        _ => text.to_owned(),
    }
}
