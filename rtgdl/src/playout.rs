//! Random timed playouts: the execution model of the spec's section 4,
//! simulated.
//!
//! Each role with legal moves draws one and a delay from a seeded
//! [`TimeModel`]; the earliest event among the pending moves and the next
//! expiry happens, with every move due at that time in the same update. A
//! pending move drawn before an update may be illegal when it arrives: as in
//! section 4 it is ignored (no update for it) and its role draws again. A
//! playout ends in a terminal state, at the event limit, or when nothing can
//! happen any more (no role has a legal move and every lifetime is
//! infinite). Floating point appears only where the time model draws a
//! delay, which is then rounded to a tick.

use crate::error::RtError;
use crate::game::{Choice, RtGame, TimedState};
use crate::time::{Time, TICKS_PER_UNIT};
use ggpnet_propnet::driver::{average_goals, Budget, McConfig};
use ggpnet_propnet::random::Stream;
use std::fmt;
use std::str::FromStr;
use std::time::{Duration, Instant};

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
        self.run(start, model, max_events, rng, |before, elapsed, moves, after| {
            observe(&TimedEvent {
                elapsed,
                moves: moves
                    .iter()
                    .map(|m| m.as_ref().map(|c| self.choice_text(c)))
                    .collect(),
                before: before.clone(),
                after: after.clone(),
            })
        })
    }

    /// The playout loop: `observe` sees the state before each update, its
    /// time, moves, and the state after. Moves stay as the engine holds them.
    fn run(
        &self,
        start: &TimedState,
        model: TimeModel,
        max_events: u64,
        rng: &mut Stream,
        mut observe: impl FnMut(&TimedState, Time, &[Option<Choice>], &TimedState),
    ) -> Result<TimedPlayout, RtError> {
        self.own(start)?;
        let roles = self.roles().len();
        let mut state = start.clone();
        // Per role, its pending move and when it arrives (time since the last update).
        let mut pending: Vec<Option<(Time, Choice)>> = vec![None; roles];
        // Scratch space for the legal moves of a role.
        let mut legal = Vec::new();
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
            self.draw_moves(&state, since, model, rng, &mut pending, &mut legal)?;
            let expiry = self.next_expiry(&state)?;
            let first_move = pending.iter().flatten().map(|(at, _)| *at).min();
            let at = match (first_move, expiry) {
                (None, None) => break TimedEnd::Stalled,
                (Some(m), Some(e)) => m.min(e),
                (Some(t), None) | (None, Some(t)) => t,
            };
            let moves = self.due_moves(&state, at, &mut pending, &mut legal, &mut played.ignored_moves)?;
            let moved = moves.iter().flatten().count() as u64;
            if moved == 0 && expiry != Some(at) {
                // Every move due was illegal: no update, the timer runs on.
                since = at;
                continue;
            }
            // Valid input: Δt = at > 0 (delays and lifetimes are positive), at
            // most t_u, an event at Δt, every move legal now.
            let after = self.apply(&state, at, &moves)?;
            for (due, _) in pending.iter_mut().flatten() {
                *due = due
                    .checked_sub(at)
                    .expect("pending moves are due after this event");
            }
            since = Time::ZERO;
            played.events += 1;
            played.moves += moved;
            played.game_ticks += u128::from(at.ticks());
            observe(&state, at, &moves, &after);
            state = after;
        };
        played.end = end;
        played.goals = self.goals(&state)?;
        played.state = state;
        Ok(played)
    }

    /// Draws a move and its arrival time (`since` the last update plus a
    /// delay of `model`) for each role with none pending and a legal move in
    /// `state` (listed into the scratch space `legal`).
    fn draw_moves(
        &self,
        state: &TimedState,
        since: Time,
        model: TimeModel,
        rng: &mut Stream,
        pending: &mut [Option<(Time, Choice)>],
        legal: &mut Vec<Choice>,
    ) -> Result<(), RtError> {
        for (role, slot) in pending.iter_mut().enumerate() {
            if slot.is_none() {
                self.choices(state, role, legal)?;
                if !legal.is_empty() {
                    let chosen = legal[rng.draw(legal.len())].clone();
                    let at = since.checked_add(model.delay(rng)).expect("bounded delays");
                    *slot = Some((at, chosen));
                }
            }
        }
        Ok(())
    }

    /// Takes the pending moves due `at`: per role, its move if still legal in
    /// `state` (listed into the scratch space `legal`); an illegal one is
    /// counted in `ignored` and dropped.
    fn due_moves(
        &self,
        state: &TimedState,
        at: Time,
        pending: &mut [Option<(Time, Choice)>],
        legal: &mut Vec<Choice>,
        ignored: &mut u64,
    ) -> Result<Vec<Option<Choice>>, RtError> {
        let mut moves = vec![None; pending.len()];
        for (role, slot) in pending.iter_mut().enumerate() {
            if slot.as_ref().is_some_and(|(due, _)| *due == at) {
                let (_, chosen) = slot.take().expect("due");
                self.choices(state, role, legal)?;
                if legal.contains(&chosen) {
                    moves[role] = Some(chosen);
                } else {
                    *ignored += 1;
                }
            }
        }
        Ok(moves)
    }

    /// Random timed playouts from `from` until `budget` is spent, on
    /// `threads` threads (1 to [`MAX_THREADS`](ggpnet_propnet::driver::MAX_THREADS)), thread `i` drawing from
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
        // The driver's own checks of a budget and a thread count.
        McConfig::new(budget)
            .and_then(|run| run.threads(threads))
            .map_err(RtError::InvalidSetting)?;
        let start = Instant::now();
        let totals = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..threads)
                .map(|thread| {
                    let game = self.clone();
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
                        let mut totals = TimedTotals::new(game.roles().len());
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
            let mut sum = TimedTotals::new(self.roles().len());
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
    /// No playout yet, for `roles` roles.
    fn new(roles: usize) -> TimedTotals {
        TimedTotals {
            goal_sums: vec![0.0; roles],
            missing_goals: vec![0; roles],
            ..TimedTotals::default()
        }
    }

    /// Counts the playout `p`.
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

    /// Adds the sums of `other`.
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
        average_goals(&t.goal_sums, &t.missing_goals, t.playouts)
    }
}
