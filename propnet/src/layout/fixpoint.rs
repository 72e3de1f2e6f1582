//! The least fixpoint of a cyclic component, as a graph search.
//!
//! A cyclic component is a recursion inside one state: reachability over a
//! board (connected groups, liberties, paths), transitive closures. The
//! layering refuses a negation on a cycle, so each member is a monotone
//! function of the others, and the least fixpoint is what rises from all
//! false. Re-evaluating the whole component until nothing changes (what the
//! evaluators did before) costs a pass for every backward step of the longest
//! derivation in slot order, plus one pass to see that nothing changed: on a
//! path that winds against the slot order, as many passes as it has turns.
//!
//! Here instead the component is evaluated once in slot order, and a member
//! that rises makes its readers *at or before it* (which have already read its
//! old value) late: they are marked in a bit set, and scans in slot order
//! re-evaluate only the marked members, each that rises marking its own
//! readers in the component (those after it are reached in the same scan).
//! This is chaotic
//! iteration from the bottom, which reaches the least fixpoint of monotone
//! gates in any order; it ends with every member equal to its gate's value of
//! the others, since every member that read a value that changed after is
//! re-evaluated. Each member rises at most once per lane (once for a `bool`),
//! so the work is one pass plus, for each rise, the rising member's readers in
//! the component: for a reachability recursion, a depth-first search over the
//! edges enabled in this state, from the seeds the pass found. No pass is
//! repeated, and a component whose recursion does not fire in this state
//! costs exactly one pass.
//!
//! A work list in last-in-first-out order was tried first: as fast for one
//! `bool` per slot, but the lanes evaluator (a word of lanes per slot) went
//! twice slower than with repeated passes, re-evaluating a member each time one
//! of its lanes rose. The bit set keeps each scan in slot order, so a member
//! is re-evaluated at most once per scan whatever rises before it, and no
//! scan visits a member that nothing marked.
//!
//! The bit set is allocated only when a member rises after a reader read it,
//! so a component whose derivations all follow the slot order (a small one, or
//! one laid out in derivation order) allocates nothing.

use super::steps::GateValue;

/// Evaluates the cyclic component `start..end` to its least fixpoint, given
/// the values of every slot it reads outside itself: from `all_false`, one
/// pass in slot order, then passes over only the members that read a member
/// after it rose, until none is left (see the module documentation).
#[inline(always)]
pub(crate) fn fixpoint<V: Copy + PartialEq>(
    values: &mut [V],
    start: u32,
    end: u32,
    all_false: V,
    gate: &impl GateValue<V>,
) {
    values[start as usize..end as usize].fill(all_false);
    let mut late = Late::default();
    for slot in start..end {
        if rise(values, slot, gate) {
            // Readers after `slot` read its new value in this pass.
            for &reader in members(gate.readers(slot), start, slot + 1) {
                late.mark(start, end, reader);
            }
        }
    }
    if !late.words.is_empty() {
        settle(values, start, end, gate, late);
    }
}

/// The members of a component to re-evaluate, a bit per member (bit `i` for
/// slot `start + i`); no words until one is marked.
#[derive(Default)]
struct Late {
    words: Vec<u64>,
}

impl Late {
    /// Marks `slot` of the component `start..end`; the index of its word.
    #[inline(always)]
    fn mark(&mut self, start: u32, end: u32, slot: u32) -> usize {
        if self.words.is_empty() {
            self.words.resize((end - start).div_ceil(64) as usize, 0);
        }
        let i = (slot - start) as usize;
        self.words[i >> 6] |= 1 << (i & 63);
        i >> 6
    }
}

/// Re-evaluates the `late` members of the component `start..end` in slot
/// order, marking the readers in it of each that rises, until none is marked:
/// a reader after the member is re-evaluated in the same scan, one before it
/// in the next. In line, like the rest: the lanes evaluator compiles its loop
/// for its vector width, and a call out of it compares words of lanes with
/// `memcmp` (the lanes went 2.5x slower on a game with cycles).
#[inline(always)]
fn settle<V: Copy + PartialEq>(
    values: &mut [V],
    start: u32,
    end: u32,
    gate: &impl GateValue<V>,
    mut late: Late,
) {
    loop {
        let mut again = false;
        for w in 0..late.words.len() {
            while late.words[w] != 0 {
                let bits = late.words[w];
                late.words[w] = bits & (bits - 1);
                let slot = start + (w as u32) * 64 + bits.trailing_zeros();
                if rise(values, slot, gate) {
                    for &reader in members(gate.readers(slot), start, end) {
                        again |= late.mark(start, end, reader) < w;
                    }
                }
            }
        }
        if !again {
            return;
        }
    }
}

/// [`fixpoint`] for values of many lanes, by passes over the whole component
/// in slot order until one changes nothing. With a word of 512 lanes per
/// slot, nearly every member rises in some lane in every pass, so marking
/// readers saves no evaluation and costs its bookkeeping: measured on the
/// lanes evaluator, marking went 0.4-0.7x as fast as these passes, and passes
/// alternating in direction 0.3-0.4x (on the RBG hex translated to GDL and on
/// atariGoVariant_7x7).
#[inline(always)]
pub(crate) fn fixpoint_by_passes<V: Copy + PartialEq>(
    values: &mut [V],
    start: u32,
    end: u32,
    all_false: V,
    gate: &impl GateValue<V>,
) {
    values[start as usize..end as usize].fill(all_false);
    loop {
        let mut changed = false;
        for slot in start..end {
            changed |= rise(values, slot, gate);
        }
        if !changed {
            return;
        }
    }
}

/// Sets gate `slot` to its value from `values`; whether it changed.
#[inline(always)]
fn rise<V: Copy + PartialEq>(values: &mut [V], slot: u32, gate: &impl GateValue<V>) -> bool {
    let value = gate.value(values, slot);
    let changed = value != values[slot as usize];
    values[slot as usize] = value;
    changed
}

/// The readers among slots `start..end`, of an ascending list of readers.
#[inline(always)]
fn members(readers: &[u32], start: u32, end: u32) -> &[u32] {
    let from = readers.partition_point(|&r| r < start);
    let to = from + readers[from..].partition_point(|&r| r < end);
    &readers[from..to]
}

#[cfg(test)]
mod tests {
    use crate::game::Game;
    use crate::layout::{run_steps, Step};
    use crate::pipeline::{load, LoadConfig};
    use crate::OptimizeConfig;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// A ring of `n` cells, each open or not (a base), with two kinds of
    /// links between neighbours (either way): `reach` holds of the cells
    /// connected to cell 0 through open cells, `both` of the cells with an open
    /// neighbour that reaches, and that reach themselves (an `and` on the
    /// cycle); `far` of the cell opposite 0 (a goal reads it).
    fn ring(n: usize) -> String {
        let mut kif = String::from("(role r) (init (open 0))\n(<= (legal r (flip ?c)) (cell ?c))\n");
        for c in 0..n {
            let next = (c + 1) % n;
            kif.push_str(&format!("(cell {c}) (link {c} {next}) (link {next} {c})\n"));
        }
        kif.push_str(&format!(
            "(<= (next (open ?c)) (true (open ?c)) (not (does r (flip ?c))))
             (<= (next (open ?c)) (not (true (open ?c))) (does r (flip ?c)))
             (<= (reach 0) (true (open 0)))
             (<= (reach ?d) (reach ?c) (link ?c ?d) (true (open ?d)))
             (<= (both ?d) (reach ?d) (link ?c ?d) (reach ?c) (true (open ?c)))
             (<= far (both {}))
             (<= terminal far) (<= (goal r 100) far) (<= (goal r 0) (not far))",
            n / 2
        ));
        kif
    }

    /// Whether cell `c` reaches cell 0 through open cells, on a ring of `n`.
    fn reaches(open: &[bool], c: usize) -> bool {
        let n = open.len();
        let clockwise = (0..=c).all(|d| open[d]);
        let counter = (c..=n).all(|d| open[d % n]);
        open[c] && (clockwise || counter)
    }

    /// The ring's state with the cells of `open` open.
    fn state(game: &Game, open: &[bool]) -> Vec<u64> {
        let facts: Vec<String> = (0..open.len())
            .filter(|&c| open[c])
            .map(|c| format!("(open {c})"))
            .collect();
        let state = game.state_from_kif(&facts).expect("open cells are facts");
        state.0.as_raw_slice().to_vec()
    }

    #[test]
    fn a_reachability_recursion_reaches_its_least_fixpoint_in_any_state() {
        let n = 40;
        for config in [
            LoadConfig::new().optimize(OptimizeConfig::none()),
            LoadConfig::new(),
        ] {
            let loaded = load(&ring(n), &config).expect("the ring loads");
            let net = loaded.game.net();
            assert!(
                net.steps().iter().any(|s| matches!(s, Step::Cycle(..))),
                "no cycle"
            );
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
            let (mut cut, mut joined) = (0, 0);
            for round in 0..300 {
                // Mostly open, so that long paths form and are cut in one or two places.
                let open: Vec<bool> = (0..n).map(|c| c == 0 || rng.gen_bool(0.95)).collect();
                let state = state(&loaded.game, &open);
                let plain = net.evaluate(&state, &[]);
                let mut values = vec![false; net.slots()];
                for (b, &slot) in net.base_slots().iter().enumerate() {
                    values[slot as usize] = state[b >> 6] >> (b & 63) & 1 == 1;
                }
                run_steps(net.steps(), &mut values, false, &**net);
                let far = reaches(&open, n / 2);
                let at = format!("round {round}: {open:?}");
                assert_eq!(values[net.terminal_slot() as usize], far, "{at}");
                assert_eq!(plain[net.terminal_slot() as usize], far, "{at}");
                let gates = net.first_gate() as usize..net.slots();
                assert_eq!(values[gates.clone()], plain[gates], "{at}");
                // Cut: some open cells past the far one do not reach it.
                if far {
                    joined += 1;
                } else if open[n / 2] && open.iter().filter(|&&o| o).count() > n - 3 {
                    cut += 1;
                }
            }
            assert!(joined > 20 && cut > 20, "{joined} states joined, {cut} cut");
        }
    }
}
