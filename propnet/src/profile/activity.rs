//! How often things change along random playouts: the measurements behind the
//! differential evaluator's choice of guards (and the walk that the sweep's
//! choice of guarded gates measures along too). A short run of random playouts
//! evaluates the whole circuit after every state and every joint move, as the
//! differential evaluator sees them, and counts per slot how many of these
//! transitions changed its value, and per operand of each `and` how the `and`'s
//! other operands behaved around it.

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

    /// Measures `net` along random playouts (a fixed seed, so the same net gives
    /// the same counts) for about `gate_evaluations` gate evaluations, between
    /// 16 and 400 transitions, for an evaluator that keeps the slots that are
    /// `kept` up to date (only those count in [`Activity::measured`] and
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
        let (mut restarts, mut restart_work) = (0u64, 0u64);
        let last = random_walk(net, gate_evaluations, |transition, before, after| {
            activity.count(net, &measured, before, after);
            if transition == (Transition::State { restart: true }) {
                restarts += 1;
                restart_work += work(net, kept, before, after);
            }
        });
        if restarts == 0 {
            // No playout ended: return from where the measurement stopped.
            let mut values = last.clone();
            for (b, &slot) in net.base_slots().iter().enumerate() {
                values[slot as usize] = bit(net.initial(), b);
            }
            run_steps(net.steps(), &mut values, false, net);
            restarts = 1;
            restart_work = work(net, kept, &last, &values);
        }
        activity.restart_work = restart_work / restarts;
        activity.measured = measured;
        activity
    }

    /// Counts one transition from `before` to `after`.
    fn count(&mut self, net: &CompiledNet, measured: &[u32], before: &[bool], after: &[bool]) {
        self.transitions += 1;
        for (flips, (b, a)) in self.flips.iter_mut().zip(before.iter().zip(after)) {
            *flips += u32::from(b != a);
        }
        for &and in measured {
            let fanin = net.fanin(and);
            let full = fanin.len() - 1;
            let true_before = fanin.iter().filter(|&&i| before[i as usize]).count();
            let true_after = fanin.iter().filter(|&&i| after[i as usize]).count();
            let first_edge = net.fanin_offsets()[and as usize] as usize;
            for (k, &i) in fanin.iter().enumerate() {
                let (b, a) = (before[i as usize], after[i as usize]);
                let others_before = true_before - usize::from(b) == full;
                let others_after = true_after - usize::from(a) == full;
                self.others_changed[first_edge + k] += u32::from(others_before != others_after);
                self.flips_while_others[first_edge + k] +=
                    u32::from(b != a && (others_before || others_after));
            }
        }
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

/// What a differential evaluation from `before` to `after` costs: the fan-out
/// edges to `kept` slots of the kept slots that change, plus one per slot.
fn work(net: &CompiledNet, kept: &[bool], before: &[bool], after: &[bool]) -> u64 {
    (0..net.slots() as u32)
        .filter(|&s| kept[s as usize] && before[s as usize] != after[s as usize])
        .map(|s| net.fanout(s).iter().filter(|&&o| kept[o as usize]).count() as u64 + 1)
        .sum()
}
