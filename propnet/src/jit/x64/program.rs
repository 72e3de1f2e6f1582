//! Programs: the gates of a sweep's part compiled to straight-line code by
//! the assembler (which plans registers and windows and emits through
//! `encode`), run from executable memory.

use super::encode::{self, Alu, Memory};
use super::memory::ExecutableMemory;
use std::fmt;

/// A literal under which a gate's value does not matter: while `slot` holds
/// `skip_when`, the code jumps over the gate (which may then hold any value).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Condition {
    pub slot: u32,
    pub skip_when: bool,
}

/// The registers an expression is evaluated in, by depth: `rax`, `rcx`, `rdx`,
/// `r8`, `r9` (numbered as in instruction encodings).
const REGISTERS: [u8; 5] = [0, 1, 2, 8, 9];

/// `rdi`: the values on entry, then the first window's base.
const RDI: u8 = 7;

/// The registers that may point into windows of the values, in the order
/// they are given out (the windows with the most operands first): `rdi`,
/// then `rbx` and `rbp`, which need no REX prefix, then `r10`, `r11`, `r13`
/// to `r15`, and `r12`, whose addressing takes an extra byte.
const WINDOW_REGISTERS: [u8; 9] = [RDI, 3, 5, 10, 11, 13, 14, 15, 12];

/// The fewest operands a window other than `rdi`'s must hold to take a
/// register: its setting up (a `lea`, and a `push` and `pop` for a register
/// the convention preserves) costs about what a few short operands save.
const FEWEST_WINDOW_OPERANDS: u32 = 4;

/// The most registers a gate computed in registers may need, so that its
/// reader, which holds its own value in one more, needs at most all of them.
const MOST_REGISTERS_INLINED: u8 = REGISTERS.len() as u8 - 1;

/// A gate as native code compiles it: `out` = `not`? of the `and` (`all`) or
/// `or` of `fanin` (true for an `and` of none, false for an `or` of none).
#[derive(Clone, Copy, Debug)]
pub(crate) struct NativeGate<'a> {
    pub out: u32,
    pub all: bool,
    pub negate: bool,
    pub fanin: &'a [u32],
}

/// Where a program's values live: each slot's byte, the bytes the packed
/// words are read from, then the flags.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Layout<'a> {
    /// Per slot, the byte that holds its value: its own, or one of the pack
    /// area's.
    pub located: &'a [u32],
    /// Word `w` of the output packs the 64 bytes from `pack_area + 64 w`
    /// (past the slots).
    pub pack_area: usize,
    /// Flags take bytes from here on (past the pack area).
    pub first_flag: usize,
}

/// A program compiled to native code: segments of straight-line code, and the
/// cyclic components evaluated between them.
pub(crate) struct NativeProgram {
    memory: ExecutableMemory,
    segments: Vec<Segment>,
    /// The number of bytes the code addresses values in (flags included).
    slots: usize,
    /// The flagged blocks: flag `first_flag + k` is the flag of block
    /// `flagged[k]` (a block cut by a cyclic component has a flag per piece).
    pub(crate) flagged: Vec<u32>,
    /// The number of words it packs values into.
    words: usize,
    /// How many gates it computes in registers only.
    #[cfg(test)]
    pub(crate) inlined: usize,
    /// How many windows of the values its code addresses.
    #[cfg(test)]
    windows: usize,
}

#[derive(Clone, Copy, Debug)]
enum Segment {
    /// Code at this offset, ending with `ret`.
    Code(usize),
    /// The cyclic component `start..end`, to its least fixpoint.
    Cycle(u32, u32),
}

/// When a stored gate's code is skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Skip {
    /// Unless the flag of its flagged block (the block's number) is set.
    Unflagged(u32),
    /// While a condition holds.
    Condition(Condition),
}

/// The steps of a program, in order, as the assembler takes them.
#[derive(Clone, Copy, Debug)]
pub(crate) enum NativeStep<'a> {
    Gate(NativeGate<'a>),
    Cycle(u32, u32),
    /// Word `word` of the output: bit `i` is the value of `slots[i]` (at most 64 slots).
    Pack {
        word: usize,
        slots: &'a [u32],
    },
    /// The end of a function: the steps after it make the next one (see
    /// [`NativeProgram::compile_functions`]).
    End,
}

impl NativeProgram {
    /// Compiles `steps` over values laid out as `layout` says and `words`
    /// output words, or `None` where native code is not supported or
    /// executable memory is refused. `read_once[s]` says that slot `s` is read by one gate only and
    /// is no output: the program need not store it if it computes it for that
    /// gate. Values of such slots are unspecified after a run.
    /// `skip(gate)` gives when a stored gate is skipped, if ever:
    /// consecutive stored gates of one block share a flag, and consecutive
    /// gates under one condition are skipped together (the condition's slot
    /// must be computed before them). A gate under a condition that
    /// `forced(gate)` says forces it is not computed but set to the
    /// condition's `skip_when` when skipped. Flags take the bytes from
    /// `layout.first_flag` on, in the order of [`NativeProgram::flagged`].
    pub(crate) fn compile<'a>(
        layout: Layout,
        words: usize,
        steps: impl IntoIterator<Item = NativeStep<'a>>,
        read_once: &[bool],
        mut skip: impl FnMut(u32) -> Option<Skip>,
        forced: impl Fn(u32) -> bool,
    ) -> Option<NativeProgram> {
        NativeProgram::assemble_program(layout, words, steps, read_once, &mut skip, &forced, true)
    }

    /// Compiles each of `functions` (steps without cycles or skips) into a
    /// function of its own, over values laid out as `layout` says, addressed
    /// through `rdi` only (a function's set-up costs more than its few
    /// operands would save); run function `k` with
    /// [`NativeProgram::run_function`]. `None` as for [`NativeProgram::compile`].
    pub(crate) fn compile_functions<'a>(
        layout: Layout,
        words: usize,
        functions: impl IntoIterator<Item = Vec<NativeStep<'a>>>,
        read_once: &[bool],
    ) -> Option<NativeProgram> {
        let mut steps = Vec::new();
        for function in functions {
            assert!(
                function
                    .iter()
                    .all(|step| !matches!(step, NativeStep::Cycle(..) | NativeStep::End)),
                "a function with a cycle or an end of its own"
            );
            steps.extend(function);
            steps.push(NativeStep::End);
        }
        NativeProgram::assemble_program(layout, words, steps, read_once, &mut |_| None, &|_| false, false)
    }

    /// [`NativeProgram::compile`], with windows of the values chosen if
    /// `windowed` (else `rdi`'s only).
    fn assemble_program<'a>(
        layout: Layout,
        words: usize,
        steps: impl IntoIterator<Item = NativeStep<'a>>,
        read_once: &[bool],
        skip: &mut impl FnMut(u32) -> Option<Skip>,
        forced: &impl Fn(u32) -> bool,
        windowed: bool,
    ) -> Option<NativeProgram> {
        let slots = layout.located.len();
        assert!(
            layout.pack_area >= slots && layout.first_flag >= layout.pack_area + 64 * words,
            "pack area or flags among the slots"
        );
        assert!(
            layout.located.iter().all(|&at| (at as usize) < layout.first_flag),
            "a value among the flags"
        );
        // Flags are at most one per gate, so all bytes are below `first_flag + slots`.
        if !cfg!(all(target_arch = "x86_64", unix))
            || layout.first_flag + slots > i32::MAX as usize
            || words * 8 > i32::MAX as usize
        {
            return None;
        }
        assert_eq!(read_once.len(), slots);
        let steps: Vec<NativeStep> = steps.into_iter().collect();
        // Each function (all of `steps` when they have no `End`) inlines on its own.
        let functions: Vec<&[NativeStep]> = steps
            .split_inclusive(|step| matches!(step, NativeStep::End))
            .collect();
        let mut inlining = Inlining::new(slots);
        let windows = if windowed {
            // A first pass counts the operands per byte, to choose the windows.
            let mut draft = Assembler::new(layout, vec![(RDI, 0)]);
            for function in &functions {
                inlining.plan(function, read_once);
                draft.assemble(function, &inlining.inlined, words, skip, forced);
            }
            choose_windows(&draft.operands)
        } else {
            vec![(RDI, 0)]
        };
        let mut assembler = Assembler::new(layout, windows);
        let mut flagged = Vec::new();
        #[cfg(test)]
        let mut inlined = 0;
        for function in &functions {
            inlining.plan(function, read_once);
            flagged.extend(assembler.assemble(function, &inlining.inlined, words, skip, forced));
            #[cfg(test)]
            {
                inlined += inlining.inlined.iter().filter(|g| g.is_some()).count();
            }
        }
        // Every code segment ends with its `ret`, so it starts within the
        // code: `ExecutableMemory::call` relies on it.
        assert!(
            assembler.segments.iter().all(|segment| match *segment {
                Segment::Code(offset) => offset < assembler.code.len(),
                Segment::Cycle(start, end) => start <= end && end as usize <= slots,
            }),
            "a code segment outside the code"
        );
        Some(NativeProgram {
            memory: ExecutableMemory::new(&assembler.code)?,
            segments: assembler.segments,
            slots: layout.first_flag + flagged.len(),
            flagged,
            words,
            #[cfg(test)]
            inlined,
            #[cfg(test)]
            windows: assembler.windows.len(),
        })
    }

    /// The gates that code compiled from `steps` stores (see [`NativeProgram::compile`]),
    /// each with how many values its expression reads from memory.
    pub(crate) fn stored_gates<'a>(
        slots: usize,
        steps: impl IntoIterator<Item = NativeStep<'a>>,
        read_once: &[bool],
    ) -> Vec<(u32, usize)> {
        let steps: Vec<NativeStep> = steps.into_iter().collect();
        let inlined = inlined_gates(slots, &steps, read_once);
        steps
            .iter()
            .filter_map(|step| match *step {
                NativeStep::Gate(gate) if inlined[gate.out as usize].is_none() => {
                    Some((gate.out, operands(gate, &inlined)))
                }
                _ => None,
            })
            .collect()
    }

    /// Evaluates the program over `values` (one per slot of the net it was
    /// compiled for) and packs its words into `out`; `cycle(values, start, end)`
    /// evaluates the cyclic component `start..end`.
    pub(crate) fn run(
        &self,
        values: &mut [bool],
        out: &mut [u64],
        mut cycle: impl FnMut(&mut [bool], u32, u32),
    ) {
        assert!(
            values.len() >= self.slots,
            "native program run over values of another net"
        );
        assert_eq!(
            out.len(),
            self.words,
            "native program packing into the wrong number of words"
        );
        // SAFETY: `compile` emitted, from each code offset, a function of the
        // System V convention that reads and writes only bytes at `values +
        // byte` for bytes below `self.slots`, at most `values.len()`
        // (asserted above), and words `out[w]` for `w` below `self.words`,
        // which is `out.len()`; it stores 0 or 1 in values (valid `bool`s, as
        // it combines only `bool`s with `and`, `or` and `xor 1`), clobbers
        // only registers and flags that the convention lets it clobber, and
        // returns.
        let code = |offset: usize, values: &mut [bool], out: &mut [u64]| unsafe {
            self.memory
                .call(offset, values.as_mut_ptr().cast(), out.as_mut_ptr())
        };
        // Most programs are one segment: called without the loop.
        if let [Segment::Code(offset)] = self.segments[..] {
            return code(offset, values, out);
        }
        for &segment in &self.segments {
            match segment {
                Segment::Code(offset) => code(offset, values, out),
                Segment::Cycle(start, end) => cycle(values, start, end),
            }
        }
    }

    /// The bytes of its machine code.
    pub(crate) fn code_bytes(&self) -> usize {
        self.memory.len()
    }

    /// Runs function `k` of a program made by
    /// [`NativeProgram::compile_functions`] over `values`, packing into `out`.
    pub(crate) fn run_function(&self, k: usize, values: &mut [bool], out: &mut [u64]) {
        assert!(
            values.len() >= self.slots && out.len() == self.words,
            "native function run over values or words of another net"
        );
        let Segment::Code(offset) = self.segments[k] else {
            unreachable!("functions have no cycles")
        };
        // SAFETY: as in `run`: the function at `offset` reads and writes only
        // bytes below `self.slots` of `values` and words of `out` (both
        // asserted long enough), stores valid `bool`s, and keeps the
        // calling convention.
        unsafe {
            self.memory
                .call(offset, values.as_mut_ptr().cast(), out.as_mut_ptr())
        }
    }
}

impl fmt::Debug for NativeProgram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NativeProgram")
            .field("code_bytes", &self.memory.len())
            .field("segments", &self.segments)
            .finish()
    }
}

/// Which gates of `steps` are computed in registers by their reader (their
/// definition) rather than stored: those read once, by a gate that comes after
/// them, and needing at most [`MOST_REGISTERS_INLINED`] registers. A gate holds
/// its value in the register of its depth; its first operand, computed in
/// registers, takes that same register and the ones after, and each further
/// operand computed in registers the ones after it.
fn inlined_gates<'a>(
    slots: usize,
    steps: &[NativeStep<'a>],
    read_once: &[bool],
) -> Vec<Option<NativeGate<'a>>> {
    let mut inlining = Inlining::new(slots);
    inlining.plan(steps, read_once);
    inlining.inlined
}

/// [`inlined_gates`] of one function after another, each on its own (a slot
/// a function computes in registers may be stored by another, or computed
/// there from other operands), reusing the tables.
struct Inlining<'a> {
    /// Per slot, its definition if the function planned last computes it in
    /// registers.
    inlined: Vec<Option<NativeGate<'a>>>,
    /// Per gate seen so far, the registers it needs (0: not a gate seen yet).
    needs: Vec<u8>,
    definitions: Vec<Option<NativeGate<'a>>>,
    /// The slots whose entries the function planned last set.
    touched: Vec<u32>,
}

impl<'a> Inlining<'a> {
    fn new(slots: usize) -> Inlining<'a> {
        Inlining {
            inlined: vec![None; slots],
            needs: vec![0; slots],
            definitions: vec![None; slots],
            touched: Vec::new(),
        }
    }

    /// Plans the function `steps` afresh; its plan is `self.inlined`.
    fn plan(&mut self, steps: &[NativeStep<'a>], read_once: &[bool]) {
        for slot in self.touched.drain(..) {
            let s = slot as usize;
            (self.inlined[s], self.needs[s], self.definitions[s]) = (None, 0, None);
        }
        for step in steps {
            let NativeStep::Gate(gate) = *step else { continue };
            let mut need = 1;
            for (k, &operand) in gate.fanin.iter().enumerate() {
                let i = operand as usize;
                if read_once[i] && (1..=MOST_REGISTERS_INLINED).contains(&self.needs[i]) {
                    self.inlined[i] = self.definitions[i];
                    need = need.max(self.needs[i] + u8::from(k > 0));
                }
            }
            self.needs[gate.out as usize] = need;
            self.definitions[gate.out as usize] = Some(gate);
            self.touched.push(gate.out);
        }
    }
}

/// How many values the expression of `gate` reads from memory, the operands it
/// computes in registers included.
fn operands(gate: NativeGate, inlined: &[Option<NativeGate>]) -> usize {
    // A stack of the expressions still to count, not recursion: a chain of
    // gates read once is one expression as deep as the chain is long.
    let mut count = 0;
    let mut pending = vec![gate];
    while let Some(gate) = pending.pop() {
        for &i in gate.fanin {
            match inlined[i as usize] {
                Some(definition) => pending.push(definition),
                None => count += 1,
            }
        }
    }
    count
}

/// A part of an expression's code still to emit (see [`Assembler::expression`]).
#[derive(Clone, Copy, Debug)]
enum Emit<'a> {
    /// A gate's whole expression, into the register of this depth.
    Gate(NativeGate<'a>, usize),
    /// A slot's value loaded into a register.
    Load(u8, u32),
    /// A slot's value combined into a register, by `and` (`all`) or `or`.
    Read { all: bool, register: u8, slot: u32 },
    /// Register `other` combined into `register`, by `and` (`all`) or `or`.
    Combine { all: bool, register: u8, other: u8 },
    /// The register's value negated.
    Negate(u8),
}

/// Emits x86-64 machine code.
struct Assembler<'a> {
    /// Where the values live.
    layout: Layout<'a>,
    code: Vec<u8>,
    segments: Vec<Segment>,
    /// Whether a code segment is open (its `ret` not yet emitted).
    open: bool,
    /// The skip open, and where its jump's displacement ends.
    skip: Option<(Skip, usize)>,
    /// The gates under the open condition that it forces, with the value
    /// they take when skipped.
    forced: Vec<(u32, bool)>,
    /// The base registers and the slot each points at, `rdi`'s first.
    windows: Vec<(u8, u32)>,
    /// Per byte of the values, how many operands address it (grown as needed).
    operands: Vec<u32>,
}

impl<'a> Assembler<'a> {
    /// An assembler addressing values laid out as `layout` says through
    /// `windows` (see [`Assembler::windows`]).
    fn new(layout: Layout<'a>, windows: Vec<(u8, u32)>) -> Assembler<'a> {
        debug_assert_eq!(windows.first().map(|w| w.0), Some(RDI));
        Assembler {
            layout,
            code: Vec::new(),
            segments: Vec::new(),
            open: false,
            skip: None,
            forced: Vec::new(),
            windows,
            operands: Vec::new(),
        }
    }

    /// Emits the code of `steps` (see [`NativeProgram::compile`]) packing
    /// `words` output words; returns the flagged blocks, in the order of
    /// their flags.
    fn assemble(
        &mut self,
        steps: &[NativeStep],
        inlined: &[Option<NativeGate>],
        words: usize,
        skip: &mut impl FnMut(u32) -> Option<Skip>,
        forced: &impl Fn(u32) -> bool,
    ) -> Vec<u32> {
        let slots = self.layout.located.len();
        let mut flagged = Vec::new();
        for step in steps {
            match *step {
                NativeStep::Gate(gate) => {
                    assert!((gate.out as usize) < slots && gate.fanin.iter().all(|&i| (i as usize) < slots));
                    if inlined[gate.out as usize].is_none() {
                        let wanted = skip(gate.out);
                        if wanted != self.skip.map(|(open, _)| open) {
                            self.close_skip();
                            match wanted {
                                Some(Skip::Unflagged(block)) => {
                                    self.open_block(block, (self.layout.first_flag + flagged.len()) as u32);
                                    flagged.push(block);
                                }
                                Some(Skip::Condition(condition)) => {
                                    assert!((condition.slot as usize) < slots);
                                    self.open_condition(condition);
                                }
                                None => {}
                            }
                        }
                        self.root(gate, inlined);
                        if let (Some(Skip::Condition(condition)), true) = (wanted, forced(gate.out)) {
                            self.forced.push((gate.out, condition.skip_when));
                        }
                    }
                }
                NativeStep::Cycle(start, end) => {
                    assert!(start <= end && end as usize <= slots);
                    self.close();
                    self.segments.push(Segment::Cycle(start, end));
                }
                NativeStep::Pack { word, slots: packed } => {
                    assert!(
                        word < words && packed.len() <= 64 && packed.iter().all(|&i| (i as usize) < slots)
                    );
                    self.pack(word, packed);
                }
                NativeStep::End => {
                    // An empty function too, so that function `k` is segment `k`.
                    self.open();
                    self.close();
                }
            }
        }
        self.close();
        flagged
    }

    /// Computes `gate` and stores its value.
    fn root(&mut self, gate: NativeGate, inlined: &[Option<NativeGate>]) {
        self.open();
        self.expression(gate, 0, inlined);
        let out = self.address(self.at(gate.out));
        encode::store_byte(&mut self.code, REGISTERS[0], out);
    }

    /// Starts flagged block `block`: the code up to [`Assembler::close_skip`]
    /// runs only if `flag` is set, and clears it.
    fn open_block(&mut self, block: u32, flag: u32) {
        self.open();
        // cmp byte [flag], 0; je (patched when the block closes); mov byte [flag], 0
        let flag = self.address(flag);
        encode::compare_byte(&mut self.code, flag, 0);
        let jump_end = encode::jump_if_equal(&mut self.code);
        self.skip = Some((Skip::Unflagged(block), jump_end));
        encode::set_byte(&mut self.code, flag, 0);
    }

    /// Starts code that runs only if `condition`'s slot does not hold its
    /// `skip_when` value, up to [`Assembler::close_skip`].
    fn open_condition(&mut self, condition: Condition) {
        self.open();
        // cmp byte [slot], skip_when; je (patched when the skip closes)
        let slot = self.address(self.at(condition.slot));
        encode::compare_byte(&mut self.code, slot, u8::from(condition.skip_when));
        let jump_end = encode::jump_if_equal(&mut self.code);
        self.skip = Some((Skip::Condition(condition), jump_end));
    }

    /// Ends the open skip, if any: its jump lands here, or, if it forces
    /// gates, on code that stores their values, which the code evaluating
    /// them jumps over.
    fn close_skip(&mut self) {
        if let Some((_, jump_end)) = self.skip.take() {
            let mut over = None;
            if !self.forced.is_empty() {
                // patched below
                over = Some(encode::jump(&mut self.code));
            }
            encode::patch(&mut self.code, jump_end);
            for (slot, value) in std::mem::take(&mut self.forced) {
                let slot = self.address(self.at(slot));
                encode::set_byte(&mut self.code, slot, u8::from(value));
            }
            if let Some(over) = over {
                encode::patch(&mut self.code, over);
            }
        }
    }

    /// Computes `gate` into the register of `depth`, and the operands it
    /// computes in registers into that one and the ones after. The parts of
    /// the expression wait on a stack of [`Emit`]s, not in recursive calls: a
    /// chain of gates read once is one expression as deep as the chain is long.
    fn expression(&mut self, gate: NativeGate, depth: usize, inlined: &[Option<NativeGate>]) {
        let mut pending = vec![Emit::Gate(gate, depth)];
        while let Some(emit) = pending.pop() {
            match emit {
                Emit::Gate(gate, depth) => {
                    let register = REGISTERS[depth];
                    let Some((&first, rest)) = gate.fanin.split_first() else {
                        encode::mov_immediate(&mut self.code, register, u32::from(gate.all != gate.negate));
                        continue;
                    };
                    // Pushed last part first: the first operand, each further
                    // operand combined in turn, then the negation.
                    if gate.negate {
                        pending.push(Emit::Negate(register));
                    }
                    for &operand in rest.iter().rev() {
                        match inlined[operand as usize] {
                            Some(definition) => {
                                pending.push(Emit::Combine {
                                    all: gate.all,
                                    register,
                                    other: REGISTERS[depth + 1],
                                });
                                pending.push(Emit::Gate(definition, depth + 1));
                            }
                            None => pending.push(Emit::Read {
                                all: gate.all,
                                register,
                                slot: operand,
                            }),
                        }
                    }
                    match inlined[first as usize] {
                        Some(operand) => pending.push(Emit::Gate(operand, depth)),
                        None => pending.push(Emit::Load(register, first)),
                    }
                }
                // movzx r32, byte [slot]: a full write of the register, so
                // no gate depends on the one before through it.
                Emit::Load(register, slot) => {
                    let slot = self.address(self.at(slot));
                    encode::movzx_load(&mut self.code, register, slot);
                }
                Emit::Read { all, register, slot } => {
                    let slot = self.address(self.at(slot));
                    encode::combine_load(&mut self.code, all, register, slot);
                }
                Emit::Combine { all, register, other } => {
                    let op = if all { Alu::And } else { Alu::Or };
                    encode::alu(&mut self.code, op, false, register, other);
                }
                Emit::Negate(register) => encode::xor_immediate(&mut self.code, register, 1),
            }
        }
    }

    /// Packs word `word` of the output, bit `i` the value of `slots[i]`:
    /// the bits whose values are in the word's bytes of the pack area 16 at
    /// a time (SSE2, which every x86-64 CPU has: shifted so that each value
    /// is its byte's top bit, then gathered as a mask), the others one by
    /// one. (Copying them into the area first was slower: a 16-byte load of
    /// bytes stored just before waits until the stores reach the cache.)
    fn pack(&mut self, word: usize, slots: &[u32]) {
        self.close_skip();
        self.open();
        let area = (self.layout.pack_area + 64 * word) as u32;
        let in_area = |bit: usize| self.at(slots[bit]) == area + bit as u32;
        let mut read_at_once = [false; 4];
        for bit in (0..slots.len()).filter(|&bit| in_area(bit)) {
            read_at_once[bit / 16] = true;
        }
        let one_by_one: Vec<(u32, u32)> = (0..slots.len())
            .filter(|&bit| !in_area(bit))
            .map(|bit| (bit as u32, slots[bit]))
            .collect();
        let (rax, rcx, rdx) = (0, 1, 2);
        encode::alu(&mut self.code, Alu::Xor, false, rax, rax);
        for chunk in (0..4).filter(|&chunk| read_at_once[chunk]) {
            // movdqu xmm0, [area + 16 chunk]; psllw xmm0, 7; pmovmskb ecx, xmm0
            let bytes = self.address(area + 16 * chunk as u32);
            encode::movdqu_load(&mut self.code, 0, bytes);
            encode::psllw(&mut self.code, 0, 7);
            encode::pmovmskb(&mut self.code, rcx, 0);
            if chunk > 0 {
                encode::shift_left(&mut self.code, rcx, 16 * chunk as u8);
            }
            encode::alu(&mut self.code, Alu::Or, true, rax, rcx);
        }
        if !one_by_one.is_empty() {
            self.pack_bits(&one_by_one);
            encode::alu(&mut self.code, Alu::Or, true, rax, rdx);
        }
        encode::store_word(&mut self.code, rax, word as u32 * 8);
    }

    /// Packs into `rdx` bit `b` (the value of `slot`) for each `(b, slot)` of
    /// `bits` (distinct bits); clobbers `rcx`, `r8` and `r9`. Four independent
    /// chains, so that they overlap: accumulator `k` (rdx, rcx, r8, r9) takes
    /// every fourth of the bits from the highest down, shifting itself left
    /// by the distance to the next; then it is shifted to its lowest bit and
    /// joined into rdx.
    fn pack_bits(&mut self, bits: &[(u32, u32)]) {
        const ACCUMULATORS: [u8; 4] = [2, 1, 8, 9];
        let mut descending = bits.to_vec();
        descending.sort_unstable_by(|a, b| b.cmp(a));
        for (k, &register) in ACCUMULATORS.iter().enumerate() {
            if k > 0 && k >= descending.len() {
                break;
            }
            encode::alu(&mut self.code, Alu::Xor, false, register, register);
            let mut last = None;
            for &(bit, slot) in descending.iter().skip(k).step_by(ACCUMULATORS.len()) {
                if let Some(higher) = last {
                    encode::shift_left(&mut self.code, register, (higher - bit) as u8);
                }
                let slot = self.address(self.at(slot));
                encode::combine_load(&mut self.code, false, register, slot);
                last = Some(bit);
            }
            if let Some(lowest) = last.filter(|&lowest| lowest > 0) {
                encode::shift_left(&mut self.code, register, lowest as u8);
            }
            if k > 0 {
                encode::alu(&mut self.code, Alu::Or, true, ACCUMULATORS[0], register);
            }
        }
    }

    /// Opens a code segment unless one is open: saves the window registers
    /// the convention preserves and points each at its window.
    fn open(&mut self) {
        if !self.open {
            self.segments.push(Segment::Code(self.code.len()));
            self.open = true;
            for (register, _) in self.windows.clone() {
                if preserved(register) {
                    encode::push(&mut self.code, register);
                }
            }
            // rdi last, as the others are set from the values' address.
            for (register, at) in self.windows.clone().into_iter().rev() {
                let base = Memory {
                    base: RDI,
                    displacement: i32::try_from(window_base(at)).expect("slots within 2 GiB"),
                };
                encode::lea(&mut self.code, register, base);
            }
        }
    }

    /// The byte holding the value of `slot`.
    fn at(&self, slot: u32) -> u32 {
        self.layout.located[slot as usize]
    }

    /// The memory operand of byte `byte` of the values, counted as one more
    /// operand there: through the first window that holds the byte with a
    /// one-byte displacement, else through `rdi` with a 32-bit one.
    fn address(&mut self, byte: u32) -> Memory {
        let index = byte as usize;
        if self.operands.len() <= index {
            self.operands.resize(index + 1, 0);
        }
        self.operands[index] += 1;
        let short = self.windows.iter().find_map(|&(base, at)| {
            i8::try_from(i64::from(byte) - i64::from(window_base(at)))
                .ok()
                .map(|d| (base, d))
        });
        match short {
            Some((base, displacement)) => Memory {
                base,
                displacement: i32::from(displacement),
            },
            None => {
                let displacement = i64::from(byte) - i64::from(window_base(self.windows[0].1));
                Memory {
                    base: RDI,
                    displacement: i32::try_from(displacement).expect("slots within 2 GiB"),
                }
            }
        }
    }

    /// Ends the open code segment, if any: restores the registers saved
    /// and returns.
    fn close(&mut self) {
        self.close_skip();
        if self.open {
            for (register, _) in self.windows.clone().into_iter().rev() {
                if preserved(register) {
                    encode::pop(&mut self.code, register);
                }
            }
            encode::ret(&mut self.code);
            self.open = false;
        }
    }
}

/// Whether the System V convention makes a function preserve `register`.
fn preserved(register: u8) -> bool {
    matches!(register, 3 | 5 | 12..=15)
}

/// Where a window's register points: 128 bytes past the window's first
/// slot `at`, so that one-byte displacements reach its 256 slots.
fn window_base(at: u32) -> u32 {
    at + 128
}

/// The windows of 256 slots that hold the most of `operands` (per slot,
/// how many operands address it), greedily, each with its register; `rdi`'s
/// first (the slots from 0 if no operands). A window other than the first
/// must hold [`FEWEST_WINDOW_OPERANDS`] operands not in an earlier one.
fn choose_windows(operands: &[u32]) -> Vec<(u8, u32)> {
    let mut left = operands.to_vec();
    let mut windows = Vec::new();
    for &register in &WINDOW_REGISTERS {
        // The window start with the most operands left: a sliding sum.
        let mut sum: u64 = left.iter().take(256).map(|&n| u64::from(n)).sum();
        let (mut best, mut best_sum) = (0, sum);
        for start in 1..left.len().saturating_sub(255) {
            sum = sum + u64::from(left[start + 255]) - u64::from(left[start - 1]);
            if sum > best_sum {
                (best, best_sum) = (start, sum);
            }
        }
        if !windows.is_empty() && best_sum < u64::from(FEWEST_WINDOW_OPERANDS) {
            break;
        }
        left[best..(best + 256).min(operands.len())].fill(0);
        windows.push((register, best as u32));
    }
    windows
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// Random circuits of 600 slots, most gates
    /// read once so that deep expressions use every register, against a plain
    /// evaluation.
    #[test]
    fn random_circuits_compute_what_a_plain_evaluation_computes() {
        // Small circuits fit the windows; in big ones, some operands are
        // in none and every window register is used.
        for (slots, rounds, windows) in [(600, 20, 1..=8), (6000, 3, 9..=9)] {
            random_circuits_against_a_plain_evaluation(slots, rounds, windows);
        }
    }

    /// `rounds` random circuits of `slots` slots, each compiled to code
    /// using a number of `windows`.
    fn random_circuits_against_a_plain_evaluation(
        slots: usize,
        rounds: usize,
        windows: std::ops::RangeInclusive<usize>,
    ) {
        const SOURCES: usize = 40;
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
        let mut deepest = 0;
        for _ in 0..rounds {
            // Gate `s` reads up to four earlier slots; an unread earlier gate is
            // preferred, so that most gates are read once.
            let mut fanins: Vec<Vec<u32>> = vec![Vec::new(); slots];
            let mut readers = vec![0u32; slots];
            let mut kinds = vec![(true, false); slots];
            for s in SOURCES..slots {
                for _ in 0..rng.gen_range(0..=4) {
                    let unread: Vec<usize> = (SOURCES.max(s.saturating_sub(30))..s)
                        .filter(|&i| readers[i] == 0)
                        .collect();
                    let operand = if !unread.is_empty() && rng.gen_bool(0.8) {
                        unread[rng.gen_range(0..unread.len())]
                    } else {
                        rng.gen_range(0..s)
                    };
                    if !fanins[s].contains(&(operand as u32)) {
                        fanins[s].push(operand as u32);
                        readers[operand] += 1;
                    }
                }
                kinds[s] = (rng.gen_bool(0.5), rng.gen_bool(0.2));
            }
            let outputs: Vec<u32> = (SOURCES as u32..slots as u32)
                .filter(|&s| readers[s as usize] != 1)
                .collect();
            let read_once: Vec<bool> = (0..slots).map(|s| s >= SOURCES && readers[s] == 1).collect();
            let packed: Vec<&[u32]> = outputs.chunks(64).collect();
            let gates: Vec<NativeStep> = (SOURCES..slots)
                .map(|s| {
                    let (all, negate) = kinds[s];
                    NativeStep::Gate(NativeGate {
                        out: s as u32,
                        all,
                        negate,
                        fanin: &fanins[s],
                    })
                })
                .collect();
            let packs = packed
                .iter()
                .enumerate()
                .map(|(word, &slots)| NativeStep::Pack { word, slots });
            let steps = gates.iter().copied().chain(packs);
            // Every other output's value moved to its bit's byte in the pack
            // area; the others are copied there.
            let mut located: Vec<u32> = (0..slots as u32).collect();
            for (k, &s) in outputs.iter().enumerate().filter(|(k, _)| k % 2 == 0) {
                located[s as usize] = (slots + k) as u32;
            }
            let layout = Layout {
                located: &located,
                pack_area: slots,
                first_flag: slots + 64 * packed.len(),
            };
            let Some(program) =
                NativeProgram::compile(layout, packed.len(), steps, &read_once, |_| None, |_| false)
            else {
                if cfg!(all(target_arch = "x86_64", unix)) {
                    panic!("no native code on x86-64 Unix");
                }
                return;
            };
            assert!(
                windows.contains(&program.windows),
                "{} windows for {slots} slots",
                program.windows
            );
            let inlined = inlined_gates(slots, &gates, &read_once);
            deepest = deepest.max(
                (SOURCES..slots)
                    .map(|s| depth(s, &fanins, &inlined))
                    .max()
                    .unwrap_or(0),
            );
            for _ in 0..20 {
                let mut expected = vec![false; slots];
                for value in &mut expected[..SOURCES] {
                    *value = rng.gen_bool(0.5);
                }
                let mut values = expected.clone();
                values.resize(layout.first_flag, false);
                for s in SOURCES..slots {
                    let (all, negate) = kinds[s];
                    let read = fanins[s].iter().map(|&i| expected[i as usize]);
                    let value = if all {
                        read.fold(true, |a, v| a & v)
                    } else {
                        read.fold(false, |a, v| a | v)
                    };
                    expected[s] = value != negate;
                }
                let mut words = vec![!0; packed.len()];
                program.run(&mut values, &mut words, |_, _, _| unreachable!("no cycles"));
                for &s in &outputs {
                    assert_eq!(
                        values[located[s as usize] as usize], expected[s as usize],
                        "slot {s}"
                    );
                }
                for (word, slots) in words.iter().zip(&packed) {
                    let bits = slots
                        .iter()
                        .enumerate()
                        .fold(0, |acc, (i, &s)| acc | u64::from(expected[s as usize]) << i);
                    assert_eq!(*word, bits);
                }
            }
        }
        assert!(
            deepest >= REGISTERS.len(),
            "expressions never used every register (deepest {deepest})"
        );
    }

    /// Flagged blocks are evaluated when their flag is set (clearing it) and
    /// skipped, keeping their gates' values, when it is not; gates under a
    /// condition are skipped, keeping their values (or taking the condition's
    /// value, if it forces them), when its slot holds the value that skips
    /// them.
    #[test]
    fn flagged_gates_run_only_when_flagged_or_needed() {
        const SLOTS: u32 = 60;
        const SOURCES: u32 = 8;
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(5);
        // Gate `s` is the `and` or `or` of up to three earlier slots.
        let fanins: Vec<Vec<u32>> = (0..SLOTS)
            .map(|s| {
                if s < SOURCES {
                    return Vec::new();
                }
                let mut read: Vec<u32> = (0..rng.gen_range(1..=3)).map(|_| rng.gen_range(0..s)).collect();
                read.dedup();
                read
            })
            .collect();
        let all: Vec<bool> = (0..SLOTS).map(|s| s % 2 == 0).collect();
        let gates: Vec<NativeStep> = (SOURCES..SLOTS)
            .map(|s| {
                NativeStep::Gate(NativeGate {
                    out: s,
                    all: all[s as usize],
                    negate: false,
                    fanin: &fanins[s as usize],
                })
            })
            .collect();
        // In each group of seven consecutive gates, a block of four, two gates
        // under a condition on the slot before the group, one unflagged;
        // nothing computed in registers.
        let skip = |gate: u32| match gate % 7 {
            0..=3 => Some(Skip::Unflagged(gate / 7)),
            4 | 5 => Some(Skip::Condition(Condition {
                slot: gate / 7 * 7 - 1,
                skip_when: (gate / 7).is_multiple_of(2),
            })),
            _ => None,
        };
        // The second gate under each condition is forced: skipped, it takes
        // the condition's `skip_when`.
        let forced = |gate: u32| gate % 7 == 5;
        let block = |gate: u32| match skip(gate) {
            Some(Skip::Unflagged(block)) => Some(block),
            _ => None,
        };
        // One word packs every gate, the forced ones by their conditions.
        let packed: Vec<u32> = (SOURCES..SLOTS).collect();
        let steps = gates.into_iter().chain([NativeStep::Pack {
            word: 0,
            slots: &packed,
        }]);
        // Values in place; the word's bytes, then the flags, after them.
        const FIRST_FLAG: usize = SLOTS as usize + 64;
        let located: Vec<u32> = (0..SLOTS).collect();
        let layout = Layout {
            located: &located,
            pack_area: SLOTS as usize,
            first_flag: FIRST_FLAG,
        };
        let Some(program) = NativeProgram::compile(layout, 1, steps, &[false; SLOTS as usize], skip, forced)
        else {
            if cfg!(all(target_arch = "x86_64", unix)) {
                panic!("no native code on x86-64 Unix");
            }
            return;
        };
        let flags = program.flagged.len();
        let mut blocks: Vec<u32> = (SOURCES..SLOTS).filter_map(block).collect();
        blocks.dedup();
        assert_eq!(program.flagged, blocks);
        let flag_of = |gate: u32| {
            let k = program
                .flagged
                .iter()
                .position(|&b| Some(b) == block(gate))
                .unwrap();
            FIRST_FLAG + k
        };
        // What the code must do: each gate in order from the values so far,
        // except those `skipped` given the values so far.
        let model = |values: &mut [bool], skipped: &mut dyn FnMut(u32, &[bool]) -> bool| {
            for s in SOURCES..SLOTS {
                if skipped(s, values) {
                    if let (Some(Skip::Condition(c)), true) = (skip(s), forced(s)) {
                        values[s as usize] = c.skip_when;
                    }
                    continue;
                }
                let read = fanins[s as usize].iter().map(|&i| values[i as usize]);
                values[s as usize] = if all[s as usize] {
                    read.fold(true, |a, v| a & v)
                } else {
                    read.fold(false, |a, v| a | v)
                };
            }
        };
        let mut values = vec![false; FIRST_FLAG + flags];
        let (mut stale_kept, mut conditions_skipping, mut conditions_running) = (0, 0, 0);
        for round in 0..50 {
            for value in values.iter_mut().take(SOURCES as usize) {
                *value = rng.gen_bool(0.5);
            }
            // Some flags set, and every flagged gate's value made wrong.
            let mut right = values[..SLOTS as usize].to_vec();
            model(&mut right, &mut |_, _| false);
            let set: Vec<bool> = (0..flags).map(|_| round == 0 || rng.gen_bool(0.5)).collect();
            for (k, &flag) in set.iter().enumerate() {
                values[FIRST_FLAG + k] = flag;
            }
            for gate in (SOURCES..SLOTS).filter(|&g| skip(g).is_some()) {
                values[gate as usize] = !right[gate as usize];
            }
            let mut expected = values[..SLOTS as usize].to_vec();
            model(&mut expected, &mut |s, so_far| match skip(s) {
                Some(Skip::Unflagged(_)) => !set[flag_of(s) - FIRST_FLAG],
                Some(Skip::Condition(c)) => {
                    let skipped = so_far[c.slot as usize] == c.skip_when;
                    conditions_skipping += usize::from(skipped);
                    conditions_running += usize::from(!skipped);
                    skipped
                }
                None => false,
            });
            let mut word = [!0];
            program.run(&mut values, &mut word, |_, _, _| unreachable!("no cycles"));
            assert_eq!(values[..SLOTS as usize], expected[..], "round {round}");
            let bits = packed
                .iter()
                .enumerate()
                .fold(0, |acc, (i, &s)| acc | u64::from(expected[s as usize]) << i);
            assert_eq!(word[0], bits, "round {round}: packed word");
            assert!(values[FIRST_FLAG..].iter().all(|&f| !f), "flags left set");
            stale_kept += (SOURCES..SLOTS)
                .filter(|&s| values[s as usize] != right[s as usize])
                .count();
            values[..SLOTS as usize].copy_from_slice(&right);
        }
        assert!(stale_kept > 0, "no gate was ever skipped");
        assert!(
            conditions_skipping > 0 && conditions_running > 0,
            "conditions never skipped or never ran"
        );
    }

    /// Windows go to the slots with the most operands, the most to `rdi`; a
    /// few operands out of the way take no register.
    #[test]
    fn windows_cover_the_most_operands() {
        let mut operands = vec![0; 5000];
        operands[1000..1256].fill(1); // 256 operands
        operands[3000..3100].fill(3); // 300, the most
        operands[4990] = 2; // fewer than a window needs
        operands[10] = 2;
        assert_eq!(choose_windows(&operands), vec![(RDI, 2844), (3, 1000)]);
        assert_eq!(choose_windows(&[]), vec![(RDI, 0)]);
    }

    /// How many registers gate `slot` takes when stored (computed at depth 0).
    fn depth(slot: usize, fanins: &[Vec<u32>], inlined: &[Option<NativeGate>]) -> usize {
        let mut need = 1;
        for (k, &i) in fanins[slot].iter().enumerate() {
            if inlined[i as usize].is_some() {
                need = need.max(depth(i as usize, fanins, inlined) + usize::from(k > 0));
            }
        }
        need
    }
}
