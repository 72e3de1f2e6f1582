//! `or`s of moves only (`does` inputs, as "a piece left or entered this
//! cell"): the sweep evaluator does not evaluate them but sets them as a
//! joint move loads (see `skipping::Marks`): those of the moves it replaces
//! become false, then those of the moves it plays true. A few stores where
//! evaluating them reads every input (English checkers: 168 such `or`s over
//! 660 inputs; breakthrough's
//! move part, where they are most of the work, takes a fifth of the
//! instructions it took).

use crate::layout::{CompiledNet, Gate};

/// The `or`s of moves only of a net, by input slot.
#[derive(Debug)]
pub(crate) struct DecodedMoves {
    /// Per source slot (base or input), the `or`s reading it:
    /// `ors[offsets[s]..offsets[s + 1]]` (none for a base).
    offsets: Vec<u32>,
    ors: Vec<u32>,
    /// Per slot, whether it is one of them.
    decoded: Vec<bool>,
}

impl DecodedMoves {
    /// The acyclic `or`s of `net` that are `kept` and read moves only.
    pub(crate) fn new(net: &CompiledNet, kept: &[bool]) -> DecodedMoves {
        let mut is_input = vec![false; net.first_gate() as usize];
        for &slot in net.move_slots() {
            is_input[slot as usize] = true;
        }
        let mut of_input: Vec<Vec<u32>> = vec![Vec::new(); net.first_gate() as usize];
        let mut decoded = vec![false; net.slots()];
        for gate in net.first_gate()..net.slots() as u32 {
            let fanin = net.fanin(gate);
            if net.gates()[gate as usize] == Gate::Or
                && kept[gate as usize]
                && net.cycle_start()[gate as usize] == u32::MAX
                && !fanin.is_empty()
                && fanin.iter().all(|&i| is_input.get(i as usize) == Some(&true))
            {
                decoded[gate as usize] = true;
                for &i in fanin {
                    of_input[i as usize].push(gate);
                }
            }
        }
        let mut offsets = vec![0];
        let mut ors = Vec::new();
        for mut list in of_input {
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

    /// The `or`s that read the input at `slot` (none for a base): they take
    /// its value as a joint move loads, those of the moves it replaces first.
    pub(crate) fn of(&self, slot: u32) -> &[u32] {
        &self.ors[self.offsets[slot as usize] as usize..self.offsets[slot as usize + 1] as usize]
    }
}
