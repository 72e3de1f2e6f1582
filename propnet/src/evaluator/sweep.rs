//! The sweep evaluator: every gate of the state-only part after each state, every
//! gate of the move part after each joint move, in layer order, one byte per slot.
//! The gates are compiled into runs of one kind of operation (two-operand `and`s,
//! `not`s, ...) over gates that do not read each other, so that evaluating them
//! branches on neither gate kinds nor operand values, and then, where the
//! platform allows, into native code (the `native` module): one straight line of
//! loads, `and`s, `or`s and stores per part, which also packs the legality set
//! (state part) and the next state (move part). There, blocks of gates whose
//! bases and inputs seldom change are flagged: skipped while none of those
//! changed (the `skipping` module chooses them). Where they cost less, the
//! move part runs instead as the cones of the moves played (the `cones`
//! module); when their code outgrows the cache, the plans with and without
//! them race on random playouts (the driver's chooser, `driver/choose.rs`)
//! and the faster is kept.
//!
//! The native code also jumps over gates whose value cannot matter while a
//! slot holds a value, storing the outputs that slot forces (the `conditions`
//! module: the move generation of the role not to move), sets the `or`s of
//! moves as each joint move loads instead of evaluating them (`decoded.rs`),
//! and leaves the gates read only on the way to goals until goals are asked
//! for (flat Monte-Carlo asks in terminal states only).

use super::bits::copy_short;
use super::conditions::{self, Condition};
use super::cones::Cones;
use super::decoded::DecodedMoves;
use super::skipping::{self, Blocks, Candidate, Marks};
use super::{Evaluator, EvaluatorId, EvaluatorKind, Owned, ScalarEvaluator};
use crate::jit::{Layout, NativeGate, NativeProgram, NativeStep, Skip};
use crate::layout::{fixpoint, role_words};
use crate::layout::{CompiledNet, Gate, Step};
use crate::profile::costs::{MISPREDICT_COST, TEST_COST};
use crate::profile::skips::{Changes, SkipCounts};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// One run of a [`Program`]: `count` gates of one kind whose operands start at
/// `at` in [`Program::operands`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Run {
    /// Operands `out, a, b` per gate: `out = a and b`.
    And2 { at: u32, count: u32 },
    /// Operands `out, a, b` per gate: `out = a or b`.
    Or2 { at: u32, count: u32 },
    /// Operands `out, a` per gate: `out = not a`.
    Not { at: u32, count: u32 },
    /// Operands `out, n, n fan-in slots` per gate: `out` = all of them (true for none).
    And { at: u32, count: u32 },
    /// Operands `out, n, n fan-in slots` per gate: `out` = any of them (false for none).
    Or { at: u32, count: u32 },
    /// A cyclic component, slots `start..end`, to its least fixpoint.
    Cycle(u32, u32),
}

/// A range of evaluation steps compiled into runs, and into native code where
/// the platform allows ([`NativeProgram`]).
#[derive(Debug, Default)]
pub(crate) struct Program {
    /// The runs and their operand records; emptied once native code is made
    /// from them, as nothing reads them after.
    runs: Vec<Run>,
    operands: Vec<u32>,
    /// The index in `runs` where each independent set's runs begin.
    sets: Vec<usize>,
    /// After the runs, word `w` of the output packs the values of `packed[w]`
    /// (bit `i` for `packed[w][i]`).
    packed: Vec<Vec<u32>>,
    native: Option<NativeProgram>,
    /// Per slot, the condition under which native code skips the gate (see
    /// the `conditions` module), or empty: none is used.
    conditions: Vec<Option<Condition>>,
    /// Per slot, whether its condition forces it (an output: skipped, it
    /// takes the condition's `skip_when`), or empty.
    forced: Vec<bool>,
}

impl Program {
    /// Compiles the gates of `steps` that are `taken` (see
    /// [`Program::interpreted`]) into native code over values laid out as
    /// `layout` says if `native`, skipping no gate.
    pub(crate) fn new(
        net: &CompiledNet,
        steps: &[Step],
        taken: &[bool],
        packed: Vec<Vec<u32>>,
        layout: Layout,
        native: bool,
    ) -> Program {
        let mut program = Program::interpreted(net, steps, taken, packed);
        if native {
            program.compile(net, layout, |_| None, None);
        }
        program
    }

    /// Lets native code skip gates under the `conditions` (one per slot;
    /// those of `output`s force them) that pay: those whose gates' values
    /// read (less the store of a forced gate's value), times how often the
    /// condition holds its skip value (`rates`, for this part), outweigh a
    /// test and the mispredicted jumps (as in [`skipping`]) per run of
    /// consecutive gates under it. None if the program has cycles (they fix
    /// the gates' order) or ordering each gate after its condition's slot
    /// would be cyclic.
    fn use_conditions(
        &mut self,
        net: &CompiledNet,
        conditions: &[Option<Condition>],
        output: &[bool],
        rates: impl Fn(Condition) -> f64,
    ) {
        if self.runs.iter().any(|run| matches!(run, Run::Cycle(..))) {
            return;
        }
        let Some(ordered) = ordered_by_conditions(&self.native_steps(None), conditions, None) else {
            return;
        };
        // Per condition: the values its gates read, and the runs of consecutive gates.
        let mut reads: HashMap<Condition, (usize, usize)> = HashMap::new();
        let mut last = None;
        for (gate, operands) in NativeProgram::stored_gates(net.slots(), ordered, &self.read_once(net)) {
            let condition = conditions[gate as usize];
            if let Some(condition) = condition {
                let (values, runs) = reads.entry(condition).or_default();
                *values += operands.saturating_sub(usize::from(output[gate as usize]));
                *runs += usize::from(last != Some(condition));
            }
            last = condition;
        }
        let pays: HashSet<Condition> = reads
            .into_iter()
            .filter(|&(condition, (values, runs))| {
                let rate = rates(condition);
                let mispredicted = rate.min(1.0 - rate);
                rate * values as f64 > runs as f64 * (TEST_COST + MISPREDICT_COST * mispredicted)
            })
            .map(|(condition, _)| condition)
            .collect();
        if !pays.is_empty() {
            self.conditions = conditions
                .iter()
                .map(|c| c.filter(|c| pays.contains(c)))
                .collect();
            self.forced = self
                .conditions
                .iter()
                .zip(output)
                .map(|(c, &output)| output && c.is_some())
                .collect();
        }
    }

    /// Makes native code of the program over values laid out as `layout`
    /// says where the platform allows; `block` gives the flagged
    /// block of each stored gate (see [`NativeProgram::compile`]), and `key`
    /// the order of gates in each independent set (see
    /// [`Program::native_steps`]).
    fn compile(
        &mut self,
        net: &CompiledNet,
        layout: Layout,
        mut block: impl FnMut(u32) -> Option<u32>,
        key: Option<&[u32]>,
    ) {
        let read_once = self.read_once(net);
        let native = NativeProgram::compile(
            layout,
            self.packed.len(),
            self.native_steps(key),
            &read_once,
            |gate| match self.conditions.get(gate as usize).copied().flatten() {
                Some(condition) => Some(Skip::Condition(condition)),
                None => block(gate).map(Skip::Unflagged),
            },
            |gate| self.forced.get(gate as usize).copied().unwrap_or(false),
        );
        if native.is_some() {
            self.runs = Vec::new();
            self.operands = Vec::new();
            self.sets = Vec::new();
            self.conditions = Vec::new();
            self.forced = Vec::new();
            self.native = native;
        }
    }

    /// The gates that native code stores without a condition, which it
    /// could flag, as [`skipping::choose`] takes them.
    fn candidates(&self, net: &CompiledNet, moves: bool, key: &[u32]) -> Vec<Candidate> {
        NativeProgram::stored_gates(net.slots(), self.native_steps(Some(key)), &self.read_once(net))
            .into_iter()
            .filter(|&(gate, _)| self.conditions.get(gate as usize).is_none_or(Option::is_none))
            .map(|(gate, operands)| Candidate {
                gate,
                operands,
                moves,
            })
            .collect()
    }

    /// Whether it runs native code.
    fn is_native(&self) -> bool {
        self.native.is_some()
    }

    /// The blocks its native code flags, in the order of their flags.
    fn flagged(&self) -> &[u32] {
        self.native.as_ref().map_or(&[], |native| &native.flagged)
    }

    /// Per slot, whether one gate reads it and it is no output (terminal,
    /// goal, legality, next value or packed here): native code need not store it.
    fn read_once(&self, net: &CompiledNet) -> Vec<bool> {
        let mut read_once: Vec<bool> = outputs(net)
            .iter()
            .enumerate()
            .map(|(s, &output)| !output && net.fanout_offsets()[s + 1] - net.fanout_offsets()[s] == 1)
            .collect();
        for &slot in self.packed.iter().flatten() {
            read_once[slot as usize] = false;
        }
        read_once
    }

    /// Compiles the gates of `steps` that are `taken`, to be interpreted: each
    /// range of acyclic gates is cut into independent sets (no gate reads
    /// another of its set), and each set into one run per kind of operation.
    /// After them, output word `w` packs the values of `packed[w]` (at most 64
    /// slots each).
    fn interpreted(net: &CompiledNet, steps: &[Step], taken: &[bool], packed: Vec<Vec<u32>>) -> Program {
        assert!(packed.iter().all(|slots| slots.len() <= 64));
        let mut program = Program {
            packed,
            ..Program::default()
        };
        for &step in steps {
            match step {
                Step::Cycle(start, end) if taken[start as usize] => program.runs.push(Run::Cycle(start, end)),
                Step::Cycle(..) => {}
                Step::Gates(start, end) => {
                    let mut set_start = start;
                    for slot in start..end {
                        if net.fanin(slot).iter().any(|&i| i >= set_start) {
                            program.add_set(net, taken, set_start, slot);
                            set_start = slot;
                        }
                    }
                    program.add_set(net, taken, set_start, end);
                }
            }
        }
        program
    }

    /// Adds the runs of the independent gates `start..end` that are `taken`.
    fn add_set(&mut self, net: &CompiledNet, taken: &[bool], start: u32, end: u32) {
        self.sets.push(self.runs.len());
        /// A kind of run: which gates it takes, how it is made, and whether its
        /// records give the size of their fan-in.
        struct Kind {
            takes: fn(Gate, usize) -> bool,
            run: fn(u32, u32) -> Run,
            counted: bool,
        }
        let kinds = [
            Kind {
                takes: |gate, fanin| gate == Gate::And && fanin == 2,
                run: |at, count| Run::And2 { at, count },
                counted: false,
            },
            Kind {
                takes: |gate, fanin| gate == Gate::Or && fanin == 2,
                run: |at, count| Run::Or2 { at, count },
                counted: false,
            },
            Kind {
                takes: |gate, _| gate == Gate::Not,
                run: |at, count| Run::Not { at, count },
                counted: false,
            },
            Kind {
                takes: |gate, fanin| gate == Gate::And && fanin != 2,
                run: |at, count| Run::And { at, count },
                counted: true,
            },
            Kind {
                takes: |gate, fanin| gate == Gate::Or && fanin != 2,
                run: |at, count| Run::Or { at, count },
                counted: true,
            },
        ];
        for kind in kinds {
            let at = self.operands.len() as u32;
            let mut count = 0;
            for slot in (start..end).filter(|&s| taken[s as usize]) {
                let fanin = net.fanin(slot);
                if (kind.takes)(net.gates()[slot as usize], fanin.len()) {
                    count += 1;
                    self.operands.push(slot);
                    if kind.counted {
                        self.operands.push(fanin.len() as u32);
                    }
                    self.operands.extend(fanin);
                }
            }
            if count > 0 {
                self.runs.push((kind.run)(at, count));
            }
        }
        // A set of which no gate is taken begins no runs: its mark would
        // stand at the same run as the next set's, and hide that one's.
        if self.sets.last() == Some(&self.runs.len()) {
            self.sets.pop();
        }
    }

    /// The gates and cycles of the runs, then the packing, for
    /// [`NativeProgram::compile`]: the gates of each independent set in the
    /// order of `key` if given (native code need not group them by kind), or
    /// if conditions are used, as [`ordered_by_conditions`] orders them.
    fn native_steps(&self, key: Option<&[u32]>) -> Vec<NativeStep<'_>> {
        let mut steps = Vec::new();
        // Where the steps of the current independent set begin.
        let mut set_begins = 0;
        let mut sets = self.sets.iter().peekable();
        let order = |steps: &mut Vec<NativeStep>, begins: usize| {
            if let Some(key) = key {
                steps[begins..].sort_by_key(|step| match step {
                    NativeStep::Gate(gate) => key[gate.out as usize],
                    _ => 0,
                });
            }
        };
        for (r, &run) in self.runs.iter().enumerate() {
            if sets.next_if_eq(&&r).is_some() || matches!(run, Run::Cycle(..)) {
                order(&mut steps, set_begins);
                set_begins = steps.len();
            }
            self.extend_steps(run, &mut steps);
            if matches!(run, Run::Cycle(..)) {
                set_begins = steps.len();
            }
        }
        order(&mut steps, set_begins);
        if !self.conditions.is_empty() {
            steps = ordered_by_conditions(&steps, &self.conditions, key).expect("checked by use_conditions");
        }
        steps.extend(
            self.packed
                .iter()
                .enumerate()
                .map(|(word, slots)| NativeStep::Pack { word, slots }),
        );
        steps
    }

    /// Appends the gates (or the cycle) of `run` to `steps`.
    fn extend_steps<'a>(&'a self, run: Run, steps: &mut Vec<NativeStep<'a>>) {
        let operands = &self.operands;
        let fixed = |at: u32, count: u32, width: usize, all: bool, negate: bool| {
            operands[at as usize..at as usize + count as usize * width]
                .chunks_exact(width)
                .map(move |op| {
                    NativeStep::Gate(NativeGate {
                        out: op[0],
                        all,
                        negate,
                        fanin: &op[1..],
                    })
                })
        };
        match run {
            Run::And2 { at, count } => steps.extend(fixed(at, count, 3, true, false)),
            Run::Or2 { at, count } => steps.extend(fixed(at, count, 3, false, false)),
            Run::Not { at, count } => steps.extend(fixed(at, count, 2, true, true)),
            Run::And { at, count } | Run::Or { at, count } => {
                let all = matches!(run, Run::And { .. });
                let mut k = at as usize;
                for _ in 0..count {
                    let (out, n) = (operands[k], operands[k + 1] as usize);
                    let fanin = &operands[k + 2..k + 2 + n];
                    k += 2 + n;
                    steps.push(NativeStep::Gate(NativeGate {
                        out,
                        all,
                        negate: false,
                        fanin,
                    }));
                }
            }
            Run::Cycle(start, end) => steps.push(NativeStep::Cycle(start, end)),
        }
    }

    /// Evaluates the program over `values` and packs its output into `out`
    /// (one word per packed word).
    pub(crate) fn run(&self, net: &CompiledNet, values: &mut [bool], out: &mut [u64]) {
        if let Some(native) = &self.native {
            return native.run(values, out, |values, start, end| {
                fixpoint(values, start, end, false, net)
            });
        }
        let operands = &self.operands;
        let records = |at: u32, count: u32, width: usize| {
            operands[at as usize..at as usize + count as usize * width].chunks_exact(width)
        };
        for &run in &self.runs {
            match run {
                Run::And2 { at, count } => {
                    for op in records(at, count, 3) {
                        values[op[0] as usize] = values[op[1] as usize] & values[op[2] as usize];
                    }
                }
                Run::Or2 { at, count } => {
                    for op in records(at, count, 3) {
                        values[op[0] as usize] = values[op[1] as usize] | values[op[2] as usize];
                    }
                }
                Run::Not { at, count } => {
                    for op in records(at, count, 2) {
                        values[op[0] as usize] = !values[op[1] as usize];
                    }
                }
                Run::And { at, count } | Run::Or { at, count } => {
                    let all = matches!(run, Run::And { .. });
                    let mut k = at as usize;
                    for _ in 0..count {
                        let (out, n) = (operands[k] as usize, operands[k + 1] as usize);
                        let fanin = &operands[k + 2..k + 2 + n];
                        values[out] = if all {
                            fanin.iter().fold(true, |v, &i| v & values[i as usize])
                        } else {
                            fanin.iter().fold(false, |v, &i| v | values[i as usize])
                        };
                        k += 2 + n;
                    }
                }
                Run::Cycle(start, end) => fixpoint(values, start, end, false, net),
            }
        }
        assert_eq!(out.len(), self.packed.len());
        for (word, slots) in out.iter_mut().zip(&self.packed) {
            *word = slots
                .iter()
                .enumerate()
                .fold(0, |acc, (i, &s)| acc | u64::from(values[s as usize]) << i);
        }
    }
}

/// The gates `steps` (of a program without cycles) ordered so that each comes
/// after its fan-in and after the slot of its condition: level by level (the
/// longest chain of such dependencies within the program), and in each level
/// the gates without a condition first, then the gates of each condition
/// together, each group in the order of `key` if given. `None` if conditions
/// make the dependencies cyclic.
fn ordered_by_conditions<'a>(
    steps: &[NativeStep<'a>],
    conditions: &[Option<Condition>],
    key: Option<&[u32]>,
) -> Option<Vec<NativeStep<'a>>> {
    let gates: Vec<NativeGate> = steps
        .iter()
        .filter_map(|step| match *step {
            NativeStep::Gate(gate) => Some(gate),
            _ => None,
        })
        .collect();
    let mut position = vec![u32::MAX; conditions.len()];
    for (k, gate) in gates.iter().enumerate() {
        position[gate.out as usize] = k as u32;
    }
    // Kahn's algorithm: a gate's level is one more than its dependencies'.
    let dependencies = |gate: &NativeGate| {
        let condition = conditions[gate.out as usize].map(|c| c.slot);
        gate.fanin
            .iter()
            .copied()
            .chain(condition)
            .filter(|&slot| position[slot as usize] != u32::MAX)
            .map(|slot| position[slot as usize] as usize)
            .collect::<Vec<usize>>()
    };
    let mut waiting = vec![0usize; gates.len()];
    let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); gates.len()];
    for (k, gate) in gates.iter().enumerate() {
        for d in dependencies(gate) {
            waiting[k] += 1;
            dependents[d].push(k);
        }
    }
    let mut level = vec![0u32; gates.len()];
    let mut ready: Vec<usize> = (0..gates.len()).filter(|&k| waiting[k] == 0).collect();
    let mut done = 0;
    while let Some(k) = ready.pop() {
        done += 1;
        for &d in &dependents[k] {
            level[d] = level[d].max(level[k] + 1);
            waiting[d] -= 1;
            if waiting[d] == 0 {
                ready.push(d);
            }
        }
    }
    if done < gates.len() {
        return None;
    }
    let mut order: Vec<usize> = (0..gates.len()).collect();
    order.sort_by_key(|&k| {
        let out = gates[k].out as usize;
        (level[k], conditions[out], key.map_or(0, |key| key[out]))
    });
    Some(order.into_iter().map(|k| NativeStep::Gate(gates[k])).collect())
}

/// The conditions under which the sweep's native code skips gates (see the
/// `conditions` module): for the acyclic gates it evaluates (not read only
/// on the way to goals: `kept`), outputs only where the condition forces
/// them, on slots it stores (not `read_once`). A gate of the state part may only depend on a base
/// or a gate of the state part, as the inputs still hold the last joint move
/// when it runs; a gate of the move part on any of them.
fn skipped_conditions(
    net: &CompiledNet,
    kept: &[bool],
    read_once: &[bool],
    output: &[bool],
) -> Vec<Option<Condition>> {
    let in_moves = net.in_move_part();
    let inputs = net.move_slots().iter().copied().min().unwrap_or(net.first_gate());
    let eligible: Vec<bool> = (0..net.slots())
        .map(|s| s >= net.first_gate() as usize && kept[s] && net.cycle_start()[s] == u32::MAX)
        .collect();
    conditions::conditions(net, &eligible, output, |gate, slot| {
        let is_input = (inputs..net.first_gate()).contains(&slot);
        kept[slot as usize]
            && !read_once[slot as usize]
            && (in_moves[gate as usize] || !(in_moves[slot as usize] || is_input))
    })
}

/// Per slot, whether it is an output: terminal, a goal, a move's legality
/// or a base's next value.
pub(crate) fn outputs(net: &CompiledNet) -> Vec<bool> {
    let mut output = vec![false; net.slots()];
    let outputs = [net.terminal_slot()]
        .into_iter()
        .chain(net.goal_slots().iter().copied())
        .chain(net.legal_slots().iter().copied())
        .chain(net.next_slots().iter().copied());
    for slot in outputs {
        output[slot as usize] = true;
    }
    output
}

/// The compiled programs of a [`Sweep`].
#[derive(Debug)]
struct Plan {
    /// The part that depends on the state only, less the gates read only on
    /// the way to goals ([`CompiledNet::goal_only`]), packing the legality set;
    /// the part that depends on moves, packing the next state; and those
    /// gates, evaluated when goals are asked for.
    state: Program,
    moves: Program,
    goals: Program,
    /// The part that depends on moves by the cones of the moves played,
    /// where that costs less (joint moves of at most one input per role;
    /// `moves` evaluates the others).
    cones: Option<Cones>,
    /// Role `r`'s legality takes words `role_words[r]..role_words[r + 1]` of the
    /// legality set, bit `at` for its input at position `at`.
    role_words: Vec<usize>,
    /// What a change of a base or input stores: its value, the `or`s of
    /// moves (set as joint moves load rather than evaluated), and the flags
    /// of the blocks that native code flags (they take the slots after the
    /// net's).
    marks: Marks,
    /// Where the flags start: the values of the net's slots and the pack
    /// areas come before them.
    flags_start: usize,
    /// The bytes of the values: the net's slots, the pack areas and the flags.
    value_slots: usize,
    /// Where each slot's value is (see [`located`]).
    located: Vec<u32>,
}

impl Plan {
    /// Compiles the three parts of `net` (into native code if `native`) and
    /// lays out its legality set, the packed values moved to the pack areas
    /// if every part runs native code; the move part by cones only if `cones`
    /// allows.
    fn new(net: &CompiledNet, native: bool, cones: bool) -> Plan {
        Plan::build(net, native, native, cones)
            .unwrap_or_else(|| Plan::build(net, native, false, cones).expect("values in place"))
    }

    /// The plan, in native code if `native`, with the values of packed gates
    /// moved to the pack areas if `moved` and `native` (see [`located`]), or
    /// `None` if then some part does not run native code (which alone
    /// addresses them where they moved); the move part by cones where the
    /// cost model says they cost less, if `cones` allows.
    fn build(net: &CompiledNet, native: bool, moved: bool, cones: bool) -> Option<Plan> {
        let goal_only = net.goal_only();
        let kept: Vec<bool> = goal_only.iter().map(|&g| !g).collect();
        let (legal_words, next_words) = packed_words(net);
        let decoded = DecodedMoves::new(net, &kept);
        // The legality set's pack area, the next state's, then the flags.
        let (state_area, moves_area) = (net.slots(), net.slots() + 64 * legal_words.len());
        let flags_start = moves_area + 64 * next_words.len();
        let moved = moved && native;
        let packs = [(state_area, &legal_words), (moves_area, &next_words)];
        let located = if moved {
            located(net, &decoded, packs)
        } else {
            in_place(net)
        };
        let (mut state, mut moves) = interpreted_parts(net, &kept, &decoded, legal_words, next_words);
        let key = skipping::lowest_sources(net);
        let layout = |pack_area: usize, first_flag: usize| Layout {
            located: &located,
            pack_area,
            first_flag,
        };
        let output = outputs(net);
        let (blocks, cones) = if native {
            let cones_layout = cones.then(|| layout(moves_area, flags_start));
            let parts = [&mut state, &mut moves];
            blocks_and_cones(net, &kept, &decoded, &output, &key, parts, cones_layout)
        } else {
            (Blocks::default(), None)
        };
        if native {
            let (parts, areas) = ([&mut state, &mut moves], [state_area, moves_area]);
            compile_parts(net, parts, &located, areas, flags_start, &blocks, &key);
        }
        let flagged: Vec<u32> = state.flagged().iter().chain(moves.flagged()).copied().collect();
        let goals = goals_part(net, &goal_only, layout(flags_start, flags_start), native);
        if moved && !(state.is_native() && moves.is_native() && goals.is_native()) {
            return None;
        }
        let marks = marks(net, cones.as_ref(), &decoded, &blocks, &flagged, flags_start);
        Some(Plan {
            state,
            moves,
            cones,
            goals,
            role_words: role_words(net),
            marks,
            flags_start,
            value_slots: flags_start + flagged.len(),
            located,
        })
    }
}

/// The slots that the legality set (role by role) and the next state pack,
/// in words of 64.
fn packed_words(net: &CompiledNet) -> (Vec<Vec<u32>>, Vec<Vec<u32>>) {
    let legal_words: Vec<Vec<u32>> = net
        .role_moves()
        .iter()
        .flat_map(|inputs| {
            let slots: Vec<u32> = inputs.iter().map(|&m| net.legal_slots()[m as usize]).collect();
            slots.chunks(64).map(<[u32]>::to_vec).collect::<Vec<_>>()
        })
        .collect();
    let next_words: Vec<Vec<u32>> = net.next_slots().chunks(64).map(<[u32]>::to_vec).collect();
    (legal_words, next_words)
}

/// The state and move parts of `net`, interpreted: the state part evaluates
/// the `kept` gates and packs `legal_words`, the move part evaluates those
/// not `decoded` too and packs `next_words`.
fn interpreted_parts(
    net: &CompiledNet,
    kept: &[bool],
    decoded: &DecodedMoves,
    legal_words: Vec<Vec<u32>>,
    next_words: Vec<Vec<u32>>,
) -> (Program, Program) {
    let (state, moves) = net.steps().split_at(net.state_steps());
    let evaluated: Vec<bool> = (0..net.slots())
        .map(|s| kept[s] && !decoded.is_decoded(s as u32))
        .collect();
    (
        Program::interpreted(net, state, kept, legal_words),
        Program::interpreted(net, moves, &evaluated, next_words),
    )
}

/// Compiles the state and move `parts` to native code, with the values
/// `located` and each part's pack area of `areas`, the gates of `blocks`
/// flagged, the flags of the state part from `flags_start` on and the move
/// part's after them.
fn compile_parts(
    net: &CompiledNet,
    [state, moves]: [&mut Program; 2],
    located: &[u32],
    [state_area, moves_area]: [usize; 2],
    flags_start: usize,
    blocks: &Blocks,
    key: &[u32],
) {
    let layout = |pack_area: usize, first_flag: usize| Layout {
        located,
        pack_area,
        first_flag,
    };
    let block_of = |gate: u32| blocks.of_gate.get(&gate).copied();
    state.compile(net, layout(state_area, flags_start), block_of, Some(key));
    let state_flags = state.flagged().len();
    moves.compile(
        net,
        layout(moves_area, flags_start + state_flags),
        block_of,
        Some(key),
    );
}

/// The goal part of `net`, evaluating the gates `goal_only` (in native code
/// if `native`). Goals are evaluated in terminal states only: never flagged.
fn goals_part(net: &CompiledNet, goal_only: &[bool], layout: Layout, native: bool) -> Program {
    Program::new(net, net.steps(), goal_only, Vec::new(), layout, native)
}

/// Gives the state and move `parts` their skip conditions and chooses their
/// flagged blocks; then, given a `cones_layout` (cones allowed), the cones
/// where they cost less than the move part with its blocks (which rely on
/// values the cones overwrite), the move part then keeping no blocks.
fn blocks_and_cones(
    net: &CompiledNet,
    kept: &[bool],
    decoded: &DecodedMoves,
    output: &[bool],
    key: &[u32],
    [state, moves]: [&mut Program; 2],
    cones_layout: Option<Layout>,
) -> (Blocks, Option<Cones>) {
    let changes = apply_skip_conditions(net, kept, output, state, moves);
    let mut candidates = state.candidates(net, false, key);
    candidates.extend(moves.candidates(net, true, key));
    let blocks = skipping::choose(net, &candidates, &changes);
    let by_cones = cones_layout.and_then(|layout| {
        Cones::new(
            net,
            kept,
            decoded,
            output,
            layout,
            &moves.packed,
            blocks.expected_cost[1],
        )
    });
    match by_cones {
        Some(cones) => (blocks.without_moves(), Some(cones)),
        None => (blocks, None),
    }
}

/// Gives the `state` and `moves` parts the conditions on which their gates
/// are skipped, with the rate at which each holds, and returns how the
/// sources change: one random walk measures both.
fn apply_skip_conditions(
    net: &CompiledNet,
    kept: &[bool],
    output: &[bool],
    state: &mut Program,
    moves: &mut Program,
) -> Changes {
    let conditions = skipped_conditions(net, kept, &state.read_once(net), output);
    let in_moves = net.in_move_part();
    let mut used: Vec<(Condition, bool)> = (0..net.slots())
        .filter_map(|s| conditions[s].map(|c| (c, in_moves[s])))
        .collect();
    used.sort_unstable();
    used.dedup();
    let mut counts = SkipCounts::new(used);
    let changes = Changes::measure(net, |transition, after| counts.observe(transition, after));
    let rates = counts.rates();
    state.use_conditions(net, &conditions, output, |c| rates[&(c, false)]);
    moves.use_conditions(net, &conditions, output, |c| rates[&(c, true)]);
    changes
}

/// What a change of a base or input stores: its copies (by the `cones`,
/// where they evaluate the move part, or as `decoded` moves) and the flags,
/// from `flags_start` on, of the `flagged` blocks that depend on it.
fn marks(
    net: &CompiledNet,
    cones: Option<&Cones>,
    decoded: &DecodedMoves,
    blocks: &Blocks,
    flagged: &[u32],
    flags_start: usize,
) -> Marks {
    let flags = flagged.iter().enumerate().map(|(k, &block)| {
        (
            (flags_start + k) as u32,
            blocks.supports[block as usize].as_slice(),
        )
    });
    Marks::new(
        net,
        |source| match cones {
            Some(cones) if (source as usize) < net.base_slots().len() => cones.copies_of(source),
            _ => decoded.of(source),
        },
        flags,
    )
}

/// Each slot's value in its own byte.
pub(crate) fn in_place(net: &CompiledNet) -> Vec<u32> {
    (0..net.slots() as u32).collect()
}

/// Where the sweep's native code keeps each slot's value: in its own byte,
/// except a gate that one bit of a packed word takes (of the words `packs`
/// lays out, each with its pack area, word `w`'s bit `i` at byte
/// `area + 64 w + i`), which goes to that bit's byte, so that packing reads
/// it there with its neighbours. Not moved: bases and inputs, the `or`s of
/// moves (the loads store those), gates in or read by cyclic components
/// (evaluated in place between native segments) and gates that several
/// bits take.
pub(crate) fn located<'a>(
    net: &CompiledNet,
    decoded: &DecodedMoves,
    packs: impl IntoIterator<Item = (usize, &'a Vec<Vec<u32>>)>,
) -> Vec<u32> {
    let mut located = in_place(net);
    let mut bits = vec![0u32; net.slots()];
    let packs: Vec<(usize, &Vec<Vec<u32>>)> = packs.into_iter().collect();
    for &slot in packs.iter().flat_map(|(_, words)| words.iter().flatten()) {
        bits[slot as usize] += 1;
    }
    let cyclic = |slot: u32| net.cycle_start()[slot as usize] != u32::MAX;
    for (area, words) in packs {
        for (w, word) in words.iter().enumerate() {
            for (i, &slot) in word.iter().enumerate() {
                if slot >= net.first_gate()
                    && bits[slot as usize] == 1
                    && !decoded.is_decoded(slot)
                    && !cyclic(slot)
                    && !net.fanout(slot).iter().any(|&r| cyclic(r))
                {
                    located[slot as usize] = (area + 64 * w + i) as u32;
                }
            }
        }
    }
    located
}

/// The sweep evaluator of one net: its compiled programs, shared by every thread.
#[derive(Debug)]
pub struct Sweep {
    id: EvaluatorId,
    net: Arc<CompiledNet>,
    plan: Plan,
}

/// One thread's values of a [`Sweep`].
#[derive(Clone, Debug)]
pub struct SweepCache {
    /// The evaluator that made it, the only one it fits.
    owner: EvaluatorId,
    values: Vec<bool>,
    /// The state whose bases `values` hold.
    loaded: Vec<u64>,
    /// The legality of every role's moves, packed as [`Plan::role_words`] says.
    legal: Vec<u64>,
    moves: Vec<u32>,
    /// The next state after the last joint move.
    next: Vec<u64>,
    /// Whether the gates read only on the way to goals hold the values of the state loaded.
    goals_fresh: bool,
    /// Whether the last joint move ran the whole move part rather than the
    /// cones (so that all of the cones' constants are to be restored).
    ran_whole: bool,
    /// Whether the move propositions of `moves` (and the `or`s of moves) are
    /// stored in `values`: always when the whole move part runs, when the
    /// cones run only if they read them.
    marked: bool,
}

impl Sweep {
    /// The sweep evaluators worth choosing between for `net` (in native code
    /// where the platform allows if `native`), the preferred first: the move
    /// part by cones where the cost model says they cost less than its
    /// blocks; when their code outgrows the cache, the plan without them too,
    /// for the chooser to race (a cost model does not make that choice
    /// reliably).
    pub fn candidates(net: &Arc<CompiledNet>, native: bool) -> Vec<Sweep> {
        let sweep = |cones| Sweep {
            id: EvaluatorId::fresh(),
            net: Arc::clone(net),
            plan: Plan::new(net, native, cones),
        };
        let by_cones = sweep(true);
        if by_cones.plan.cones.as_ref().is_some_and(Cones::outgrow_cache) {
            vec![by_cones, sweep(false)]
        } else {
            vec![by_cones]
        }
    }
}

impl Evaluator for Sweep {
    type Cache = SweepCache;

    fn kind(&self) -> EvaluatorKind {
        EvaluatorKind::Sweep
    }

    fn net(&self) -> &Arc<CompiledNet> {
        &self.net
    }

    /// Fresh values (all false).
    fn cache(&self) -> SweepCache {
        let (net, plan) = (&self.net, &self.plan);
        // Every flag set: no gate has been evaluated yet.
        let mut values = vec![true; plan.value_slots];
        values[..plan.flags_start].fill(false);
        if let Some(cones) = &plan.cones {
            cones.restore_all(&mut values);
        }
        SweepCache {
            owner: self.id,
            values,
            loaded: vec![0; net.base_slots().len().div_ceil(64)],
            legal: vec![0; plan.role_words.last().copied().unwrap_or(0)],
            next: vec![0; net.next_slots().len().div_ceil(64)],
            moves: Vec::new(),
            goals_fresh: false,
            ran_whole: false,
            marked: false,
        }
    }
}

impl ScalarEvaluator for Sweep {}

/// The cache's owner is checked by the caller ([`ScalarEvaluator`], [`super::Bound`]).
impl Owned for Sweep {
    #[inline(always)]
    fn id(&self) -> EvaluatorId {
        self.id
    }

    #[inline(always)]
    fn owner(cache: &SweepCache) -> EvaluatorId {
        cache.owner
    }

    #[inline]
    unsafe fn legal_words_owned<'c>(&self, cache: &'c SweepCache, role: usize) -> &'c [u64] {
        &cache.legal[self.plan.role_words[role]..self.plan.role_words[role + 1]]
    }

    unsafe fn load_state_owned(&self, cache: &mut SweepCache, state: &[u64]) {
        let (net, plan) = (&*self.net, &self.plan);
        let (values, base_slots) = (&mut cache.values[..], net.base_slots());
        // Only the bases that differ from the state loaded before.
        for (w, (loaded, &new)) in cache.loaded.iter_mut().zip(state).enumerate() {
            let mut changed = *loaded ^ new;
            while changed != 0 {
                let at = changed.trailing_zeros();
                changed &= changed - 1;
                let slot = base_slots[w * 64 + at as usize];
                plan.marks.set(values, slot, new >> at & 1 != 0);
            }
            *loaded = new;
        }
        plan.state.run(net, values, &mut cache.legal);
        cache.goals_fresh = false;
    }

    unsafe fn load_moves_owned(&self, cache: &mut SweepCache, moves: &[u32]) {
        let (net, plan, values) = (&*self.net, &self.plan, &mut cache.values);
        if let Some(cones) = &plan.cones {
            if cache.ran_whole {
                cones.restore_all(values);
            } else {
                cones.restore(values, &cache.moves);
            }
        }
        let by_cones = plan.cones.as_ref().filter(|cones| cones.accepts(moves));
        // The cones of turn-taking games read no move from memory.
        let marking = by_cones.is_none_or(Cones::reads_moves);
        if cache.marked {
            for &m in &cache.moves {
                plan.marks.set(values, net.move_slots()[m as usize], false);
            }
        }
        if marking {
            for &m in moves {
                plan.marks.set(values, net.move_slots()[m as usize], true);
            }
        }
        cache.marked = marking;
        cache.moves.resize(moves.len(), 0);
        copy_short(&mut cache.moves, moves);
        match by_cones {
            Some(cones) => {
                cones.run(values, moves, &mut cache.next);
                cache.ran_whole = false;
            }
            None => {
                plan.moves.run(net, values, &mut cache.next);
                cache.ran_whole = true;
            }
        }
    }

    #[inline]
    unsafe fn value_owned(&self, cache: &SweepCache, slot: u32) -> bool {
        cache.values[self.plan.located[slot as usize] as usize]
    }

    unsafe fn refresh_goals_owned(&self, cache: &mut SweepCache) {
        if !cache.goals_fresh {
            self.plan.goals.run(&self.net, &mut cache.values, &mut []);
            cache.goals_fresh = true;
        }
    }

    unsafe fn next_state_owned(&self, cache: &SweepCache, out: &mut [u64]) {
        copy_short(out, &cache.next);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// A hundred cells in a row marked in turn; connected marked cells form a
    /// recursive relation (cyclic components) in a circuit of some hundreds of slots.
    fn chain_game() -> String {
        let cells: String = (1..=100).map(|c| format!("(cell {c}) ")).collect();
        let links: String = (1..100)
            .map(|c| format!("(link {c} {}) (link {} {c}) ", c + 1, c + 1))
            .collect();
        format!(
            "(role a) (role b) (init (control a)) {cells} {links}
            (<= (legal ?r (mark ?c)) (true (control ?r)) (cell ?c) (not (true (marked ?c))))
            (<= (legal a noop) (true (control b)))
            (<= (legal b noop) (true (control a)))
            (<= (next (marked ?c)) (does ?r (mark ?c)))
            (<= (next (marked ?c)) (true (marked ?c)))
            (<= (next (control a)) (true (control b)))
            (<= (next (control b)) (true (control a)))
            (<= (path ?x ?y) (true (marked ?x)) (link ?x ?y) (true (marked ?y)))
            (<= (path ?x ?z) (path ?x ?y) (link ?y ?z) (true (marked ?z)))
            (<= open (cell ?c) (not (true (marked ?c))))
            (<= terminal (path 1 100))
            (<= terminal (not open))
            (<= (goal ?r 100) (role ?r) (path 1 100))
            (<= (goal ?r 0) (role ?r) (not (path 1 100)))"
        )
    }

    /// `marked` is an `or` of moves only: loading a joint move sets it, and
    /// the sweep makes the transitions that the differential evaluator makes
    /// (the move part's first independent set then holds `marked` alone, and
    /// none of its gates is taken).
    #[test]
    fn ors_of_moves_are_set_as_moves_load() {
        let loaded = crate::load(super::super::TURNS, &crate::LoadConfig::default()).unwrap();
        let net = loaded.game.net();
        let kept: Vec<bool> = net.goal_only().iter().map(|&g| !g).collect();
        assert!(
            DecodedMoves::new(net, &kept).count() > 0,
            "no or of moves decoded"
        );
        let mut sweep =
            crate::StateMachine::with_evaluator(Arc::clone(&loaded.game), super::super::EvaluatorKind::Sweep);
        let mut differential = crate::StateMachine::new(Arc::clone(&loaded.game));
        let mut rng = crate::random::Stream::new(9, 0);
        for _ in 0..30 {
            let mut state = sweep.initial_state();
            while !sweep.is_terminal(&state) {
                let joint: Vec<crate::Move> = (0..2)
                    .map(|role| sweep.random_legal_move(&state, role, &mut rng).unwrap())
                    .collect();
                let next = sweep.next_state(&state, &joint);
                assert_eq!(next, differential.next_state(&state, &joint));
                state = next.unwrap();
            }
        }
    }

    #[test]
    fn native_code_computes_what_the_interpreter_computes() {
        let loaded = crate::load(&chain_game(), &crate::LoadConfig::default()).unwrap();
        let net = loaded.game.net();
        assert!(
            net.steps().iter().any(|s| matches!(s, Step::Cycle(..))),
            "the circuit must have cycles"
        );
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let everything = vec![true; net.slots()];
        // Words packing the next state, 64 slots at a time, and a few arbitrary slots.
        let mut packed: Vec<Vec<u32>> = net.next_slots().chunks(64).map(<[u32]>::to_vec).collect();
        packed.push((0..64).map(|_| rng.gen_range(0..net.slots() as u32)).collect());
        packed.push(Vec::new());
        // The values of packed gates moved to the pack area where they can be.
        let located = located(
            net,
            &DecodedMoves::new(net, &everything),
            [(net.slots(), &packed)],
        );
        assert!((0..net.slots()).any(|s| located[s] != s as u32), "no value moved");
        let layout = Layout {
            located: &located,
            pack_area: net.slots(),
            first_flag: net.slots() + 64 * packed.len(),
        };
        let interpreted = Program::interpreted(net, net.steps(), &everything, packed);
        let read_once = interpreted.read_once(net);
        let Some(native) = NativeProgram::compile(
            layout,
            interpreted.packed.len(),
            interpreted.native_steps(None),
            &read_once,
            |_| None,
            |_| false,
        ) else {
            if cfg!(all(target_arch = "x86_64", unix)) {
                panic!("no native code on x86-64 Unix");
            }
            return;
        };
        let sources: Vec<u32> = net.base_slots().iter().chain(net.move_slots()).copied().collect();
        for _ in 0..200 {
            let mut values = vec![false; net.slots()];
            for &s in &sources {
                values[s as usize] = rng.gen_bool(0.5);
            }
            let mut native_values = values.clone();
            native_values.resize(layout.first_flag, false);
            let mut words = vec![0; interpreted.packed.len()];
            let mut native_words = vec![!0; interpreted.packed.len()];
            interpreted.run(net, &mut values, &mut words);
            native.run(&mut native_values, &mut native_words, |values, start, end| {
                fixpoint(values, start, end, false, &**net)
            });
            // Gates read once may be computed in registers only.
            for slot in (0..net.slots()).filter(|&s| !read_once[s]) {
                assert_eq!(values[slot], native_values[located[slot] as usize], "slot {slot}");
            }
            assert_eq!(words, native_words);
            assert!(words.iter().any(|&w| w != 0));
        }
        assert!(native.inlined > 0, "no gate computed in registers");
    }
}
