//! Drivers: the one scalar playout loop ([`Playout::run_on`]), which flat
//! Monte-Carlo, the chooser's races and calibration ([`choose`]), the state
//! machine's playouts and the differential tests run, from any state; the
//! batched playouts of the lanes evaluator ([`LanePlayouts`], which draw as the
//! loop does, lane by lane, and [`LaneBatch`], one playout per lane from one
//! state: a tree search's leaf value); the lanes state machine ([`LaneMachine`]: up to 512
//! states stepped at once by given joint moves); flat Monte-Carlo (random playouts on every core
//! with rayon, with any evaluator) and perft (exhaustive counts of joint-move
//! paths).
//!
//! The profile's measuring walk (`profile/activity.rs`) is not this loop: it
//! runs below the evaluators it measures for, evaluating every slot of the net
//! after each state and joint move.

pub mod choose;
mod config;
mod lane_machine;
mod lanes;
mod leaf;
mod perft;

pub use config::{Budget, McConfig, SettingError, DEFAULT_MAX_DEPTH, MAX_SECONDS, MAX_THREADS};
pub use lane_machine::{write_lane_flags, LaneError, LaneMachine, LaneSet};
pub use lanes::LanePlayouts;
pub use leaf::LaneBatch;
pub use perft::{for_each_joint, perft, perft_from, PerftReport, MAX_PERFT_DEPTH};

use crate::evaluator::{bits, Bound, EvaluatorKind, Lanes, Scalar, ScalarEvaluator, LANES};
use crate::game::{Game, Move, State};
use crate::layout::CompiledNet;
use crate::random::Stream;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A uniformly random legal move of `role` whose legality is `legal_words`
/// (see [`ScalarEvaluator::legal_words`]): [`Stream::draw`] over its legal moves
/// in move order; `None` when it has none.
#[inline]
pub fn random_move(net: &CompiledNet, legal_words: &[u64], role: usize, rng: &mut Stream) -> Option<u32> {
    bits::draw(legal_words, rng).map(|at| net.role_moves()[role][at])
}

/// Per role, the highest goal value of `game` derivable in the state `cache`
/// holds (`None` if none is), into `out`.
pub(crate) fn best_goals<E: ScalarEvaluator>(
    game: &Game,
    evaluator: &E,
    cache: &mut E::Cache,
    out: &mut Vec<Option<i64>>,
) {
    goals_of_bound(game, &mut Bound::new(evaluator, cache), out);
}

/// [`best_goals`] on an evaluator bound to its cache.
fn goals_of_bound<E: ScalarEvaluator>(game: &Game, bound: &mut Bound<'_, E>, out: &mut Vec<Option<i64>>) {
    bound.refresh_goals();
    out.clear();
    out.resize(game.roles().len(), None);
    for (g, &(role, value)) in game.goals().iter().enumerate() {
        if bound.value(game.net().goal_slots()[g]) {
            out[role] = Some(out[role].map_or(value, |best| best.max(value)));
        }
    }
}

/// What a set of random playouts added up to.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PlayoutTotals {
    /// State transitions: joint moves applied (a playout of `d` moves counts
    /// `d`): the unit in which the peer reasoners count flat Monte-Carlo nodes.
    pub transitions: u64,
    /// States visited: every state of every playout, its start and terminal
    /// state included (`transitions` plus one per playout begun).
    pub states: u64,
    /// Playouts that reached a terminal state.
    pub playouts: u64,
    /// Playouts abandoned in a non-terminal state: where some role had no legal
    /// move, or at the depth limit.
    pub abandoned: u64,
    /// Of the abandoned playouts, those that reached the depth limit.
    pub at_depth_limit: u64,
    /// Sum of the depths of finished playouts.
    pub depth_sum: u64,
    /// Per role, the sum over finished playouts of its goal (the highest derivable value),
    /// over the playouts whose terminal state gives it one.
    pub goal_sums: Vec<f64>,
    /// Per role, the finished playouts whose terminal state gives it no goal value.
    pub missing_goals: Vec<u64>,
}

/// Per role, its goal sum divided by the `playouts` that gave it a goal (all
/// but its `missing` ones), or `None` when none did: the mean goals of every
/// report of playouts.
pub fn average_goals(goal_sums: &[f64], missing: &[u64], playouts: u64) -> Vec<Option<f64>> {
    goal_sums
        .iter()
        .zip(missing)
        .map(|(&sum, &missing)| {
            let n = playouts - missing;
            (n > 0).then(|| sum / n as f64)
        })
        .collect()
}

impl PlayoutTotals {
    /// Per role, its mean goal over the finished playouts that gave it one
    /// (`None` when none did).
    pub fn avg_goals(&self) -> Vec<Option<f64>> {
        average_goals(&self.goal_sums, &self.missing_goals, self.playouts)
    }

    /// Empty totals for `roles` roles.
    pub fn new(roles: usize) -> PlayoutTotals {
        PlayoutTotals {
            goal_sums: vec![0.0; roles],
            missing_goals: vec![0; roles],
            ..Default::default()
        }
    }

    /// Counts a finished playout of `depth` moves ending with `goals` (per role, `None`
    /// where the terminal state gives the role no goal value).
    pub fn finish_with(&mut self, depth: u64, goals: impl IntoIterator<Item = Option<i64>>) {
        self.playouts += 1;
        self.depth_sum += depth;
        let sums = self.goal_sums.iter_mut().zip(&mut self.missing_goals);
        for ((sum, missing), goal) in sums.zip(goals) {
            match goal {
                Some(g) => *sum += g as f64,
                None => *missing += 1,
            }
        }
    }

    /// The totals of both runs.
    pub fn merge(mut self, other: PlayoutTotals) -> PlayoutTotals {
        self.transitions += other.transitions;
        self.states += other.states;
        self.playouts += other.playouts;
        self.abandoned += other.abandoned;
        self.at_depth_limit += other.at_depth_limit;
        self.depth_sum += other.depth_sum;
        if self.goal_sums.is_empty() {
            self.goal_sums = other.goal_sums;
            self.missing_goals = other.missing_goals;
        } else {
            for (a, b) in self.goal_sums.iter_mut().zip(other.goal_sums) {
                *a += b;
            }
            for (a, b) in self.missing_goals.iter_mut().zip(other.missing_goals) {
                *a += b;
            }
        }
        self
    }
}

/// States visited between two looks at the clock inside a playout.
const CLOCK_INTERVAL: u64 = 1024;

/// The totals of a flat Monte-Carlo run.
#[derive(Clone, Debug)]
pub struct McReport {
    /// The evaluator used (the one `Auto` chose).
    pub evaluator: EvaluatorKind,
    /// Threads used.
    pub threads: usize,
    /// Wall seconds spent.
    pub seconds: f64,
    /// What the playouts added up to.
    pub totals: PlayoutTotals,
}

impl McReport {
    /// State transitions (joint moves applied) per second: the headline rate.
    pub fn transitions_per_sec(&self) -> f64 {
        self.totals.transitions as f64 / self.seconds.max(1e-9)
    }

    /// Visited states per second (each playout's start state counted too).
    pub fn states_per_sec(&self) -> f64 {
        self.totals.states as f64 / self.seconds.max(1e-9)
    }

    /// Finished playouts per second.
    pub fn playouts_per_sec(&self) -> f64 {
        self.totals.playouts as f64 / self.seconds.max(1e-9)
    }

    /// Mean number of moves per finished playout.
    pub fn avg_depth(&self) -> f64 {
        self.totals.depth_sum as f64 / self.totals.playouts.max(1) as f64
    }

    /// Mean goal per role over the finished playouts that gave it one (`None` if none did).
    pub fn avg_goals(&self) -> Vec<Option<f64>> {
        self.totals.avg_goals()
    }
}

/// Why a flat Monte-Carlo run could not start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum McError {
    /// The start state is not one of this game's states.
    ForeignState {
        /// Bases of the state given.
        bases: usize,
        /// Bases of the game.
        expected: usize,
    },
    /// The worker threads could not be started.
    Threads(String),
}

impl std::fmt::Display for McError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            McError::ForeignState { bases, expected } => write!(
                f,
                "the start state has {bases} bases, not the game's {expected}: a state of another game"
            ),
            McError::Threads(reason) => write!(f, "cannot start the worker threads: {reason}"),
        }
    }
}

impl std::error::Error for McError {}

/// Random playouts from the initial state until the budget is spent.
pub fn monte_carlo(game: &Arc<Game>, config: &McConfig) -> Result<McReport, McError> {
    monte_carlo_from(game, game.initial(), config)
}

/// Random playouts from `from`, a state of `game` (every playout starts there,
/// on every thread and in every lane), until the budget is spent.
pub fn monte_carlo_from(game: &Arc<Game>, from: &State, config: &McConfig) -> Result<McReport, McError> {
    let expected = game.facts().len();
    if from.0.len() != expected {
        return Err(McError::ForeignState {
            bases: from.0.len(),
            expected,
        });
    }
    let threads = config.get_threads();
    let kind = choose::evaluator(game, config.get_evaluator(), &EvaluatorKind::ALL);
    // One evaluator for every thread, made before the clock starts (and
    // outside the workers, whose writes to their caches would otherwise
    // share its cache lines).
    let evaluator = match kind {
        EvaluatorKind::Lanes => RunEvaluator::Lanes(Arc::new(Lanes::new(game.net()))),
        scalar => RunEvaluator::Scalar(choose::scalar(game, scalar, config.get_evaluator().get_native())),
    };
    let start = Instant::now();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .map_err(|e| McError::Threads(e.to_string()))?;
    // Every worker runs its own loop from the start: with work stealing
    // (`into_par_iter`), an idle worker could wake to steal its share only
    // after the other had played out the whole time budget.
    let totals = pool
        .broadcast(|context| {
            let t = context.index();
            let stop = match config.get_budget() {
                Budget::Seconds(s) => Stop::At(start + Duration::from_secs_f64(s)),
                Budget::Playouts(n) => {
                    Stop::After(n / threads as u64 + u64::from((t as u64) < n % threads as u64))
                }
            };
            match &evaluator {
                RunEvaluator::Lanes(lanes) => run_lanes(game, lanes, from, config, t as u64, stop),
                RunEvaluator::Scalar(scalar) => {
                    run_scalar(game, scalar.clone(), from, config, t as u64, stop)
                }
            }
        })
        .into_iter()
        .fold(PlayoutTotals::new(game.roles().len()), PlayoutTotals::merge);
    Ok(McReport {
        evaluator: kind,
        threads,
        seconds: start.elapsed().as_secs_f64(),
        totals,
    })
}

#[derive(Clone, Copy)]
enum Stop {
    At(Instant),
    After(u64),
}

/// About how much work goes between two looks at the clock.
const LOOK_EVERY: Duration = Duration::from_millis(1);

/// A thread's watch on its [`Stop`]: with a deadline, it looks at the clock
/// after as many playouts (or lane steps) as take about [`LOOK_EVERY`], not
/// after each (a clock read costs several percent of a tic-tac-toe playout).
struct Watch {
    stop: Stop,
    /// Calls of `reached` between two looks, and how many are left.
    every: u64,
    left: u64,
    last_look: Instant,
}

impl Watch {
    fn new(stop: Stop) -> Watch {
        Watch {
            stop,
            every: 1,
            left: 1,
            last_look: Instant::now(),
        }
    }

    fn reached(&mut self, totals: &PlayoutTotals) -> bool {
        match self.stop {
            Stop::After(n) => totals.playouts + totals.abandoned >= n,
            Stop::At(deadline) => {
                self.left -= 1;
                if self.left > 0 {
                    return false;
                }
                let now = Instant::now();
                let since = now.saturating_duration_since(self.last_look);
                self.last_look = now;
                if since < LOOK_EVERY / 2 {
                    self.every = (self.every * 2).min(1 << 20);
                } else if since > LOOK_EVERY * 2 {
                    self.every = (self.every / 2).max(1);
                }
                self.left = self.every;
                now >= deadline
            }
        }
    }

    /// The time at which a playout under way stops, if any.
    fn deadline(&self) -> Option<Instant> {
        match self.stop {
            Stop::At(deadline) => Some(deadline),
            Stop::After(_) => None,
        }
    }
}

/// The evaluator the threads of a flat Monte-Carlo run share.
enum RunEvaluator {
    /// A scalar evaluator, whose fresh cache each thread clones.
    Scalar(Scalar),
    /// The lanes evaluator.
    Lanes(Arc<Lanes>),
}

/// One thread's share of lanes playouts, on the shared `evaluator`.
fn run_lanes(
    game: &Arc<Game>,
    evaluator: &Arc<Lanes>,
    from: &State,
    config: &McConfig,
    thread: u64,
    stop: Stop,
) -> PlayoutTotals {
    let streams = (config.get_seed(), thread * LANES as u64);
    let mut lanes = LanePlayouts::with_evaluator(
        Arc::clone(evaluator),
        Arc::clone(game),
        from,
        streams,
        config.get_max_depth(),
    );
    let mut watch = Watch::new(stop);
    while !watch.reached(lanes.totals()) {
        lanes.step();
    }
    lanes.totals().clone()
}

/// One thread's share of scalar playouts, on its clone of `scalar` (the
/// evaluator shared, the cache its own).
fn run_scalar(
    game: &Game,
    mut scalar: Scalar,
    from: &State,
    config: &McConfig,
    thread: u64,
    stop: Stop,
) -> PlayoutTotals {
    let mut rng = Stream::new(config.get_seed(), thread);
    let mut totals = PlayoutTotals::new(game.roles().len());
    let mut playout = Playout::for_game(game, config.get_max_depth());
    let mut watch = Watch::new(stop);
    playout.start_from(from);
    playout.stop_at(watch.deadline());
    match &mut scalar {
        Scalar::Sweep(evaluator, cache) => {
            while !watch.reached(&totals) {
                playout.run_on(&**evaluator, cache, game, &mut rng, &mut totals, |_, _| {});
            }
        }
        Scalar::Differential(evaluator, cache) => {
            while !watch.reached(&totals) {
                playout.run_on(&**evaluator, &mut **cache, game, &mut rng, &mut totals, |_, _| {});
            }
        }
    }
    totals
}

/// Reusable buffers of scalar random playouts, and where they start.
pub struct Playout {
    /// The state every playout starts from.
    start: State,
    state: State,
    next: State,
    joint: Vec<Move>,
    /// The joint move as move indexes.
    moves: Vec<u32>,
    goals: Vec<Option<i64>>,
    /// Moves after which a playout is abandoned.
    max_depth: u64,
    /// When a playout under way stops, neither finished nor abandoned.
    deadline: Option<Instant>,
}

impl Playout {
    /// Buffers for playouts of `game` that are abandoned after `max_depth`
    /// moves (at least 1) without ending.
    pub fn for_game(game: &Game, max_depth: u64) -> Playout {
        let initial = game.initial().clone();
        Playout {
            start: initial.clone(),
            next: initial.clone(),
            state: initial,
            joint: Vec::new(),
            moves: Vec::new(),
            goals: Vec::new(),
            max_depth: max_depth.max(1),
            deadline: None,
        }
    }

    /// Makes playouts start from `state`, a state of the machine's game (the
    /// initial state until this is called).
    pub fn start_from(&mut self, state: &State) {
        self.start.clone_from(state);
    }

    /// Makes playouts stop where they are once `deadline` passes (looked at every
    /// `CLOCK_INTERVAL` (1024) states); `None` lets them run to their end.
    pub fn stop_at(&mut self, deadline: Option<Instant>) {
        self.deadline = deadline;
    }

    /// The state the last playout ended in (terminal, or where it was abandoned).
    pub fn last_state(&self) -> &State {
        &self.state
    }

    /// Plays one random playout of `game` from the start state on `evaluator`
    /// into `totals`: in every non-terminal state each role in turn takes
    /// [`Stream::draw`] over its legal moves in move order. Calls `on_move`
    /// with each state left and the joint move played in it. A state where
    /// some role has no legal move, or reached after the depth limit's moves,
    /// abandons the playout; the deadline stops it uncounted.
    #[inline]
    pub fn run_on<E: ScalarEvaluator>(
        &mut self,
        evaluator: &E,
        cache: &mut E::Cache,
        game: &Game,
        rng: &mut Stream,
        totals: &mut PlayoutTotals,
        mut on_move: impl FnMut(&State, &[Move]),
    ) {
        let net = game.net();
        self.state.clone_from(&self.start);
        // The owner checked once a playout, and the start state; every later
        // state is one the evaluator wrote.
        let mut bound = Bound::new(evaluator, cache);
        bound.check_state(self.state.0.as_raw_slice());
        let mut depth = 0u64;
        // The depth at which to look at the depth limit and the clock next: one
        // comparison per state.
        let mut checkpoint = self.max_depth.min(CLOCK_INTERVAL);
        loop {
            totals.states += 1;
            bound.load_state(self.state.0.as_raw_slice());
            if bound.value(net.terminal_slot()) {
                goals_of_bound(game, &mut bound, &mut self.goals);
                totals.finish_with(depth, self.goals.iter().copied());
                return;
            }
            if depth >= checkpoint {
                if depth >= self.max_depth {
                    totals.abandoned += 1;
                    totals.at_depth_limit += 1;
                    return;
                }
                if self.deadline.is_some_and(|d| Instant::now() >= d) {
                    return;
                }
                checkpoint = self.max_depth.min(depth.saturating_add(CLOCK_INTERVAL));
            }
            self.joint.clear();
            self.moves.clear();
            for role in 0..game.roles().len() {
                match random_move(net, bound.legal_words(role), role, rng) {
                    Some(m) => {
                        self.joint.push(Move(m));
                        self.moves.push(m);
                    }
                    None => {
                        totals.abandoned += 1;
                        return;
                    }
                }
            }
            on_move(&self.state, &self.joint);
            bound.load_moves(&self.moves);
            bound.next_state(self.next.0.as_raw_mut_slice());
            std::mem::swap(&mut self.state, &mut self.next);
            totals.transitions += 1;
            depth += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_watch_looks_less_often_while_looks_come_fast_and_sees_a_passed_deadline() {
        let totals = PlayoutTotals::new(1);
        let mut watch = Watch::new(Stop::At(Instant::now() + Duration::from_secs(3600)));
        for _ in 0..1000 {
            assert!(!watch.reached(&totals));
        }
        assert!(
            watch.every > 1,
            "calls far faster than LOOK_EVERY double the interval"
        );
        let mut late = Watch::new(Stop::At(Instant::now()));
        assert!(late.reached(&totals), "the first call looks");
        let mut counted = Watch::new(Stop::After(2));
        let mut totals = PlayoutTotals::new(1);
        assert!(!counted.reached(&totals));
        totals.playouts = 1;
        totals.abandoned = 1;
        assert!(counted.reached(&totals));
    }
}
