//! Native code for the sweep's programs on x86-64 Unix: each gate becomes
//! straight-line machine code (a byte load of its first input, an `and` or
//! `or` with each further input, a byte store), so that evaluating a circuit
//! reads no operand records, checks no bounds and runs no loop. Cyclic
//! components stay with [`fixpoint`] between native segments. A program ends
//! by packing chosen slots' values into words (legality, next state). Elsewhere,
//! or when the system refuses executable memory, programs are interpreted.
//!
//! The code addresses the values through `rdi`, which points [`BIAS`] bytes
//! past the first value, so that the first 256 slots take one-byte
//! displacements, and the packed words through `rsi`; it uses `rax`, `rdx` and
//! the flags, which the System V calling convention lets a function clobber.

use super::compiled::CompiledNet;
use super::fixpoint;
use std::fmt;

/// How far past the first value `rdi` points.
const BIAS: i64 = 128;

/// A gate as native code compiles it: `out` = `not`? of the `and` (`all`) or
/// `or` of `inputs` (true for an `and` of none, false for an `or` of none).
#[derive(Clone, Copy, Debug)]
pub(crate) struct NativeGate<'a> {
    pub out: u32,
    pub all: bool,
    pub negate: bool,
    pub inputs: &'a [u32],
}

/// A program compiled to native code: segments of straight-line code, and the
/// cyclic components evaluated between them.
pub(crate) struct NativeProgram {
    memory: ExecutableMemory,
    segments: Vec<Segment>,
    /// The number of slots the code addresses values for.
    slots: usize,
    /// The number of words it packs values into.
    words: usize,
}

#[derive(Clone, Copy, Debug)]
enum Segment {
    /// Code at this offset, ending with `ret`.
    Code(usize),
    /// The cyclic component `start..end`, to its least fixpoint.
    Cycle(u32, u32),
}

/// The steps of a program, in order, as the assembler takes them.
pub(crate) enum NativeStep<'a> {
    Gate(NativeGate<'a>),
    Cycle(u32, u32),
    /// Word `word` of the output: bit `i` is the value of `slots[i]` (at most 64 slots).
    Pack {
        word: usize,
        slots: &'a [u32],
    },
}

impl NativeProgram {
    /// Compiles `steps` over values of `slots` slots and `words` output words,
    /// or `None` where native code is not supported or executable memory is refused.
    pub(crate) fn compile<'a>(
        slots: usize,
        words: usize,
        steps: impl IntoIterator<Item = NativeStep<'a>>,
    ) -> Option<NativeProgram> {
        if !cfg!(all(target_arch = "x86_64", unix))
            || slots as i64 - BIAS > i64::from(i32::MAX)
            || words * 8 > i32::MAX as usize
        {
            return None;
        }
        let mut assembler = Assembler::default();
        for step in steps {
            match step {
                NativeStep::Gate(gate) => {
                    assert!((gate.out as usize) < slots && gate.inputs.iter().all(|&i| (i as usize) < slots));
                    assembler.gate(gate);
                }
                NativeStep::Cycle(start, end) => {
                    assert!(start <= end && end as usize <= slots);
                    assembler.close();
                    assembler.segments.push(Segment::Cycle(start, end));
                }
                NativeStep::Pack { word, slots: packed } => {
                    assert!(
                        word < words && packed.len() <= 64 && packed.iter().all(|&i| (i as usize) < slots)
                    );
                    assembler.pack(word, packed);
                }
            }
        }
        assembler.close();
        Some(NativeProgram {
            memory: ExecutableMemory::new(&assembler.code)?,
            segments: assembler.segments,
            slots,
            words,
        })
    }

    /// Evaluates the program over `values` (one per slot of the net it was
    /// compiled for) and packs its words into `out`.
    pub(crate) fn run(&self, net: &CompiledNet, values: &mut [bool], out: &mut [u64]) {
        assert_eq!(
            values.len(),
            self.slots,
            "native program run over values of another net"
        );
        assert_eq!(
            out.len(),
            self.words,
            "native program packing into the wrong number of words"
        );
        for &segment in &self.segments {
            match segment {
                Segment::Code(offset) => {
                    let base = values.as_mut_ptr().cast::<u8>().wrapping_offset(BIAS as isize);
                    // SAFETY: `compile` emitted, from `offset`, a function of the
                    // System V convention that reads and writes only bytes at
                    // `base - BIAS + slot` for slots below `self.slots`, which is
                    // `values.len()` (asserted above), and words `out[w]` for `w`
                    // below `self.words`, which is `out.len()`; it stores 0 or 1
                    // in values (valid `bool`s, as it combines only `bool`s with
                    // `and`, `or` and `xor 1`), clobbers only `rax`, `rdx` and the
                    // flags and returns.
                    unsafe { self.memory.call(offset, base, out.as_mut_ptr()) };
                }
                Segment::Cycle(start, end) => fixpoint(values, start, end, false, net),
            }
        }
    }
}

impl fmt::Debug for NativeProgram {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NativeProgram")
            .field("code_bytes", &self.memory.len)
            .field("segments", &self.segments)
            .finish()
    }
}

/// Emits x86-64 machine code.
#[derive(Default)]
struct Assembler {
    code: Vec<u8>,
    segments: Vec<Segment>,
    /// Whether a code segment is open (its `ret` not yet emitted).
    open: bool,
}

impl Assembler {
    fn gate(&mut self, gate: NativeGate) {
        self.open();
        let Some((&first, rest)) = gate.inputs.split_first() else {
            // mov byte [rdi + out], imm8
            self.memory(&[0xC6], gate.out);
            self.code.push(u8::from(gate.all != gate.negate));
            return;
        };
        // movzx eax, byte [rdi + first]: a full write of eax, so no gate
        // depends on the one before through the register.
        self.memory(&[0x0F, 0xB6], first);
        for &input in rest {
            // and al, [rdi + input] / or al, [rdi + input]
            self.memory(&[if gate.all { 0x22 } else { 0x0A }], input);
        }
        if gate.negate {
            // xor al, 1
            self.code.extend([0x34, 0x01]);
        }
        // mov [rdi + out], al
        self.memory(&[0x88], gate.out);
    }

    /// Packs the values of `slots` into word `word` of the output.
    fn pack(&mut self, word: usize, slots: &[u32]) {
        self.open();
        // xor edx, edx
        self.code.extend([0x31, 0xD2]);
        for (bit, &slot) in slots.iter().enumerate() {
            self.memory(&[0x0F, 0xB6], slot);
            if bit > 0 {
                // shl rax, bit
                self.code.extend([0x48, 0xC1, 0xE0, bit as u8]);
            }
            // or rdx, rax
            self.code.extend([0x48, 0x09, 0xC2]);
        }
        // mov [rsi + 8 word], rdx: REX.W, 89 /r, ModRM reg 010 (rdx), r/m 110 (rsi).
        self.code.extend([0x48, 0x89]);
        let displacement = word * 8;
        match i8::try_from(displacement) {
            Ok(short) => self.code.extend([0x56, short as u8]),
            Err(_) => {
                self.code.push(0x96);
                self.code.extend((displacement as i32).to_le_bytes());
            }
        }
    }

    /// Opens a code segment unless one is open.
    fn open(&mut self) {
        if !self.open {
            self.segments.push(Segment::Code(self.code.len()));
            self.open = true;
        }
    }

    /// Emits `opcode` with a memory operand `[rdi + slot - BIAS]` and `al`/`eax` (or `/0`).
    fn memory(&mut self, opcode: &[u8], slot: u32) {
        self.code.extend_from_slice(opcode);
        let displacement = i64::from(slot) - BIAS;
        match i8::try_from(displacement) {
            // ModRM: mod 01 (8-bit displacement), reg 000, r/m 111 (rdi).
            Ok(short) => self.code.extend([0x47, short as u8]),
            // ModRM: mod 10 (32-bit displacement), reg 000, r/m 111 (rdi).
            Err(_) => {
                self.code.push(0x87);
                self.code.extend((displacement as i32).to_le_bytes());
            }
        }
    }

    /// Ends the open code segment, if any, with `ret`.
    fn close(&mut self) {
        if self.open {
            self.code.push(0xC3);
            self.open = false;
        }
    }
}

/// Machine code in memory mapped readable and executable (never writable and
/// executable at once).
struct ExecutableMemory {
    start: *mut u8,
    len: usize,
}

// SAFETY: the memory is written once, before it becomes executable, and only
// read and executed after: threads may share and send it.
unsafe impl Send for ExecutableMemory {}
unsafe impl Sync for ExecutableMemory {}

#[cfg(all(target_arch = "x86_64", unix))]
impl ExecutableMemory {
    /// Maps `code` executable, or `None` if the system refuses.
    fn new(code: &[u8]) -> Option<ExecutableMemory> {
        let len = code.len().max(1);
        // SAFETY: a fresh private anonymous mapping, written within its length
        // while writable, then made read-only and executable.
        unsafe {
            let start = libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            if start == libc::MAP_FAILED {
                return None;
            }
            let memory = ExecutableMemory {
                start: start.cast(),
                len,
            };
            std::ptr::copy_nonoverlapping(code.as_ptr(), memory.start, code.len());
            (libc::mprotect(start, len, libc::PROT_READ | libc::PROT_EXEC) == 0).then_some(memory)
        }
    }

    /// Calls the function at `offset` with `values` in `rdi` and `words` in `rsi`.
    ///
    /// # Safety
    /// A function of the System V convention taking two pointers must start at
    /// `offset`, and what it does with them must be sound.
    unsafe fn call(&self, offset: usize, values: *mut u8, words: *mut u64) {
        debug_assert!(offset < self.len);
        let function: extern "sysv64" fn(*mut u8, *mut u64) = std::mem::transmute(self.start.add(offset));
        function(values, words)
    }
}

#[cfg(all(target_arch = "x86_64", unix))]
impl Drop for ExecutableMemory {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `new`, which nothing uses any more.
        unsafe { libc::munmap(self.start.cast(), self.len) };
    }
}

#[cfg(not(all(target_arch = "x86_64", unix)))]
impl ExecutableMemory {
    fn new(_code: &[u8]) -> Option<ExecutableMemory> {
        None
    }

    unsafe fn call(&self, _offset: usize, _values: *mut u8, _words: *mut u64) {
        unreachable!("no native code on this platform")
    }
}
