//! `or`s of moves only (`does` inputs, as "a piece left or entered this
//! cell"): the sweep evaluator does not evaluate them but sets them as a
//! joint move loads: those of the moves it replaces become false, then those
//! of the moves it plays true. A few stores where evaluating them reads every
//! input (English checkers: 168 such `or`s over 660 inputs; breakthrough's
//! move part, where they are most of the work, takes a fifth of the
//! instructions it took).

use super::compiled::{CompiledNet, Gate};

/// The `or`s of moves only of a net, by move.
#[derive(Debug)]
pub(crate) struct DecodedMoves {
    /// Per move (input index), its `or`s: `ors[offsets[m]..offsets[m + 1]]`.
    offsets: Vec<u32>,
    ors: Vec<u32>,
    /// Per slot, whether it is one of them.
    decoded: Vec<bool>,
}

impl DecodedMoves {
    /// The acyclic `or`s of `net` that are `kept` and read moves only.
    pub(crate) fn new(net: &CompiledNet, kept: &[bool]) -> DecodedMoves {
        let mut move_of = vec![u32::MAX; net.slots];
        for (m, &slot) in net.input_slots.iter().enumerate() {
            move_of[slot as usize] = m as u32;
        }
        let mut of_move: Vec<Vec<u32>> = vec![Vec::new(); net.input_slots.len()];
        let mut decoded = vec![false; net.slots];
        for gate in net.first_gate..net.slots as u32 {
            let inputs = net.inputs(gate);
            if net.gates[gate as usize] == Gate::Or
                && kept[gate as usize]
                && net.cycle_start[gate as usize] == u32::MAX
                && !inputs.is_empty()
                && inputs.iter().all(|&i| move_of[i as usize] != u32::MAX)
            {
                decoded[gate as usize] = true;
                for &i in inputs {
                    of_move[move_of[i as usize] as usize].push(gate);
                }
            }
        }
        let mut offsets = vec![0];
        let mut ors = Vec::new();
        for mut list in of_move {
            list.dedup();
            ors.extend(list);
            offsets.push(ors.len() as u32);
        }
        DecodedMoves {
            offsets,
            ors,
            decoded,
        }
    }

    /// Whether `slot` is an `or` of moves only.
    pub(crate) fn is_decoded(&self, slot: u32) -> bool {
        self.decoded[slot as usize]
    }

    /// How many `or`s of moves there are.
    #[cfg(test)]
    pub(crate) fn count(&self) -> usize {
        self.decoded.iter().filter(|&&d| d).count()
    }

    /// The `or`s that read move `m`.
    #[inline(always)]
    fn of(&self, m: u32) -> &[u32] {
        &self.ors[self.offsets[m as usize] as usize..self.offsets[m as usize + 1] as usize]
    }

    /// Sets the `or`s of move `m` in `values` (one per slot of the net) to
    /// `played`. Loading a joint move clears those of the moves it replaces,
    /// then sets those of its own, so that an `or` of both ends true.
    #[inline(always)]
    pub(crate) fn set(&self, m: u32, played: bool, values: &mut [bool]) {
        if self.ors.is_empty() {
            return;
        }
        assert!(values.len() >= self.decoded.len(), "values of another net");
        for &or in self.of(m) {
            debug_assert!((or as usize) < values.len());
            // SAFETY: `or` is a slot of the net (`new` took it from its
            // gates), and `values` has one per slot (asserted).
            unsafe { *values.get_unchecked_mut(or as usize) = played };
        }
    }
}
