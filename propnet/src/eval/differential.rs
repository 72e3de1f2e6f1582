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

const NOT_IN_CYCLE: u32 = u32::MAX;

/// Per-thread evaluation state over a shared [`CompiledNet`].
#[derive(Clone, Debug)]
pub struct Differential {
    net: Arc<CompiledNet>,
    values: Vec<bool>,
    /// True inputs of each acyclic gate.
    counts: Vec<u32>,
    /// Slots waiting to be re-evaluated (for a cycle: its first slot).
    pending: Vec<u64>,
    pending_count: usize,
    /// The lowest word of `pending` that may be non-zero.
    pending_low: usize,
    /// The bases as last loaded.
    state: Vec<u64>,
    moves: Vec<u32>,
    scratch: Vec<bool>,
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
        let counts = (0..net.slots as u32)
            .map(|s| net.inputs(s).iter().filter(|&&i| values[i as usize]).count() as u32)
            .collect();
        Differential {
            pending: vec![0; net.slots.div_ceil(64)],
            pending_count: 0,
            pending_low: usize::MAX,
            state: vec![0; net.base_slots.len().div_ceil(64)],
            moves: Vec::new(),
            scratch: Vec::new(),
            net,
            values,
            counts,
        }
    }

    #[inline]
    fn mark(&mut self, slot: u32) {
        let (word, bit) = (slot as usize >> 6, 1u64 << (slot & 63));
        if self.pending[word] & bit == 0 {
            self.pending[word] |= bit;
            self.pending_count += 1;
            self.pending_low = self.pending_low.min(word);
        }
    }

    /// Tells the fan-out of `slot` that its value changed.
    #[inline]
    fn changed(&mut self, slot: u32) {
        let net = Arc::clone(&self.net);
        let now = self.values[slot as usize];
        let own_cycle = net.cycle_start[slot as usize];
        for &out in net.outputs(slot) {
            let cycle = net.cycle_start[out as usize];
            if cycle == NOT_IN_CYCLE {
                let count = &mut self.counts[out as usize];
                *count = if now { *count + 1 } else { *count - 1 };
                self.mark(out);
            } else if cycle != own_cycle {
                self.mark(cycle);
            }
        }
    }

    #[inline]
    fn set_source(&mut self, slot: u32, value: bool) {
        if self.values[slot as usize] != value {
            self.values[slot as usize] = value;
            self.changed(slot);
        }
    }

    /// Re-evaluates every pending slot, in slot order.
    fn propagate(&mut self) {
        let net = Arc::clone(&self.net);
        let mut word = self.pending_low;
        while self.pending_count > 0 {
            let bits = self.pending[word];
            if bits == 0 {
                word += 1;
                continue;
            }
            let bit = bits.trailing_zeros();
            self.pending[word] &= !(1u64 << bit);
            self.pending_count -= 1;
            let slot = (word as u32) << 6 | bit;
            if net.cycle_start[slot as usize] == slot {
                self.recompute_cycle(&net, slot);
            } else {
                let inputs = net.fanin_offsets[slot as usize + 1] - net.fanin_offsets[slot as usize];
                let count = self.counts[slot as usize];
                let value = match net.gates[slot as usize] {
                    Gate::And => count == inputs,
                    Gate::Or => count > 0,
                    Gate::Not => count == 0,
                };
                if value != self.values[slot as usize] {
                    self.values[slot as usize] = value;
                    self.changed(slot);
                }
            }
        }
        self.pending_low = usize::MAX;
    }

    fn recompute_cycle(&mut self, net: &CompiledNet, start: u32) {
        let end = (start..net.slots as u32)
            .find(|&s| net.cycle_start[s as usize] != start)
            .unwrap_or(net.slots as u32);
        let mut old = std::mem::take(&mut self.scratch);
        old.clear();
        old.extend_from_slice(&self.values[start as usize..end as usize]);
        fixpoint(net, &mut self.values, start, end);
        for slot in start..end {
            if self.values[slot as usize] != old[(slot - start) as usize] {
                self.changed(slot);
            }
        }
        self.scratch = old;
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
                    let value = !self.values[slot as usize];
                    self.set_source(slot, value);
                }
            }
            self.state[word] = new;
        }
        self.propagate();
    }

    fn load_moves(&mut self, moves: &[u32]) {
        let net = Arc::clone(&self.net);
        for i in 0..self.moves.len() {
            let m = self.moves[i];
            if !moves.contains(&m) {
                self.set_source(net.input_slots[m as usize], false);
            }
        }
        for &m in moves {
            self.set_source(net.input_slots[m as usize], true);
        }
        self.moves.clear();
        self.moves.extend_from_slice(moves);
        self.propagate();
    }

    #[inline]
    fn value(&self, slot: u32) -> bool {
        self.values[slot as usize]
    }
}
