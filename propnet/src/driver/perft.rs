//! Perft: exhaustive counts of joint-move paths from the initial state, on a
//! scalar evaluator.

use super::choose;
use crate::evaluator::{Choice, EvaluatorConfig, EvaluatorKind, Scalar};
use crate::game::{Game, State};
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
/// says (`Auto`: the chooser's pick of sweep and differential; an evaluator
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
    // All children first, while the parent is loaded.
    let mut children = Vec::with_capacity(paths.min(1 << 16) as usize);
    let mut choice = vec![0usize; roles];
    let mut joint: Vec<u32> = legal.iter().map(|l| l[0]).collect();
    'joints: loop {
        children.push(machine.next(&joint));
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

/// A perft's scalar evaluator and its game.
struct Expander<'a> {
    game: &'a Game,
    scalar: Scalar,
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
