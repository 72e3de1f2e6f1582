//! The lanes evaluator: a net evaluated for 512 states at once, one per bit of
//! a 512-bit lane word, as runs of like gates (the driver's batched playouts,
//! `driver/lanes.rs`, choose the moves and step the states).

use super::{Evaluator, EvaluatorKind};
use crate::layout::{fixpoint_by_passes, CompiledNet, Gate, GateValue, Step};
use std::collections::HashMap;
use std::sync::Arc;

/// Words per lane vector.
pub const LANE_WORDS: usize = 8;
/// Playouts run side by side.
pub const LANES: usize = LANE_WORDS * 64;

/// One bit per lane.
pub(crate) type Lane = [u64; LANE_WORDS];

/// Lane words on cache lines of their own (aligned to 64), so that 512-bit
/// loads and stores never straddle two lines: in the heap ([`LaneValues`]),
/// and on the stack, where a local's alignment is otherwise 8, so that whether
/// its words straddle depended on where the callers left the stack pointer
/// (identical code of the lanes' step ran 5-10% slower or faster from one
/// build to the next); an aligned local makes the compiler align the frame.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(64))]
pub(crate) struct OnLines<T>(pub(crate) T);

/// Lane words, each on a cache line of its own, read and written as a slice of
/// lane words (`[u64; LANE_WORDS]`, one bit per lane). Misaligned words cost gomoku and hex 12% of their lanes speed,
/// depending on where the allocator put them.
#[derive(Clone, Debug)]
pub struct LaneValues(Vec<OnLines<Lane>>);

impl LaneValues {
    /// `n` words, no lane set.
    pub(crate) fn new(n: usize) -> LaneValues {
        LaneValues(vec![OnLines(NO_LANES); n])
    }
}

impl std::ops::Deref for LaneValues {
    type Target = [Lane];

    fn deref(&self) -> &[Lane] {
        // SAFETY: `OnLines<Lane>` is `repr(C)` around one `Lane` and its size,
        // 64, is that of a `Lane`, so `n` of them are laid out as `n` `Lane`s.
        unsafe { std::slice::from_raw_parts(self.0.as_ptr().cast(), self.0.len()) }
    }
}

impl std::ops::DerefMut for LaneValues {
    fn deref_mut(&mut self) -> &mut [Lane] {
        // SAFETY: as in `deref`; the borrow of `self` is exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.0.as_mut_ptr().cast(), self.0.len()) }
    }
}

/// No lane.
pub(crate) const NO_LANES: Lane = [0; LANE_WORDS];
/// Every lane.
pub(crate) const ALL_LANES: Lane = [!0; LANE_WORDS];

/// The lanes evaluator of one net: its state-only part and move part as runs
/// of like gates, shared by every thread.
#[derive(Debug)]
pub struct Lanes {
    net: Arc<CompiledNet>,
    state_part: Program,
    move_part: Program,
    /// Value slots of the move part's gates (the net's and the complements
    /// it adds).
    slots: usize,
}

impl Lanes {
    /// The evaluator of `net`.
    pub fn new(net: &Arc<CompiledNet>) -> Lanes {
        let (move_gates, move_steps) = LaneGates::complementing_frames(net);
        Lanes {
            state_part: Program::new(&LaneGates::plain(net), &net.steps()[..net.state_steps()]),
            move_part: Program::new(&move_gates, &move_steps),
            slots: move_gates.slots(),
            net: Arc::clone(net),
        }
    }
}

impl Lanes {
    /// Evaluates the state-only part in every lane of `values` (its cache).
    #[inline(always)]
    pub(crate) fn load_states(&self, values: &mut [Lane]) {
        self.state_part.run(&self.net, values);
    }

    /// Evaluates the move part in every lane of `values` (its cache).
    #[inline(always)]
    pub(crate) fn load_moves(&self, values: &mut [Lane]) {
        self.move_part.run(&self.net, values);
    }
}

impl Evaluator for Lanes {
    /// One lane word per value slot.
    type Cache = LaneValues;

    fn kind(&self) -> EvaluatorKind {
        EvaluatorKind::Lanes
    }

    fn net(&self) -> &Arc<CompiledNet> {
        &self.net
    }

    /// All values false in every lane.
    fn cache(&self) -> LaneValues {
        LaneValues::new(self.slots)
    }
}

/// The widest vector registers of the CPU that the lanes evaluator uses:
/// 512 bits with AVX-512F, 256 with AVX2, else 128. A value is made only by
/// [`VectorWidth::detect`], which asks the CPU, so holding a width of 512 (or
/// 256) proves that the CPU has AVX-512F (or AVX2): code compiled for those
/// features runs on that proof.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct VectorWidth(u32);

impl VectorWidth {
    /// The widest the CPU has.
    pub fn detect() -> VectorWidth {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f") {
                return VectorWidth(512);
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                return VectorWidth(256);
            }
        }
        VectorWidth(128)
    }

    /// Its width in bits (reported by benchmarks).
    pub fn bits(self) -> u32 {
        self.0
    }
}

/// Gates of one kind and arity (size of fan-in) evaluated in a row: `count`
/// gates, which write the slots `written[first..first + count]` and whose
/// fan-ins are `fanins[first_fanin..]`, `arity` slots each.
#[derive(Clone, Copy, Debug)]
struct Run {
    gate: Gate,
    arity: usize,
    first: usize,
    first_fanin: usize,
    count: usize,
}

/// What a [`Program`] evaluates in order.
#[derive(Clone, Copy, Debug)]
enum Part {
    Gates(Run),
    /// The cyclic component `start..end`, to its least fixpoint.
    Cycle(u32, u32),
}

/// Steps of a net as runs of gates of one kind and fan-in: each step's gates
/// ordered by level (longest path from the step's sources, so every gate comes
/// after what it reads), then kind and fan-in, so that a run is one loop of a
/// fixed number of 512-bit operations per gate, without a branch per gate.
#[derive(Debug)]
struct Program {
    parts: Vec<Part>,
    written: Vec<u32>,
    fanins: Vec<u32>,
}

impl Program {
    fn new(gates: &LaneGates, steps: &[Step]) -> Program {
        let mut level = vec![0u32; gates.slots()];
        let mut program = Program {
            parts: Vec::new(),
            written: Vec::new(),
            fanins: Vec::new(),
        };
        for step in steps {
            let (start, end) = match *step {
                Step::Gates(start, end) => (start, end),
                Step::Cycle(start, end) => {
                    program.parts.push(Part::Cycle(start, end));
                    continue;
                }
            };
            for slot in start..end {
                let read = gates.fanin(slot).iter().map(|&i| level[i as usize] + 1);
                level[slot as usize] = read.max().unwrap_or(0);
            }
            let key = |&slot: &u32| {
                (
                    level[slot as usize],
                    gates.gate(slot) as u8,
                    gates.fanin(slot).len(),
                )
            };
            let mut slots: Vec<u32> = (start..end).collect();
            slots.sort_by_key(key);
            for group in slots.chunk_by(|a, b| key(a) == key(b)) {
                program.parts.push(Part::Gates(Run {
                    gate: gates.gate(group[0]),
                    arity: gates.fanin(group[0]).len(),
                    first: program.written.len(),
                    first_fanin: program.fanins.len(),
                    count: group.len(),
                }));
                for &slot in group {
                    program.written.push(slot);
                    program.fanins.extend_from_slice(gates.fanin(slot));
                }
            }
        }
        program
    }

    /// Evaluates the program's gates over `values` (one per slot of `net`).
    #[inline(always)]
    fn run(&self, net: &CompiledNet, values: &mut [Lane]) {
        for part in &self.parts {
            match *part {
                Part::Gates(run) => match run.arity {
                    1 => self.run_gates::<1>(run, values),
                    2 => self.run_gates::<2>(run, values),
                    3 => self.run_gates::<3>(run, values),
                    4 => self.run_gates::<4>(run, values),
                    5 => self.run_gates::<5>(run, values),
                    6 => self.run_gates::<6>(run, values),
                    7 => self.run_gates::<7>(run, values),
                    8 => self.run_gates::<8>(run, values),
                    _ => self.run_wide_gates(run, values),
                },
                Part::Cycle(start, end) => fixpoint_by_passes(values, start, end, NO_LANES, &NetGates(net)),
            }
        }
    }

    /// The gates of `run`, whose arity is `N`.
    #[inline(always)]
    fn run_gates<const N: usize>(&self, run: Run, values: &mut [Lane]) {
        let written = &self.written[run.first..run.first + run.count];
        let fanins = &self.fanins[run.first_fanin..run.first_fanin + run.count * N];
        for (&slot, read) in written.iter().zip(fanins.chunks_exact(N)) {
            let first = values[read[0] as usize];
            let value = match run.gate {
                Gate::And => read[1..]
                    .iter()
                    .fold(first, |acc, &i| and(&acc, &values[i as usize])),
                Gate::Or => read[1..]
                    .iter()
                    .fold(first, |acc, &i| or(&acc, &values[i as usize])),
                Gate::Not => not(&first),
            };
            values[slot as usize] = value;
        }
    }

    /// The gates of `run`, of an arity without an instance above (0, or above 8).
    #[inline(always)]
    fn run_wide_gates(&self, run: Run, values: &mut [Lane]) {
        let written = &self.written[run.first..run.first + run.count];
        if run.arity == 0 {
            for &slot in written {
                values[slot as usize] = gate_value(run.gate, &[], values);
            }
            return;
        }
        let fanins = &self.fanins[run.first_fanin..run.first_fanin + run.count * run.arity];
        for (&slot, read) in written.iter().zip(fanins.chunks_exact(run.arity)) {
            values[slot as usize] = gate_value(run.gate, read, values);
        }
    }
}

/// A gate's value over words of lanes: and/or/not bit by bit.
#[inline(always)]
fn gate_value(gate: Gate, fanin: &[u32], values: &[Lane]) -> Lane {
    match gate {
        Gate::And => fanin
            .iter()
            .fold(ALL_LANES, |acc, &i| and(&acc, &values[i as usize])),
        Gate::Or => fanin
            .iter()
            .fold(NO_LANES, |acc, &i| or(&acc, &values[i as usize])),
        Gate::Not => not(&values[fanin[0] as usize]),
    }
}

/// The gates the lanes evaluate: the net's, where some gates may read other
/// slots than in the net and gates may be added after the net's slots.
///
/// In the move part, an `or` over most of a role's inputs reads the negated
/// `or` of the role's other inputs instead: in a lane that moves exactly one
/// input of each role is set, so the two agree (the frame rules of games such
/// as breakthrough, "every move that does not touch this cell", go from
/// hundreds of reads to a handful). The negations are computed by added gates,
/// before the rest of the move part. In a lane that does not move every input is
/// clear and the rewritten gates may differ, but its next state is not taken.
/// The optimizer's exclusive-inputs pass makes the same rewrite in the circuit,
/// where it is kept only if the circuit gets smaller, since the scalar
/// evaluators, which skip what did not change, do not gain from it.
struct LaneGates<'a> {
    net: &'a CompiledNet,
    /// Fan-ins that replace a net gate's.
    rewritten: HashMap<u32, Vec<u32>>,
    /// Gates added at slots `net.slots..`.
    added: Vec<(Gate, Vec<u32>)>,
}

impl<'a> LaneGates<'a> {
    /// The net's gates as they are.
    fn plain(net: &'a CompiledNet) -> LaneGates<'a> {
        LaneGates {
            net,
            rewritten: HashMap::new(),
            added: Vec::new(),
        }
    }

    /// The net's gates with the move part's frame `or`s complemented, and the
    /// move part's steps (the added gates' step first).
    fn complementing_frames(net: &'a CompiledNet) -> (LaneGates<'a>, Vec<Step>) {
        let mut gates = LaneGates::plain(net);
        let groups: Vec<Vec<u32>> = net
            .role_moves()
            .iter()
            .map(|inputs| {
                let mut slots: Vec<u32> = inputs.iter().map(|&m| net.move_slots()[m as usize]).collect();
                slots.sort_unstable();
                slots
            })
            .collect();
        let mut role_of = HashMap::new();
        for (role, slots) in groups.iter().enumerate() {
            role_of.extend(slots.iter().map(|&slot| (slot, role)));
        }
        for step in &net.steps()[net.state_steps()..] {
            let Step::Gates(start, end) = *step else { continue };
            for slot in start..end {
                if net.gates()[slot as usize] == Gate::Or {
                    gates.complement(slot, &groups, &role_of);
                }
            }
        }
        let first_added = net.slots() as u32;
        let mut steps = vec![Step::Gates(first_added, first_added + gates.added.len() as u32)];
        steps.extend_from_slice(&net.steps()[net.state_steps()..]);
        (gates, steps)
    }

    /// Rewrites the `or` at `slot` for every role most of whose inputs
    /// (`groups`, sorted slots; `role_of` maps an input slot to its role) it
    /// reads, where the negated `or` of the others is shorter.
    fn complement(&mut self, slot: u32, groups: &[Vec<u32>], role_of: &HashMap<u32, usize>) {
        let mut fanin = self.net.fanin(slot).to_vec();
        let mut read = vec![0usize; groups.len()];
        for operand in &fanin {
            if let Some(&role) = role_of.get(operand) {
                read[role] += 1;
            }
        }
        let mut sorted = fanin.clone();
        sorted.sort_unstable();
        let mut changed = false;
        for (role, group) in groups.iter().enumerate() {
            // The same bar as the optimizer's pass: the rewrite reads fewer
            // slots than it drops, plus its two gates.
            if read[role] < 4 || group.len() + 2 >= 2 * read[role] {
                continue;
            }
            let rest: Vec<u32> = group
                .iter()
                .copied()
                .filter(|i| sorted.binary_search(i).is_err())
                .collect();
            if rest.is_empty() {
                continue;
            }
            let any_rest = self.add(Gate::Or, rest);
            let none_of_rest = self.add(Gate::Not, vec![any_rest]);
            fanin.retain(|i| role_of.get(i) != Some(&role));
            fanin.push(none_of_rest);
            changed = true;
        }
        if changed {
            self.rewritten.insert(slot, fanin);
        }
    }

    fn add(&mut self, gate: Gate, fanin: Vec<u32>) -> u32 {
        self.added.push((gate, fanin));
        (self.net.slots() + self.added.len() - 1) as u32
    }

    /// Slots in all: the net's and the added gates'.
    fn slots(&self) -> usize {
        self.net.slots() + self.added.len()
    }

    fn gate(&self, slot: u32) -> Gate {
        match (slot as usize).checked_sub(self.net.slots()) {
            Some(added) => self.added[added].0,
            None => self.net.gates()[slot as usize],
        }
    }

    fn fanin(&self, slot: u32) -> &[u32] {
        match (slot as usize).checked_sub(self.net.slots()) {
            Some(added) => &self.added[added].1,
            None => self
                .rewritten
                .get(&slot)
                .map_or(self.net.fanin(slot), Vec::as_slice),
        }
    }
}

/// The net's gates over words of lanes, for cyclic components (which the
/// lanes never rewrite).
struct NetGates<'a>(&'a CompiledNet);

impl GateValue<Lane> for NetGates<'_> {
    #[inline(always)]
    fn value(&self, values: &[Lane], slot: u32) -> Lane {
        gate_value(self.0.gates()[slot as usize], self.0.fanin(slot), values)
    }

    #[inline(always)]
    fn readers(&self, slot: u32) -> &[u32] {
        self.0.fanout(slot)
    }
}

#[inline(always)]
pub(crate) fn and(a: &Lane, b: &Lane) -> Lane {
    std::array::from_fn(|w| a[w] & b[w])
}

#[inline(always)]
pub(crate) fn or(a: &Lane, b: &Lane) -> Lane {
    std::array::from_fn(|w| a[w] | b[w])
}

#[inline(always)]
pub(crate) fn xor(a: &Lane, b: &Lane) -> Lane {
    std::array::from_fn(|w| a[w] ^ b[w])
}

#[inline(always)]
pub(crate) fn not(a: &Lane) -> Lane {
    std::array::from_fn(|w| !a[w])
}

/// Calls `f` with every lane whose bit is set, ascending.
#[inline(always)]
pub(crate) fn for_each_lane(lanes: &Lane, mut f: impl FnMut(usize)) {
    for (w, &word) in lanes.iter().enumerate() {
        let mut bits = word;
        while bits != 0 {
            f(w * 64 + bits.trailing_zeros() as usize);
            bits &= bits - 1;
        }
    }
}
