//! The sweep's move part by the cones of the moves played. With every input
//! false, most gates of a move part are constant (English checkers: every
//! "a piece moved here" is false, and a cell's next value is its value), and
//! a joint move changes only the gates its inputs reach. So the move part
//! runs in three pieces of native code: the *baseline*, the gates whose value
//! with every input false depends on the state, folded with inputs false;
//! then, per role, the *cone* of the input it plays (the gates that input
//! reaches), specialized to it: the role's other inputs false, and gates
//! outside the cone that depend on that role's inputs only at their constant
//! baseline; then the packing of the next state. The gates a cone stores
//! whose baseline is constant are restored before the next joint move, by
//! native code of their own per input.
//!
//! A gate whose baseline is a copy of a base (a frame rule's "the cell keeps
//! its piece" once "moved from or to here" folds to false) is not computed
//! by the baseline at all: loading a state stores the base's value into the
//! gate's byte too (the sweep's marks), and a cone that stores the gate puts
//! the base's value back before the next joint move.
//!
//! Correct for a joint move of at most one input per role: running the cones
//! one after the other, each in slot order, a gate takes its value from the
//! last cone holding it, and its operands from that cone or from memory,
//! where no later cone changes them (a later cone holding an operand would
//! hold the gate too). Gates read from memory by a cone that does not hold
//! them are always stored, by the baseline or by the cones holding them.

use super::decoded::DecodedMoves;
use crate::jit::{Layout, NativeGate, NativeProgram, NativeStep};
use crate::layout::{CompiledNet, Gate};
use crate::profile::costs::{CACHED_CODE_BYTES, CALL_COST};

/// The most gate operands the cones may span, all inputs' together (the
/// work and memory of folding them): past it, the move part runs whole.
const OPERAND_BUDGET: usize = 1 << 22;

/// The most values all functions together may read and store: past it,
/// their code (some bytes per value) no longer stays in the caches between
/// joint moves, and the cones ran slower than the cost model said
/// (four_way_battle: 3.3M values, 17.8 MB of code, 0.6x the move part with
/// its blocks; ttcc4: 1.1M values, 1.3x).
const MOST_VALUES: usize = 1 << 21;

/// The functions of [`Cones::program`]: the baseline, the packing, then the
/// cone of input `m` at `FIRST_CONE + m`.
const BASELINE: usize = 0;
const PACK: usize = 1;
const FIRST_CONE: usize = 2;

/// No base (see [`Specializer::copy_of`]).
const NO_INDEX: u32 = u32::MAX;

/// The move part of a net as a baseline, cones and a packing (see the module
/// documentation).
#[derive(Debug)]
pub(crate) struct Cones {
    program: NativeProgram,
    /// Per function of `program`, whether it does anything.
    called: Vec<bool>,
    /// The role of each input.
    input_role: Vec<u32>,
    /// Per input `m`, function `m` puts back the gates its cone stores whose
    /// baseline is a constant or a copy of a base.
    restores: NativeProgram,
    /// Per function of `restores`, whether it does anything.
    restoring: Vec<bool>,
    /// Per base, the bytes of the gates whose baseline copies it: loading a
    /// state stores the base's value there too.
    base_copies: Vec<Vec<u32>>,
    /// Whether a function or the packing reads an input, or an `or` of
    /// moves, from memory (only when the roles' moves meet in gates): then
    /// loading a joint move must store them.
    reads_moves: bool,
}

/// A slot's value as a specialized gate reads it.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Value {
    /// From memory.
    Read,
    /// A constant.
    Known(bool),
    /// Computed earlier in the same function.
    Computed,
}

/// A gate specialized: `not`? of the `and` (`all`) or `or` of the operands
/// `operands[start..end]`, or a constant.
#[derive(Clone, Copy, Debug)]
struct Folded {
    out: u32,
    all: bool,
    negate: bool,
    start: u32,
    end: u32,
}

/// One function's gates, specialized, before liveness is known.
#[derive(Debug, Default)]
struct Function {
    gates: Vec<Folded>,
    /// Per gate of `gates`, its constant if it folded to one.
    constants: Vec<Option<bool>>,
}

impl Cones {
    /// The move part of `net` by cones, over values laid out as `layout`
    /// says, packing the next state as `packed` words; `kept` gates are
    /// evaluated (the others are read only on the way to goals), `decoded`
    /// `or`s of moves hold their values as moves load, and `output` slots
    /// must be right after a joint move. `None` if the move part has cycles,
    /// if the cones span more than [`OPERAND_BUDGET`] operands or their
    /// functions read and store more than [`MOST_VALUES`], if they would cost
    /// more than `most_cost` per joint move (in values read, a call counting
    /// as [`CALL_COST`]), or if native code cannot be made.
    pub(crate) fn new(
        net: &CompiledNet,
        kept: &[bool],
        decoded: &DecodedMoves,
        output: &[bool],
        layout: Layout,
        packed: &[Vec<u32>],
        most_cost: f64,
    ) -> Option<Cones> {
        let mut specializer = Specializer::new(net, kept, decoded)?;
        let base = specializer.baseline();
        let cones = specializer.cones(&base, output, most_cost)?;
        let must_store = specializer.must_store(std::iter::once(&base).chain(&cones));
        let root = |slot: u32| output[slot as usize] || must_store[slot as usize];
        let operands = &specializer.operands;
        let base_live = base.live(operands, root);
        let cones_live: Vec<Vec<Folded>> = cones.iter().map(|c| c.live(operands, root)).collect();
        let restores = specializer.restores(&cones_live, root);
        if values(&base_live, &cones_live, &restores) > MOST_VALUES {
            return None;
        }
        let base_copies = specializer.base_copies(root, layout);
        if joint_move_cost(net, &base_live, &cones_live, &restores) > most_cost {
            return None;
        }
        let reads_moves = specializer.reads_moves(packed, &base_live, &cones_live);
        let (program, called) = specializer.compile(&base_live, &cones_live, packed, layout, root)?;
        let (restores, restoring) = compile_restores(net, layout, restores)?;
        Some(Cones {
            program,
            called,
            input_role: specializer.input_role,
            restores,
            restoring,
            base_copies,
            reads_moves,
        })
    }

    /// Whether their code (functions and restores) is more than the cache
    /// keeps between joint moves ([`CACHED_CODE_BYTES`]).
    pub(crate) fn outgrow_cache(&self) -> bool {
        self.program.code_bytes() + self.restores.code_bytes() > CACHED_CODE_BYTES
    }

    /// Whether `moves` has at most one input per role, as the cones need.
    pub(crate) fn accepts(&self, moves: &[u32]) -> bool {
        let mut roles = 0u64;
        moves.iter().all(|&m| {
            let Some(&role) = self.input_role.get(m as usize) else {
                return false;
            };
            let fresh = roles & 1 << role == 0;
            roles |= 1 << role;
            fresh
        })
    }

    /// Restores what the cones of `moves` changed of the baselines' constants
    /// and copies.
    #[inline]
    pub(crate) fn restore(&self, values: &mut [bool], moves: &[u32]) {
        for &m in moves {
            if self.restoring[m as usize] {
                self.restores.run_function(m as usize, values, &mut []);
            }
        }
    }

    /// Restores every constant and copy any cone changes (after the move
    /// part ran whole, or before the first joint move).
    pub(crate) fn restore_all(&self, values: &mut [bool]) {
        for (m, _) in self
            .restoring
            .iter()
            .enumerate()
            .filter(|(_, &restoring)| restoring)
        {
            self.restores.run_function(m, values, &mut []);
        }
    }

    /// The bytes that take the value of base `slot` as states load (gates
    /// whose baseline copies it).
    pub(crate) fn copies_of(&self, slot: u32) -> &[u32] {
        &self.base_copies[slot as usize]
    }

    /// Whether the cones read the inputs of the joint move (and the `or`s
    /// of moves) from memory, so that loading it must store them.
    pub(crate) fn reads_moves(&self) -> bool {
        self.reads_moves
    }

    /// Evaluates the move part for `moves` (which [`Cones::accepts`]) after
    /// the constants of the joint move before are restored, packing the
    /// next state into `out`.
    #[inline]
    pub(crate) fn run(&self, values: &mut [bool], moves: &[u32], out: &mut [u64]) {
        self.call(BASELINE, values, out);
        for &m in moves {
            self.call(FIRST_CONE + m as usize, values, out);
        }
        self.call(PACK, values, out);
    }

    /// Runs function `k` of the program unless it is empty.
    #[inline]
    fn call(&self, k: usize, values: &mut [bool], out: &mut [u64]) {
        if self.called[k] {
            self.program.run_function(k, values, out);
        }
    }
}

/// Folds the gates of a move part to what is known of their operands, into
/// functions whose operands share one list.
struct Specializer<'a> {
    net: &'a CompiledNet,
    decoded: &'a DecodedMoves,
    /// Per slot, whether it is a kept gate of the move part.
    moved: Vec<bool>,
    /// The role of each input.
    input_role: Vec<u32>,
    /// Per slot, the roles whose inputs it depends on, a bit each.
    roles: Vec<u64>,
    /// Per slot, its value with every input false.
    baseline: Vec<Value>,
    /// Per gate, the base its baseline is a copy of (not computed by the
    /// baseline: see the module documentation), or [`NO_INDEX`].
    copy_of: Vec<u32>,
    /// Per slot, the last input whose cone holds it, and its value there.
    in_cone: Vec<u32>,
    value: Vec<Value>,
    /// The operands of every function's gates.
    operands: Vec<u32>,
}

impl<'a> Specializer<'a> {
    /// A specializer of the move part of `net` (its `kept` gates), `None`
    /// if that has cycles or the net more than 64 roles.
    fn new(net: &'a CompiledNet, kept: &[bool], decoded: &'a DecodedMoves) -> Option<Specializer<'a>> {
        let in_moves = net.in_move_part();
        let moved: Vec<bool> = (0..net.slots()).map(|s| in_moves[s] && kept[s]).collect();
        if net.role_moves().len() > 64
            || (0..net.slots()).any(|s| moved[s] && net.cycle_start()[s] != u32::MAX)
        {
            return None;
        }
        let mut input_role = vec![0u32; net.move_slots().len()];
        for (role, inputs) in net.role_moves().iter().enumerate() {
            for &m in inputs {
                input_role[m as usize] = role as u32;
            }
        }
        // Slot order is an evaluation order: acyclic gates come after their fan-in.
        let mut roles = vec![0u64; net.slots()];
        for (m, &slot) in net.move_slots().iter().enumerate() {
            roles[slot as usize] = 1 << input_role[m];
        }
        for slot in net.first_gate() as usize..net.slots() {
            roles[slot] = net
                .fanin(slot as u32)
                .iter()
                .fold(0, |r, &i| r | roles[i as usize]);
        }
        Some(Specializer {
            net,
            decoded,
            moved,
            input_role,
            roles,
            baseline: vec![Value::Read; net.slots()],
            copy_of: vec![NO_INDEX; net.slots()],
            in_cone: vec![u32::MAX; net.slots()],
            value: vec![Value::Read; net.slots()],
            operands: Vec::new(),
        })
    }

    /// Whether `slot` is a gate the move part evaluates (a decoded `or` of
    /// moves holds its value as moves load).
    fn evaluated(&self, slot: u32) -> bool {
        self.moved[slot as usize] && !self.decoded.is_decoded(slot)
    }

    /// The baseline: the move part folded with every input false, less its
    /// constants (which it records, with the other values, in `baseline`).
    fn baseline(&mut self) -> Function {
        let net = self.net;
        let mut base = Function::default();
        for slot in (net.first_gate()..net.slots() as u32).filter(|&s| self.moved[s as usize]) {
            let (moved, baseline) = (&self.moved, &self.baseline);
            let value_of = |i: u32| {
                if is_input(net, i) {
                    Value::Known(false)
                } else if moved[i as usize] {
                    baseline[i as usize]
                } else {
                    Value::Read
                }
            };
            let folded = fold(net, slot, value_of, &mut self.operands);
            // A copy of a base holds the base's value: read the base.
            for operand in &mut self.operands[folded.0.start as usize..] {
                if self.copy_of[*operand as usize] != NO_INDEX {
                    *operand = self.copy_of[*operand as usize];
                }
            }
            self.baseline[slot as usize] = folded.1.map_or(Value::Computed, Value::Known);
            if let (Some(base), false, None) = (self.copied_base(folded.0), folded.0.negate, folded.1) {
                self.copy_of[slot as usize] = base;
            }
            if self.evaluated(slot) && folded.1.is_none() && self.copy_of[slot as usize] == NO_INDEX {
                base.push(folded);
            } else {
                self.operands.truncate(folded.0.start as usize);
            }
        }
        base
    }

    /// The base that `gate` reads as its only operand, if it does.
    fn copied_base(&self, gate: Folded) -> Option<u32> {
        match self.operands[gate.start as usize..gate.end as usize] {
            [only] if (only as usize) < self.net.base_slots().len() => Some(only),
            _ => None,
        }
    }

    /// The cone of input `m` specialized to it (after [`Specializer::baseline`]),
    /// its operands taken from `budget`; `None` if they exceed it.
    fn cone(&mut self, m: usize, budget: &mut usize) -> Option<Function> {
        let net = self.net;
        let (input, role) = (net.move_slots()[m], self.input_role[m]);
        let mut cone = vec![input];
        self.in_cone[input as usize] = m as u32;
        let mut k = 0;
        while k < cone.len() {
            for &reader in net.fanout(cone[k]) {
                if self.moved[reader as usize] && self.in_cone[reader as usize] != m as u32 {
                    self.in_cone[reader as usize] = m as u32;
                    cone.push(reader);
                }
            }
            k += 1;
        }
        let spanned: usize = cone[1..].iter().map(|&slot| net.fanin(slot).len()).sum();
        *budget = budget.checked_sub(spanned)?;
        // Sorted, the input (below every gate) comes first.
        cone.sort_unstable();
        let mut function = Function::default();
        for &slot in &cone[1..] {
            let (moved, roles, baseline, in_cone, value) = (
                &self.moved,
                &self.roles,
                &self.baseline,
                &self.in_cone,
                &self.value,
            );
            let value_of = |i: u32| {
                if i == input {
                    Value::Known(true)
                } else if is_input(net, i) {
                    match roles[i as usize] == 1 << role {
                        true => Value::Known(false),
                        false => Value::Read,
                    }
                } else if in_cone[i as usize] == m as u32 {
                    value[i as usize]
                } else if moved[i as usize] && roles[i as usize] & !(1 << role) == 0 {
                    match baseline[i as usize] {
                        Value::Known(v) => Value::Known(v),
                        _ => Value::Read,
                    }
                } else {
                    Value::Read
                }
            };
            let folded = fold(net, slot, value_of, &mut self.operands);
            self.value[slot as usize] = match folded.1 {
                Some(v) => Value::Known(v),
                // A decoded `or` holds its value: read it.
                None if !self.evaluated(slot) => Value::Read,
                None => Value::Computed,
            };
            if self.evaluated(slot) {
                function.push(folded);
            } else {
                self.operands.truncate(folded.0.start as usize);
            }
        }
        Some(function)
    }

    /// Per slot, whether it must be stored: a gate of the move part that a
    /// function of `functions` reads from memory but does not compute.
    fn must_store<'f>(&self, functions: impl IntoIterator<Item = &'f Function>) -> Vec<bool> {
        let mut must_store = vec![false; self.net.slots()];
        for function in functions {
            let computed: Vec<u32> = function.gates.iter().map(|g| g.out).collect();
            for gate in &function.gates {
                for &i in &self.operands[gate.start as usize..gate.end as usize] {
                    if self.evaluated(i) && computed.binary_search(&i).is_err() {
                        must_store[i as usize] = true;
                    }
                }
            }
        }
        must_store
    }

    /// The cone of each input after the `base`line, or `None` if they span
    /// more than [`OPERAND_BUDGET`] operands or if the cost of the gates that
    /// `output`s need (more are stored, to be read by other functions), which
    /// bounds the cost from below as the functions are made, passes
    /// `most_cost`: the packing's call, the baseline's, then each cone's,
    /// averaged over its role's inputs.
    fn cones(&mut self, base: &Function, output: &[bool], most_cost: f64) -> Option<Vec<Function>> {
        let net = self.net;
        let least_cost_of = |function: &Function, operands: &[u32]| {
            cost(&function.live(operands, |slot| output[slot as usize])) as f64
        };
        let mut least_cost = CALL_COST as f64 + least_cost_of(base, &self.operands);
        let mut cones: Vec<Function> = Vec::with_capacity(net.move_slots().len());
        let mut budget = OPERAND_BUDGET;
        for m in 0..net.move_slots().len() {
            let cone = self.cone(m, &mut budget)?;
            let role = self.input_role[m] as usize;
            least_cost += least_cost_of(&cone, &self.operands) / net.role_moves()[role].len() as f64;
            if least_cost > most_cost {
                return None;
            }
            cones.push(cone);
        }
        Some(cones)
    }

    /// Per cone of `cones_live`, its stored (`root`) gates whose baseline is
    /// a constant or a copy of a base, as gates of no operand or of that base.
    fn restores(&self, cones_live: &[Vec<Folded>], root: impl Fn(u32) -> bool) -> Vec<Vec<NativeGate<'_>>> {
        cones_live
            .iter()
            .map(|gates| {
                gates
                    .iter()
                    .filter(|g| root(g.out))
                    .filter_map(|g| self.restore_gate(g.out))
                    .collect()
            })
            .collect()
    }

    /// The gate putting back `gate`'s baseline if it is a constant or a copy
    /// of a base, else `None`.
    fn restore_gate(&self, gate: u32) -> Option<NativeGate<'_>> {
        let (all, fanin) = match self.baseline[gate as usize] {
            Value::Known(v) => (v, &[][..]),
            _ if self.copy_of[gate as usize] != NO_INDEX => {
                (false, std::slice::from_ref(&self.copy_of[gate as usize]))
            }
            _ => return None,
        };
        Some(NativeGate {
            out: gate,
            all,
            negate: false,
            fanin,
        })
    }

    /// Per base, the bytes (where `layout` locates them) of the stored
    /// (`root`) gates whose baseline copies it.
    fn base_copies(&self, root: impl Fn(u32) -> bool, layout: Layout) -> Vec<Vec<u32>> {
        let net = self.net;
        let copy_of = |gate: u32| self.copy_of[gate as usize];
        let mut base_copies = vec![Vec::new(); net.base_slots().len()];
        for gate in (0..net.slots() as u32).filter(|&g| copy_of(g) != NO_INDEX && root(g)) {
            base_copies[copy_of(gate) as usize].push(layout.located[gate as usize]);
        }
        base_copies
    }

    /// Whether the packing of the `packed` words or a function of the live
    /// gates reads an input, or an `or` of moves, from memory.
    fn reads_moves(&self, packed: &[Vec<u32>], base_live: &[Folded], cones_live: &[Vec<Folded>]) -> bool {
        let of_moves = |slot: &u32| is_input(self.net, *slot) || self.decoded.is_decoded(*slot);
        packed.iter().flatten().any(of_moves)
            || base_live.iter().chain(cones_live.iter().flatten()).any(|g| {
                self.operands[g.start as usize..g.end as usize]
                    .iter()
                    .any(of_moves)
            })
    }

    /// The functions' native code over `layout`: the baseline's, the packing
    /// of the `packed` words, then each cone's; with, per function, whether
    /// it does anything. Gates not stored (`root`) of one fanout are read once.
    fn compile(
        &self,
        base_live: &[Folded],
        cones_live: &[Vec<Folded>],
        packed: &[Vec<u32>],
        layout: Layout,
        root: impl Fn(u32) -> bool,
    ) -> Option<(NativeProgram, Vec<bool>)> {
        let net = self.net;
        let pack: Vec<NativeStep> = packed
            .iter()
            .enumerate()
            .map(|(word, slots)| NativeStep::Pack { word, slots })
            .collect();
        let functions: Vec<Vec<NativeStep>> = [self.steps(base_live), pack]
            .into_iter()
            .chain(cones_live.iter().map(|gates| self.steps(gates)))
            .collect();
        let called = functions.iter().map(|steps| !steps.is_empty()).collect();
        let read_once: Vec<bool> = (0..net.slots())
            .map(|s| !root(s as u32) && net.fanout_offsets()[s + 1] - net.fanout_offsets()[s] == 1)
            .collect();
        let program = NativeProgram::compile_functions(layout, packed.len(), functions, &read_once)?;
        Some((program, called))
    }

    /// `gates` as steps of native code.
    fn steps(&self, gates: &[Folded]) -> Vec<NativeStep<'_>> {
        gates
            .iter()
            .map(|g| {
                NativeStep::Gate(NativeGate {
                    out: g.out,
                    all: g.all,
                    negate: g.negate,
                    fanin: &self.operands[g.start as usize..g.end as usize],
                })
            })
            .collect()
    }
}

/// What a function's gates cost, in values read and stored.
fn cost(gates: &[Folded]) -> usize {
    gates
        .iter()
        .map(|g| (g.end - g.start) as usize + 1)
        .sum::<usize>()
}

/// What calling a function of `gates` costs: empty functions are not called.
fn call_cost(gates: &[Folded]) -> usize {
    match gates {
        [] => 0,
        gates => CALL_COST + cost(gates),
    }
}

/// What a restore function of `gates` costs, in values read and stored.
fn restore_cost(gates: &[NativeGate]) -> usize {
    gates.iter().map(|g| g.fanin.len() + 1).sum::<usize>()
}

/// The values that the functions of the live gates and the restores read
/// and store.
fn values(base_live: &[Folded], cones_live: &[Vec<Folded>], restores: &[Vec<NativeGate>]) -> usize {
    cost(base_live)
        + cones_live.iter().map(|gates| cost(gates)).sum::<usize>()
        + restores.iter().map(|gates| restore_cost(gates)).sum::<usize>()
}

/// What a joint move costs by cones, in values read (a call counting as
/// [`CALL_COST`]): the packing's call, the baseline's, then per role the
/// average of its cones' calls and their restores'.
fn joint_move_cost(
    net: &CompiledNet,
    base_live: &[Folded],
    cones_live: &[Vec<Folded>],
    restores: &[Vec<NativeGate>],
) -> f64 {
    let restore_call_cost = |m: usize| match restore_cost(&restores[m]) {
        0 => 0,
        cost => CALL_COST + cost,
    };
    let per_role: f64 = net
        .role_moves()
        .iter()
        .filter(|inputs| !inputs.is_empty())
        .map(|inputs| {
            let total: usize = inputs
                .iter()
                .map(|&m| call_cost(&cones_live[m as usize]) + restore_call_cost(m as usize))
                .sum();
            total as f64 / inputs.len() as f64
        })
        .sum();
    (CALL_COST + call_cost(base_live)) as f64 + per_role
}

/// The restores' native code over `layout`, a function per cone, with, per
/// function, whether it does anything.
fn compile_restores(
    net: &CompiledNet,
    layout: Layout,
    restores: Vec<Vec<NativeGate>>,
) -> Option<(NativeProgram, Vec<bool>)> {
    let restoring = restores.iter().map(|steps| !steps.is_empty()).collect();
    let restore_steps = restores
        .into_iter()
        .map(|gates| gates.into_iter().map(NativeStep::Gate).collect());
    let program = NativeProgram::compile_functions(layout, 0, restore_steps, &vec![false; net.slots()])?;
    Some((program, restoring))
}

/// Whether `slot` is an input of `net`.
pub(crate) fn is_input(net: &CompiledNet, slot: u32) -> bool {
    (net.base_slots().len() as u32..net.first_gate()).contains(&slot)
}

impl Function {
    fn push(&mut self, (gate, constant): (Folded, Option<bool>)) {
        self.gates.push(gate);
        self.constants.push(constant);
    }

    /// The gates whose values matter: the `root`s, and the gates they read
    /// (through others) that this function computes; a constant as a gate
    /// of no operands (`and`: true, `or`: false).
    fn live(&self, operands: &[u32], root: impl Fn(u32) -> bool) -> Vec<Folded> {
        let mut needed: Vec<bool> = self.gates.iter().map(|g| root(g.out)).collect();
        let position = |slot: u32| self.gates.binary_search_by_key(&slot, |g| g.out).ok();
        for k in (0..self.gates.len()).rev() {
            if needed[k] && self.constants[k].is_none() {
                let gate = self.gates[k];
                for &i in &operands[gate.start as usize..gate.end as usize] {
                    if let Some(p) = position(i) {
                        needed[p] = true;
                    }
                }
            }
        }
        self.gates
            .iter()
            .zip(&self.constants)
            .zip(needed)
            .filter(|&(_, needed)| needed)
            .map(|((&gate, &constant), _)| match constant {
                Some(v) => Folded {
                    all: v,
                    negate: false,
                    end: gate.start,
                    ..gate
                },
                None => gate,
            })
            .collect()
    }
}

/// Specializes gate `slot` to what `value_of` knows of its operands: its
/// operands still read are appended to `operands`; the constant it folds to,
/// if it does (then it reads none).
fn fold(
    net: &CompiledNet,
    slot: u32,
    value_of: impl Fn(u32) -> Value,
    operands: &mut Vec<u32>,
) -> (Folded, Option<bool>) {
    let (all, negate) = match net.gates()[slot as usize] {
        Gate::And => (true, false),
        Gate::Or => (false, false),
        Gate::Not => (true, true),
    };
    let start = operands.len() as u32;
    let mut folded = Folded {
        out: slot,
        all,
        negate,
        start,
        end: start,
    };
    for &i in net.fanin(slot) {
        match value_of(i) {
            // True for an `and`, false for an `or`: no effect.
            Value::Known(v) if v == all => {}
            // The other way decides the gate: `and` false, `or` true (then negated).
            Value::Known(_) => {
                operands.truncate(start as usize);
                return (folded, Some(all == negate));
            }
            Value::Read | Value::Computed => operands.push(i),
        }
    }
    folded.end = operands.len() as u32;
    if folded.end == start {
        return (folded, Some(all != negate));
    }
    (folded, None)
}

#[cfg(test)]
mod tests {
    use super::super::sweep::{in_place, outputs};
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// Runs the cones of random joint moves (one input per role) over
    /// random states, one after the other in the same values as the sweep
    /// does, against a plain evaluation of the whole net.
    fn cones_compute_what_the_net_computes(game: &str) {
        let loaded = crate::load(game, &crate::LoadConfig::default()).unwrap();
        let net: &CompiledNet = loaded.game.net();
        let kept: Vec<bool> = net.goal_only().iter().map(|&g| !g).collect();
        let decoded = DecodedMoves::new(net, &kept);
        let output = outputs(net);
        let packed: Vec<Vec<u32>> = net.next_slots().chunks(64).map(<[u32]>::to_vec).collect();
        let located = in_place(net);
        let layout = Layout {
            located: &located,
            pack_area: net.slots(),
            first_flag: net.slots() + 64 * packed.len(),
        };
        let Some(cones) = Cones::new(net, &kept, &decoded, &output, layout, &packed, f64::INFINITY) else {
            if cfg!(all(target_arch = "x86_64", unix)) {
                panic!("no cones for a game whose moves reach few gates");
            }
            return;
        };
        let in_moves = net.in_move_part();
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(3);
        let mut values = vec![false; layout.first_flag];
        cones.restore_all(&mut values);
        let mut previous: Vec<u32> = Vec::new();
        for _ in 0..300 {
            let mut plain = vec![false; net.slots()];
            for &base in net.base_slots() {
                plain[base as usize] = rng.gen_bool(0.3);
            }
            let moves: Vec<u32> = net
                .role_moves()
                .iter()
                .map(|inputs| inputs[rng.gen_range(0..inputs.len())])
                .collect();
            assert!(cones.accepts(&moves));
            for &m in &moves {
                plain[net.move_slots()[m as usize] as usize] = true;
            }
            crate::layout::run_steps(net.steps(), &mut plain, false, net);
            // What loading the state (a changed base stores its copies too),
            // the state part and loading the moves leave in the values.
            for base in 0..net.base_slots().len() as u32 {
                if values[base as usize] != plain[base as usize] {
                    for &byte in cones.copies_of(base) {
                        values[byte as usize] = plain[base as usize];
                    }
                }
            }
            for slot in 0..net.slots() {
                if !(in_moves[slot] && kept[slot]) || decoded.is_decoded(slot as u32) {
                    values[slot] = plain[slot];
                }
            }
            cones.restore(&mut values, &previous);
            let mut words = vec![!0; packed.len()];
            cones.run(&mut values, &moves, &mut words);
            for (word, slots) in words.iter().zip(&packed) {
                let expected = slots
                    .iter()
                    .enumerate()
                    .fold(0u64, |w, (bit, &slot)| w | u64::from(plain[slot as usize]) << bit);
                assert_eq!(*word, expected, "next state after {moves:?}");
            }
            for slot in (0..net.slots()).filter(|&s| output[s] && kept[s]) {
                assert_eq!(values[slot], plain[slot], "slot {slot} after {moves:?}");
            }
            previous = moves;
        }
        // Two inputs of one role: the whole move part runs instead.
        let role = net.role_moves().iter().find(|inputs| inputs.len() > 1).unwrap();
        assert!(!cones.accepts(&role[..2]));
    }

    #[test]
    fn cones_of_turn_taking_moves() {
        cones_compute_what_the_net_computes(super::super::TURNS);
    }

    #[test]
    fn cones_of_simultaneous_moves() {
        cones_compute_what_the_net_computes(super::super::CLAIMS);
    }
}
