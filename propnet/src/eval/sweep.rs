//! The sweep evaluator: every gate of the state-only part after each state, every
//! gate of the move part after each joint move, in layer order, one byte per slot.

use super::compiled::{CompiledNet, Gate, Step};
use super::{bit, Evaluator};
use std::sync::Arc;

/// Per-thread evaluation state over a shared [`CompiledNet`].
#[derive(Clone, Debug)]
pub struct Sweep {
    net: Arc<CompiledNet>,
    values: Vec<bool>,
    moves: Vec<u32>,
}

impl Sweep {
    /// A fresh evaluator (all values false).
    pub fn new(net: Arc<CompiledNet>) -> Sweep {
        let values = vec![false; net.slots];
        Sweep {
            net,
            values,
            moves: Vec::new(),
        }
    }

    fn run(&mut self, first: usize, last: usize) {
        let net = Arc::clone(&self.net);
        for step in &net.steps[first..last] {
            match *step {
                Step::Gates(start, end) => {
                    for slot in start..end {
                        self.values[slot as usize] = gate(&net, &self.values, slot);
                    }
                }
                Step::Cycle(start, end) => fixpoint(&net, &mut self.values, start, end),
            }
        }
    }
}

impl Evaluator for Sweep {
    fn load_state(&mut self, state: &[u64]) {
        for (b, &slot) in self.net.base_slots.iter().enumerate() {
            self.values[slot as usize] = bit(state, b);
        }
        self.run(0, self.net.state_steps);
    }

    fn load_moves(&mut self, moves: &[u32]) {
        for &m in &self.moves {
            self.values[self.net.input_slots[m as usize] as usize] = false;
        }
        for &m in moves {
            self.values[self.net.input_slots[m as usize] as usize] = true;
        }
        self.moves.clear();
        self.moves.extend_from_slice(moves);
        self.run(self.net.state_steps, self.net.steps.len());
    }

    #[inline]
    fn value(&self, slot: u32) -> bool {
        self.values[slot as usize]
    }
}

/// The value of gate `slot` from the current values of its inputs.
#[inline]
pub(crate) fn gate(net: &CompiledNet, values: &[bool], slot: u32) -> bool {
    let inputs = net.inputs(slot);
    match net.gates[slot as usize] {
        Gate::And => inputs.iter().all(|&i| values[i as usize]),
        Gate::Or => inputs.iter().any(|&i| values[i as usize]),
        Gate::Not => !values[inputs[0] as usize],
    }
}

/// Evaluates the cyclic component `start..end` to its least fixpoint: from all
/// false, re-evaluate until nothing changes (its cycles carry no negation).
pub(crate) fn fixpoint(net: &CompiledNet, values: &mut [bool], start: u32, end: u32) {
    values[start as usize..end as usize].fill(false);
    loop {
        let mut changed = false;
        for slot in start..end {
            let v = gate(net, values, slot);
            if v != values[slot as usize] {
                values[slot as usize] = v;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
}
