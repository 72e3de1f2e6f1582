//! The differential evaluator: from one state (or joint move) to the next, only the
//! gates whose operands changed are re-evaluated. Each acyclic gate keeps a count of
//! its true operands, so re-evaluating it costs O(1); a gate whose count crosses its
//! threshold is re-evaluated as it comes, depth first, so a gate two of whose
//! operands change may change and change back (its count stays exact, so its value
//! ends right; waiting for slot order instead evaluated each at most once, but
//! its bookkeeping cost more time than the repeats on most games: amazons_10x10
//! went 10% faster, speedChess 7%, hex 4% slower). A cyclic component whose operands
//! changed is marked in a bit set of pending components, re-evaluated to its
//! least fixpoint as a whole in slot order once no gate waits. The gates
//! waiting are kept in two stacks, the guarded `and`s (below) apart from the
//! rest, so that neither re-evaluating them nor listing those of a long
//! fan-out asks each gate's kind (a question mispredicted about 45 times a
//! transition on chess_200).
//!
//! Guards: an operand read by many `and`s (whose turn it is, typically, read by every
//! legal move of a role) would cost a counter update in each of them whenever it
//! changes. Such an `and` instead counts only its other operands, and the guard keeps
//! the set of its `and`s whose other operands are all true (the only ones its change
//! can switch), so a change of the guard visits just those. A guarded `and` read
//! only as moves' legality is not even visited: it is *lazy*, its legality bits
//! are kept per guard while its other operands are all true, and they are in the
//! legality set while the guard is true. Guards are chosen from activity measured
//! along random playouts (`profile/activity.rs`).
//!
//! Two kinds of gates are left out of the fan-outs: those read only on the way
//! to goals (evaluated when goals are asked for), and `or`s of moves' legality
//! (read from the legality set after each state, so that the `and`s they read
//! can be lazy). And where it pays, returning to the initial state copies a
//! snapshot of its values instead of propagating.
//!
//! Where they cost less than propagating each joint move through counters
//! and back, the gates that depend on moves run instead as the sweep's cones
//! of the moves played, over bytes the state part keeps (`move_cones.rs`).
//! A cost model decides; when the cones' code outgrows the cache, where the
//! model misjudges both ways, the two plans also race on random playouts
//! (the driver's chooser, `driver/choose.rs`) and the faster is kept.

use super::bits::copy_short;
use super::move_cones::MoveCones;
use super::sweep::{in_place, Program};
use super::{Evaluator, EvaluatorId, EvaluatorKind, Owned, ScalarEvaluator};
use crate::jit::Layout;
use crate::layout::{fixpoint, role_words, run_steps};
use crate::layout::{CompiledNet, Gate};
use crate::profile::activity::Activity;
use crate::profile::costs::{
    ACTIVITY_BUDGET, BRANCHLESS_FANOUT, EVALUATION_COST, GUARD_CHANGE_COST, GUARD_FANOUT, RESTORE_MARGIN,
    TOGGLE_COST,
};
use std::sync::Arc;

/// No guard, not a guard, no ready bit.
const NO_INDEX: u32 = u32::MAX;

/// Per-gate counter state in four bytes, so that many fit a cache line: the
/// level in the high [`LEVEL_BITS`] bits, flags in the low ones. Without a
/// guard the value is `(level >= 0) != inverted`; a guarded `and` counts only
/// its other operands and is `level >= 0` and its guard.
#[derive(Clone, Copy, Debug)]
struct Counter(u32);

/// Bits of a [`Counter`] below its level, holding its flags.
const FLAG_BITS: u32 = 5;
/// Bits of a [`Counter`]'s level: true operands counted minus the number needed
/// (all for an `and`, one for an `or` or `not`), at least 0 when the operands are
/// enough. Limits the fan-in of a gate to `2^(LEVEL_BITS - 1) - 1`.
const LEVEL_BITS: u32 = 32 - FLAG_BITS;

/// A `not`: the value is the opposite of `level >= 0`.
const INVERTED: u32 = 1;
/// The slot's current value (not kept for [`LAZY`] slots).
const VALUE: u32 = 2;
/// A guarded `and` (its guard is in [`Plan::guarded`]).
const GUARDED: u32 = 4;
/// A guarded `and` read only as legality, whose value is derived when asked.
const LAZY: u32 = 8;
/// A guard (its index is in [`Plan::guard_index`]).
const GUARD: u32 = 16;

impl Counter {
    /// A counter at `level` with `flags`.
    fn new(level: i32, flags: u32) -> Counter {
        Counter(((level << FLAG_BITS) as u32) | flags)
    }

    /// True operands counted minus the number needed.
    #[inline(always)]
    fn level(self) -> i32 {
        self.0 as i32 >> FLAG_BITS
    }

    #[inline(always)]
    fn has(self, flag: u32) -> bool {
        self.0 & flag != 0
    }

    #[inline(always)]
    fn value(self) -> bool {
        self.has(VALUE)
    }

    #[inline(always)]
    fn set_value(&mut self, value: bool) {
        self.0 = (self.0 & !VALUE) | if value { VALUE } else { 0 };
    }

    /// The flags.
    #[inline(always)]
    fn flags(self) -> u32 {
        self.0 & ((1 << FLAG_BITS) - 1)
    }
}

/// Effects of a slot's change besides counter updates: the top two bits say
/// which, the rest is an index.
const EFFECT_KIND: u32 = 3 << 30;
/// Store the value in byte `index` of the bytes the move part's cones read.
const BYTE_EFFECT: u32 = 0;
/// Re-evaluate the cyclic component whose first slot is the index.
const CYCLE_EFFECT: u32 = 1 << 30;
/// Flip bit `index` of the flat legality set.
const LEGAL_EFFECT: u32 = 2 << 30;
/// Flip bit `index` of the next state.
const NEXT_EFFECT: u32 = 3 << 30;

/// What every thread's evaluation of one net reads: fan-outs, effects,
/// guards, and the layout of the legality sets.
#[derive(Debug)]
struct Plan {
    /// The move part as cones, where they cost less than propagating joint moves.
    move_cones: Option<MoveCones>,
    /// How many bytes the cones read (none without them).
    bytes: usize,
    /// Per slot (and one past the last): where its acyclic fan-out starts in
    /// `targets`, and where its effects start; they end where the next slot's
    /// fan-out starts. Guarded `and`s are left out of their guard's fan-out.
    spans: Vec<[u32; 2]>,
    targets: Vec<u32>,
    /// Per slot, its guard if it is a guarded `and` (see [`GuardedAnd`]).
    guarded: Vec<GuardedAnd>,
    /// The index of each guard, or [`NO_INDEX`].
    guard_index: Vec<u32>,
    /// The slot of each guard.
    guard_slots: Vec<u32>,
    /// Per guard (and one past the last), the first word of its evaluated
    /// `and`s' bits in [`Ready::bits`] and in `members` (64 slots a word).
    ready_words: Vec<u32>,
    /// The evaluated `and` of each ready bit ([`NO_INDEX`] past a guard's last).
    members: Vec<u32>,
    /// The legality bits of the lazy slots (see [`GuardedAnd::lazy`]).
    lazy_bits: Vec<u32>,
    /// Role `r`'s legality takes words `role_words[r]..role_words[r + 1]` of the
    /// flat legality sets, bit `at` for its input at position `at`.
    role_words: Vec<usize>,
    /// Words in one flat legality set.
    legal_words: usize,
    /// Per guard, the words of the flat legality sets its lazy `and`s touch.
    guard_words: Vec<(usize, usize)>,
    /// The `or`s of moves' legality ([`legal_ors`]); the `k`-th is true when
    /// a word of the legality set and its mask in
    /// `legal_or_masks[legal_or_offsets[k]..legal_or_offsets[k + 1]]` share a bit.
    legal_or_slots: Vec<u32>,
    legal_or_offsets: Vec<u32>,
    legal_or_masks: Vec<(usize, u64)>,
    /// The gates read only on the way to goals ([`CompiledNet::goal_only`]),
    /// ascending: they are left out of every fan-out and evaluated only when
    /// goals are asked for.
    goal_gates: Vec<u32>,
    /// Their evaluation.
    goal_program: Program,
    /// The kept slots they read, ascending.
    goal_reads: Vec<u32>,
    /// Whether returning to the initial state copies a snapshot of its values,
    /// rather than propagating the change: when the measured propagation
    /// ([`Activity::restart_work`]) visits [`RESTORE_MARGIN`] times more
    /// fan-out edges than the snapshot has cache lines.
    restore_initial: bool,
}

/// What a change of a guarded `and`'s other operands needs, in one place: its
/// guard, and its legality bits if it is lazy, its ready bit if not. Other
/// slots have [`NO_INDEX`] guards.
#[derive(Clone, Copy, Debug)]
struct GuardedAnd {
    /// The guard's index (see [`Plan::guard_slots`]) and its slot, kept here too so
    /// that a crossing reads the guard's value without a second dependent load.
    guard: u32,
    guard_slot: u32,
    /// A lazy `and`'s legality bits: `lazy_bits[lazy.0..lazy.1]` (empty otherwise).
    lazy: (u32, u32),
    /// An evaluated `and`'s bit in [`Ready::bits`] ([`NO_INDEX`] otherwise).
    ready_bit: u32,
}

impl GuardedAnd {
    /// Not a guarded `and`.
    const UNGUARDED: GuardedAnd = GuardedAnd {
        guard: NO_INDEX,
        guard_slot: NO_INDEX,
        lazy: (0, 0),
        ready_bit: NO_INDEX,
    };

    /// Whether it is lazy.
    fn is_lazy(&self) -> bool {
        self.lazy.0 != self.lazy.1
    }
}

impl Plan {
    /// The plan of `net`, whose activity is `activity`, with its move part by
    /// `move_cones` or by counters, and its goals in native code if `native`.
    fn new(net: &CompiledNet, activity: &Activity, move_cones: Option<MoveCones>, native: bool) -> Plan {
        let goal_only = net.goal_only();
        let kept = kept_slots(net, &goal_only, move_cones.as_ref());
        let role_words = role_words(net);
        let mut legal_of = legal_bits(net, &role_words);
        let next_of = next_bits(net, move_cones.is_none());
        let legal_words = role_words.last().copied().unwrap_or(0);
        let legal_ors = legal_ors(net, &kept, &legal_of);
        let is_legal_or = legal_or_flags(net.slots(), &legal_ors);
        let legal_only = legal_only(net, &is_legal_or, &legal_of);
        let guard_of = choose_guards(net, activity, &kept, &legal_only, &legal_of);
        let guards = Guards::new(guard_of, &legal_only);
        let (ready_words, members, ready_bit) = guards.ready_bits();
        let guard_words = guards.legality_words(&legal_of);
        let lazy_of = guards.take_lazy_bits(&mut legal_of);
        let fan_out = FanOut {
            kept: &kept,
            is_legal_or: &is_legal_or,
            guard_of: &guards.of,
            legal_of: &legal_of,
            next_of: &next_of,
        };
        let (spans, targets) = fan_out.spans_and_targets(net, move_cones.as_ref());
        let bytes = move_cones.as_ref().map_or(0, MoveCones::byte_count);
        check_fan_outs(net, &spans, &targets, bytes);
        let (lazy_offsets, lazy_bits) = flatten(lazy_of);
        let guarded = guards.records(&lazy_offsets, &ready_bit);
        check_guarded(
            &guarded,
            &lazy_bits,
            legal_words * 64,
            members.len(),
            guards.slots.len(),
        );
        let snapshot_bytes = net.slots() * size_of::<Counter>()
            + bytes
            + members.len() / 8
            + guards.slots.len() * legal_words * size_of::<u64>();
        let legal_or_slots = legal_ors.iter().map(|&(or, _)| or).collect();
        let (legal_or_offsets, legal_or_masks) =
            flatten(legal_ors.into_iter().map(|(_, masks)| masks).collect());
        Plan {
            move_cones,
            bytes,
            legal_or_slots,
            legal_or_offsets,
            legal_or_masks,
            goal_gates: (0..net.slots() as u32)
                .filter(|&s| goal_only[s as usize])
                .collect(),
            goal_program: goal_program(net, &goal_only, native),
            goal_reads: goal_reads(net, &goal_only, &kept),
            restore_initial: RESTORE_MARGIN * (snapshot_bytes / 64) < activity.restart_work as usize,
            spans,
            targets,
            guarded,
            guard_index: guards.index,
            guard_slots: guards.slots,
            ready_words,
            members,
            lazy_bits,
            role_words,
            legal_words,
            guard_words,
        }
    }
}

/// Per slot, whether it keeps a counter: not when it is read only on the way to
/// goals (`goal_only`), nor when it runs in the move part's cones.
fn kept_slots(net: &CompiledNet, goal_only: &[bool], move_cones: Option<&MoveCones>) -> Vec<bool> {
    let moved = |slot: usize| move_cones.is_some_and(|m| m.is_moved(slot as u32));
    (0..net.slots()).map(|s| !goal_only[s] && !moved(s)).collect()
}

/// Per slot, the bits of the flat legality sets it sets: those of the moves
/// whose legality it is, laid out by `role_words`.
fn legal_bits(net: &CompiledNet, role_words: &[usize]) -> Vec<Vec<u32>> {
    let mut legal_of: Vec<Vec<u32>> = vec![Vec::new(); net.slots()];
    for (role, inputs) in net.role_moves().iter().enumerate() {
        for (at, &m) in inputs.iter().enumerate() {
            let bit = (role_words[role] * 64 + at) as u32;
            legal_of[net.legal_slots()[m as usize] as usize].push(bit);
        }
    }
    legal_of
}

/// Per slot, the bits of the next state it sets when the counters pack it
/// (`by_counters`); none when the cones do.
fn next_bits(net: &CompiledNet, by_counters: bool) -> Vec<Vec<u32>> {
    let mut next_of: Vec<Vec<u32>> = vec![Vec::new(); net.slots()];
    if by_counters {
        for (b, &slot) in net.next_slots().iter().enumerate() {
            next_of[slot as usize].push(b as u32);
        }
    }
    next_of
}

/// Per slot of `slots`, whether it is one of the `legal_ors`.
fn legal_or_flags(slots: usize, legal_ors: &[(u32, Vec<(usize, u64)>)]) -> Vec<bool> {
    let mut is_legal_or = vec![false; slots];
    for &(or, _) in legal_ors {
        is_legal_or[or as usize] = true;
    }
    is_legal_or
}

/// Per slot, whether it is read by nothing but legality outputs and legal-move
/// `or`s: not next values (whoever packs the next state, counters or cones),
/// goals or terminal, which need their values.
fn legal_only(net: &CompiledNet, is_legal_or: &[bool], legal_of: &[Vec<u32>]) -> Vec<bool> {
    let mut other_output = vec![false; net.slots()];
    let outputs = net.next_slots().iter().chain(net.goal_slots());
    for &slot in outputs.chain(std::iter::once(&net.terminal_slot())) {
        other_output[slot as usize] = true;
    }
    (0..net.slots())
        .map(|s| {
            net.fanout(s as u32).iter().all(|&o| is_legal_or[o as usize])
                && !other_output[s]
                && !legal_of[s].is_empty()
        })
        .collect()
}

/// The guards chosen by [`choose_guards`], indexed in order of first use, with
/// which of the `and`s they guard are lazy.
struct Guards {
    /// Per slot, its guard's slot, or [`NO_INDEX`].
    of: Vec<u32>,
    /// Per slot, its guard's index, or [`NO_INDEX`].
    by: Vec<u32>,
    /// Per slot, its index if it is a guard, or [`NO_INDEX`].
    index: Vec<u32>,
    /// The slot of each guard.
    slots: Vec<u32>,
    /// Per slot, whether it is a lazy guarded `and`.
    lazy: Vec<bool>,
}

impl Guards {
    /// Indexes the guards of `guard_of` (per slot, a slot or [`NO_INDEX`]); the
    /// guarded slots that are `legal_only` are lazy.
    fn new(guard_of: Vec<u32>, legal_only: &[bool]) -> Guards {
        let mut index = vec![NO_INDEX; guard_of.len()];
        let mut slots = Vec::new();
        for &g in &guard_of {
            if g != NO_INDEX && index[g as usize] == NO_INDEX {
                index[g as usize] = slots.len() as u32;
                slots.push(g);
            }
        }
        let lazy = (0..guard_of.len())
            .map(|s| legal_only[s] && guard_of[s] != NO_INDEX)
            .collect();
        let by = guard_of
            .iter()
            .map(|&g| {
                if g == NO_INDEX {
                    NO_INDEX
                } else {
                    index[g as usize]
                }
            })
            .collect();
        Guards {
            of: guard_of,
            by,
            index,
            slots,
            lazy,
        }
    }

    /// The ready sets of the evaluated guarded `and`s: per guard (and one past
    /// the last) its first word, the `and` of each bit, and per slot its bit.
    fn ready_bits(&self) -> (Vec<u32>, Vec<u32>, Vec<u32>) {
        let slots = self.of.len();
        let mut guard_members = vec![Vec::new(); self.slots.len()];
        for s in (0..slots).filter(|&s| self.by[s] != NO_INDEX && !self.lazy[s]) {
            guard_members[self.by[s] as usize].push(s as u32);
        }
        let mut ready_words = vec![0u32];
        let mut members = Vec::new();
        let mut ready_bit = vec![NO_INDEX; slots];
        for guarded in &guard_members {
            for &and in guarded {
                ready_bit[and as usize] = members.len() as u32;
                members.push(and);
            }
            members.resize(members.len().next_multiple_of(64), NO_INDEX);
            ready_words.push((members.len() / 64) as u32);
        }
        (ready_words, members, ready_bit)
    }

    /// Per guard, the words of the flat legality sets its lazy `and`s touch
    /// (their bits are `legal_of`), empty if none.
    fn legality_words(&self, legal_of: &[Vec<u32>]) -> Vec<(usize, usize)> {
        let mut guard_words = vec![(usize::MAX, 0); self.slots.len()];
        for s in (0..self.of.len()).filter(|&s| self.lazy[s]) {
            let words = &mut guard_words[self.index[self.of[s] as usize] as usize];
            for &bit in &legal_of[s] {
                let word = bit as usize >> 6;
                *words = (words.0.min(word), words.1.max(word + 1));
            }
        }
        for words in &mut guard_words {
            words.0 = words.0.min(words.1);
        }
        guard_words
    }

    /// Moves the lazy slots' legality bits out of `legal_of` and returns them:
    /// their guard keeps those bits, their own changes do not set them.
    fn take_lazy_bits(&self, legal_of: &mut [Vec<u32>]) -> Vec<Vec<u32>> {
        (0..self.of.len())
            .map(|s| {
                if self.lazy[s] {
                    std::mem::take(&mut legal_of[s])
                } else {
                    Vec::new()
                }
            })
            .collect()
    }

    /// Each slot's [`GuardedAnd`] record, with the lazy slots' legality bits at
    /// `lazy_offsets` and the evaluated ones' `ready_bit`s.
    fn records(&self, lazy_offsets: &[u32], ready_bit: &[u32]) -> Vec<GuardedAnd> {
        (0..self.of.len())
            .map(|s| match self.of[s] {
                NO_INDEX => GuardedAnd::UNGUARDED,
                slot => GuardedAnd {
                    guard: self.by[s],
                    guard_slot: slot,
                    lazy: (lazy_offsets[s], lazy_offsets[s + 1]),
                    ready_bit: ready_bit[s],
                },
            })
            .collect()
    }
}

/// What each slot's fan-out and effects are made of, per slot.
struct FanOut<'a> {
    /// Whether it keeps a counter ([`kept_slots`]).
    kept: &'a [bool],
    /// Whether it is an `or` of moves' legality ([`legal_ors`]).
    is_legal_or: &'a [bool],
    /// Its guard's slot, or [`NO_INDEX`].
    guard_of: &'a [u32],
    /// The legality bits its changes flip.
    legal_of: &'a [Vec<u32>],
    /// The next-state bits its changes flip.
    next_of: &'a [Vec<u32>],
}

impl FanOut<'_> {
    /// [`Plan::spans`] and [`Plan::targets`]: per slot the counted gates it
    /// feeds (not those it guards), then its effects on cycles, legality, the
    /// next state and the bytes of `move_cones`.
    fn spans_and_targets(
        &self,
        net: &CompiledNet,
        move_cones: Option<&MoveCones>,
    ) -> (Vec<[u32; 2]>, Vec<u32>) {
        let mut spans = Vec::with_capacity(net.slots() + 1);
        let mut targets = Vec::with_capacity(net.fanouts().len());
        assert!(
            net.slots() < 1 << 30,
            "too many slots for the differential evaluator"
        );
        assert!(
            (0..net.slots() as u32).all(|s| net.fanin(s).len() < 1 << (LEVEL_BITS - 1)),
            "a gate reads too many slots for the differential evaluator"
        );
        for slot in 0..net.slots() as u32 {
            let s = slot as usize;
            let own = net.cycle_start()[s];
            let gates_start = targets.len() as u32;
            let mut cycles = Vec::new();
            for &out in net
                .fanout(slot)
                .iter()
                .filter(|&&o| self.kept[o as usize] && !self.is_legal_or[o as usize])
            {
                match net.cycle_start()[out as usize] {
                    NO_INDEX if self.guard_of[out as usize] == slot => {}
                    NO_INDEX => targets.push(out),
                    cycle if cycle != own && !cycles.contains(&cycle) => cycles.push(cycle),
                    _ => {}
                }
            }
            let effects_start = targets.len() as u32;
            targets.extend(cycles.iter().map(|&c| c | CYCLE_EFFECT));
            targets.extend(self.legal_of[s].iter().map(|&bit| bit | LEGAL_EFFECT));
            targets.extend(self.next_of[s].iter().map(|&b| b | NEXT_EFFECT));
            if let Some(move_cones) = move_cones {
                targets.extend(move_cones.bytes_of(slot).iter().map(|&byte| byte | BYTE_EFFECT));
            }
            spans.push([gates_start, effects_start]);
        }
        spans.push([targets.len() as u32; 2]);
        (spans, targets)
    }
}

/// Checks what the propagation relies on: it slices the `targets` by the
/// `spans`, and indexes counters, pending slots and the cones' `bytes` by the
/// targets, unchecked.
fn check_fan_outs(net: &CompiledNet, spans: &[[u32; 2]], targets: &[u32], bytes: usize) {
    assert!(
        spans.len() == net.slots() + 1
            && spans.windows(2).all(|w| w[0][0] <= w[0][1] && w[0][1] <= w[1][0])
            && spans[net.slots()][0] as usize == targets.len(),
        "fan-out spans out of order"
    );
    assert!(
        spans.windows(2).all(|w| {
            let [gates, effects] = w[0];
            let end = w[1][0];
            targets[gates as usize..effects as usize]
                .iter()
                .chain(
                    targets[effects as usize..end as usize]
                        .iter()
                        .filter(|&&e| e & EFFECT_KIND == CYCLE_EFFECT),
                )
                .all(|&t| ((t & !EFFECT_KIND) as usize) < net.slots())
                && targets[effects as usize..end as usize]
                    .iter()
                    .filter(|&&e| e & EFFECT_KIND == BYTE_EFFECT)
                    .all(|&e| (e as usize) < bytes)
        }),
        "a fan-out outside the net"
    );
}

/// Checks the guarded `and`s' records, which are read unchecked: their
/// `lazy_bits` within the `legal_bits` of a legality set, their ready bits
/// within the `members`, their guards within the `guards`.
fn check_guarded(
    guarded: &[GuardedAnd],
    lazy_bits: &[u32],
    legal_bits: usize,
    members: usize,
    guards: usize,
) {
    let slots = guarded.len();
    assert!(
        lazy_bits.iter().all(|&bit| (bit as usize) < legal_bits)
            && guarded.iter().all(|and| {
                and.lazy.0 <= and.lazy.1
                    && and.lazy.1 as usize <= lazy_bits.len()
                    && (and.guard == NO_INDEX || and.is_lazy() || (and.ready_bit as usize) < members)
                    && (and.guard == NO_INDEX
                        || (and.guard as usize) < guards && (and.guard_slot as usize) < slots)
            }),
        "guarded `and`s out of place"
    );
}

/// The evaluation of the `goal_only` gates, in native code if `native`.
fn goal_program(net: &CompiledNet, goal_only: &[bool], native: bool) -> Program {
    Program::new(
        net,
        net.steps(),
        goal_only,
        Vec::new(),
        Layout {
            located: &in_place(net),
            pack_area: net.slots(),
            first_flag: net.slots(),
        },
        native,
    )
}

/// The `kept` slots that the `goal_only` gates read, ascending.
fn goal_reads(net: &CompiledNet, goal_only: &[bool], kept: &[bool]) -> Vec<u32> {
    let mut goal_reads: Vec<u32> = (0..net.slots() as u32)
        .filter(|&s| goal_only[s as usize])
        .flat_map(|s| net.fanin(s).iter().copied())
        .filter(|&i| kept[i as usize])
        .collect();
    goal_reads.sort_unstable();
    goal_reads.dedup();
    goal_reads
}

/// The guard of each `kept` `and` (or [`NO_INDEX`]): the operand whose changes, as measured,
/// cost more counter updates than keeping the `and` in a ready set would. An
/// `and` read only as legality (`legal_only`) that gets a guard is lazy, which
/// also saves evaluating it. Each change of a guard of lazy `and`s passes over
/// the legality words their bits span (`legal_of`), so such an operand guards
/// only if what its `and`s save pays for those passes and
/// [`GUARD_CHANGE_COST`]; any other operand only if
/// it is the best guard of at least [`GUARD_FANOUT`] `and`s (fewer measured no
/// faster). The `and`s whose best guard does not choose again among the operands
/// that do.
fn choose_guards(
    net: &CompiledNet,
    activity: &Activity,
    kept: &[bool],
    legal_only: &[bool],
    legal_of: &[Vec<u32>],
) -> Vec<u32> {
    let measured: Vec<u32> = activity
        .measured
        .iter()
        .copied()
        .filter(|&and| kept[and as usize])
        .collect();
    let mut saving = vec![0u64; net.slots()];
    let mut chosen = vec![0usize; net.slots()];
    // Per operand, the legality words its lazy `and`s span, if it has any.
    let mut lazy_words: Vec<Option<(u32, u32)>> = vec![None; net.slots()];
    let everything = vec![true; net.slots()];
    for &and in &measured {
        let (guard, saved) = best_guard(net, activity, legal_only, &everything, and);
        if guard != NO_INDEX {
            saving[guard as usize] += saved;
            chosen[guard as usize] += 1;
            if legal_only[and as usize] {
                for &bit in &legal_of[and as usize] {
                    let word = bit >> 6;
                    let (first, end) = lazy_words[guard as usize].get_or_insert((word, word + 1));
                    (*first, *end) = ((*first).min(word), (*end).max(word + 1));
                }
            }
        }
    }
    let allowed: Vec<bool> = (0..net.slots())
        .map(|g| {
            if let Some((first, end)) = lazy_words[g] {
                saving[g] > u64::from(activity.flips[g]) * (GUARD_CHANGE_COST + u64::from(end - first))
            } else {
                chosen[g] >= GUARD_FANOUT
            }
        })
        .collect();
    let mut guard_of = vec![NO_INDEX; net.slots()];
    for &and in &measured {
        guard_of[and as usize] = best_guard(net, activity, legal_only, &allowed, and).0;
    }
    guard_of
}

/// The cheapest guard of `and` among the `allowed` operands and what it saves,
/// in counter updates over the measured transitions, or [`NO_INDEX`] if no guard
/// is cheaper than none.
fn best_guard(
    net: &CompiledNet,
    activity: &Activity,
    legal_only: &[bool],
    allowed: &[bool],
    and: u32,
) -> (u32, u64) {
    let fanin = net.fanin(and);
    let first_edge = net.fanin_offsets()[and as usize] as usize;
    let flips = |i: u32| u64::from(activity.flips[i as usize]);
    let updates: u64 = fanin.iter().map(|&i| flips(i)).sum();
    let unguarded = if legal_only[and as usize] {
        updates + EVALUATION_COST * flips(and)
    } else {
        updates
    };
    let mut best = (unguarded, NO_INDEX);
    for (k, &guard) in fanin.iter().enumerate() {
        if !allowed[guard as usize] || fanin.iter().filter(|&&i| i == guard).count() != 1 {
            continue;
        }
        let edge = first_edge + k;
        let mut guarded = updates - flips(guard) + TOGGLE_COST * u64::from(activity.others_changed[edge]);
        if !legal_only[and as usize] {
            guarded += u64::from(activity.flips_while_others[edge]);
        }
        if guarded < best.0 {
            best = (guarded, guard);
        }
    }
    (best.1, unguarded - best.0)
}

/// The `or`s whose operands are all moves' legality slots ("the role has a legal
/// move", as terminal tests often say) and on which no legality depends, with
/// the legality words and bits their operands take. Their value is read from the
/// legality set once it is up to date, so their operands do not count into them
/// and an `and` read by them and as legality can be lazy (amazons: every legal
/// move is also read by `anyLegalMove`).
fn legal_ors(net: &CompiledNet, kept: &[bool], legal_of: &[Vec<u32>]) -> Vec<(u32, Vec<(usize, u64)>)> {
    let mut feeds_legality = vec![false; net.slots()];
    let mut stack: Vec<u32> = net.legal_slots().to_vec();
    while let Some(slot) = stack.pop() {
        if !std::mem::replace(&mut feeds_legality[slot as usize], true) {
            stack.extend(net.fanin(slot));
        }
    }
    (net.first_gate()..net.slots() as u32)
        .filter(|&s| {
            let fanin = net.fanin(s);
            kept[s as usize]
                && net.gates()[s as usize] == Gate::Or
                && net.cycle_start()[s as usize] == NO_INDEX
                && !feeds_legality[s as usize]
                && !fanin.is_empty()
                && fanin.iter().all(|&i| !legal_of[i as usize].is_empty())
        })
        .map(|or| {
            let mut masks: Vec<(usize, u64)> = Vec::new();
            for &operand in net.fanin(or) {
                for &bit in &legal_of[operand as usize] {
                    let (word, mask) = (bit as usize >> 6, 1u64 << (bit & 63));
                    match masks.iter_mut().find(|(w, _)| *w == word) {
                        Some((_, m)) => *m |= mask,
                        None => masks.push((word, mask)),
                    }
                }
            }
            masks.sort_unstable();
            (or, masks)
        })
        .collect()
}

/// The value of acyclic gate `slot` from its counter (and guard).
#[inline(always)]
fn derived(plan: &Plan, counters: &[Counter], slot: u32) -> bool {
    let c = counters[slot as usize];
    let full = c.level() >= 0;
    if c.has(GUARDED) {
        full && counters[plan.guarded[slot as usize].guard_slot as usize].value()
    } else {
        full != c.has(INVERTED)
    }
}

/// The value of `slot`: kept in its counter, or derived for a lazy one.
#[inline(always)]
fn slot_value(plan: &Plan, counters: &[Counter], slot: u32) -> bool {
    let c = counters[slot as usize];
    if c.has(LAZY) {
        derived(plan, counters, slot)
    } else {
        c.value()
    }
}

/// The most gates in one slot's fan-out.
fn max_fanout(plan: &Plan) -> usize {
    plan.spans
        .windows(2)
        .map(|w| (w[0][1] - w[0][0]) as usize)
        .max()
        .unwrap_or(0)
}

/// Lists as offsets and one contiguous vector.
fn flatten<T: Copy>(lists: Vec<Vec<T>>) -> (Vec<u32>, Vec<T>) {
    let mut offsets = Vec::with_capacity(lists.len() + 1);
    offsets.push(0);
    let mut flat = Vec::new();
    for list in lists {
        flat.extend(list);
        offsets.push(flat.len() as u32);
    }
    (offsets, flat)
}

/// Cyclic components waiting to be re-evaluated (by their first slot), as a
/// bit set with a summary bit per word that may be non-zero, so that a scan
/// skips 64 empty words at a time.
#[derive(Clone, Debug)]
struct Pending {
    words: Vec<u64>,
    /// Bit `w % 64` of word `w / 64`: word `w` may be non-zero.
    summary: Vec<u64>,
}

impl Pending {
    fn new(slots: usize) -> Pending {
        let words = slots.div_ceil(64);
        Pending {
            words: vec![0; words],
            summary: vec![0; words.div_ceil(64)],
        }
    }
}

/// A [`Pending`] set borrowed for one propagation.
struct PendingSlots<'a> {
    words: &'a mut [u64],
    summary: &'a mut [u64],
}

impl PendingSlots<'_> {
    #[inline(always)]
    fn mark(&mut self, slot: u32) {
        let word = slot as usize >> 6;
        debug_assert!(word < self.words.len() && word >> 6 < self.summary.len());
        // SAFETY: only slots of the net are marked, and the words cover them.
        unsafe {
            *self.words.get_unchecked_mut(word) |= 1u64 << (slot & 63);
            *self.summary.get_unchecked_mut(word >> 6) |= 1u64 << (word & 63);
        }
    }

    /// The lowest word at or after summary word `from` that may be non-zero.
    #[inline(always)]
    fn next_word(&self, from: usize) -> Option<usize> {
        (from..self.summary.len())
            .find(|&at| self.summary[at] != 0)
            .map(|at| at << 6 | self.summary[at].trailing_zeros() as usize)
    }
}

/// Guarded `and`s whose other operands are all true, per guard: as bits of the
/// `and`s that are evaluated, as legality bits for the lazy ones.
#[derive(Clone, Debug)]
struct Ready {
    /// Per guard `g`, its evaluated `and`s whose other operands are all true:
    /// bit `k` of words `ready_words[g]..ready_words[g + 1]` for the `and` `members[k]`
    /// (see [`Plan::ready_words`]).
    bits: Vec<u64>,
    /// Per guard, the flat legality set of its lazy `and`s whose other operands are
    /// all true; these sets and the evaluated slots' legality are disjoint.
    legal: Vec<u64>,
}

impl Ready {
    /// Guard `guard` changed: its lazy `and`s' legality joins `legal` or leaves it.
    #[inline]
    fn guard_changed(&self, plan: &Plan, guard: usize, legal: &mut [u64]) {
        let (first, end) = plan.guard_words[guard];
        let base = guard * plan.legal_words;
        for (kept, lazy) in legal[first..end]
            .iter_mut()
            .zip(&self.legal[base + first..base + end])
        {
            *kept ^= lazy;
        }
    }

    /// Guard `guard`'s evaluated `and`s whose other operands are all true.
    fn evaluated<'a>(&'a self, plan: &'a Plan, guard: usize) -> impl Iterator<Item = u32> + 'a {
        let words = plan.ready_words[guard] as usize..plan.ready_words[guard + 1] as usize;
        words.flat_map(move |w| {
            let mut bits = self.bits[w];
            std::iter::from_fn(move || {
                (bits != 0).then(|| {
                    let k = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    plan.members[w * 64 + k]
                })
            })
        })
    }

    /// Guarded `and` `and`: its other operands became all true, or stopped
    /// being. A lazy one's legality bits also flip in `legal` while its guard is true.
    fn toggle(&mut self, plan: &Plan, and: &GuardedAnd, legal: &mut [u64], guard_true: bool) {
        if and.is_lazy() {
            self.toggle_lazy(plan, and, legal, guard_true);
        } else {
            self.toggle_evaluated(and);
        }
    }

    /// [`Ready::toggle`] for a lazy `and`.
    #[inline(never)]
    fn toggle_lazy(&mut self, plan: &Plan, and: &GuardedAnd, legal: &mut [u64], guard_true: bool) {
        let base = and.guard as usize * plan.legal_words;
        let while_true = if guard_true { u64::MAX } else { 0 };
        debug_assert!((and.lazy.1 as usize) <= plan.lazy_bits.len());
        // SAFETY: lazy ranges lie in `lazy_bits` (`Plan::new`).
        let bits = unsafe {
            plan.lazy_bits
                .get_unchecked(and.lazy.0 as usize..and.lazy.1 as usize)
        };
        for &bit in bits {
            let (word, mask) = (bit as usize >> 6, 1u64 << (bit & 63));
            debug_assert!(word < legal.len() && base + word < self.legal.len());
            // SAFETY: lazy bits lie in one flat legality set, which `legal`
            // is, and `self.legal` holds one per guard (`Plan::new`).
            unsafe {
                *self.legal.get_unchecked_mut(base + word) ^= mask;
                *legal.get_unchecked_mut(word) ^= mask & while_true;
            }
        }
    }

    /// [`Ready::toggle`] for an evaluated `and`.
    #[inline(always)]
    fn toggle_evaluated(&mut self, and: &GuardedAnd) {
        let bit = and.ready_bit as usize;
        debug_assert!(bit >> 6 < self.bits.len());
        // SAFETY: an evaluated guarded `and` has a ready bit (`Plan::new`).
        unsafe { *self.bits.get_unchecked_mut(bit >> 6) ^= 1 << (bit & 63) };
    }
}

/// The values a differential evaluator keeps up to date; what a snapshot copies.
#[derive(Clone, Debug)]
struct Values {
    counters: Vec<Counter>,
    ready: Ready,
    /// The next state, kept up to date as next values change.
    next: Vec<u64>,
    /// The flat legality set (see [`Plan::role_words`]): the evaluated slots'
    /// legality, and the lazy sets of the guards that are true.
    legal: Vec<u64>,
    /// The inputs set true by the last joint move loaded (with the move
    /// part's cones: whose cones ran, their bytes to be restored).
    moves: Vec<u32>,
    /// The bytes the move part's cones read and write (see [`MoveCones`]).
    bytes: Vec<bool>,
}

impl Values {
    /// Becomes a copy of `source` (the snapshot of the initial state) in the
    /// vectors it has: no allocation, where the derived `clone_from` would
    /// build every vector anew.
    fn restore_from(&mut self, source: &Values) {
        self.counters.clone_from(&source.counters);
        self.ready.bits.clone_from(&source.ready.bits);
        self.ready.legal.clone_from(&source.ready.legal);
        self.next.clone_from(&source.next);
        self.legal.clone_from(&source.legal);
        self.moves.clone_from(&source.moves);
        self.bytes.clone_from(&source.bytes);
    }
}

/// The differential evaluator of one net: its plan, shared by every thread.
#[derive(Debug)]
pub struct Differential {
    id: EvaluatorId,
    net: Arc<CompiledNet>,
    plan: Plan,
}

/// One thread's values of a [`Differential`] evaluator.
#[derive(Clone, Debug)]
pub struct DifferentialCache {
    /// The evaluator that made it, the only one it fits.
    owner: EvaluatorId,
    values: Values,
    pending: Pending,
    /// The bases as last loaded.
    state: Vec<u64>,
    /// Whether the gates read only on the way to goals hold the values of the
    /// state loaded.
    goals_fresh: bool,
    /// The values in the initial state, once it has been loaded, if
    /// [`Plan::restore_initial`]: playouts restart there.
    initial: Option<Box<Values>>,
    values_scratch: Vec<bool>,
    /// Room for the fan-out of one slot: the guarded `and`s whose counters
    /// crossed their thresholds as it changed.
    crossed: Vec<u32>,
    /// Room for the words of a state being loaded that have bases turning false.
    falling: Vec<(u32, u64)>,
    /// The gates whose counters crossed, to be re-evaluated.
    work: Work,
}

/// The gates to re-evaluate, in two stacks: guarded `and`s apart from the
/// rest, so that neither re-evaluating them nor listing those of a long
/// fan-out ([`Propagation::tell_many`]) asks of each gate which kind it is (a
/// branch taken either way at random, after the threshold crossings the most
/// mispredicted of a transition on chess_200).
/// The order of re-evaluation is free: each gate's counter is exact, and a
/// gate re-evaluated after it changed back is left alone.
#[derive(Clone, Debug, Default)]
struct Work {
    /// Gates without a guard whose counters crossed.
    plain: Vec<u32>,
    /// Evaluated guarded `and`s whose other operands or guard changed.
    guarded: Vec<u32>,
}

impl Differential {
    /// The differential evaluators worth choosing between for `net`, the
    /// preferred first: its move part by cones (in native code, so only if
    /// `native`) if the cost model says they cost less than counters; when
    /// their code outgrows the cache, the plan by counters too, for the
    /// chooser to race (the cost model misjudges that both ways).
    pub fn candidates(net: &Arc<CompiledNet>, native: bool) -> Vec<Differential> {
        let kept: Vec<bool> = net.goal_only().iter().map(|&g| !g).collect();
        let activity = Activity::measure(net, ACTIVITY_BUDGET, &kept);
        let move_cones = native.then(|| MoveCones::new(net, &kept, &activity)).flatten();
        let to_race = move_cones.as_ref().is_some_and(MoveCones::outgrow_cache);
        let evaluator = |move_cones| Differential {
            id: EvaluatorId::fresh(),
            net: Arc::clone(net),
            plan: Plan::new(net, &activity, move_cones, native),
        };
        let by_cones = evaluator(move_cones);
        if to_race {
            vec![by_cones, evaluator(None)]
        } else {
            vec![by_cones]
        }
    }

    /// Whether the move part runs as cones (see [`MoveCones`]).
    #[cfg(test)]
    pub(crate) fn has_move_cones(&self) -> bool {
        self.plan.move_cones.is_some()
    }
}

impl Evaluator for Differential {
    type Cache = DifferentialCache;

    fn kind(&self) -> EvaluatorKind {
        EvaluatorKind::Differential
    }

    fn net(&self) -> &Arc<CompiledNet> {
        &self.net
    }

    /// Values holding the all-false state and no moves.
    fn cache(&self) -> DifferentialCache {
        let (net, plan) = (&self.net, &self.plan);
        let mut values = vec![false; net.slots()];
        run_steps(net.steps(), &mut values, false, &**net);
        let legal_words = plan.legal_words;
        let mut ready = Ready {
            bits: vec![0; plan.members.len() / 64],
            legal: vec![0; plan.guard_slots.len() * legal_words],
        };
        let mut next = vec![0u64; net.base_slots().len().div_ceil(64)];
        let mut legal = vec![0u64; legal_words];
        let mut bytes = vec![false; plan.bytes];
        let mut counters = Vec::with_capacity(net.slots());
        for s in 0..net.slots() as u32 {
            let fanin = net.fanin(s);
            let guard = plan.guarded[s as usize].guard_slot;
            let (threshold, inverted) = match net.gates()[s as usize] {
                Gate::And if guard != NO_INDEX => (fanin.len() as u32 - 1, false),
                Gate::And => (fanin.len() as u32, false),
                Gate::Or => (1, false),
                Gate::Not => (1, true),
            };
            let count = fanin
                .iter()
                .filter(|&&i| i != guard && values[i as usize])
                .count() as u32;
            let lazy = plan.guarded[s as usize].is_lazy();
            let flags = [
                (inverted, INVERTED),
                (values[s as usize] && !lazy, VALUE),
                (guard != NO_INDEX, GUARDED),
                (lazy, LAZY),
                (plan.guard_index[s as usize] != NO_INDEX, GUARD),
            ];
            let counter = Counter::new(
                count as i32 - threshold as i32,
                flags
                    .iter()
                    .filter(|(on, _)| *on)
                    .fold(0, |f, (_, flag)| f | flag),
            );
            if guard != NO_INDEX && count >= threshold {
                ready.toggle(plan, &plan.guarded[s as usize], &mut legal, false);
            }
            counters.push(counter);
            if counter.value() {
                let [_, effects] = plan.spans[s as usize];
                for &effect in &plan.targets[effects as usize..plan.spans[s as usize + 1][0] as usize] {
                    let bit = (effect & !EFFECT_KIND) as usize;
                    match effect & EFFECT_KIND {
                        LEGAL_EFFECT => legal[bit >> 6] |= 1 << (bit & 63),
                        NEXT_EFFECT => next[bit >> 6] |= 1 << (bit & 63),
                        BYTE_EFFECT => bytes[bit] = true,
                        _ => {}
                    }
                }
            }
        }
        for (guard, &slot) in plan.guard_slots.iter().enumerate() {
            if counters[slot as usize].value() {
                ready.guard_changed(plan, guard, &mut legal);
            }
        }
        if let Some(move_cones) = &plan.move_cones {
            move_cones.restore_all(&mut bytes);
        }
        DifferentialCache {
            owner: self.id,
            pending: Pending::new(net.slots()),
            state: vec![0; net.base_slots().len().div_ceil(64)],
            initial: None,
            goals_fresh: true,
            values_scratch: Vec::new(),
            crossed: vec![0; max_fanout(plan)],
            falling: Vec::new(),
            work: Work::default(),
            values: Values {
                counters,
                ready,
                next,
                legal,
                moves: Vec::new(),
                bytes,
            },
        }
    }
}

impl DifferentialCache {
    /// The values borrowed as slices for one propagation by `evaluator`, so
    /// that the hot loops index slices rather than vectors behind references.
    fn propagation<'a>(&'a mut self, evaluator: &'a Differential) -> Propagation<'a> {
        let Differential { net, plan, .. } = evaluator;
        let DifferentialCache {
            values:
                Values {
                    counters,
                    ready,
                    next,
                    legal,
                    bytes,
                    ..
                },
            pending,
            values_scratch,
            crossed,
            work,
            ..
        } = self;
        Propagation {
            work,
            net,
            plan,
            counters,
            ready,
            next,
            legal,
            bytes,
            pending: PendingSlots {
                words: &mut pending.words,
                summary: &mut pending.summary,
            },
            scratch: values_scratch,
            crossed,
        }
    }
}

/// A differential evaluator's values, borrowed for setting slots and
/// propagating what changes.
struct Propagation<'a> {
    net: &'a CompiledNet,
    plan: &'a Plan,
    counters: &'a mut [Counter],
    ready: &'a mut Ready,
    next: &'a mut [u64],
    legal: &'a mut [u64],
    bytes: &'a mut [bool],
    pending: PendingSlots<'a>,
    /// Room for the values a cyclic component's fixpoint reads.
    scratch: &'a mut Vec<bool>,
    /// Room for the guarded `and`s of one fan-out that cross their thresholds.
    crossed: &'a mut [u32],
    /// The gates to re-evaluate.
    work: &'a mut Work,
}

impl Propagation<'_> {
    /// Tells the fan-out and the effects of `slot` (whose counter flags are
    /// `flags`) that its value changed to `now`. The common case, counters that
    /// cross no threshold or list a gate to re-evaluate, stays in line; guarded `and`s
    /// and guards are handled out of line.
    #[inline(always)]
    fn changed(&mut self, slot: u32, now: bool, flags: u32) {
        let plan = self.plan;
        let s = slot as usize;
        debug_assert!(s + 1 < plan.spans.len());
        // SAFETY: there is a span per slot and one past the last.
        let ([gates, effects], end) =
            unsafe { (*plan.spans.get_unchecked(s), plan.spans.get_unchecked(s + 1)[0]) };
        // A counter crosses its threshold when it reaches 0 going up or -1 going down.
        let (delta, crossing) = if now { (1, 0) } else { (-1, -1) };
        let (delta, crossing) = (Counter::new(delta, 0).0, Counter::new(crossing, 0).0);
        debug_assert!(gates <= effects && effects <= end && end as usize <= plan.targets.len());
        // SAFETY: spans ascend and end within the targets (`Plan::new`).
        let targets = unsafe { plan.targets.get_unchecked(gates as usize..effects as usize) };
        if targets.len() >= BRANCHLESS_FANOUT {
            self.tell_many(gates as usize, effects as usize, delta, crossing);
        } else {
            for &target in targets {
                debug_assert!((target as usize) < self.counters.len());
                // SAFETY: fan-outs hold slots of the net, and there is a counter per slot.
                let c = unsafe { self.counters.get_unchecked_mut(target as usize) };
                c.0 = c.0.wrapping_add(delta);
                if (c.0 ^ crossing) < 1 << FLAG_BITS {
                    let guarded = c.has(GUARDED);
                    self.threshold_crossed(target, guarded);
                }
            }
        }
        // SAFETY: as for `targets`.
        for &effect in unsafe { plan.targets.get_unchecked(effects as usize..end as usize) } {
            let index = effect & !EFFECT_KIND;
            let bit = 1u64 << (index & 63);
            // The most frequent kinds first.
            match effect & EFFECT_KIND {
                LEGAL_EFFECT => self.legal[index as usize >> 6] ^= bit,
                NEXT_EFFECT => self.next[index as usize >> 6] ^= bit,
                CYCLE_EFFECT => self.pending.mark(index),
                _ => {
                    debug_assert!((index as usize) < self.bytes.len());
                    // SAFETY: byte effects index the bytes (`Plan::new`).
                    unsafe { *self.bytes.get_unchecked_mut(index as usize) = now };
                }
            }
        }
        if flags & GUARD != 0 {
            self.guard_changed(s);
        }
    }

    /// Adds `delta` to the counters of fan-out `plan.targets[start..end]`
    /// without a branch per gate (whether one crosses its threshold is data,
    /// and mostly unpredictable, and so is whether it is guarded): the plain
    /// gates that cross join the work as they come, the guarded `and`s are
    /// listed, then handled.
    #[inline(never)]
    fn tell_many(&mut self, start: usize, end: usize, delta: u32, crossing: u32) {
        let plain = &mut self.work.plain;
        plain.reserve(end - start);
        let mut listed = plain.len();
        let mut guarded = 0;
        let room = plain.spare_capacity_mut().as_mut_ptr();
        let first = listed;
        for &target in &self.plan.targets[start..end] {
            debug_assert!((target as usize) < self.counters.len() && guarded < self.crossed.len());
            debug_assert!(listed - first < end - start);
            // SAFETY: fan-outs hold slots of the net, and there is a counter
            // per slot; `crossed` has room for the longest fan-out, and the
            // spare capacity of `plain` for this one (`reserve` above), so
            // each write, at most one per target, lies within.
            unsafe {
                let c = self.counters.get_unchecked_mut(target as usize);
                let now = c.0.wrapping_add(delta);
                c.0 = now;
                // 1 if it crossed, and of those, 1 if it is guarded.
                let crossed = u32::from((now ^ crossing) < 1 << FLAG_BITS);
                let is_guarded = crossed & (now >> GUARDED.trailing_zeros());
                *self.crossed.get_unchecked_mut(guarded) = target;
                (*room.add(listed - first)).write(target);
                guarded += is_guarded as usize;
                listed += (crossed - is_guarded) as usize;
            }
        }
        // SAFETY: the items up to `listed` are written (the loop above).
        unsafe { plain.set_len(listed) };
        for k in 0..guarded {
            let target = self.crossed[k];
            self.guarded_crossed(target);
        }
    }

    /// Gate `target`'s counter crossed its threshold: it is re-evaluated, or
    /// if it is a guarded `and` (`guarded`), its guard's ready set changes.
    #[inline(always)]
    fn threshold_crossed(&mut self, target: u32, guarded: bool) {
        if guarded {
            self.guarded_crossed(target);
        } else {
            self.work.plain.push(target);
        }
    }

    /// Guarded `and` `target`'s other operands became all true, or stopped being:
    /// it joins or leaves its guard's ready set (or lazy legality), and is
    /// re-evaluated if its guard is true and it is not lazy.
    #[inline(always)]
    fn guarded_crossed(&mut self, target: u32) {
        let plan = self.plan;
        debug_assert!((target as usize) < plan.guarded.len());
        // SAFETY: only slots of the net cross, and there is a record per slot.
        let and = unsafe { plan.guarded.get_unchecked(target as usize) };
        debug_assert!((and.guard_slot as usize) < self.counters.len());
        // SAFETY: a guarded `and`'s guard is a slot of the net.
        let guard_true = unsafe { self.counters.get_unchecked(and.guard_slot as usize) }.value();
        if and.is_lazy() {
            self.ready.toggle_lazy(plan, and, self.legal, guard_true);
        } else {
            self.ready.toggle_evaluated(and);
            // The guard decides: a false one keeps the `and` false.
            if guard_true {
                self.work.guarded.push(target);
            }
        }
    }

    /// Guard `slot` changed: its ready `and`s are re-evaluated, and its lazy
    /// `and`s' legality joins the legality set or leaves it.
    #[cold]
    #[inline(never)]
    fn guard_changed(&mut self, slot: usize) {
        let guard = self.plan.guard_index[slot] as usize;
        for and in self.ready.evaluated(self.plan, guard) {
            self.work.guarded.push(and);
        }
        self.ready.guard_changed(self.plan, guard, self.legal);
    }

    /// Sets the value of `slot` to `value` and, if that changed it, tells its fan-out.
    #[inline(always)]
    fn set(&mut self, slot: u32, value: bool) {
        let counter = &mut self.counters[slot as usize];
        if counter.value() != value {
            counter.set_value(value);
            let flags = counter.flags();
            self.changed(slot, value, flags);
        }
    }

    /// Re-evaluates the gates whose counters crossed, depth first, as they
    /// come (the plain ones before the guarded `and`s); then each pending
    /// cyclic component, in slot order.
    fn propagate(&mut self) {
        loop {
            while let Some(slot) = self.work.plain.pop() {
                debug_assert!((slot as usize) < self.counters.len());
                // SAFETY: only slots of the net are pushed, and there is a counter per slot.
                let counter = unsafe { self.counters.get_unchecked_mut(slot as usize) };
                let c = *counter;
                let value = (c.level() >= 0) != c.has(INVERTED);
                if c.value() != value {
                    counter.set_value(value);
                    self.changed(slot, value, c.flags());
                }
            }
            if let Some(slot) = self.work.guarded.pop() {
                let value = derived(self.plan, self.counters, slot);
                self.set(slot, value);
                continue;
            }
            let Some(word) = self.pending.next_word(0) else {
                return;
            };
            let bits = self.pending.words[word];
            if bits == 0 {
                self.pending.summary[word >> 6] &= !(1u64 << (word & 63));
                continue;
            }
            self.pending.words[word] = bits & (bits - 1);
            self.recompute_cycle((word as u32) << 6 | bits.trailing_zeros());
        }
    }

    /// Sets each `or` of moves' legality ([`legal_ors`]) from the legality set,
    /// and propagates what changes (nothing its readers reach is legality).
    fn update_legal_ors(&mut self) {
        let plan = self.plan;
        if plan.legal_or_slots.is_empty() {
            return;
        }
        for (&or, bounds) in plan.legal_or_slots.iter().zip(plan.legal_or_offsets.windows(2)) {
            let masks = &plan.legal_or_masks[bounds[0] as usize..bounds[1] as usize];
            let value = masks.iter().any(|&(word, mask)| self.legal[word] & mask != 0);
            self.set(or, value);
        }
        self.propagate();
    }

    /// Re-evaluates the cyclic component whose first slot is `start` to its
    /// least fixpoint and passes on what changed.
    #[cold]
    #[inline(never)]
    fn recompute_cycle(&mut self, start: u32) {
        let net = self.net;
        let end = (start..net.slots() as u32)
            .find(|&s| net.cycle_start()[s as usize] != start)
            .unwrap_or(net.slots() as u32);
        // The fixpoint reads only the component's fan-in (its members among
        // it, which it sets first): only those are brought up to date.
        let mut values = std::mem::take(self.scratch);
        values.resize(net.slots(), false);
        for &read in (start..end).flat_map(|member| net.fanin(member)) {
            values[read as usize] = slot_value(self.plan, self.counters, read);
        }
        fixpoint(&mut values, start, end, false, net);
        for slot in start..end {
            self.set(slot, values[slot as usize]);
        }
        *self.scratch = values;
    }
}

impl ScalarEvaluator for Differential {}

/// The cache's owner is checked by the caller ([`ScalarEvaluator`], [`super::Bound`]).
impl Owned for Differential {
    #[inline(always)]
    fn id(&self) -> EvaluatorId {
        self.id
    }

    #[inline(always)]
    fn owner(cache: &DifferentialCache) -> EvaluatorId {
        cache.owner
    }

    #[inline]
    unsafe fn legal_words_owned<'c>(&self, cache: &'c DifferentialCache, role: usize) -> &'c [u64] {
        &cache.values.legal[self.plan.role_words[role]..self.plan.role_words[role + 1]]
    }

    /// Sources turning true are applied before those turning false: an `or`
    /// that gains one true operand and loses another then never crosses its
    /// threshold, where the other order would list it twice for nothing
    /// (breakthrough: 30% less time). The initial state's values may be copied
    /// from a snapshot of its first load (see `Plan::restore_initial`).
    unsafe fn load_state_owned(&self, cache: &mut DifferentialCache, state: &[u64]) {
        cache.goals_fresh = false;
        let bases = self.net.base_slots().len();
        let words = cache.state.len();
        // Word by word, in line: a call to `memcmp` costs more for a few words.
        let initial =
            self.plan.restore_initial && state[..words].iter().zip(self.net.initial()).all(|(a, b)| a == b);
        if let (true, Some(snapshot)) = (initial, &cache.initial) {
            cache.values.restore_from(snapshot);
            cache.state[..words].copy_from_slice(&state[..words]);
            return;
        }
        let mut loaded = std::mem::take(&mut cache.state);
        let mut falling = std::mem::take(&mut cache.falling);
        let mut propagation = cache.propagation(self);
        let mut set = |word: usize, mut bits: u64, value: bool| {
            while bits != 0 {
                let b = word * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                if b < bases {
                    propagation.set(propagation.net.base_slots()[b], value);
                }
            }
        };
        // One pass over the words; the few with bases turning false are
        // remembered for after.
        for (word, (old, &new)) in loaded.iter_mut().zip(&state[..words]).enumerate() {
            let changed = *old ^ new;
            if changed != 0 {
                set(word, changed & new, true);
                if changed & !new != 0 {
                    falling.push((word as u32, changed & !new));
                }
                *old = new;
            }
        }
        for &(word, bits) in &falling {
            set(word as usize, bits, false);
        }
        falling.clear();
        propagation.propagate();
        propagation.update_legal_ors();
        cache.state = loaded;
        cache.falling = falling;
        if initial {
            cache.initial = Some(Box::new(cache.values.clone()));
        }
    }

    unsafe fn load_moves_owned(&self, cache: &mut DifferentialCache, moves: &[u32]) {
        let Differential { net, plan, .. } = self;
        let DifferentialCache {
            values,
            values_scratch,
            ..
        } = cache;
        if let Some(move_cones) = &plan.move_cones {
            let counters = &values.counters;
            let by_cones = move_cones.load_moves(
                net,
                &mut values.bytes,
                &values.moves,
                moves,
                |slot| slot_value(plan, counters, slot),
                values_scratch,
                &mut values.next,
            );
            if by_cones {
                values.moves.resize(moves.len(), 0);
                copy_short(&mut values.moves, moves);
            } else {
                values.moves.clear();
            }
            return;
        }
        let mut loaded = std::mem::take(&mut cache.values.moves);
        let mut propagation = cache.propagation(self);
        let move_slots = &propagation.net.move_slots();
        for &m in moves {
            propagation.set(move_slots[m as usize], true);
        }
        for &m in &loaded {
            if !moves.contains(&m) {
                propagation.set(move_slots[m as usize], false);
            }
        }
        propagation.propagate();
        loaded.resize(moves.len(), 0);
        copy_short(&mut loaded, moves);
        cache.values.moves = loaded;
    }

    #[inline]
    unsafe fn value_owned(&self, cache: &DifferentialCache, slot: u32) -> bool {
        match &self.plan.move_cones {
            Some(move_cones) if move_cones.is_moved(slot) => move_cones.value(&cache.values.next, slot),
            _ => slot_value(&self.plan, &cache.values.counters, slot),
        }
    }

    /// Evaluates the gates read only on the way to goals, from the kept slots
    /// they read, unless they are up to date.
    unsafe fn refresh_goals_owned(&self, cache: &mut DifferentialCache) {
        if cache.goals_fresh {
            return;
        }
        let mut values = std::mem::take(&mut cache.values_scratch);
        values.resize(self.net.slots(), false);
        for &slot in &self.plan.goal_reads {
            // SAFETY: this function's contract: the evaluator made the cache.
            values[slot as usize] = unsafe { self.value_owned(cache, slot) };
        }
        self.plan.goal_program.run(&self.net, &mut values, &mut []);
        for &slot in &self.plan.goal_gates {
            cache.values.counters[slot as usize].set_value(values[slot as usize]);
        }
        cache.values_scratch = values;
        cache.goals_fresh = true;
    }

    unsafe fn next_state_owned(&self, cache: &DifferentialCache, out: &mut [u64]) {
        copy_short(out, &cache.values.next);
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Scalar, TURNS};
    use super::*;

    /// The differential evaluator the chooser gives `game`.
    fn chosen(game: &crate::game::Game) -> Arc<Differential> {
        match crate::driver::choose::scalar(game, EvaluatorKind::Differential, true) {
            Scalar::Differential(evaluator, _) => evaluator,
            Scalar::Sweep(..) => unreachable!("a differential evaluator"),
        }
    }

    #[test]
    fn goals_read_only_by_goals_are_evaluated_when_asked() {
        let game = TURNS.replace(
            "(goal a 50) (goal b 50)",
            "(<= (goal a 100) (true (cell 1 a)) (true (cell 2 a))) (<= (goal a 0) (not (true (cell 1 a))))
             (<= (goal a 0) (not (true (cell 2 a)))) (goal b 50)",
        );
        let loaded = crate::load(&game, &crate::LoadConfig::default()).unwrap();
        let net = loaded.game.net();
        let goal_only = net.goal_only();
        assert!(
            loaded
                .game
                .goals()
                .iter()
                .zip(net.goal_slots())
                .any(|(&(_, value), &slot)| value == 100 && goal_only[slot as usize]),
            "the goal of 100 is read by nothing else"
        );
        assert!(!goal_only[net.terminal_slot() as usize]);
        let evaluator = chosen(&loaded.game);
        let plan = &evaluator.plan;
        assert!(!plan.goal_gates.is_empty());
        for (slot, _) in goal_only.iter().enumerate().filter(|(_, &g)| g) {
            let (gates, end) = (plan.spans[slot][0], plan.spans[slot + 1][0]);
            assert_eq!(
                gates, end,
                "slot {slot} is read only on the way to goals: no fan-out"
            );
        }
        let mut sweep = crate::StateMachine::with_evaluator(
            Arc::clone(&loaded.game),
            crate::evaluator::EvaluatorKind::Sweep,
        );
        let mut differential = crate::StateMachine::new(Arc::clone(&loaded.game));
        // a marks cells 1 and 2 (b marks 9 and 8 between), then the goals are asked for.
        let mut state = sweep.initial_state();
        let input = |text: &str, role: usize| {
            let found = (0..loaded.game.moves().len())
                .find(|&m| loaded.game.moves()[m] == text && loaded.game.move_roles()[m] == role);
            crate::Move(found.expect("a move") as u32)
        };
        for (turn, cell) in ["(mark 1)", "(mark 9)", "(mark 2)", "(mark 8)"]
            .into_iter()
            .enumerate()
        {
            assert_eq!(sweep.goals(&state), differential.goals(&state));
            let joint = if turn % 2 == 0 {
                [input(cell, 0), input("noop", 1)]
            } else {
                [input("noop", 0), input(cell, 1)]
            };
            state = sweep.next_state(&state, &joint).unwrap();
        }
        assert_eq!(differential.goals(&state)[0], vec![100]);
        assert_eq!(sweep.goals(&state), differential.goals(&state));
    }

    #[test]
    fn an_or_of_legal_moves_is_read_from_the_legality_set() {
        let game = TURNS.replace(
            "(<= terminal (not open))",
            "(<= terminal (not open)) (<= (can_move ?r) (legal ?r (mark ?c))) (<= terminal (true (control a)) (not (can_move a)))",
        );
        let loaded = crate::load(&game, &crate::LoadConfig::default()).unwrap();
        let net = loaded.game.net();
        let evaluator = chosen(&loaded.game);
        let plan = &evaluator.plan;
        assert!(
            !plan.legal_or_slots.is_empty(),
            "can_move is an or of legal moves"
        );
        for (m, text) in loaded.game.moves().iter().enumerate() {
            if text.starts_with("(mark") {
                let legal = net.legal_slots()[m] as usize;
                assert!(
                    plan.guarded[legal].is_lazy(),
                    "{text} is lazy although can_move reads it"
                );
            }
        }
        let mut sweep = crate::StateMachine::with_evaluator(
            Arc::clone(&loaded.game),
            crate::evaluator::EvaluatorKind::Sweep,
        );
        let mut differential = crate::StateMachine::new(Arc::clone(&loaded.game));
        let mut rng = crate::random::Stream::new(5, 0);
        for _ in 0..20 {
            let mut state = sweep.initial_state();
            while !sweep.is_terminal(&state) {
                assert!(!differential.is_terminal(&state));
                let joint: Vec<crate::Move> = (0..2)
                    .map(|role| sweep.random_legal_move(&state, role, &mut rng).unwrap())
                    .collect();
                assert_eq!(
                    sweep.next_state(&state, &joint),
                    differential.next_state(&state, &joint)
                );
                state = sweep.next_state(&state, &joint).unwrap();
            }
            assert!(differential.is_terminal(&state));
            assert_eq!(sweep.goals(&state), differential.goals(&state));
        }
    }

    #[test]
    fn a_guard_pays_only_for_the_legality_words_of_its_lazy_ands() {
        // A third role with 4096 moves, always legal, makes the legality set
        // 66 words long; the marks' legality spans one of them.
        let numbers: String = (1..=64).map(|n| format!("(num {n}) ")).collect();
        let game = TURNS.replace("(role b)", "(role b) (role c)").replace(
            "(goal a 50) (goal b 50)",
            &format!(
                "(goal a 50) (goal b 50) (goal c 50) {numbers} (<= (legal c (say ?x ?y)) (num ?x) (num ?y))"
            ),
        );
        let loaded = crate::load(&game, &crate::LoadConfig::default()).unwrap();
        let net = loaded.game.net();
        let evaluator = chosen(&loaded.game);
        let plan = &evaluator.plan;
        assert!(plan.legal_words >= 66, "{} legality words", plan.legal_words);
        for (m, text) in loaded.game.moves().iter().enumerate() {
            if text.starts_with("(mark") {
                let legal = net.legal_slots()[m] as usize;
                assert!(plan.guarded[legal].is_lazy(), "{text} is lazy");
            }
        }
    }

    #[test]
    fn the_turn_guards_the_legality_of_marks() {
        let loaded = crate::load(TURNS, &crate::LoadConfig::default()).unwrap();
        let net = loaded.game.net();
        let activity = Activity::measure(net, 1_000_000, &vec![true; net.slots()]);
        let control = |role: &str| {
            let fact = format!("(control {role})");
            let base = loaded
                .game
                .facts()
                .iter()
                .position(|f| *f == fact)
                .expect("a control base");
            net.base_slots()[base]
        };
        // Playouts of nine moves: the turn changes in nine of every ten states
        // (not on the restart), a cell at most once a playout.
        let states = activity.transitions / 2;
        assert!(states >= 8, "{states} states measured");
        let turns = activity.flips[control("a") as usize];
        assert!(
            turns * 5 >= states * 4 - 5,
            "the turn changed {turns} times in {states} states"
        );
        let evaluator = chosen(&loaded.game);
        let plan = &evaluator.plan;
        for (m, text) in loaded.game.moves().iter().enumerate() {
            if text.starts_with("(mark") {
                let role = loaded.game.roles()[loaded.game.move_roles()[m]].as_str();
                let legal = net.legal_slots()[m] as usize;
                assert_eq!(
                    plan.guarded[legal].guard_slot,
                    control(role),
                    "guard of the legality of {text}"
                );
                assert!(plan.guarded[legal].is_lazy(), "{text} is lazy");
            }
        }
    }
}
