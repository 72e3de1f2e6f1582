//! The differential evaluator: from one state (or joint move) to the next, only the
//! gates whose inputs changed are re-evaluated. Each acyclic gate keeps a count of
//! its true inputs, so re-evaluating it costs O(1); changed gates are processed in
//! slot (topological) order from a bit set of pending slots, so each is evaluated
//! at most once per load. A cyclic component whose inputs changed is re-evaluated
//! to its least fixpoint as a whole.

use super::compiled::{CompiledNet, Gate, Step};
use super::sweep::{fixpoint, gate};
use super::Evaluator;
use std::sync::Arc;

/// Marks a fan-out target that is the first slot of a cyclic component.
const CYCLE: u32 = 1 << 31;

/// Per-gate counter state: the value is `(count >= threshold) != inverted`.
#[derive(Clone, Copy, Debug, Default)]
struct Counter {
    count: u32,
    threshold: u32,
    inverted: bool,
    value: bool,
    /// Whether some base's next value is this slot's value.
    is_next: bool,
    /// Whether this is the first slot of a cyclic component.
    cycle_head: bool,
    /// Whether some input's legality is this slot's value.
    is_legal: bool,
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
    counters: Vec<Counter>,
    /// Fan-out of each slot as re-evaluation targets: acyclic gates by slot,
    /// cyclic components by first slot with [`CYCLE`] set (none within its own).
    target_offsets: Arc<Vec<u32>>,
    targets: Arc<Vec<u32>>,
    pending: Pending,
    /// The bases as last loaded.
    state: Vec<u64>,
    /// The next state, kept up to date as next values change.
    next: Vec<u64>,
    /// The bases whose next value each slot is: `next_bases[next_offsets[s]..next_offsets[s + 1]]`.
    next_offsets: Arc<Vec<u32>>,
    next_bases: Arc<Vec<u32>>,
    /// Per role, one bit per input of the role (in `role_inputs` order): legal now.
    legal: Vec<Vec<u64>>,
    /// The (role, position in the role's inputs) whose legality each slot is:
    /// `legal_of[legal_offsets[s]..legal_offsets[s + 1]]`.
    legal_offsets: Arc<Vec<u32>>,
    legal_of: Arc<Vec<(u32, u32)>>,
    moves: Vec<u32>,
    values_scratch: Vec<bool>,
}

impl Differential {
    /// An evaluator holding the all-false state and no moves.
    pub fn new(net: Arc<CompiledNet>) -> Differential {
        let mut values = vec![false; net.slots];
        for step in &net.steps {
            match *step {
                Step::Gates(start, end) => {
                    for slot in start..end {
                        values[slot as usize] = gate(&net, &values, slot);
                    }
                }
                Step::Cycle(start, end) => fixpoint(&net, &mut values, start, end),
            }
        }
        let mut next_of: Vec<Vec<u32>> = vec![Vec::new(); net.slots];
        for (b, &slot) in net.next_slots.iter().enumerate() {
            next_of[slot as usize].push(b as u32);
        }
        let mut next = vec![0u64; net.base_slots.len().div_ceil(64)];
        for (b, &slot) in net.next_slots.iter().enumerate() {
            next[b >> 6] |= (values[slot as usize] as u64) << (b & 63);
        }
        let mut legal_of: Vec<Vec<(u32, u32)>> = vec![Vec::new(); net.slots];
        let mut legal: Vec<Vec<u64>> = Vec::with_capacity(net.role_inputs.len());
        for (role, inputs) in net.role_inputs.iter().enumerate() {
            let mut bits = vec![0u64; inputs.len().div_ceil(64)];
            for (at, &m) in inputs.iter().enumerate() {
                let slot = net.legal_slots[m as usize];
                legal_of[slot as usize].push((role as u32, at as u32));
                bits[at >> 6] |= (values[slot as usize] as u64) << (at & 63);
            }
            legal.push(bits);
        }
        let counters = (0..net.slots as u32)
            .map(|s| {
                let inputs = net.inputs(s);
                let (threshold, inverted) = match net.gates[s as usize] {
                    Gate::And => (inputs.len() as u32, false),
                    Gate::Or => (1, false),
                    Gate::Not => (1, true),
                };
                Counter {
                    count: inputs.iter().filter(|&&i| values[i as usize]).count() as u32,
                    threshold,
                    inverted,
                    value: values[s as usize],
                    is_next: !next_of[s as usize].is_empty(),
                    cycle_head: net.cycle_start[s as usize] == s,
                    is_legal: !legal_of[s as usize].is_empty(),
                }
            })
            .collect();
        let mut target_offsets = Vec::with_capacity(net.slots + 1);
        let mut targets = Vec::with_capacity(net.fanout.len());
        target_offsets.push(0);
        for slot in 0..net.slots as u32 {
            let own = net.cycle_start[slot as usize];
            for &out in net.outputs(slot) {
                match net.cycle_start[out as usize] {
                    u32::MAX => targets.push(out),
                    cycle if cycle != own => targets.push(cycle | CYCLE),
                    _ => {}
                }
            }
            target_offsets.push(targets.len() as u32);
        }
        let mut next_offsets = vec![0u32];
        for bases in &next_of {
            next_offsets.push(next_offsets.last().copied().unwrap_or(0) + bases.len() as u32);
        }
        let mut legal_offsets = vec![0u32];
        for of in &legal_of {
            legal_offsets.push(legal_offsets.last().copied().unwrap_or(0) + of.len() as u32);
        }
        Differential {
            legal,
            legal_offsets: Arc::new(legal_offsets),
            legal_of: Arc::new(legal_of.concat()),
            next,
            next_offsets: Arc::new(next_offsets),
            next_bases: Arc::new(next_of.concat()),
            pending: Pending {
                words: vec![0; net.slots.div_ceil(64)],
                count: 0,
                low: usize::MAX,
            },
            state: vec![0; net.base_slots.len().div_ceil(64)],
            moves: Vec::new(),
            values_scratch: Vec::new(),
            target_offsets: Arc::new(target_offsets),
            targets: Arc::new(targets),
            net,
            counters,
        }
    }

    /// Tells the fan-out of `slot` that its value changed to `now`.
    #[inline]
    fn changed(&mut self, slot: u32, now: bool) {
        if self.counters[slot as usize].is_legal {
            let (first, last) = (
                self.legal_offsets[slot as usize],
                self.legal_offsets[slot as usize + 1],
            );
            for &(role, at) in &self.legal_of[first as usize..last as usize] {
                self.legal[role as usize][at as usize >> 6] ^= 1 << (at & 63);
            }
        }
        if self.counters[slot as usize].is_next {
            let (first, last) = (
                self.next_offsets[slot as usize],
                self.next_offsets[slot as usize + 1],
            );
            for &b in &self.next_bases[first as usize..last as usize] {
                self.next[b as usize >> 6] ^= 1 << (b & 63);
            }
        }
        let start = self.target_offsets[slot as usize] as usize;
        let end = self.target_offsets[slot as usize + 1] as usize;
        let delta = if now { 1 } else { u32::MAX };
        for &target in &self.targets[start..end] {
            if target & CYCLE != 0 {
                self.pending.mark(target & !CYCLE);
                continue;
            }
            // Only a gate whose value would change needs re-evaluation: its later
            // input changes mark it again if they make it differ.
            let c = &mut self.counters[target as usize];
            c.count = c.count.wrapping_add(delta);
            if ((c.count >= c.threshold) != c.inverted) != c.value {
                self.pending.mark(target);
            }
        }
    }

    #[inline]
    fn set_source(&mut self, slot: u32, value: bool) {
        if self.counters[slot as usize].value != value {
            self.counters[slot as usize].value = value;
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
            let c = &mut self.counters[slot as usize];
            if c.cycle_head {
                self.recompute_cycle(slot);
            } else {
                let value = (c.count >= c.threshold) != c.inverted;
                if value != c.value {
                    c.value = value;
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
        values.extend(self.counters.iter().map(|c| c.value));
        fixpoint(&net, &mut values, start, end);
        for slot in start..end {
            let now = values[slot as usize];
            if self.counters[slot as usize].value != now {
                self.counters[slot as usize].value = now;
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
                    let value = !self.counters[slot as usize].value;
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
        self.counters[slot as usize].value
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
