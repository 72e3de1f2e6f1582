//! Perft: exhaustive counts of joint-move paths from the initial state,
//! depth first on a scalar evaluator, the last ply bulk-counted from the
//! numbers of legal moves.
//!
//! On the lanes evaluator, the states of the last ply are not made one by
//! one: the states of the ply before it are expanded on the scalar evaluator
//! as ever, but each hands its joint moves to a [`LaneMachine`], as (state,
//! joint move) pairs, 512 to a batch; one step of the batch makes the 512
//! children, and their legal moves, terminal flags and counts come out of one
//! evaluation of the state part for all of them.
//!
//! Which pays depends on the game: a batch costs evaluations of the whole net
//! (and the lanes evaluator is interpreted), a pair on a scalar evaluator the
//! work of one move (little, on the differential evaluator, when a move
//! changes little of a large net). So `EvaluatorKind::Lanes` forces the
//! lanes (with the sweep above), and `Auto`, after choosing the scalar
//! evaluator, races the two on the game's own last-ply work
//! ([`choose::batch_costs`]: pairs of states along a seeded random playout,
//! each expanded as the last ply expands them) and takes the lanes when a
//! full batch wins. The race takes a few milliseconds (at most about 0.05 s
//! after a warm-up), before the perft's clock starts, as the choice of the
//! scalar evaluator does.

use super::{choose, LaneMachine};
use crate::evaluator::{Choice, EvaluatorConfig, EvaluatorKind, Scalar, LANES};
use crate::game::{Game, Move, State};
use crate::random::Stream;
use std::sync::Arc;
use std::time::Instant;

/// Deepest perft a trace or the command line may ask for: far beyond what can be
/// enumerated, and a bound on what [`perft`] allocates per depth.
pub const MAX_PERFT_DEPTH: usize = 1000;

/// Moves of the random playout whose states the lanes race on, at most.
const SAMPLE_STEPS: usize = 200;

/// The seed of that playout.
const SAMPLE_SEED: u64 = 0x9e7f;

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
    /// The scalar evaluator that expanded the states above the last ply
    /// (`None` in a report not made by [`perft`]).
    pub evaluator: Option<EvaluatorKind>,
    /// Whether the last ply ran on the lanes evaluator, in batches of
    /// [`LANES`] pairs (else on the scalar evaluator too).
    pub last_ply_on_lanes: bool,
}

/// Counts joint-move paths up to `depth` with a scalar evaluator as `config`
/// says (`Auto`: the chooser's pick of sweep and differential, and the last
/// ply on the lanes where they win a race; `Lanes`: the sweep, and the last
/// ply in batches on the lanes evaluator; an evaluator converts into a config
/// that names it). The report says which ran.
///
/// ```
/// use ggpnet_propnet::driver::perft;
/// use ggpnet_propnet::evaluator::EvaluatorKind;
/// let rules = "(role r) (init (at 0)) (<= (legal r (go 1)) (true (at 0)))
///     (<= (legal r (go 2)) (true (at 0))) (<= (next (at ?x)) (does r (go ?x)))
///     (<= terminal (true (at 1))) (<= terminal (true (at 2))) (goal r 100)";
/// let game = ggpnet_propnet::load(rules, &Default::default())?.game;
/// let report = perft(&game, 2, EvaluatorKind::Lanes);
/// assert_eq!(report.counts, [2, 0]); // both children are terminal
/// assert!(report.last_ply_on_lanes);
/// assert_eq!(report.evaluator, Some(EvaluatorKind::Sweep));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
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
    let (kind, on_lanes) = match config.get_choice() {
        Choice::Fixed(EvaluatorKind::Lanes) => (EvaluatorKind::Sweep, Some(true)),
        Choice::Fixed(kind) => (kind, Some(false)),
        Choice::Auto => (choose::evaluator(game, config, &scalar_kinds), None),
    };
    let mut machine = Expander::new(game, choose::scalar(game, kind, config.get_native()));
    if depth >= 2 && on_lanes != Some(false) {
        let mut last_ply = LastPly::new(game);
        if on_lanes.unwrap_or_else(|| lanes_pay(&mut machine, &mut last_ply, from)) {
            machine.last_ply = Some(last_ply);
        }
    }
    let start = Instant::now();
    let mut report = PerftReport {
        counts: vec![0; depth],
        evaluator: Some(kind),
        last_ply_on_lanes: machine.last_ply.is_some(),
        ..Default::default()
    };
    if depth > 0 {
        walk(&mut machine, from, depth, &mut report);
        if let Some(last_ply) = &mut machine.last_ply {
            last_ply.flush(&mut report);
        }
    }
    report.seconds = start.elapsed().as_secs_f64();
    report
}

/// Depth first from `from` to `depth`, counting into `report`, from an
/// explicit stack, not recursion (a game may last longer than a thread's
/// stack holds levels): per level, the children still to expand as the words
/// of their states, the next last. The levels' buffers are kept for the next
/// node at that level, so that the walk allocates only while they grow.
fn walk(machine: &mut Expander, from: &State, depth: usize, report: &mut PerftReport) {
    let words = from.0.as_raw_slice().len();
    let mut levels: Vec<Vec<u64>> = vec![Vec::new()];
    let mut state = from.0.as_raw_slice().to_vec();
    let mut active = usize::from(expand(machine, &state, 0, depth, report, &mut levels[0]));
    while active > 0 {
        let children = &mut levels[active - 1];
        let Some(at) = children.len().checked_sub(words) else {
            active -= 1;
            continue;
        };
        state.copy_from_slice(&children[at..]);
        children.truncate(at);
        if levels.len() == active {
            levels.push(Vec::new());
        }
        let level = &mut levels[active];
        level.clear();
        active += usize::from(expand(machine, &state, active, depth, report, level));
    }
}

/// Whether the last ply runs faster on the lanes than on `machine`'s scalar
/// evaluator (which has no last ply on the lanes yet): a race
/// ([`choose::batch_costs`]) on the pairs of the states along a random
/// playout from `from` ([`sample`]), each side doing the last ply's work, in
/// which a full batch must win.
fn lanes_pay(machine: &mut Expander, last_ply: &mut LastPly, from: &State) -> bool {
    let parents = sample(machine, from);
    let pairs: Vec<(&State, &[u32])> = parents
        .iter()
        .flat_map(|(state, joints)| joints.iter().map(move |j| (state, j.as_slice())))
        .collect();
    if pairs.is_empty() {
        return false;
    }
    let mut scalar_counts = PerftReport {
        counts: vec![0; 2],
        ..Default::default()
    };
    let mut lane_counts = scalar_counts.clone();
    let costs = choose::batch_costs(
        |n| machine.last_plies(&parents, n, &mut scalar_counts),
        |n| {
            for &(state, joint) in pairs.iter().cycle().take(n) {
                last_ply.add(state, joint, &mut lane_counts);
            }
            last_ply.flush(&mut lane_counts);
            n
        },
    );
    costs.lanes_from().is_some()
}

/// The states along a seeded random playout from `from`, each with its joint
/// moves (none empty), until they hold [`LANES`] joint moves, the playout
/// ends, or [`SAMPLE_STEPS`] moves are played.
fn sample(machine: &mut Expander, from: &State) -> Vec<(State, Vec<Vec<u32>>)> {
    let roles = machine.game.roles().len();
    let mut rng = Stream::new(SAMPLE_SEED, 0);
    let (mut parents, mut pairs) = (Vec::new(), 0);
    let mut state = from.clone();
    for _ in 0..SAMPLE_STEPS {
        machine.scalar.load_state(state.0.as_raw_slice());
        if pairs >= LANES || machine.scalar.value(machine.game.net().terminal_slot()) {
            break;
        }
        let legal: Vec<Vec<u32>> = (0..roles).map(|r| machine.legal_moves(r)).collect();
        if roles == 0 || legal.iter().any(Vec::is_empty) {
            break;
        }
        let mut joints: Vec<Vec<u32>> = Vec::new();
        for_each_joint(&legal, |joint| {
            if pairs + joints.len() < LANES {
                joints.push(joint.to_vec());
            }
        });
        let next = machine.next(&joints[rng.draw(joints.len())]);
        pairs += joints.len();
        parents.push((std::mem::replace(&mut state, next), joints));
    }
    parents
}

/// Counts the joint moves of the state whose words are `state`, at `level`,
/// into `report`; writes the words of its children into `children` in
/// reverse joint-move order (the first last, to be expanded first), if they
/// are to be expanded, and says whether it did.
fn expand(
    machine: &mut Expander,
    state: &[u64],
    level: usize,
    depth: usize,
    report: &mut PerftReport,
    children: &mut Vec<u64>,
) -> bool {
    machine.scalar.load_state(state);
    if machine.scalar.value(machine.game.net().terminal_slot()) {
        return false;
    }
    report.nodes += 1;
    let roles = machine.game.roles().len();
    let paths: u128 = (0..roles)
        .map(|r| {
            machine
                .scalar
                .legal_words(r)
                .iter()
                .map(|w| w.count_ones() as u128)
                .sum::<u128>()
        })
        .product();
    report.counts[level] += paths;
    if level + 1 == depth || paths == 0 {
        return false;
    }
    let mut legal = std::mem::take(&mut machine.legal);
    legal.resize_with(roles, Vec::new);
    for (role, moves) in legal.iter_mut().enumerate() {
        machine.scalar.legal_moves(role, moves);
    }
    let expanded = match &mut machine.last_ply {
        Some(last_ply) if level + 2 == depth => {
            machine.parent.0.as_raw_mut_slice().copy_from_slice(state);
            for_each_joint(&legal, |joint| last_ply.add(&machine.parent, joint, report));
            false
        }
        _ => {
            for_each_joint(&legal, |joint| machine.next_into(joint, children));
            reverse_states(children, state.len());
            true
        }
    };
    machine.legal = legal;
    expanded
}

/// Reverses the order of the states of `words` words each in `states`.
fn reverse_states(states: &mut [u64], words: usize) {
    let n = states.len() / words;
    for i in 0..n / 2 {
        let (front, back) = states.split_at_mut((n - 1 - i) * words);
        front[i * words..(i + 1) * words].swap_with_slice(&mut back[..words]);
    }
}

/// Calls `f` with every joint move of the roles' `legal` moves, in order:
/// an odometer over the roles' lists, the last role fastest (the first role's
/// move changing slowest); never when some role has no move, once with the
/// empty joint move when there are no roles. Perft expands a state's
/// children in this order, and the facade lists joint moves and successors
/// in it.
///
/// ```
/// use ggpnet_propnet::driver::for_each_joint;
/// let mut joints = Vec::new();
/// for_each_joint(&[vec!['a', 'b'], vec!['x', 'y']], |joint| joints.push(joint.to_vec()));
/// assert_eq!(joints, [['a', 'x'], ['a', 'y'], ['b', 'x'], ['b', 'y']]);
/// for_each_joint(&[vec!['a'], vec![]], |_| panic!("a role without moves has no joint move"));
/// ```
pub fn for_each_joint<T: Clone>(legal: &[Vec<T>], mut f: impl FnMut(&[T])) {
    if legal.iter().any(Vec::is_empty) {
        return;
    }
    let roles = legal.len();
    let mut choice = vec![0usize; roles];
    let mut joint: Vec<T> = legal.iter().map(|l| l[0].clone()).collect();
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
                joint[r] = legal[r][choice[r]].clone();
                break;
            }
            choice[r] = 0;
            joint[r] = legal[r][0].clone();
        }
    }
}

/// A perft's scalar evaluator and its game, and the batches of its last
/// ply on the lanes evaluator when it has them.
struct Expander<'a> {
    game: &'a Game,
    scalar: Scalar,
    last_ply: Option<LastPly>,
    /// The roles' legal moves in the state loaded, kept for their buffers.
    legal: Vec<Vec<u32>>,
    /// The state loaded, where the last ply on the lanes needs it as a state.
    parent: State,
}

impl<'a> Expander<'a> {
    fn new(game: &'a Game, scalar: Scalar) -> Expander<'a> {
        Expander {
            game,
            scalar,
            last_ply: None,
            legal: Vec::new(),
            parent: game.initial().clone(),
        }
    }

    /// Expands the children of `parents` (states, each with the joint moves
    /// to make its children by) as the scalar perft's last ply does, counting
    /// them into `report` at depth 2, parent after parent (from the first
    /// again after the last) until at least `n` children are done; how many.
    fn last_plies(
        &mut self,
        parents: &[(State, Vec<Vec<u32>>)],
        n: usize,
        report: &mut PerftReport,
    ) -> usize {
        let mut done = 0;
        let (mut children, mut none) = (Vec::new(), Vec::new());
        for (parent, joints) in parents.iter().cycle().take(n) {
            self.scalar.load_state(parent.0.as_raw_slice());
            children.clear();
            for joint in joints {
                self.next_into(joint, &mut children);
            }
            for child in children.chunks_exact(parent.0.as_raw_slice().len()) {
                expand(self, child, 1, 2, report, &mut none);
            }
            done += joints.len();
            if done >= n {
                break;
            }
        }
        done
    }

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

    /// Appends the words of the state after `joint` in the state loaded to `out`.
    fn next_into(&mut self, joint: &[u32], out: &mut Vec<u64>) {
        self.scalar.load_moves(joint);
        let at = out.len();
        out.resize(at + self.parent.0.as_raw_slice().len(), 0);
        self.scalar.next_state(&mut out[at..]);
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
    fn auto_counts_as_the_scalar_perft_and_says_what_ran() {
        for rules in [TURNS, CLAIMS] {
            let game = crate::load(rules, &crate::LoadConfig::default())
                .expect("loads")
                .game;
            let scalar = perft(&game, 4, EvaluatorKind::Sweep);
            let auto = perft(&game, 4, EvaluatorConfig::default());
            assert_eq!(auto.counts, scalar.counts);
            assert_eq!(auto.nodes, scalar.nodes);
            assert!(auto.evaluator.is_some_and(EvaluatorKind::is_scalar));
            assert_eq!(scalar.evaluator, Some(EvaluatorKind::Sweep));
            assert!(!scalar.last_ply_on_lanes);
            let shallow = perft(&game, 1, EvaluatorKind::Lanes);
            assert!(!shallow.last_ply_on_lanes, "one ply has no ply before it");
        }
    }

    #[test]
    fn the_race_samples_up_to_a_batch_of_legal_pairs() {
        let game = crate::load(TURNS, &crate::LoadConfig::default())
            .expect("loads")
            .game;
        let mut machine = Expander::new(&game, choose::scalar(&game, EvaluatorKind::Sweep, true));
        let parents = sample(&mut machine, game.initial());
        let pairs: usize = parents.iter().map(|(_, joints)| joints.len()).sum();
        assert!(pairs > 0 && pairs <= LANES, "{pairs} pairs");
        let mut state_machine = crate::StateMachine::new(Arc::clone(&game));
        for (state, joints) in &parents {
            assert!(!state_machine.is_terminal(state));
            for joint in joints {
                let moves: Vec<Move> = joint.iter().map(|&m| Move(m)).collect();
                assert!(
                    state_machine.next_state(state, &moves).is_ok(),
                    "a legal joint move"
                );
            }
        }
        let mut last_ply = LastPly::new(&game);
        // Either answer is right (it is a timing); the race must run through.
        let _ = lanes_pay(&mut machine, &mut last_ply, game.initial());
        assert_eq!(last_ply.machine.lanes(), 0, "every batch flushed");
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
