//! Perft: exhaustive counts of joint-move paths from the initial state,
//! depth first on a scalar evaluator, the last ply bulk-counted from the
//! numbers of legal moves.
//!
//! With the lanes evaluator (`EvaluatorKind::Lanes`), the states of the
//! last ply are not made one by one: the states of the ply before it are
//! expanded on the scalar evaluator (the sweep) as ever, but each hands its
//! joint moves to a [`LaneMachine`], as (state, joint move) pairs, 512 to a
//! batch; one step of the batch makes the 512 children, and their legal
//! moves, terminal flags and counts come out of one evaluation of the state
//! part for all of them.

use super::{choose, LaneMachine};
use crate::evaluator::{Choice, EvaluatorConfig, EvaluatorKind, Scalar, LANES};
use crate::game::{Game, Move, State};
use std::sync::Arc;
use std::time::Instant;

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

/// Counts joint-move paths up to `depth` with a scalar evaluator as `config`
/// says (`Auto`: the chooser's pick of sweep and differential; `Lanes`: the
/// sweep, and the last ply in batches on the lanes evaluator; an evaluator
/// converts into a config that names it).
pub fn perft(game: &Arc<Game>, depth: usize, config: impl Into<EvaluatorConfig>) -> PerftReport {
    perft_from(game, game.initial(), depth, config)
}

/// [`perft`] from `from`, a state of `game`, instead of the initial state:
/// the counts of a state reached by a first joint move add up, over the
/// first joint moves, to the counts one deeper from where they were made.
pub fn perft_from(
    game: &Arc<Game>,
    from: &State,
    depth: usize,
    config: impl Into<EvaluatorConfig>,
) -> PerftReport {
    let config = config.into();
    let scalar_kinds = [EvaluatorKind::Sweep, EvaluatorKind::Differential];
    let kind = match config.get_choice() {
        Choice::Fixed(kind) => kind,
        Choice::Auto => choose::evaluator(game, config, &scalar_kinds),
    };
    let mut machine = Expander {
        game,
        scalar: choose::scalar(game, kind, config.get_native()),
        last_ply: (kind == EvaluatorKind::Lanes && depth >= 2).then(|| LastPly::new(game)),
    };
    let start = Instant::now();
    let mut report = PerftReport {
        counts: vec![0; depth],
        ..Default::default()
    };
    if depth > 0 {
        // Depth first from an explicit stack, not recursion (a game may last
        // longer than a thread's stack holds levels): per level, the children
        // still to expand, the next last.
        let mut levels: Vec<Vec<State>> = Vec::new();
        levels.extend(expand(&mut machine, from, 0, depth, &mut report));
        while let Some(children) = levels.last_mut() {
            let Some(child) = children.pop() else {
                levels.pop();
                continue;
            };
            let level = levels.len();
            levels.extend(expand(&mut machine, &child, level, depth, &mut report));
        }
        if let Some(last_ply) = &mut machine.last_ply {
            last_ply.flush(&mut report);
        }
    }
    report.seconds = start.elapsed().as_secs_f64();
    report
}

/// Counts the joint moves of `state`, at `level`, into `report`; its children
/// in reverse joint-move order (the first last, to be expanded first), if
/// they are to be expanded.
fn expand(
    machine: &mut Expander,
    state: &State,
    level: usize,
    depth: usize,
    report: &mut PerftReport,
) -> Option<Vec<State>> {
    machine.scalar.load_state(state.0.as_raw_slice());
    if machine.scalar.value(machine.game.net().terminal_slot()) {
        return None;
    }
    report.nodes += 1;
    let roles = machine.game.roles().len();
    let legal: Vec<Vec<u32>> = (0..roles).map(|r| machine.legal_moves(r)).collect();
    let paths: u128 = legal.iter().map(|l| l.len() as u128).product();
    report.counts[level] += paths;
    if level + 1 == depth || paths == 0 {
        return None;
    }
    if level + 2 == depth {
        if let Some(last_ply) = &mut machine.last_ply {
            for_each_joint(&legal, |joint| last_ply.add(state, joint, report));
            return None;
        }
    }
    // All children first, while the parent is loaded.
    let mut children = Vec::with_capacity(paths.min(1 << 16) as usize);
    for_each_joint(&legal, |joint| children.push(machine.next(joint)));
    children.reverse();
    Some(children)
}

/// Calls `f` with every joint move of the roles' `legal` moves (none empty),
/// in order: an odometer over the roles' lists, the last role fastest.
fn for_each_joint(legal: &[Vec<u32>], mut f: impl FnMut(&[u32])) {
    let roles = legal.len();
    let mut choice = vec![0usize; roles];
    let mut joint: Vec<u32> = legal.iter().map(|l| l[0]).collect();
    loop {
        f(&joint);
        let mut r = roles;
        loop {
            if r == 0 {
                return;
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
}

/// A perft's scalar evaluator and its game, and the batches of its last
/// ply on the lanes evaluator when it has them.
struct Expander<'a> {
    game: &'a Game,
    scalar: Scalar,
    last_ply: Option<LastPly>,
}

impl Expander<'_> {
    /// The legal moves of `role` in the state loaded.
    fn legal_moves(&self, role: usize) -> Vec<u32> {
        let mut legal = Vec::new();
        self.scalar.legal_moves(role, &mut legal);
        legal
    }

    /// The state after `joint` in the state loaded.
    fn next(&mut self, joint: &[u32]) -> State {
        self.scalar.load_moves(joint);
        let mut next = self.game.initial().clone();
        self.scalar.next_state(next.0.as_raw_mut_slice());
        next
    }
}

/// The last ply of a perft on the lanes evaluator: (state, joint move) pairs
/// of the ply before, up to [`LANES`] at a time, each state in a lane.
struct LastPly {
    machine: LaneMachine,
    /// The pairs' joint moves, lanes x roles.
    joints: Vec<Move>,
    /// Each role's first bit in a lane's legal bits, and the stride.
    stride: usize,
    terminal: Vec<bool>,
    legal: Vec<u64>,
}

impl LastPly {
    fn new(game: &Arc<Game>) -> LastPly {
        let stride = game.role_moves().iter().map(Vec::len).max().unwrap_or(0);
        LastPly {
            machine: LaneMachine::new(Arc::clone(game)),
            joints: Vec::with_capacity(LANES * game.roles().len()),
            stride,
            terminal: Vec::with_capacity(LANES),
            legal: Vec::new(),
        }
    }

    /// Adds the child of `state` by `joint` (legal there), counting the
    /// batch into `report` first when it is full.
    fn add(&mut self, state: &State, joint: &[u32], report: &mut PerftReport) {
        if self.machine.lanes() == LANES {
            self.flush(report);
        }
        self.machine
            .push(state)
            .expect("a state of the game, in a free lane");
        self.joints.extend(joint.iter().map(|&m| Move(m)));
    }

    /// Steps the batch and counts its children: each that is not terminal is
    /// expanded, and adds its number of joint moves to the last ply's count.
    fn flush(&mut self, report: &mut PerftReport) {
        let lanes = self.machine.lanes();
        if lanes == 0 {
            return;
        }
        let roles = self.machine.game().roles().len();
        let words = (roles * self.stride).div_ceil(64);
        self.terminal.resize(lanes, false);
        self.legal.resize(lanes * words, 0);
        let sized = "buffers sized for the lanes";
        self.machine
            .step(&self.joints)
            .expect("legal joint moves of their states");
        self.machine.terminal_into(&mut self.terminal).expect(sized);
        self.machine
            .legal_into(self.stride, &mut self.legal)
            .expect(sized);
        let last = report.counts.len() - 1;
        for (bits, _) in self
            .legal
            .chunks_exact(words)
            .zip(&self.terminal)
            .filter(|&(_, &t)| !t)
        {
            report.nodes += 1;
            let moves = (0..roles).map(|r| ones_in(bits, r * self.stride, self.stride) as u128);
            report.counts[last] += moves.product::<u128>();
        }
        self.machine.clear();
        self.joints.clear();
    }
}

/// The set bits of `words` among bits `first..first + len`.
fn ones_in(words: &[u64], first: usize, len: usize) -> u32 {
    if len == 0 {
        return 0;
    }
    let end = first + len;
    (first / 64..end.div_ceil(64))
        .map(|w| {
            let base = w * 64;
            let low = first.saturating_sub(base);
            let high = (end - base).min(64);
            let mask = (!0u64 >> (64 - (high - low))) << low;
            (words[w] & mask).count_ones()
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluator::{CLAIMS, TURNS};

    #[test]
    fn the_last_ply_on_lanes_counts_as_the_scalar_perft() {
        for rules in [TURNS, CLAIMS] {
            let game = crate::load(rules, &crate::LoadConfig::default())
                .expect("loads")
                .game;
            for depth in 1..=5 {
                let scalar = perft(&game, depth, EvaluatorKind::Sweep);
                let lanes = perft(&game, depth, EvaluatorKind::Lanes);
                assert_eq!(lanes.counts, scalar.counts, "depth {depth}");
                assert_eq!(lanes.nodes, scalar.nodes, "depth {depth}");
            }
        }
    }

    #[test]
    fn bits_are_counted_in_their_range_only() {
        let words = [!0u64, 0b1011];
        assert_eq!(ones_in(&words, 0, 64), 64);
        assert_eq!(ones_in(&words, 60, 8), 4 + 3);
        assert_eq!(ones_in(&words, 65, 3), 2);
        assert_eq!(ones_in(&words, 70, 0), 0);
    }
}
