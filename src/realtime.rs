//! Real-time GDL (rtGDL): timed states, the event-driven update, and random
//! timed playouts.
//!
//! An rtGDL state is a set of (lifetime, fact) pairs ([`TimedState`]); it
//! stays as it is until an event: a move arriving, or the earliest expiry
//! t_u ([`RtGame::next_expiry`]). [`RtGame::update`] is the spec's
//! u(Δt, M, S) with its input validated: Δt > 0 and at most t_u, one
//! optional move per role, every move legal, and an event at Δt (a move, or
//! t_u itself).
//!
//! A random timed playout ([`RtGame::playout`]) simulates the execution model
//! of the spec's section 4: each role with legal moves draws one and a delay
//! from a seeded [`TimeModel`]; the earliest event among the pending moves and
//! the next expiry happens, with every move due at that time in the same
//! update. A pending move drawn before an update may be illegal when it
//! arrives: as in section 4 it is ignored (no update for it) and its role
//! draws again. A playout ends in a terminal state, at the event limit, or
//! when nothing can happen any more (no role has a legal move and every
//! lifetime is infinite).
//!
//! The engine is the reference interpreter's rtGDL oracle
//! ([`ggpnet_reference::RtReference`]): the propnet does not compile rtGDL
//! (see docs/LANGUAGES.md). Times are exact ([`Time`], millionths of a
//! lifetime unit); floating point appears only where the time model draws a
//! delay, which is then rounded to a tick.

use crate::playouts::{Budget, MAX_THREADS};
use crate::propnet::random::Stream;
use ggpnet_kif::rtgdl::{Lifetime, Time, TICKS_PER_UNIT};
use ggpnet_reference::{RtReference, RtState};
use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A refused rtGDL game or request, with the reason (and line:col of the
/// rule where one is to blame).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct RtError {
    message: String,
}

impl RtError {
    fn new(message: impl Into<String>) -> RtError {
        RtError {
            message: message.into(),
        }
    }

    /// What was refused and why.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for RtError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.message.starts_with("error") {
            true => f.write_str(&self.message),
            false => write!(f, "error: {}", self.message),
        }
    }
}

impl std::error::Error for RtError {}

impl From<ggpnet_reference::ReferenceError> for RtError {
    fn from(e: ggpnet_reference::ReferenceError) -> RtError {
        RtError::new(e.to_string())
    }
}

/// Numbers rtGDL games in the order they are made.
static NEXT_GAME: AtomicU64 = AtomicU64::new(1);

/// A timed state: every (lifetime, fact) pair that holds. It belongs to the
/// [`RtGame`] that made it.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct TimedState {
    game: u64,
    state: RtState,
}

impl TimedState {
    /// The (lifetime, fact) pairs, facts in canonical KIF, sorted by fact
    /// then lifetime.
    pub fn pairs(&self) -> &[(Lifetime, String)] {
        self.state.pairs()
    }
}

/// An rtGDL game: cheap to clone, one clone per thread (each keeps the
/// outputs of the state it queried last).
#[derive(Clone, Debug)]
pub struct RtGame {
    id: u64,
    reference: Arc<RtReference>,
    roles: Vec<String>,
}

/// Whether `text` is an rtGDL description (it parses, and some rule has
/// `init`, `true` or `next` with a lifetime, or `expired`).
pub fn is_rtgdl(text: &str) -> bool {
    ggpnet_kif::parse(text).is_ok_and(|d| ggpnet_kif::rtgdl::is_rtgdl(&d))
}

impl RtGame {
    /// Parses and checks an rtGDL description: the rtGDL checks
    /// (`ggpnet_kif::rtgdl::check`), then GDL's checks of its embedding into
    /// GDL (keyword restrictions with `expired` read like `true`, safety,
    /// stratification, recursion restriction), then the interpreter's; each
    /// error names the rule's line:col.
    pub fn load(text: &str) -> Result<RtGame, RtError> {
        let description = ggpnet_kif::parse(text).map_err(|e| RtError::new(e.to_string()))?;
        let embedded = ggpnet_kif::rtgdl::embed(&description).map_err(|e| RtError::new(e.to_string()))?;
        let mut gdl = embedded.description.clone();
        let in_rtgdl = |e: ggpnet_grounder::GdlError| {
            // Name the rule as written, not its embedding.
            let original = e
                .span
                .and_then(|span| description.rules.iter().find(|r| r.span == span));
            let rule = original.map(|r| ggpnet_kif::rule_to_string(r, &description.symbols));
            let mut message = e.message.clone();
            if message.contains("'true'") {
                message.push_str(" (rtGDL's 'expired' counts as 'true')");
            }
            RtError::new(ggpnet_grounder::GdlError { rule, message, ..e }.to_string())
        };
        ggpnet_grounder::prepare(&mut gdl).map_err(in_rtgdl)?;
        ggpnet_grounder::check_playable(&embedded.description).map_err(in_rtgdl)?;
        let reference = RtReference::new(&description)?;
        Ok(RtGame {
            id: NEXT_GAME.fetch_add(1, Ordering::Relaxed),
            roles: reference.roles(),
            reference: Arc::new(reference),
        })
    }

    /// The roles, in the order of the `role` facts.
    pub fn roles(&self) -> &[String] {
        &self.roles
    }

    /// The initial state: every `init(t, f)`.
    pub fn initial_state(&self) -> TimedState {
        TimedState {
            game: self.id,
            state: self.reference.initial_state(),
        }
    }

    /// The state of this game in `state`, or an error for another game's.
    fn own<'s>(&self, state: &'s TimedState) -> Result<&'s RtState, RtError> {
        if state.game != self.id {
            return Err(RtError::new("the state belongs to another game"));
        }
        Ok(&state.state)
    }

    /// The number `role` checked against the roles.
    fn role(&self, role: usize) -> Result<usize, RtError> {
        if role >= self.roles.len() {
            return Err(RtError::new(format!(
                "no role number {role}: the game has {} role(s)",
                self.roles.len()
            )));
        }
        Ok(role)
    }

    /// The legal moves of role number `role` in `state` (canonical KIF, sorted).
    pub fn legal_moves(&self, state: &TimedState, role: usize) -> Result<Vec<String>, RtError> {
        Ok(self.reference.legal_moves(self.own(state)?, self.role(role)?))
    }

    /// Whether `state` is terminal.
    pub fn is_terminal(&self, state: &TimedState) -> Result<bool, RtError> {
        Ok(self.reference.is_terminal(self.own(state)?))
    }

    /// Per role, every integer goal value derivable in `state`, sorted.
    pub fn goal_values(&self, state: &TimedState) -> Result<Vec<Vec<i64>>, RtError> {
        Ok(self.reference.goals(self.own(state)?))
    }

    /// Per role, its goal in `state` when exactly one value is derivable.
    pub fn goals(&self, state: &TimedState) -> Result<Vec<Option<i64>>, RtError> {
        let values = self.goal_values(state)?;
        Ok(values.iter().map(|v| (v.len() == 1).then(|| v[0])).collect())
    }

    /// t_u: the time from `state`'s beginning until its first fact expires
    /// (`None` when every lifetime is infinite).
    pub fn next_expiry(&self, state: &TimedState) -> Result<Option<Time>, RtError> {
        Ok(self.own(state)?.next_expiry())
    }

    /// The state after `elapsed` time with `moves` (one per role, `None` for
    /// a role that does not move): the spec's u(Δt, M, S). Refused: Δt = 0, Δt
    /// past t_u, no event at Δt (no move, and Δt is not t_u), an illegal move.
    pub fn update(
        &self,
        state: &TimedState,
        elapsed: Time,
        moves: &[Option<String>],
    ) -> Result<TimedState, RtError> {
        let next = self.reference.update(self.own(state)?, elapsed, moves)?;
        Ok(TimedState {
            game: self.id,
            state: next,
        })
    }
}

/// How long a simulated player takes to send its move, in lifetime units.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum TimeModel {
    /// Uniform in (0, max], to the tick (`uniform:MAX`).
    Uniform(Time),
    /// Exponential with this mean, rounded to the tick, at least one tick (`exp:MEAN`).
    Exponential(Time),
    /// One tick (a millionth of a unit): the move comes at once (`immediate`).
    Immediate,
}

/// The default time model, `uniform:1`.
pub const DEFAULT_TIME_MODEL: &str = "uniform:1";

/// The largest MAX or MEAN of a time model, in units.
pub const MAX_MODEL_UNITS: u64 = 1_000_000;

impl FromStr for TimeModel {
    type Err = String;

    /// Reads `uniform:MAX`, `exp:MEAN` (MAX and MEAN positive decimal numbers
    /// of at most [`MAX_MODEL_UNITS`] units, six fraction digits) or `immediate`.
    fn from_str(text: &str) -> Result<TimeModel, String> {
        let usage = "a time model is uniform:MAX, exp:MEAN or immediate";
        if text == "immediate" {
            return Ok(TimeModel::Immediate);
        }
        let (kind, value) = text.split_once(':').ok_or_else(|| format!("'{text}': {usage}"))?;
        let time = Time::parse(value).map_err(|e| format!("'{text}': {e}"))?;
        if time.is_zero() || time > Time::from_ticks(MAX_MODEL_UNITS * TICKS_PER_UNIT).expect("in range") {
            return Err(format!(
                "'{text}': the value must be more than 0 and at most {MAX_MODEL_UNITS}"
            ));
        }
        match kind {
            "uniform" => Ok(TimeModel::Uniform(time)),
            "exp" => Ok(TimeModel::Exponential(time)),
            _ => Err(format!("'{text}': {usage}")),
        }
    }
}

impl fmt::Display for TimeModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TimeModel::Uniform(t) => write!(f, "uniform:{t}"),
            TimeModel::Exponential(t) => write!(f, "exp:{t}"),
            TimeModel::Immediate => f.write_str("immediate"),
        }
    }
}

impl TimeModel {
    /// A delay drawn from `rng`: positive, at most [`MAX_MODEL_UNITS`] times 64 units.
    pub fn delay(self, rng: &mut Stream) -> Time {
        let ticks = match self {
            TimeModel::Uniform(max) => 1 + rng.draw(max.ticks() as usize) as u64,
            TimeModel::Exponential(mean) => {
                // 53 random bits give u in [0, 1); -ln(1 - u) is at most 53 ln 2 < 37.
                let u = (rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
                let ticks = -(mean.ticks() as f64) * (1.0 - u).ln();
                (ticks.round() as u64).max(1)
            }
            TimeModel::Immediate => 1,
        };
        Time::from_ticks(ticks).expect("at most 37 times the model's bounded mean")
    }
}

/// How a timed playout ended.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum TimedEnd {
    /// In a terminal state.
    Terminal,
    /// At the event limit, not terminal.
    EventLimit,
    /// Nothing can happen any more: no role has a legal move and every
    /// lifetime is infinite, in a state that is not terminal.
    Stalled,
}

/// What one timed playout did.
#[derive(Clone, Debug)]
pub struct TimedPlayout {
    /// How it ended.
    pub end: TimedEnd,
    /// Updates performed (moves arriving or facts expiring).
    pub events: u64,
    /// Moves that took part in an update.
    pub moves: u64,
    /// Moves that arrived when no longer legal, and were ignored.
    pub ignored_moves: u64,
    /// Game time from the start to the last event, in ticks.
    pub game_ticks: u128,
    /// The last state.
    pub state: TimedState,
    /// Per role, its goal in the last state when exactly one value is derivable.
    pub goals: Vec<Option<i64>>,
}

/// One step of a timed playout, for [`RtGame::playout_with`]'s observer.
#[derive(Clone, Debug)]
pub struct TimedEvent {
    /// Time since the previous update.
    pub elapsed: Time,
    /// The moves of the update, one per role.
    pub moves: Vec<Option<String>>,
    /// The state before the update.
    pub before: TimedState,
    /// The state after it.
    pub after: TimedState,
}

impl RtGame {
    /// A random timed playout from `state` with at most `max_events` updates.
    pub fn playout(
        &self,
        state: &TimedState,
        model: TimeModel,
        max_events: u64,
        rng: &mut Stream,
    ) -> Result<TimedPlayout, RtError> {
        self.playout_with(state, model, max_events, rng, |_| {})
    }

    /// [`RtGame::playout`], calling `observe` after each update.
    pub fn playout_with(
        &self,
        start: &TimedState,
        model: TimeModel,
        max_events: u64,
        rng: &mut Stream,
        mut observe: impl FnMut(&TimedEvent),
    ) -> Result<TimedPlayout, RtError> {
        let roles = self.roles.len();
        let mut state = start.clone();
        // Per role, its pending move and when it arrives (time since the last update).
        let mut pending: Vec<Option<(Time, String)>> = vec![None; roles];
        let mut since = Time::ZERO;
        let mut played = TimedPlayout {
            end: TimedEnd::Terminal,
            events: 0,
            moves: 0,
            ignored_moves: 0,
            game_ticks: 0,
            state: start.clone(),
            goals: Vec::new(),
        };
        let end = loop {
            if self.is_terminal(&state)? {
                break TimedEnd::Terminal;
            }
            if played.events >= max_events {
                break TimedEnd::EventLimit;
            }
            for (role, slot) in pending.iter_mut().enumerate() {
                if slot.is_none() {
                    let legal = self.legal_moves(&state, role)?;
                    if !legal.is_empty() {
                        let chosen = legal[rng.draw(legal.len())].clone();
                        let at = since.checked_add(model.delay(rng)).expect("bounded delays");
                        *slot = Some((at, chosen));
                    }
                }
            }
            let expiry = self.next_expiry(&state)?;
            let first_move = pending.iter().flatten().map(|(at, _)| *at).min();
            let at = match (first_move, expiry) {
                (None, None) => break TimedEnd::Stalled,
                (Some(m), Some(e)) => m.min(e),
                (Some(t), None) | (None, Some(t)) => t,
            };
            let mut moves = vec![None; roles];
            for (role, slot) in pending.iter_mut().enumerate() {
                if slot.as_ref().is_some_and(|(due, _)| *due == at) {
                    let (_, chosen) = slot.take().expect("due");
                    if self.legal_moves(&state, role)?.contains(&chosen) {
                        moves[role] = Some(chosen);
                    } else {
                        played.ignored_moves += 1;
                    }
                }
            }
            let moved = moves.iter().flatten().count() as u64;
            if moved == 0 && expiry != Some(at) {
                // Every move due was illegal: no update, the timer runs on.
                since = at;
                continue;
            }
            let after = self.update(&state, at, &moves)?;
            for (due, _) in pending.iter_mut().flatten() {
                *due = due
                    .checked_sub(at)
                    .expect("pending moves are due after this event");
            }
            since = Time::ZERO;
            played.events += 1;
            played.moves += moved;
            played.game_ticks += u128::from(at.ticks());
            observe(&TimedEvent {
                elapsed: at,
                moves,
                before: state,
                after: after.clone(),
            });
            state = after;
        };
        played.end = end;
        played.goals = self.goals(&state)?;
        played.state = state;
        Ok(played)
    }

    /// Random timed playouts from `from` until `budget` is spent, on
    /// `threads` threads (1 to [`MAX_THREADS`]), thread `i` drawing from
    /// stream `i` of `seed`: the same seed, playout budget and threads give
    /// the same totals.
    pub fn playouts(
        &self,
        from: &TimedState,
        model: TimeModel,
        max_events: u64,
        budget: Budget,
        threads: usize,
        seed: u64,
    ) -> Result<TimedReport, RtError> {
        self.own(from)?;
        if !(1..=MAX_THREADS).contains(&threads) {
            return Err(RtError::new(format!(
                "threads must be 1 to {MAX_THREADS}, not {threads}"
            )));
        }
        if let Budget::Seconds(s) = budget {
            if !(s.is_finite() && s > 0.0 && s <= 1e9) {
                return Err(RtError::new(format!(
                    "a time budget must be more than 0 and at most 1e9 seconds, not {s}"
                )));
            }
        }
        let start = Instant::now();
        let totals = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads)
                .map(|thread| {
                    let game = self.clone_for_thread();
                    let quota = match budget {
                        Budget::Playouts(n) => {
                            Some(n / threads as u64 + u64::from((thread as u64) < n % threads as u64))
                        }
                        Budget::Seconds(_) => None,
                    };
                    let deadline = match budget {
                        Budget::Seconds(s) => Some(start + Duration::from_secs_f64(s)),
                        Budget::Playouts(_) => None,
                    };
                    scope.spawn(move || {
                        let mut rng = Stream::new(seed, thread as u64);
                        let mut totals = TimedTotals::new(game.roles.len());
                        while quota.is_none_or(|q| totals.playouts < q)
                            && deadline.is_none_or(|d| Instant::now() < d)
                        {
                            let playout = game.playout(from, model, max_events, &mut rng)?;
                            totals.add(&playout);
                        }
                        Ok::<_, RtError>(totals)
                    })
                })
                .collect();
            let mut sum = TimedTotals::new(self.roles.len());
            for worker in workers {
                sum.merge(&worker.join().expect("a playout thread panicked")?);
            }
            Ok::<_, RtError>(sum)
        })?;
        Ok(TimedReport {
            threads,
            seconds: start.elapsed().as_secs_f64(),
            totals,
        })
    }

    /// A clone with its own cache (the cache of the shared interpreter is per clone).
    fn clone_for_thread(&self) -> RtGame {
        RtGame {
            id: self.id,
            reference: Arc::new(RtReference::clone(&self.reference)),
            roles: self.roles.clone(),
        }
    }
}

/// Sums over timed playouts.
#[derive(Clone, Debug, Default)]
pub struct TimedTotals {
    /// Playouts run.
    pub playouts: u64,
    /// Playouts that ended in a terminal state.
    pub terminal: u64,
    /// Playouts stopped at the event limit.
    pub at_event_limit: u64,
    /// Playouts where nothing could happen any more.
    pub stalled: u64,
    /// Updates performed.
    pub events: u64,
    /// Moves that took part in updates.
    pub moves: u64,
    /// Moves ignored as illegal when they arrived.
    pub ignored_moves: u64,
    /// Game time summed over playouts, in units.
    pub game_time: f64,
    /// Per role, the sum of its goals over the playouts that gave it one.
    pub goal_sums: Vec<f64>,
    /// Per role, the playouts that ended without one goal value for it.
    pub missing_goals: Vec<u64>,
}

impl TimedTotals {
    fn new(roles: usize) -> TimedTotals {
        TimedTotals {
            goal_sums: vec![0.0; roles],
            missing_goals: vec![0; roles],
            ..TimedTotals::default()
        }
    }

    fn add(&mut self, p: &TimedPlayout) {
        self.playouts += 1;
        match p.end {
            TimedEnd::Terminal => self.terminal += 1,
            TimedEnd::EventLimit => self.at_event_limit += 1,
            TimedEnd::Stalled => self.stalled += 1,
        }
        self.events += p.events;
        self.moves += p.moves;
        self.ignored_moves += p.ignored_moves;
        self.game_time += p.game_ticks as f64 / TICKS_PER_UNIT as f64;
        for (role, goal) in p.goals.iter().enumerate() {
            match goal {
                Some(g) => self.goal_sums[role] += *g as f64,
                None => self.missing_goals[role] += 1,
            }
        }
    }

    fn merge(&mut self, other: &TimedTotals) {
        self.playouts += other.playouts;
        self.terminal += other.terminal;
        self.at_event_limit += other.at_event_limit;
        self.stalled += other.stalled;
        self.events += other.events;
        self.moves += other.moves;
        self.ignored_moves += other.ignored_moves;
        self.game_time += other.game_time;
        for (a, b) in self.goal_sums.iter_mut().zip(&other.goal_sums) {
            *a += b;
        }
        for (a, b) in self.missing_goals.iter_mut().zip(&other.missing_goals) {
            *a += b;
        }
    }
}

/// What a run of timed playouts added up to.
#[derive(Clone, Debug)]
pub struct TimedReport {
    /// Threads used.
    pub threads: usize,
    /// Wall seconds spent.
    pub seconds: f64,
    /// The sums.
    pub totals: TimedTotals,
}

impl TimedReport {
    /// Updates per wall second.
    pub fn events_per_sec(&self) -> f64 {
        self.totals.events as f64 / self.seconds.max(1e-9)
    }

    /// Playouts per wall second.
    pub fn playouts_per_sec(&self) -> f64 {
        self.totals.playouts as f64 / self.seconds.max(1e-9)
    }

    /// Per role, its average goal over the playouts that gave it one.
    pub fn avg_goals(&self) -> Vec<Option<f64>> {
        let t = &self.totals;
        t.goal_sums
            .iter()
            .zip(&t.missing_goals)
            .map(|(&sum, &missing)| {
                let n = t.playouts - missing;
                (n > 0).then(|| sum / n as f64)
            })
            .collect()
    }
}
