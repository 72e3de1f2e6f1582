//! How often things change along random playouts: the measurements behind the
//! differential evaluator's choice of guards (and the walk that the sweep's
//! choice of guarded gates measures along too). A short run of random playouts
//! evaluates the whole circuit after every state and every joint move, as the
//! differential evaluator sees them, and counts per slot how many of these
//! transitions changed its value, and per operand of each `and` how the `and`'s
//! other operands behaved around it. The guards' counts come from 64 playouts
//! run side by side as the bits of words ([`lane_walk`]), at about the cost of
//! one; the sweep's measurements, which need the transitions in order, from one
//! ([`random_walk`]).

use crate::layout::{bit, pack, run_steps};
use crate::layout::{CompiledNet, Gate};
use crate::random::Stream;

/// Value transitions measured along random playouts from the initial state.
#[derive(Clone, Debug)]
pub(crate) struct Activity {
    /// Transitions measured (a new state, or a new joint move, each is one).
    pub transitions: u32,
    /// The `and`s whose operands' counts below are measured ([`Activity::is_measured`]).
    pub measured: Vec<u32>,
    /// Per slot: transitions that changed its value.
    pub flips: Vec<u32>,
    /// Per fan-in edge of an [`Activity::is_measured`] `and` (indexed like
    /// `net.fanin`): transitions that changed whether the `and`'s other operands
    /// were all true.
    pub others_changed: Vec<u32>,
    /// Per fan-in edge of a measured `and`: transitions that flipped this operand
    /// while the `and`'s other operands were all true (before or after).
    pub flips_while_others: Vec<u32>,
    /// What returning to the initial state from where a playout ended costs a
    /// differential evaluation, on average: fan-out edges of the kept slots
    /// that change, plus one per slot.
    pub restart_work: u64,
}

impl Activity {
    /// Whether the `and`-specific counts of `slot` are measured: an acyclic
    /// `and` of at least two operands.
    pub fn is_measured(net: &CompiledNet, slot: u32) -> bool {
        slot >= net.first_gate()
            && net.gates()[slot as usize] == Gate::And
            && net.fanin(slot).len() >= 2
            && net.cycle_start()[slot as usize] == u32::MAX
    }

    /// Measures `net` along 64 random playouts side by side (a fixed seed, so
    /// the same net gives the same counts; see [`lane_walk`]) for about
    /// `gate_evaluations` evaluations of a gate's word, between 16 and 400
    /// transitions of the 64 lanes, for an evaluator that keeps the slots that
    /// are `kept` up to date (only those count in [`Activity::measured`] and
    /// [`Activity::restart_work`]).
    pub fn measure(net: &CompiledNet, gate_evaluations: usize, kept: &[bool]) -> Activity {
        let measured: Vec<u32> = (net.first_gate()..net.slots() as u32)
            .filter(|&s| kept[s as usize] && Activity::is_measured(net, s))
            .collect();
        let mut activity = Activity {
            transitions: 0,
            measured: Vec::new(),
            flips: vec![0; net.slots()],
            others_changed: vec![0; net.fanins().len()],
            flips_while_others: vec![0; net.fanins().len()],
            restart_work: 0,
        };
        // What a differential evaluation pays per slot that changes.
        let weight: Vec<u64> = (0..net.slots() as u32)
            .map(|s| match kept[s as usize] {
                true => net.fanout(s).iter().filter(|&&o| kept[o as usize]).count() as u64 + 1,
                false => 0,
            })
            .collect();
        let (mut restarts, mut restart_work) = (0u64, 0u64);
        let last = lane_walk(net, gate_evaluations, |before, after, lanes, restarted| {
            activity.count(net, &measured, (before, after), lanes);
            if restarted != 0 {
                restarts += u64::from(restarted.count_ones());
                restart_work += work(&weight, before, after, restarted);
            }
        });
        if restarts == 0 {
            // No playout ended: return from where the measurement stopped.
            let mut values = last.clone();
            for (b, &slot) in net.base_slots().iter().enumerate() {
                values[slot as usize] = lane_bit(net.initial(), b);
            }
            run_steps(net.steps(), &mut values, 0, net);
            restarts = u64::from(u64::BITS);
            restart_work = work(&weight, &last, &values, !0);
        }
        activity.restart_work = restart_work / restarts;
        activity.measured = measured;
        activity
    }

    /// Counts one transition of the `lanes` from `before` to `after` (the
    /// words of the lanes, per slot).
    fn count(&mut self, net: &CompiledNet, measured: &[u32], words: (&[u64], &[u64]), lanes: u64) {
        let (before, after) = words;
        self.transitions += lanes.count_ones();
        for (flips, (b, a)) in self.flips.iter_mut().zip(before.iter().zip(after)) {
            *flips += ((b ^ a) & lanes).count_ones();
        }
        for &and in measured {
            let fanin = net.fanin(and);
            // Where no operand changed, neither do the others' conjunctions:
            // nothing to count (most `and`s in most transitions).
            let changed = fanin
                .iter()
                .fold(0, |c, &i| c | (before[i as usize] ^ after[i as usize]));
            if changed & lanes == 0 {
                continue;
            }
            let (false_before, false_after) = (Falses::of(fanin, before), Falses::of(fanin, after));
            let first_edge = net.fanin_offsets()[and as usize] as usize;
            for (k, &i) in fanin.iter().enumerate() {
                let (b, a) = (before[i as usize], after[i as usize]);
                let others_before = false_before.others_true(b);
                let others_after = false_after.others_true(a);
                self.others_changed[first_edge + k] += ((others_before ^ others_after) & lanes).count_ones();
                self.flips_while_others[first_edge + k] +=
                    ((b ^ a) & (others_before | others_after) & lanes).count_ones();
            }
        }
    }
}

/// Per lane, whether at least one and at least two of an `and`'s operands are false.
struct Falses {
    one: u64,
    two: u64,
}

impl Falses {
    fn of(fanin: &[u32], values: &[u64]) -> Falses {
        let (mut one, mut two) = (0, 0);
        for &i in fanin {
            let off = !values[i as usize];
            two |= one & off;
            one |= off;
        }
        Falses { one, two }
    }

    /// The lanes where all the operands but one whose value is `value` are true.
    fn others_true(&self, value: u64) -> u64 {
        (value & !self.one) | (!value & !self.two)
    }
}

/// The word of base `b` in `state` in every lane: all ones if it holds.
fn lane_bit(state: &[u64], b: usize) -> u64 {
    if bit(state, b) {
        !0
    } else {
        0
    }
}

/// Plays 64 random playouts side by side from the initial state, one per bit
/// of a word (lane `l` draws from stream `l` of a fixed seed, so the same net
/// gives the same walk), for about `gate_evaluations` evaluations of a gate's
/// word, between 16 and 400 transitions of the lanes, evaluating the whole
/// circuit after every new state and every new joint move. Shows each
/// transition to `observe` with the words before and after it, the lanes that
/// took part and those of them that restarted (a lane whose playout ended
/// returns to the initial state and takes no part in the next joint move's
/// transition); the first state, from nothing, is not shown. Returns the
/// words after the last transition.
///
/// Sixty-four playouts cost about what one does (a gate's word is one
/// operation), so the counts rest on 64 times the sample: one playout's counts
/// chose guards that made hex's differential evaluator up to 20% slower or
/// faster from one seed to another.
fn lane_walk(
    net: &CompiledNet,
    gate_evaluations: usize,
    mut observe: impl FnMut(&[u64], &[u64], u64, u64),
) -> Vec<u64> {
    let budget = (gate_evaluations / net.slots().max(1)).clamp(16, 400);
    let initial: Vec<u64> = (0..net.base_slots().len())
        .map(|b| lane_bit(net.initial(), b))
        .collect();
    let mut state = initial.clone();
    let mut draws = Draws::new();
    let mut values = vec![0u64; net.slots()];
    let mut before = values.clone();
    let (mut transitions, mut restarting, mut first) = (0, 0u64, true);
    while transitions < budget {
        // A new state in every lane (with its last joint move still on the inputs).
        for (&slot, &word) in net.base_slots().iter().zip(&state) {
            values[slot as usize] = word;
        }
        run_steps(net.steps(), &mut values, 0, net);
        if !first {
            observe(&before, &values, !0, restarting);
            transitions += 1;
        }
        first = false;
        before.clone_from(&values);
        let moving = draws.play(net, &mut values);
        restarting = !moving;
        if moving != 0 {
            run_steps(&net.steps()[net.state_steps()..], &mut values, 0, net);
            observe(&before, &values, moving, 0);
            transitions += 1;
            before.clone_from(&values);
        }
        for (b, word) in state.iter_mut().enumerate() {
            *word = (values[net.next_slots()[b] as usize] & moving) | (initial[b] & !moving);
        }
    }
    values
}

/// The random joint moves of [`lane_walk`]'s lanes.
struct Draws {
    streams: Vec<Stream>,
    /// Per lane, its moves legal for the role being drawn.
    legal: Vec<Vec<u32>>,
    /// Per lane, the joint move on the inputs, and the one being drawn.
    played: Vec<Vec<u32>>,
    drawn: Vec<Vec<u32>>,
}

impl Draws {
    fn new() -> Draws {
        let rooms = || vec![Vec::new(); u64::BITS as usize];
        Draws {
            streams: (0..u64::from(u64::BITS))
                .map(|l| Stream::new(0x6163_7469_7669_7479, l))
                .collect(),
            legal: rooms(),
            played: rooms(),
            drawn: rooms(),
        }
    }

    /// Draws a random joint move in every lane that is not terminal and where
    /// every role has a legal move, and puts it on the inputs in `values` in
    /// place of the lane's last one; returns those lanes.
    fn play(&mut self, net: &CompiledNet, values: &mut [u64]) -> u64 {
        let mut stuck = values[net.terminal_slot() as usize];
        self.drawn.iter_mut().for_each(Vec::clear);
        for inputs in net.role_moves() {
            self.legal.iter_mut().for_each(Vec::clear);
            for &m in inputs {
                let mut lanes = values[net.legal_slots()[m as usize] as usize] & !stuck;
                while lanes != 0 {
                    self.legal[lanes.trailing_zeros() as usize].push(m);
                    lanes &= lanes - 1;
                }
            }
            for (lane, legal) in self.legal.iter().enumerate() {
                if stuck >> lane & 1 != 0 {
                    continue;
                }
                match legal.len() {
                    0 => stuck |= 1 << lane,
                    n => self.drawn[lane].push(legal[self.streams[lane].draw(n)]),
                }
            }
        }
        let moving = !stuck;
        for lane in (0..u64::BITS as usize).filter(|&l| moving >> l & 1 != 0) {
            let bit = 1u64 << lane;
            for &m in &self.played[lane] {
                values[net.move_slots()[m as usize] as usize] &= !bit;
            }
            std::mem::swap(&mut self.played[lane], &mut self.drawn[lane]);
            for &m in &self.played[lane] {
                values[net.move_slots()[m as usize] as usize] |= bit;
            }
        }
        moving
    }
}

/// One transition of a [`random_walk`].
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Transition {
    /// A new state: the next one, or the initial state again after a playout
    /// ended (`restart`); the inputs keep the last joint move.
    State { restart: bool },
    /// A new joint move in the same state.
    Moves,
}

/// Plays random playouts from the initial state (a fixed seed, so the same net
/// gives the same walk) for about `gate_evaluations` gate evaluations, between
/// 16 and 400 transitions, evaluating the whole circuit after every new state
/// and every new joint move, and shows each transition to `observe` with the
/// values before and after it (the first state, from nothing, is not shown).
/// Returns the values after the last transition.
pub(crate) fn random_walk(
    net: &CompiledNet,
    gate_evaluations: usize,
    mut observe: impl FnMut(Transition, &[bool], &[bool]),
) -> Vec<bool> {
    let budget = (gate_evaluations / net.slots().max(1)).clamp(16, 400);
    let mut transitions = 0;
    let mut restarting = false;
    let mut rng = Stream::new(0x6163_7469_7669_7479, 0);
    let mut before = vec![false; net.slots()];
    let mut values = vec![false; net.slots()];
    let mut state = net.initial().to_vec();
    let mut joint: Vec<u32> = Vec::new();
    let mut legal = Vec::new();
    let mut first = true;
    while transitions < budget {
        // A new state (with the last joint move still on the inputs).
        for (b, &slot) in net.base_slots().iter().enumerate() {
            values[slot as usize] = bit(&state, b);
        }
        run_steps(net.steps(), &mut values, false, net);
        if !first {
            observe(Transition::State { restart: restarting }, &before, &values);
            transitions += 1;
        }
        first = false;
        before.clone_from(&values);
        let mut stuck = values[net.terminal_slot() as usize];
        let old_joint = std::mem::take(&mut joint);
        for inputs in net.role_moves() {
            legal.clear();
            legal.extend(
                inputs
                    .iter()
                    .filter(|&&m| values[net.legal_slots()[m as usize] as usize]),
            );
            if legal.is_empty() {
                stuck = true;
                break;
            }
            joint.push(legal[rng.draw(legal.len())]);
        }
        restarting = stuck;
        if stuck {
            state.clear();
            state.extend_from_slice(net.initial());
            joint = old_joint;
            continue;
        }
        // The new joint move.
        for &m in &old_joint {
            values[net.move_slots()[m as usize] as usize] = false;
        }
        for &m in &joint {
            values[net.move_slots()[m as usize] as usize] = true;
        }
        run_steps(&net.steps()[net.state_steps()..], &mut values, false, net);
        observe(Transition::Moves, &before, &values);
        transitions += 1;
        before.clone_from(&values);
        pack(&mut state, net.next_slots().len(), |b| {
            values[net.next_slots()[b] as usize]
        });
    }
    values
}

/// What differential evaluations from `before` to `after` cost in the
/// `lanes`: per slot that changes in a lane, its `weight`.
fn work(weight: &[u64], before: &[u64], after: &[u64], lanes: u64) -> u64 {
    let changes = |(b, a): (&u64, &u64)| u64::from(((b ^ a) & lanes).count_ones());
    weight
        .iter()
        .zip(before.iter().zip(after))
        .map(|(w, pair)| w * changes(pair))
        .sum()
}
