//! The sweep evaluator: every gate of the state-only part after each state, every
//! gate of the move part after each joint move, in layer order, one byte per slot.

use super::compiled::{CompiledNet, Gate};
use super::{bit, run_steps, Evaluator, GateValue};
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
        let net = &*self.net;
        run_steps(&net.steps[first..last], &mut self.values, false, net);
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

/// One value per slot: a gate from its inputs' values.
impl GateValue<bool> for CompiledNet {
    #[inline(always)]
    fn value(&self, values: &[bool], slot: u32) -> bool {
        let inputs = self.inputs(slot);
        match self.gates[slot as usize] {
            Gate::And => inputs.iter().all(|&i| values[i as usize]),
            Gate::Or => inputs.iter().any(|&i| values[i as usize]),
            Gate::Not => !values[inputs[0] as usize],
        }
    }
}
