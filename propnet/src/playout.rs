//! Drivers: flat Monte-Carlo (random playouts on every core with rayon, with any
//! evaluator) and perft (exhaustive counts of joint-move paths).

use crate::eval::lanes::{LanePlayouts, LANES};
use crate::eval::{bits, CompiledNet, Evaluator, EvaluatorKind, Scalar};
use crate::machine::{Game, Move, State, StateMachine};
use crate::random::Stream;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A uniformly random legal input of `role` in the state `eval` holds: [`Stream::draw`]
/// over its legal inputs in input order; `None` when it has none.
#[inline]
pub fn random_input(eval: &impl Evaluator, net: &CompiledNet, role: usize, rng: &mut Stream) -> Option<u32> {
    bits::draw(eval.legal_words(role), rng).map(|at| net.role_inputs()[role][at])
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

impl PlayoutTotals {
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

/// Moves after which a random playout that has not ended is abandoned, unless
/// configured otherwise: far beyond every game of the corpus (its reference
/// traces stop at 500), so that a game whose terminal is unreachable still
/// finishes its playouts.
pub const DEFAULT_MAX_DEPTH: u64 = 10_000;

/// States visited between two looks at the clock inside a playout.
const CLOCK_INTERVAL: u64 = 1024;

/// When a flat Monte-Carlo run stops.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Budget {
    /// After this many wall seconds.
    Seconds(f64),
    /// After this many ended playouts (finished or abandoned) in all (split
    /// evenly over threads; the lanes evaluator finishes the step in which its
    /// share is reached). Gives the same totals for the same seed and thread count.
    Playouts(u64),
}

/// How to run flat Monte-Carlo.
#[derive(Clone, Copy, Debug)]
pub struct McConfig {
    /// The evaluator.
    pub evaluator: EvaluatorKind,
    /// Threads, each with its own evaluator and generators.
    pub threads: usize,
    /// When to stop.
    pub budget: Budget,
    /// Seed of every generator.
    pub seed: u64,
    /// Moves after which a playout is abandoned (at least 1; [`DEFAULT_MAX_DEPTH`] by default).
    pub max_depth: u64,
}

/// The totals of a flat Monte-Carlo run.
#[derive(Clone, Debug)]
pub struct McReport {
    /// The evaluator used.
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
        let totals = &self.totals;
        let with_goal = totals.missing_goals.iter().map(|&m| totals.playouts - m);
        totals
            .goal_sums
            .iter()
            .zip(with_goal)
            .map(|(&sum, n)| (n > 0).then(|| sum / n as f64))
            .collect()
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
    let threads = config.threads.max(1);
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
            let stop = match config.budget {
                Budget::Seconds(s) => Stop::At(start + Duration::from_secs_f64(s)),
                Budget::Playouts(n) => {
                    Stop::After(n / threads as u64 + u64::from((t as u64) < n % threads as u64))
                }
            };
            run_thread(game, from, config, t as u64, stop)
        })
        .into_iter()
        .fold(PlayoutTotals::new(game.roles().len()), PlayoutTotals::merge);
    Ok(McReport {
        evaluator: config.evaluator,
        threads,
        seconds: start.elapsed().as_secs_f64(),
        totals,
    })
}

/// Runs each candidate for `seconds` on one thread and returns the fastest in transitions per second.
pub fn fastest_evaluator(game: &Arc<Game>, candidates: &[EvaluatorKind], seconds: f64) -> EvaluatorKind {
    let rate = |&kind: &EvaluatorKind| {
        let config = McConfig {
            evaluator: kind,
            threads: 1,
            budget: Budget::Seconds(seconds),
            seed: 0,
            max_depth: DEFAULT_MAX_DEPTH,
        };
        monte_carlo(game, &config).map_or(0.0, |report| report.transitions_per_sec())
    };
    let rates: Vec<f64> = candidates.iter().map(rate).collect();
    let best = (0..candidates.len())
        .max_by(|&a, &b| rates[a].total_cmp(&rates[b]))
        .expect("at least one candidate");
    candidates[best]
}

#[derive(Clone, Copy)]
enum Stop {
    At(Instant),
    After(u64),
}

impl Stop {
    fn reached(self, totals: &PlayoutTotals) -> bool {
        match self {
            Stop::At(deadline) => Instant::now() >= deadline,
            Stop::After(n) => totals.playouts + totals.abandoned >= n,
        }
    }

    /// The time at which a playout under way stops, if any.
    fn deadline(self) -> Option<Instant> {
        match self {
            Stop::At(deadline) => Some(deadline),
            Stop::After(_) => None,
        }
    }
}

fn run_thread(game: &Arc<Game>, from: &State, config: &McConfig, thread: u64, stop: Stop) -> PlayoutTotals {
    if config.evaluator == EvaluatorKind::Lanes {
        let streams = (config.seed, thread * LANES as u64);
        let mut lanes = LanePlayouts::new(Arc::clone(game), from, streams, config.max_depth);
        while !stop.reached(lanes.totals()) {
            lanes.step();
        }
        return lanes.totals().clone();
    }
    let mut machine = StateMachine::with_evaluator(Arc::clone(game), config.evaluator);
    let mut rng = Stream::new(config.seed, thread);
    let mut totals = PlayoutTotals::new(game.roles().len());
    let mut playout = Playout::new(&machine, config.max_depth);
    playout.start_from(from);
    playout.stop_at(stop.deadline());
    while !stop.reached(&totals) {
        playout.run(&mut machine, &mut rng, &mut totals, |_, _| {});
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
    /// The joint move as inputs.
    inputs: Vec<u32>,
    goals: Vec<Option<i64>>,
    /// Moves after which a playout is abandoned.
    max_depth: u64,
    /// When a playout under way stops, neither finished nor abandoned.
    deadline: Option<Instant>,
}

impl Playout {
    /// Buffers for playouts on `machine`'s game that are abandoned after
    /// `max_depth` moves (at least 1) without ending.
    pub fn new(machine: &StateMachine, max_depth: u64) -> Playout {
        let initial = machine.initial_state();
        Playout {
            start: initial.clone(),
            next: initial.clone(),
            state: initial,
            joint: Vec::new(),
            inputs: Vec::new(),
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
    /// [`CLOCK_INTERVAL`] states); `None` lets them run to their end.
    pub fn stop_at(&mut self, deadline: Option<Instant>) {
        self.deadline = deadline;
    }

    /// The state the last playout ended in (terminal, or where it was abandoned).
    pub fn last_state(&self) -> &State {
        &self.state
    }

    /// Plays one random playout from the start state into `totals`: in every
    /// non-terminal state each role in turn takes [`Stream::draw`] over its `n` legal
    /// moves in input order. Calls `on_move` with each state left and the
    /// joint move played in it. A state where some role has no legal move, or
    /// reached after the depth limit's moves, abandons the playout; the
    /// deadline stops it uncounted.
    pub fn run(
        &mut self,
        machine: &mut StateMachine,
        rng: &mut Stream,
        totals: &mut PlayoutTotals,
        on_move: impl FnMut(&State, &[Move]),
    ) {
        // On the evaluator itself, compiled for each kind: no per-query dispatch,
        // and no check of which state is loaded.
        match machine.game_and_evaluator() {
            (game, Scalar::Sweep(eval)) => self.run_on(eval, game, rng, totals, on_move),
            (game, Scalar::Differential(eval)) => self.run_on(&mut **eval, game, rng, totals, on_move),
        }
    }

    #[inline]
    fn run_on(
        &mut self,
        eval: &mut impl Evaluator,
        game: &Game,
        rng: &mut Stream,
        totals: &mut PlayoutTotals,
        mut on_move: impl FnMut(&State, &[Move]),
    ) {
        let net = game.net();
        self.state.clone_from(&self.start);
        let mut depth = 0u64;
        // The depth at which to look at the depth limit and the clock next: one
        // comparison per state.
        let mut checkpoint = self.max_depth.min(CLOCK_INTERVAL);
        loop {
            totals.states += 1;
            eval.load_state(self.state.0.as_raw_slice());
            if eval.value(net.terminal_slot()) {
                game.best_goals(eval, &mut self.goals);
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
            self.inputs.clear();
            for role in 0..game.roles().len() {
                match random_input(eval, net, role, rng) {
                    Some(m) => {
                        self.joint.push(Move(m));
                        self.inputs.push(m);
                    }
                    None => {
                        totals.abandoned += 1;
                        return;
                    }
                }
            }
            on_move(&self.state, &self.joint);
            eval.load_moves(&self.inputs);
            eval.next_state(net, self.next.0.as_raw_mut_slice());
            std::mem::swap(&mut self.state, &mut self.next);
            totals.transitions += 1;
            depth += 1;
        }
    }
}

/// Deepest perft a trace or the command line may ask for: far beyond what can be
/// enumerated, and a bound on what [`perft`] allocates per depth.
pub const MAX_PERFT_DEPTH: usize = 1000;

/// Perft counts: `counts[d - 1]` is the number of joint-move paths of length `d`
/// from the initial state (terminal states are not expanded), for `d` in `1..=depth`.
#[derive(Clone, Debug, Default)]
pub struct PerftReport {
    /// Counts per depth.
    pub counts: Vec<u128>,
    /// States expanded (joint moves generated and applied).
    pub nodes: u64,
    /// Wall seconds.
    pub seconds: f64,
}

/// Counts joint-move paths up to `depth` with a scalar evaluator of `kind`.
pub fn perft(game: &Arc<Game>, depth: usize, kind: EvaluatorKind) -> PerftReport {
    let start = Instant::now();
    let mut machine = StateMachine::with_evaluator(Arc::clone(game), kind);
    let mut report = PerftReport {
        counts: vec![0; depth],
        ..Default::default()
    };
    if depth > 0 {
        // Depth first from an explicit stack, not recursion (a game may last
        // longer than a thread's stack holds levels): per level, the children
        // still to expand, the next last.
        let initial = machine.initial_state();
        let mut levels: Vec<Vec<State>> = Vec::new();
        levels.extend(expand(&mut machine, &initial, 0, depth, &mut report));
        while let Some(children) = levels.last_mut() {
            let Some(child) = children.pop() else {
                levels.pop();
                continue;
            };
            let level = levels.len();
            levels.extend(expand(&mut machine, &child, level, depth, &mut report));
        }
    }
    report.seconds = start.elapsed().as_secs_f64();
    report
}

/// Counts the joint moves of `state`, at `level`, into `report`; its children
/// in reverse joint-move order (the first last, to be expanded first), if
/// they are to be expanded.
fn expand(
    machine: &mut StateMachine,
    state: &State,
    level: usize,
    depth: usize,
    report: &mut PerftReport,
) -> Option<Vec<State>> {
    if machine.is_terminal(state) {
        return None;
    }
    report.nodes += 1;
    let roles = machine.roles().len();
    let legal: Vec<Vec<Move>> = (0..roles).map(|r| machine.legal_moves(state, r)).collect();
    let paths: u128 = legal.iter().map(|l| l.len() as u128).product();
    report.counts[level] += paths;
    if level + 1 == depth || paths == 0 {
        return None;
    }
    // All children first, while the parent is loaded.
    let mut children = Vec::with_capacity(paths.min(1 << 16) as usize);
    let mut choice = vec![0usize; roles];
    let mut joint: Vec<Move> = legal.iter().map(|l| l[0]).collect();
    'joints: loop {
        children.push(machine.next_unchecked(&joint));
        // Odometer over the roles' legal lists.
        let mut r = roles;
        loop {
            if r == 0 {
                break 'joints;
            }
            r -= 1;
            choice[r] += 1;
            if choice[r] < legal[r].len() {
                joint[r] = legal[r][choice[r]];
                break;
            }
            choice[r] = 0;
            joint[r] = legal[r][0];
        }
    }
    children.reverse();
    Some(children)
}
