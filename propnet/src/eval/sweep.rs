//! The sweep evaluator: full evaluation in layer order over bit-packed values.

use super::compiled::{CompiledNet, Gate, Step};
use bitvec::vec::BitVec;
use std::sync::Arc;

/// Per-thread evaluation state over a shared [`CompiledNet`].
#[derive(Clone, Debug)]
pub struct Sweep {
    net: Arc<CompiledNet>,
    values: BitVec<u64>,
}

impl Sweep {
    /// A fresh evaluator (all values false).
    pub fn new(net: Arc<CompiledNet>) -> Sweep {
        let values = BitVec::repeat(false, net.slots);
        Sweep { net, values }
    }

    /// The compiled circuit.
    pub fn net(&self) -> &CompiledNet {
        &self.net
    }

    /// The value of a slot after the last evaluation.
    #[inline]
    pub fn value(&self, slot: u32) -> bool {
        get(self.values.as_raw_slice(), slot)
    }

    #[inline]
    fn set(&mut self, slot: u32, value: bool) {
        let words = self.values.as_raw_mut_slice();
        let (word, bit) = (slot as usize >> 6, slot & 63);
        words[word] = (words[word] & !(1 << bit)) | ((value as u64) << bit);
    }

    /// Sets the bases to `state` and evaluates everything that depends only on it.
    pub fn load_state(&mut self, state: &BitVec<u64>) {
        let net = Arc::clone(&self.net);
        for (b, &slot) in net.base_slots.iter().enumerate() {
            self.set(slot, state[b]);
        }
        for step in &net.steps[..net.state_steps] {
            self.run(&net, step);
        }
    }

    /// Sets the inputs to the moves in `moves` (input indexes) and evaluates the
    /// part that depends on moves. Call after [`Sweep::load_state`].
    pub fn load_moves(&mut self, moves: &[u32]) {
        let net = Arc::clone(&self.net);
        for &slot in &net.input_slots {
            self.set(slot, false);
        }
        for &m in moves {
            self.set(net.input_slots[m as usize], true);
        }
        for step in &net.steps[net.state_steps..] {
            self.run(&net, step);
        }
    }

    #[inline]
    fn gate(&self, net: &CompiledNet, slot: u32) -> bool {
        let s = slot as usize;
        let inputs = &net.fanin[net.offsets[s] as usize..net.offsets[s + 1] as usize];
        let words = self.values.as_raw_slice();
        match net.gates[s] {
            Gate::And => inputs.iter().all(|&i| get(words, i)),
            Gate::Or => inputs.iter().any(|&i| get(words, i)),
            Gate::Not => !get(words, inputs[0]),
        }
    }

    fn run(&mut self, net: &CompiledNet, step: &Step) {
        match *step {
            Step::Gate(slot) => {
                let v = self.gate(net, slot);
                self.set(slot, v);
            }
            Step::Cycle(start, end) => {
                for slot in start..end {
                    self.set(slot, false);
                }
                loop {
                    let mut changed = false;
                    for slot in start..end {
                        let v = self.gate(net, slot);
                        if v != self.value(slot) {
                            self.set(slot, v);
                            changed = true;
                        }
                    }
                    if !changed {
                        break;
                    }
                }
            }
        }
    }
}

#[inline]
fn get(words: &[u64], slot: u32) -> bool {
    (words[slot as usize >> 6] >> (slot & 63)) & 1 != 0
}
