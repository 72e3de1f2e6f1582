//! The plain evaluation of a compiled net's steps, of any value width (one
//! bool per slot, or a word of lanes), which every evaluator builds on and the
//! profile measures with; and the packed bit sets they read and write.

use super::fixpoint::fixpoint;
use super::net::{CompiledNet, Gate, Step};

/// How a gate's value of width `V` (one bool, or a word of lanes) is computed
/// from the values of its operands. Implementations mark `value` `#[inline(always)]`
/// so that the lanes evaluator's loop compiles as one piece for its vector width.
pub(crate) trait GateValue<V> {
    /// The value of gate `slot` from the current `values`.
    fn value(&self, values: &[V], slot: u32) -> V;

    /// The slots that read `slot`, ascending (what a cyclic component's
    /// [`fixpoint`] re-evaluates when `slot` rises).
    fn readers(&self, slot: u32) -> &[u32];
}

/// Evaluates `steps` over `values` (one value per slot, of any width): each gate
/// once, each cyclic component to its least fixpoint.
#[inline(always)]
pub(crate) fn run_steps<V: Copy + PartialEq>(
    steps: &[Step],
    values: &mut [V],
    all_false: V,
    gate: &impl GateValue<V>,
) {
    for step in steps {
        match *step {
            Step::Gates(start, end) => {
                for slot in start..end {
                    values[slot as usize] = gate.value(values, slot);
                }
            }
            Step::Cycle(start, end) => fixpoint(values, start, end, all_false, gate),
        }
    }
}

/// The layout of a packed legality set: role `r`'s legality takes words
/// `role_words[r]..role_words[r + 1]`, bit `at` for its input at position `at`.
pub(crate) fn role_words(net: &CompiledNet) -> Vec<usize> {
    let mut role_words = vec![0];
    for inputs in net.role_moves() {
        role_words.push(role_words.last().copied().unwrap_or(0) + inputs.len().div_ceil(64));
    }
    role_words
}

/// Packs `bit(i)` for `i` in `0..n` into `out` (bit `i % 64` of word `i / 64`)
/// and zeroes the words after. Each word is built in a register and stored
/// once: or-ing every bit into memory would chain each bit's store to the next
/// bit's load.
#[inline]
pub(crate) fn pack(out: &mut [u64], n: usize, bit: impl Fn(usize) -> bool) {
    for (w, word) in out.iter_mut().enumerate() {
        let bits = (w * 64).min(n)..((w + 1) * 64).min(n);
        *word = bits.fold(0, |acc, i| acc | u64::from(bit(i)) << (i & 63));
    }
}

/// Bit `index` of a packed bit set.
#[inline]
pub(crate) fn bit(words: &[u64], index: usize) -> bool {
    (words[index >> 6] >> (index & 63)) & 1 != 0
}

/// One word of 64 lanes per slot: a gate from its operands' words.
impl GateValue<u64> for CompiledNet {
    #[inline(always)]
    fn value(&self, values: &[u64], slot: u32) -> u64 {
        let fanin = self.fanin(slot);
        match self.gates()[slot as usize] {
            Gate::And => fanin.iter().fold(!0, |v, &i| v & values[i as usize]),
            Gate::Or => fanin.iter().fold(0, |v, &i| v | values[i as usize]),
            Gate::Not => !values[fanin[0] as usize],
        }
    }

    #[inline(always)]
    fn readers(&self, slot: u32) -> &[u32] {
        self.fanout(slot)
    }
}

/// One value per slot: a gate from its operands' values.
impl GateValue<bool> for CompiledNet {
    #[inline(always)]
    fn value(&self, values: &[bool], slot: u32) -> bool {
        let fanin = self.fanin(slot);
        match self.gates()[slot as usize] {
            Gate::And => fanin.iter().all(|&i| values[i as usize]),
            Gate::Or => fanin.iter().any(|&i| values[i as usize]),
            Gate::Not => !values[fanin[0] as usize],
        }
    }

    #[inline(always)]
    fn readers(&self, slot: u32) -> &[u32] {
        self.fanout(slot)
    }
}
