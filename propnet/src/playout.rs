//! Drivers: flat Monte-Carlo (random playouts on every core with rayon) and
//! perft (exhaustive counts of joint-move paths).

use crate::machine::{Game, Move, State, StateMachine};
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use rayon::prelude::*;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The totals of a flat Monte-Carlo run.
#[derive(Clone, Debug, Default)]
pub struct McReport {
    /// Threads used.
    pub threads: usize,
    /// Wall seconds spent.
    pub seconds: f64,
    /// States visited (every state of every playout, terminal ones included).
    pub nodes: u64,
    /// Playouts that reached a terminal state.
    pub playouts: u64,
    /// Sum of the depths of finished playouts.
    pub depth_sum: u64,
    /// Per role, the sum over finished playouts of its goal (the highest derivable value, 0 if none).
    pub goal_sums: Vec<f64>,
}

impl McReport {
    /// Visited states per second.
    pub fn nodes_per_sec(&self) -> f64 {
        self.nodes as f64 / self.seconds.max(1e-9)
    }

    /// Finished playouts per second.
    pub fn playouts_per_sec(&self) -> f64 {
        self.playouts as f64 / self.seconds.max(1e-9)
    }

    /// Mean number of moves per finished playout.
    pub fn avg_depth(&self) -> f64 {
        self.depth_sum as f64 / self.playouts.max(1) as f64
    }

    /// Mean goal per role over finished playouts.
    pub fn avg_goals(&self) -> Vec<f64> {
        self.goal_sums
            .iter()
            .map(|g| g / self.playouts.max(1) as f64)
            .collect()
    }

    fn merge(mut self, other: McReport) -> McReport {
        self.nodes += other.nodes;
        self.playouts += other.playouts;
        self.depth_sum += other.depth_sum;
        if self.goal_sums.is_empty() {
            self.goal_sums = other.goal_sums;
        } else {
            for (a, b) in self.goal_sums.iter_mut().zip(other.goal_sums) {
                *a += b;
            }
        }
        self
    }
}

/// Random playouts from the initial state until `seconds` have passed, on
/// `threads` threads; thread `t` draws from a generator seeded with `seed + t`.
pub fn monte_carlo(game: &Arc<Game>, seconds: f64, threads: usize, seed: u64) -> McReport {
    let threads = threads.max(1);
    let deadline = Instant::now() + Duration::from_secs_f64(seconds);
    let start = Instant::now();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("a thread pool");
    let mut report = pool.install(|| {
        (0..threads)
            .into_par_iter()
            .map(|t| {
                let mut machine = StateMachine::new(Arc::clone(game));
                let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed.wrapping_add(t as u64));
                playouts_until(&mut machine, &mut rng, deadline)
            })
            .reduce(McReport::default, McReport::merge)
    });
    report.threads = threads;
    report.seconds = start.elapsed().as_secs_f64();
    report
}

fn playouts_until(machine: &mut StateMachine, rng: &mut Xoshiro256PlusPlus, deadline: Instant) -> McReport {
    let roles = machine.roles().len();
    let mut report = McReport {
        goal_sums: vec![0.0; roles],
        ..Default::default()
    };
    let mut joint: Vec<Move> = Vec::with_capacity(roles);
    let mut legal: Vec<Move> = Vec::new();
    while Instant::now() < deadline {
        let mut state = machine.initial_state();
        let mut depth = 0u64;
        loop {
            report.nodes += 1;
            if machine.is_terminal(&state) {
                for (role, values) in machine.goals(&state).into_iter().enumerate() {
                    report.goal_sums[role] += values.into_iter().max().unwrap_or(0) as f64;
                }
                report.playouts += 1;
                report.depth_sum += depth;
                break;
            }
            joint.clear();
            for role in 0..roles {
                machine.legal_moves_into(&state, role, &mut legal);
                if legal.is_empty() {
                    // A role without legal moves in a non-terminal state: the game is
                    // ill-formed here; end the playout without a result.
                    return report;
                }
                joint.push(legal[rng.gen_range(0..legal.len())]);
            }
            state = machine.next_unchecked(&joint);
            depth += 1;
            if depth.is_multiple_of(1024) && Instant::now() >= deadline {
                return report;
            }
        }
    }
    report
}

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

/// Counts joint-move paths up to `depth`.
pub fn perft(game: &Arc<Game>, depth: usize) -> PerftReport {
    let start = Instant::now();
    let mut machine = StateMachine::new(Arc::clone(game));
    let mut report = PerftReport {
        counts: vec![0; depth],
        ..Default::default()
    };
    if depth > 0 {
        let initial = machine.initial_state();
        expand(&mut machine, &initial, 0, depth, &mut report);
    }
    report.seconds = start.elapsed().as_secs_f64();
    report
}

fn expand(machine: &mut StateMachine, state: &State, level: usize, depth: usize, report: &mut PerftReport) {
    if machine.is_terminal(state) {
        return;
    }
    report.nodes += 1;
    let roles = machine.roles().len();
    let legal: Vec<Vec<Move>> = (0..roles).map(|r| machine.legal_moves(state, r)).collect();
    let paths: u128 = legal.iter().map(|l| l.len() as u128).product();
    report.counts[level] += paths;
    if level + 1 == depth || paths == 0 {
        return;
    }
    // All children first, while the parent is loaded, then recurse.
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
    for child in &children {
        expand(machine, child, level + 1, depth, report);
    }
}
