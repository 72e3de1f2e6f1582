//! The differential evaluator's move part by the cones of the moves played
//! (the `cones` module), where that costs less than propagating each joint
//! move through counters and back: the gates that depend on moves then keep
//! no counters; the state part stores, as they change, the values that the
//! cones read in a byte each (a base also in the bytes of the gates whose
//! baseline copies it), and a joint move runs the cones of its inputs over
//! those bytes, which pack the next state.

use super::cones::{is_input, Cones};
use super::decoded::DecodedMoves;
use super::sweep::{located, outputs};
use crate::jit::Layout;
use crate::layout::run_steps;
use crate::layout::CompiledNet;
use crate::profile::activity::Activity;
use crate::profile::costs::{EVALUATION_UPDATES, UPDATE_VALUES};

/// No next bit.
const NO_INDEX: u32 = u32::MAX;

/// The move part of a net as cones over bytes kept by the differential evaluator.
#[derive(Debug)]
pub(crate) struct MoveCones {
    cones: Cones,
    /// Per slot, whether it is a kept gate of the move part (no counter).
    moved: Vec<bool>,
    /// Per slot, the bit of the next state it is, if it is one ([`NO_INDEX`] if not).
    next_bit: Vec<u32>,
    /// Per slot, the bytes a change of its value is stored in.
    bytes_of: Vec<Vec<u32>>,
    /// How many bytes the cones address.
    bytes: usize,
    /// Per input, the bytes set while it is played, if the cones read any.
    move_bytes: Option<Vec<Vec<u32>>>,
}

impl MoveCones {
    /// The move part of `net` (its `kept` gates) by cones, if they cost less
    /// than the counter updates `activity` says a joint move takes through it.
    pub(crate) fn new(net: &CompiledNet, kept: &[bool], activity: &Activity) -> Option<MoveCones> {
        let in_moves = net.in_move_part();
        let moved: Vec<bool> = (0..net.slots())
            .map(|s| s >= net.first_gate() as usize && in_moves[s] && kept[s])
            .collect();
        if !moved.iter().any(|&m| m) || activity.transitions < 2 {
            return None;
        }
        // Per slot, whether the cones read its value: a kept slot of the
        // state part read by the move part, or a next value.
        let mut read = vec![false; net.slots()];
        for gate in (0..net.slots()).filter(|&g| moved[g]) {
            for &i in net.fanin(gate as u32) {
                read[i as usize] |= kept[i as usize] && !moved[i as usize] && !is_input(net, i);
            }
        }
        for &slot in net.next_slots() {
            read[slot as usize] |= !moved[slot as usize];
        }
        // Counter updates per node through the move part (a node is two
        // transitions: a state and a joint move), and bytes stored.
        let nodes = f64::from(activity.transitions) / 2.0;
        let updates: f64 = (0..net.slots())
            .map(|s| {
                let into_moves = net
                    .fanout(s as u32)
                    .iter()
                    .filter(|&&o| moved[o as usize])
                    .count() as f64;
                let evaluation = if moved[s] { EVALUATION_UPDATES } else { 0.0 };
                f64::from(activity.flips[s]) * (into_moves + evaluation)
            })
            .sum();
        let stores: f64 = (0..net.slots())
            .filter(|&s| read[s])
            .map(|s| f64::from(activity.flips[s]))
            .sum();
        let most_cost = (updates * UPDATE_VALUES - stores) / nodes;
        let decoded = DecodedMoves::new(net, kept);
        let next_words: Vec<Vec<u32>> = net.next_slots().chunks(64).map(<[u32]>::to_vec).collect();
        let located = located(net, &decoded, [(net.slots(), &next_words)]);
        let bytes = net.slots() + 64 * next_words.len();
        let layout = Layout {
            located: &located,
            pack_area: net.slots(),
            first_flag: bytes,
        };
        let cones = Cones::new(net, kept, &decoded, &outputs(net), layout, &next_words, most_cost)?;
        // The bytes of a move played: its input's and its `or`s of moves'
        // (those where roles' moves meet, of simultaneous moves).
        let move_bytes = cones.reads_moves().then(|| {
            net.move_slots()
                .iter()
                .map(|&slot| {
                    std::iter::once(slot)
                        .chain(decoded.of(slot).iter().copied())
                        .collect()
                })
                .collect()
        });
        let bytes_of = (0..net.slots())
            .map(|s| {
                let own = read[s].then_some(located[s]);
                let copies: &[u32] = if s < net.base_slots().len() {
                    cones.copies_of(s as u32)
                } else {
                    &[]
                };
                own.into_iter().chain(copies.iter().copied()).collect()
            })
            .collect();
        let mut next_bit = vec![NO_INDEX; net.slots()];
        for (b, &slot) in net.next_slots().iter().enumerate() {
            next_bit[slot as usize] = b as u32;
        }
        Some(MoveCones {
            cones,
            moved,
            next_bit,
            bytes_of,
            bytes,
            move_bytes,
        })
    }

    /// Whether `slot` is a gate of the move part, which keeps no counter.
    pub(crate) fn is_moved(&self, slot: u32) -> bool {
        self.moved[slot as usize]
    }

    /// Whether the cones' code is more than the cache keeps (see [`Cones::outgrow_cache`]).
    pub(crate) fn outgrow_cache(&self) -> bool {
        self.cones.outgrow_cache()
    }

    /// The bytes a change of `slot` stores its value in.
    pub(crate) fn bytes_of(&self, slot: u32) -> &[u32] {
        &self.bytes_of[slot as usize]
    }

    /// How many bytes the cones address.
    pub(crate) fn byte_count(&self) -> usize {
        self.bytes
    }

    /// Puts back every byte any cone changes (before the first joint move).
    pub(crate) fn restore_all(&self, bytes: &mut [bool]) {
        self.cones.restore_all(bytes);
    }

    /// Packs the next state after `moves` into `next`, the cones of
    /// `previous` having run last: puts back what they changed, then runs
    /// the cones of `moves` if they take them (and returns `true`: `moves`
    /// are to be put back next), else evaluates the move part over `scratch`
    /// from the values `state_value` gives the state part's slots (and
    /// returns `false`).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn load_moves(
        &self,
        net: &CompiledNet,
        bytes: &mut [bool],
        previous: &[u32],
        moves: &[u32],
        state_value: impl Fn(u32) -> bool,
        scratch: &mut Vec<bool>,
        next: &mut [u64],
    ) -> bool {
        self.cones.restore(bytes, previous);
        let by_cones = self.cones.accepts(moves);
        if let Some(move_bytes) = &self.move_bytes {
            for &m in previous {
                for &byte in &move_bytes[m as usize] {
                    bytes[byte as usize] = false;
                }
            }
            for &m in moves.iter().filter(|_| by_cones) {
                for &byte in &move_bytes[m as usize] {
                    bytes[byte as usize] = true;
                }
            }
        }
        if by_cones {
            self.cones.run(bytes, moves, next);
            return true;
        }
        scratch.clear();
        scratch.extend((0..net.slots() as u32).map(|s| !self.moved[s as usize] && state_value(s)));
        for &slot in net.move_slots() {
            scratch[slot as usize] = false;
        }
        for &m in moves {
            scratch[net.move_slots()[m as usize] as usize] = true;
        }
        run_steps(&net.steps()[net.state_steps()..], scratch, false, net);
        next.fill(0);
        for (b, &slot) in net.next_slots().iter().enumerate() {
            next[b / 64] |= u64::from(scratch[slot as usize]) << (b % 64);
        }
        false
    }

    /// The value of move-part gate `slot`, a next value (the move part's
    /// only outputs), in the next state `next` last packed.
    pub(crate) fn value(&self, next: &[u64], slot: u32) -> bool {
        let b = self.next_bit[slot as usize];
        debug_assert!(b != NO_INDEX, "a gate of the move part that is no next value");
        next[b as usize / 64] >> (b % 64) & 1 != 0
    }
}

#[cfg(test)]
mod tests {
    use super::super::differential::Differential;
    use super::super::{Evaluator, ScalarEvaluator, CLAIMS, TURNS};
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;
    use std::sync::Arc;

    /// Loads random states and joint moves in sequence into a differential
    /// evaluator whose move part runs as cones, against a plain evaluation
    /// of the whole net: every fifth joint move plays two inputs of one
    /// role, which the cones refuse.
    fn next_states_by_move_cones(game: &str) {
        let loaded = crate::load(game, &crate::LoadConfig::default()).unwrap();
        let net: &Arc<CompiledNet> = loaded.game.net();
        let eval = Differential::candidates(net, true).remove(0);
        let mut cache = eval.cache();
        if !eval.has_move_cones() {
            if cfg!(all(target_arch = "x86_64", unix)) {
                panic!("no move cones for a game whose moves reach few gates");
            }
            return;
        }
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
        let words = net.base_slots().len().div_ceil(64);
        for step in 0..300 {
            let mut plain = vec![false; net.slots()];
            let mut state = vec![0u64; words];
            for (b, &slot) in net.base_slots().iter().enumerate() {
                plain[slot as usize] = rng.gen_bool(0.3);
                state[b / 64] |= u64::from(plain[slot as usize]) << (b % 64);
            }
            let mut moves: Vec<u32> = net
                .role_moves()
                .iter()
                .map(|inputs| inputs[rng.gen_range(0..inputs.len())])
                .collect();
            if step % 5 == 4 {
                let first = &net.role_moves()[0];
                moves.push(first[(first.iter().position(|&m| m == moves[0]).unwrap() + 1) % first.len()]);
            }
            for &m in &moves {
                plain[net.move_slots()[m as usize] as usize] = true;
            }
            run_steps(net.steps(), &mut plain, false, &**net);
            eval.load_state(&mut cache, &state);
            eval.load_moves(&mut cache, &moves);
            let mut next = vec![0u64; words];
            eval.next_state(&cache, &mut next);
            for (b, &slot) in net.next_slots().iter().enumerate() {
                assert_eq!(
                    next[b / 64] >> (b % 64) & 1 != 0,
                    plain[slot as usize],
                    "next value of base {b} after {moves:?} (step {step})"
                );
                assert_eq!(
                    eval.value(&cache, slot),
                    plain[slot as usize],
                    "value of next slot {slot}"
                );
            }
            assert_eq!(
                eval.value(&cache, net.terminal_slot()),
                plain[net.terminal_slot() as usize]
            );
        }
    }

    #[test]
    fn next_states_by_move_cones_of_turn_taking_moves() {
        next_states_by_move_cones(TURNS);
    }

    #[test]
    fn next_states_by_move_cones_of_simultaneous_moves() {
        next_states_by_move_cones(CLAIMS);
    }
}
