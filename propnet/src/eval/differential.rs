//! The differential evaluator: from one state (or joint move) to the next, only the
//! gates whose inputs changed are re-evaluated. Each acyclic gate keeps a count of
//! its true inputs, so re-evaluating it costs O(1); changed gates are processed in
//! slot (topological) order from a bit set of pending slots, so each is evaluated
//! at most once per load. A cyclic component whose inputs changed is re-evaluated
//! to its least fixpoint as a whole.
//!
//! Guards: an input read by many `and`s (whose turn it is, typically, read by every
//! legal move of a role) would cost a counter update in each of them whenever it
//! changes. Such an `and` instead counts only its other inputs, and the guard keeps
//! the list of its `and`s whose other inputs are all true (the only ones its change
//! can switch), so a change of the guard visits just those.

use super::compiled::{CompiledNet, Gate};
use super::{fixpoint, run_steps, Evaluator};
use std::sync::Arc;

/// Marks a fan-out target that is the first slot of a cyclic component.
const CYCLE: u32 = 1 << 31;
/// No guard, not a guard, not in a list.
const NONE: u32 = u32::MAX;
/// Fewest `and`s an input must feed to guard them.
const GUARD_FANOUT: usize = 24;

/// Per-gate counter state, eight bytes so that many fit a cache line. Without a
/// guard the value is `(level >= 0) != inverted`; a guarded `and` counts only its
/// other inputs and is `level >= 0` and its guard.
#[derive(Clone, Copy, Debug)]
struct Counter {
    /// True inputs counted minus the number needed (all for an `and`, one for an
    /// `or` or `not`): the gate's inputs are enough when this is at least 0.
    level: i32,
    /// [`INVERTED`], [`VALUE`], [`WATCHED`], [`CYCLE_HEAD`], [`GUARDED`].
    flags: u8,
}

/// A `not`: the value is the opposite of `level >= 0`.
const INVERTED: u8 = 1;
/// The slot's current value.
const VALUE: u8 = 2;
/// Some base's next value or some input's legality is this slot's value.
const WATCHED: u8 = 4;
/// The first slot of a cyclic component.
const CYCLE_HEAD: u8 = 8;
/// A guarded `and` (its guard is in [`Plan::guard_of`]).
const GUARDED: u8 = 16;

impl Counter {
    #[inline(always)]
    fn has(self, flag: u8) -> bool {
        self.flags & flag != 0
    }

    #[inline(always)]
    fn value(self) -> bool {
        self.has(VALUE)
    }

    #[inline(always)]
    fn set_value(&mut self, value: bool) {
        self.flags = (self.flags & !VALUE) | if value { VALUE } else { 0 };
    }
}

/// What every evaluator of one net shares: fan-outs as re-evaluation targets,
/// guards, and where next values and legality are read.
#[derive(Debug)]
struct Plan {
    /// Fan-out of each slot: acyclic gates by slot (guarded `and`s left out of
    /// their guard's), cyclic components by first slot with [`CYCLE`] set (none
    /// within its own). `targets[target_offsets[s]..target_offsets[s + 1]]`.
    target_offsets: Vec<u32>,
    targets: Vec<u32>,
    /// The guard of each slot's `and`, or [`NONE`].
    guard_of: Vec<u32>,
    /// The index of each guard's ready list, or [`NONE`].
    guard_index: Vec<u32>,
    guards: usize,
    /// The bases whose next value each slot is: `next_bases[next_offsets[s]..next_offsets[s + 1]]`.
    next_offsets: Vec<u32>,
    next_bases: Vec<u32>,
    /// The (role, position in the role's inputs) whose legality each slot is.
    legal_offsets: Vec<u32>,
    legal_of: Vec<(u32, u32)>,
}

impl Plan {
    fn new(net: &CompiledNet) -> Plan {
        let fanout = |s: u32| net.outputs(s).len();
        let mut guard_of = vec![NONE; net.slots];
        for slot in net.first_gate..net.slots as u32 {
            let inputs = net.inputs(slot);
            if net.gates[slot as usize] != Gate::And
                || inputs.len() < 2
                || net.cycle_start[slot as usize] != NONE
            {
                continue;
            }
            let guard = *inputs
                .iter()
                .max_by_key(|&&i| (fanout(i), std::cmp::Reverse(i)))
                .expect("inputs");
            if fanout(guard) >= GUARD_FANOUT && inputs.iter().filter(|&&i| i == guard).count() == 1 {
                guard_of[slot as usize] = guard;
            }
        }
        let mut guard_index = vec![NONE; net.slots];
        let mut guards = 0;
        for &g in &guard_of {
            if g != NONE && guard_index[g as usize] == NONE {
                guard_index[g as usize] = guards as u32;
                guards += 1;
            }
        }
        let mut target_offsets = Vec::with_capacity(net.slots + 1);
        let mut targets = Vec::with_capacity(net.fanout.len());
        target_offsets.push(0);
        for slot in 0..net.slots as u32 {
            let own = net.cycle_start[slot as usize];
            for &out in net.outputs(slot) {
                match net.cycle_start[out as usize] {
                    NONE if guard_of[out as usize] == slot => {}
                    NONE => targets.push(out),
                    cycle if cycle != own => targets.push(cycle | CYCLE),
                    _ => {}
                }
            }
            target_offsets.push(targets.len() as u32);
        }
        let mut next_of: Vec<Vec<u32>> = vec![Vec::new(); net.slots];
        for (b, &slot) in net.next_slots.iter().enumerate() {
            next_of[slot as usize].push(b as u32);
        }
        let mut legal_of: Vec<Vec<(u32, u32)>> = vec![Vec::new(); net.slots];
        for (role, inputs) in net.role_inputs.iter().enumerate() {
            for (at, &m) in inputs.iter().enumerate() {
                legal_of[net.legal_slots[m as usize] as usize].push((role as u32, at as u32));
            }
        }
        let (next_offsets, next_bases) = flatten(next_of);
        let (legal_offsets, legal_of) = flatten(legal_of);
        Plan {
            target_offsets,
            targets,
            guard_of,
            guard_index,
            guards,
            next_offsets,
            next_bases,
            legal_offsets,
            legal_of,
        }
    }
}

/// The value of acyclic gate `slot` from its counter (and guard).
#[inline]
fn derived(plan: &Plan, counters: &[Counter], slot: u32) -> bool {
    let c = counters[slot as usize];
    let full = c.level >= 0;
    if c.has(GUARDED) {
        full && counters[plan.guard_of[slot as usize] as usize].value()
    } else {
        full != c.has(INVERTED)
    }
}

/// Adds a guarded `and` to its guard's ready list, or removes it.
fn toggle_ready(plan: &Plan, ready: &mut [Vec<u32>], ready_at: &mut [u32], and: u32) {
    let list = &mut ready[plan.guard_index[plan.guard_of[and as usize] as usize] as usize];
    match ready_at[and as usize] {
        NONE => {
            ready_at[and as usize] = list.len() as u32;
            list.push(and);
        }
        at => {
            let last = list.pop().expect("a listed and");
            if last != and {
                list[at as usize] = last;
                ready_at[last as usize] = at;
            }
            ready_at[and as usize] = NONE;
        }
    }
}

/// Lists as offsets and one contiguous vector.
fn flatten<T: Copy>(lists: Vec<Vec<T>>) -> (Vec<u32>, Vec<T>) {
    let mut offsets = Vec::with_capacity(lists.len() + 1);
    offsets.push(0);
    let mut flat = Vec::new();
    for list in lists {
        flat.extend(list);
        offsets.push(flat.len() as u32);
    }
    (offsets, flat)
}

/// Slots waiting to be re-evaluated (for a cycle: its first slot), as a bit set.
#[derive(Clone, Debug)]
struct Pending {
    words: Vec<u64>,
    count: usize,
    /// The lowest word that may be non-zero.
    low: usize,
}

impl Pending {
    #[inline]
    fn mark(&mut self, slot: u32) {
        let (word, bit) = (slot as usize >> 6, 1u64 << (slot & 63));
        if self.words[word] & bit == 0 {
            self.words[word] |= bit;
            self.count += 1;
            self.low = self.low.min(word);
        }
    }
}

/// Per-thread evaluation state over a shared [`CompiledNet`].
#[derive(Clone, Debug)]
pub struct Differential {
    net: Arc<CompiledNet>,
    plan: Arc<Plan>,
    counters: Vec<Counter>,
    /// Per guard: its `and`s whose other inputs are all true.
    ready: Vec<Vec<u32>>,
    /// Position of each guarded `and` in its guard's ready list, or [`NONE`].
    ready_at: Vec<u32>,
    pending: Pending,
    /// The bases as last loaded.
    state: Vec<u64>,
    /// The next state, kept up to date as next values change.
    next: Vec<u64>,
    /// Per role, one bit per input of the role (in `role_inputs` order): legal now.
    legal: Vec<Vec<u64>>,
    moves: Vec<u32>,
    values_scratch: Vec<bool>,
}

impl Differential {
    /// An evaluator holding the all-false state and no moves.
    pub fn new(net: Arc<CompiledNet>) -> Differential {
        let plan = Plan::new(&net);
        let mut values = vec![false; net.slots];
        run_steps(&net.steps, &mut values, false, &*net);
        let mut next = vec![0u64; net.base_slots.len().div_ceil(64)];
        for (b, &slot) in net.next_slots.iter().enumerate() {
            next[b >> 6] |= (values[slot as usize] as u64) << (b & 63);
        }
        let legal = net
            .role_inputs
            .iter()
            .map(|inputs| {
                let mut bits = vec![0u64; inputs.len().div_ceil(64)];
                for (at, &m) in inputs.iter().enumerate() {
                    bits[at >> 6] |= (values[net.legal_slots[m as usize] as usize] as u64) << (at & 63);
                }
                bits
            })
            .collect();
        let mut ready = vec![Vec::new(); plan.guards];
        let mut ready_at = vec![NONE; net.slots];
        let counters = (0..net.slots as u32)
            .map(|s| {
                let inputs = net.inputs(s);
                let guard = plan.guard_of[s as usize];
                let (threshold, inverted) = match net.gates[s as usize] {
                    Gate::And if guard != NONE => (inputs.len() as u32 - 1, false),
                    Gate::And => (inputs.len() as u32, false),
                    Gate::Or => (1, false),
                    Gate::Not => (1, true),
                };
                let count = inputs
                    .iter()
                    .filter(|&&i| i != guard && values[i as usize])
                    .count() as u32;
                if guard != NONE && count >= threshold {
                    let list = &mut ready[plan.guard_index[guard as usize] as usize];
                    ready_at[s as usize] = list.len() as u32;
                    list.push(s);
                }
                let watched = plan.next_offsets[s as usize] != plan.next_offsets[s as usize + 1]
                    || plan.legal_offsets[s as usize] != plan.legal_offsets[s as usize + 1];
                let flags = [
                    (inverted, INVERTED),
                    (values[s as usize], VALUE),
                    (watched, WATCHED),
                    (net.cycle_start[s as usize] == s, CYCLE_HEAD),
                    (guard != NONE, GUARDED),
                ];
                Counter {
                    level: count as i32 - threshold as i32,
                    flags: flags
                        .iter()
                        .filter(|(on, _)| *on)
                        .fold(0, |f, (_, flag)| f | flag),
                }
            })
            .collect();
        Differential {
            pending: Pending {
                words: vec![0; net.slots.div_ceil(64)],
                count: 0,
                low: usize::MAX,
            },
            state: vec![0; net.base_slots.len().div_ceil(64)],
            moves: Vec::new(),
            values_scratch: Vec::new(),
            plan: Arc::new(plan),
            net,
            counters,
            ready,
            ready_at,
            next,
            legal,
        }
    }

    /// The value of acyclic gate `slot` from its counter (and guard).
    #[inline]
    fn derived(&self, slot: u32) -> bool {
        derived(&self.plan, &self.counters, slot)
    }

    /// Tells the fan-out of `slot` that its value changed to `now`.
    #[inline]
    fn changed(&mut self, slot: u32, now: bool) {
        // Field by field, so the shared plan is read without touching its reference count.
        let Differential {
            plan,
            counters,
            ready,
            ready_at,
            pending,
            next,
            legal,
            ..
        } = self;
        let plan: &Plan = plan;
        let s = slot as usize;
        if counters[s].has(WATCHED) {
            for &(role, at) in
                &plan.legal_of[plan.legal_offsets[s] as usize..plan.legal_offsets[s + 1] as usize]
            {
                legal[role as usize][at as usize >> 6] ^= 1 << (at & 63);
            }
            for &b in &plan.next_bases[plan.next_offsets[s] as usize..plan.next_offsets[s + 1] as usize] {
                next[b as usize >> 6] ^= 1 << (b & 63);
            }
        }
        let delta = if now { 1 } else { -1 };
        for &target in &plan.targets[plan.target_offsets[s] as usize..plan.target_offsets[s + 1] as usize] {
            if target & CYCLE != 0 {
                pending.mark(target & !CYCLE);
                continue;
            }
            let c = &mut counters[target as usize];
            let was_full = c.level >= 0;
            c.level += delta;
            if c.has(GUARDED) && was_full != (c.level >= 0) {
                toggle_ready(plan, ready, ready_at, target);
            }
            // Only a gate whose value would change needs re-evaluation: its later
            // input changes mark it again if they make it differ.
            if derived(plan, counters, target) != counters[target as usize].value() {
                pending.mark(target);
            }
        }
        let guard = plan.guard_index[s];
        if guard != NONE {
            for &and in &ready[guard as usize] {
                if counters[and as usize].value() != now {
                    pending.mark(and);
                }
            }
        }
    }

    #[inline]
    fn set_source(&mut self, slot: u32, value: bool) {
        if self.counters[slot as usize].value() != value {
            self.counters[slot as usize].set_value(value);
            self.changed(slot, value);
        }
    }

    /// Re-evaluates every pending slot, in slot order.
    fn propagate(&mut self) {
        let mut word = self.pending.low;
        while self.pending.count > 0 {
            let bits = self.pending.words[word];
            if bits == 0 {
                word += 1;
                continue;
            }
            let bit = bits.trailing_zeros();
            self.pending.words[word] &= !(1u64 << bit);
            self.pending.count -= 1;
            let slot = (word as u32) << 6 | bit;
            if self.counters[slot as usize].has(CYCLE_HEAD) {
                self.recompute_cycle(slot);
            } else {
                let value = self.derived(slot);
                if value != self.counters[slot as usize].value() {
                    self.counters[slot as usize].set_value(value);
                    self.changed(slot, value);
                }
            }
        }
        self.pending.low = usize::MAX;
    }

    fn recompute_cycle(&mut self, start: u32) {
        let net = Arc::clone(&self.net);
        let end = (start..net.slots as u32)
            .find(|&s| net.cycle_start[s as usize] != start)
            .unwrap_or(net.slots as u32);
        // The fixpoint reads the values of the component's inputs and members.
        let mut values = std::mem::take(&mut self.values_scratch);
        values.clear();
        values.extend(self.counters.iter().map(|c| c.value()));
        fixpoint(&mut values, start, end, false, &*net);
        for slot in start..end {
            let now = values[slot as usize];
            if self.counters[slot as usize].value() != now {
                self.counters[slot as usize].set_value(now);
                self.changed(slot, now);
            }
        }
        self.values_scratch = values;
    }
}

impl Evaluator for Differential {
    fn load_state(&mut self, state: &[u64]) {
        let bases = self.net.base_slots.len();
        let words = self.state.len();
        for (word, &new) in state[..words].iter().enumerate() {
            let mut diff = self.state[word] ^ new;
            while diff != 0 {
                let b = word * 64 + diff.trailing_zeros() as usize;
                diff &= diff - 1;
                if b < bases {
                    let slot = self.net.base_slots[b];
                    let value = !self.counters[slot as usize].value();
                    self.set_source(slot, value);
                }
            }
            self.state[word] = new;
        }
        self.propagate();
    }

    fn load_moves(&mut self, moves: &[u32]) {
        for i in 0..self.moves.len() {
            let m = self.moves[i];
            if !moves.contains(&m) {
                self.set_source(self.net.input_slots[m as usize], false);
            }
        }
        for &m in moves {
            self.set_source(self.net.input_slots[m as usize], true);
        }
        self.moves.clear();
        self.moves.extend_from_slice(moves);
        self.propagate();
    }

    #[inline]
    fn value(&self, slot: u32) -> bool {
        self.counters[slot as usize].value()
    }

    fn legal_inputs(&self, net: &CompiledNet, role: usize, out: &mut Vec<u32>) {
        out.clear();
        let inputs = &net.role_inputs[role];
        for (w, &word) in self.legal[role].iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                out.push(inputs[w * 64 + bits.trailing_zeros() as usize]);
                bits &= bits - 1;
            }
        }
    }

    fn next_state(&self, _net: &CompiledNet, out: &mut [u64]) {
        out.copy_from_slice(&self.next);
    }
}
