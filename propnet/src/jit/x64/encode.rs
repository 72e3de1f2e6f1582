//! x86-64 instruction encoding: every instruction form the assembler emits,
//! each a function appending its bytes to the code. Registers are numbered
//! as in encodings (0 `rax` to 15 `r15`); the REX prefix is emitted where an
//! operand needs it, and the rule of byte registers is kept here, not left
//! to the assembler's choice of registers: in a byte operand, registers 4 to
//! 7 are `spl`, `bpl`, `sil` and `dil` only with a REX prefix (without one
//! the same numbers are `ah`, `ch`, `dh` and `bh`, which this encoder never
//! names), so a byte register from 4 to 7 always gets one (0x40 if no bit
//! is needed). `tests` decodes every form with the iced-x86 decoder.

/// `rsi`, the packed words' address.
const RSI: u8 = 6;

/// What the ModRM reg field of an instruction with a memory operand holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Reg {
    /// A byte register (`al` .. `r15b`, `spl` .. `dil` for 4 to 7).
    Byte(u8),
    /// A 32-bit register.
    Dword(u8),
    /// A 64-bit register.
    Qword(u8),
    /// An SSE register.
    Xmm(u8),
    /// An opcode extension (`/digit`), no register.
    Extension(u8),
}

impl Reg {
    /// The register number (or extension) the field encodes.
    fn number(self) -> u8 {
        match self {
            Reg::Byte(r) | Reg::Dword(r) | Reg::Qword(r) | Reg::Xmm(r) | Reg::Extension(r) => r,
        }
    }

    /// Whether the operand needs a REX prefix even with no bit set: a byte
    /// register from 4 to 7 (`spl`, `bpl`, `sil`, `dil`).
    fn needs_rex(self) -> bool {
        matches!(self, Reg::Byte(4..=7))
    }
}

/// A memory operand `[base + displacement]`, encoded with a one-byte
/// displacement where it fits, else four bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Memory {
    pub base: u8,
    pub displacement: i32,
}

/// Emits a REX prefix if any of its bits is needed, or if `force`: W (64-bit
/// operand), R (ModRM reg extension), B (ModRM r/m extension).
fn rex(code: &mut Vec<u8>, w: bool, r: bool, b: bool, force: bool) {
    if w || r || b || force {
        code.push(0x40 | u8::from(w) << 3 | u8::from(r) << 2 | u8::from(b));
    }
}

/// Emits `opcode` (after its mandatory prefix, 66 or F3, if any) with `reg`
/// in ModRM's reg field and the memory operand `memory` (a one-byte
/// displacement where it fits), then `immediate` if any.
pub(super) fn memory_form(
    code: &mut Vec<u8>,
    opcode: &[u8],
    reg: Reg,
    memory: Memory,
    immediate: Option<u8>,
) {
    // A mandatory prefix comes before REX.
    let opcode = match opcode {
        [prefix @ (0x66 | 0xF3), rest @ ..] => {
            code.push(*prefix);
            rest
        }
        _ => opcode,
    };
    let register = reg.number();
    rex(
        code,
        matches!(reg, Reg::Qword(_)),
        register >= 8,
        memory.base >= 8,
        reg.needs_rex(),
    );
    code.extend_from_slice(opcode);
    let short = i8::try_from(memory.displacement).ok();
    let mode = if short.is_some() { 0x40 } else { 0x80 };
    code.push(mode | (register & 7) << 3 | (memory.base & 7));
    if memory.base & 7 == 4 {
        // SIB: base only (rsp, r12)
        code.push(0x24);
    }
    match short {
        Some(displacement) => code.push(displacement as u8),
        None => code.extend(memory.displacement.to_le_bytes()),
    }
    code.extend(immediate);
}

/// `movzx r32, byte [m]`.
pub(super) fn movzx_load(code: &mut Vec<u8>, register: u8, memory: Memory) {
    memory_form(code, &[0x0F, 0xB6], Reg::Dword(register), memory, None);
}

/// `and r8, [m]` (`all`) or `or r8, [m]`.
pub(super) fn combine_load(code: &mut Vec<u8>, all: bool, register: u8, memory: Memory) {
    memory_form(
        code,
        &[if all { 0x22 } else { 0x0A }],
        Reg::Byte(register),
        memory,
        None,
    );
}

/// `mov [m], r8`.
pub(super) fn store_byte(code: &mut Vec<u8>, register: u8, memory: Memory) {
    memory_form(code, &[0x88], Reg::Byte(register), memory, None);
}

/// `cmp byte [m], value` (80 /7 ib).
pub(super) fn compare_byte(code: &mut Vec<u8>, memory: Memory, value: u8) {
    memory_form(code, &[0x80], Reg::Extension(7), memory, Some(value));
}

/// `mov byte [m], value` (C6 /0 ib).
pub(super) fn set_byte(code: &mut Vec<u8>, memory: Memory, value: u8) {
    memory_form(code, &[0xC6], Reg::Extension(0), memory, Some(value));
}

/// `movdqu xmm, [m]`.
pub(super) fn movdqu_load(code: &mut Vec<u8>, xmm: u8, memory: Memory) {
    memory_form(code, &[0xF3, 0x0F, 0x6F], Reg::Xmm(xmm), memory, None);
}

/// `lea r64, [m]`.
pub(super) fn lea(code: &mut Vec<u8>, register: u8, memory: Memory) {
    memory_form(code, &[0x8D], Reg::Qword(register), memory, None);
}

/// `mov [rsi + displacement], r64` (always a four-byte displacement).
pub(super) fn store_word(code: &mut Vec<u8>, register: u8, displacement: u32) {
    rex(code, true, register >= 8, false, false);
    code.extend([0x89, 0x80 | (register & 7) << 3 | RSI]);
    code.extend(displacement.to_le_bytes());
}

/// `mov r32, imm32`.
pub(super) fn mov_immediate(code: &mut Vec<u8>, register: u8, value: u32) {
    rex(code, false, false, register >= 8, false);
    code.push(0xB8 + (register & 7));
    code.extend(value.to_le_bytes());
}

/// A two-register operation of [`alu`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Alu {
    And,
    Or,
    Xor,
}

/// `and`, `or` or `xor` `r/m, r` on 32-bit registers (64-bit if `wide`):
/// `target` op= `source`.
pub(super) fn alu(code: &mut Vec<u8>, op: Alu, wide: bool, target: u8, source: u8) {
    rex(code, wide, source >= 8, target >= 8, false);
    let opcode = match op {
        Alu::And => 0x21,
        Alu::Or => 0x09,
        Alu::Xor => 0x31,
    };
    code.extend([opcode, 0xC0 | (source & 7) << 3 | (target & 7)]);
}

/// `xor r32, imm8` (83 /6 ib).
pub(super) fn xor_immediate(code: &mut Vec<u8>, register: u8, value: u8) {
    rex(code, false, false, register >= 8, false);
    code.extend([0x83, 0xF0 | (register & 7), value]);
}

/// `shl r64, by` (C1 /4 ib; `by` from 1 to 63).
pub(super) fn shift_left(code: &mut Vec<u8>, register: u8, by: u8) {
    debug_assert!((1..64).contains(&by));
    rex(code, true, false, register >= 8, false);
    code.extend([0xC1, 0xE0 | (register & 7), by]);
}

/// `psllw xmm, by` (66 0F 71 /6 ib).
pub(super) fn psllw(code: &mut Vec<u8>, xmm: u8, by: u8) {
    code.push(0x66);
    rex(code, false, false, xmm >= 8, false);
    code.extend([0x0F, 0x71, 0xF0 | (xmm & 7), by]);
}

/// `pmovmskb r32, xmm` (66 0F D7 /r).
pub(super) fn pmovmskb(code: &mut Vec<u8>, register: u8, xmm: u8) {
    code.push(0x66);
    rex(code, false, register >= 8, xmm >= 8, false);
    code.extend([0x0F, 0xD7, 0xC0 | (register & 7) << 3 | (xmm & 7)]);
}

/// `push r64`.
pub(super) fn push(code: &mut Vec<u8>, register: u8) {
    rex(code, false, false, register >= 8, false);
    code.push(0x50 + (register & 7));
}

/// `pop r64`.
pub(super) fn pop(code: &mut Vec<u8>, register: u8) {
    rex(code, false, false, register >= 8, false);
    code.push(0x58 + (register & 7));
}

/// `ret`.
pub(super) fn ret(code: &mut Vec<u8>) {
    code.push(0xC3);
}

/// `je rel32` with a displacement to patch ([`patch`]); returns where the
/// displacement ends.
pub(super) fn jump_if_equal(code: &mut Vec<u8>) -> usize {
    code.extend([0x0F, 0x84, 0, 0, 0, 0]);
    code.len()
}

/// `jmp rel32` with a displacement to patch ([`patch`]); returns where the
/// displacement ends.
pub(super) fn jump(code: &mut Vec<u8>) -> usize {
    code.extend([0xE9, 0, 0, 0, 0]);
    code.len()
}

/// Sets the displacement of the jump that ends at `jump_end` so that it
/// lands at the end of the code.
pub(super) fn patch(code: &mut [u8], jump_end: usize) {
    let distance = i32::try_from(code.len() - jump_end).expect("a block's code under 2 GiB");
    code[jump_end - 4..jump_end].copy_from_slice(&distance.to_le_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;
    use iced_x86::{Decoder, DecoderOptions, Instruction, Mnemonic, OpKind, Register};

    /// The one instruction `code` decodes to (64-bit mode), checked to span
    /// all of it.
    fn decode(code: &[u8]) -> Instruction {
        let mut decoder = Decoder::with_ip(64, code, 0, DecoderOptions::NONE);
        let instruction = decoder.decode();
        assert!(!instruction.is_invalid(), "invalid: {code:02X?}");
        assert_eq!(instruction.len(), code.len(), "{instruction:?} in {code:02X?}");
        instruction
    }

    /// What an operand is, comparably.
    #[derive(Debug, PartialEq)]
    enum Operand {
        Register(Register),
        Memory(Register, i64),
        Immediate(u64),
        Near(u64),
    }

    fn operands(instruction: &Instruction) -> Vec<Operand> {
        (0..instruction.op_count())
            .map(|k| match instruction.op_kind(k) {
                OpKind::Register => Operand::Register(instruction.op_register(k)),
                OpKind::Memory => {
                    assert_eq!(instruction.memory_index(), Register::None);
                    Operand::Memory(
                        instruction.memory_base(),
                        instruction.memory_displacement64() as i64,
                    )
                }
                OpKind::Immediate8
                | OpKind::Immediate32
                | OpKind::Immediate8to32
                | OpKind::Immediate8to64 => Operand::Immediate(instruction.immediate(k)),
                OpKind::NearBranch64 => Operand::Near(instruction.near_branch64()),
                other => panic!("unexpected operand kind {other:?}"),
            })
            .collect()
    }

    fn check(code: &[u8], mnemonic: Mnemonic, expected: &[Operand]) {
        let instruction = decode(code);
        assert_eq!(instruction.mnemonic(), mnemonic, "{code:02X?}");
        assert_eq!(operands(&instruction), expected, "{mnemonic:?} {code:02X?}");
    }

    const QWORDS: [Register; 16] = [
        Register::RAX,
        Register::RCX,
        Register::RDX,
        Register::RBX,
        Register::RSP,
        Register::RBP,
        Register::RSI,
        Register::RDI,
        Register::R8,
        Register::R9,
        Register::R10,
        Register::R11,
        Register::R12,
        Register::R13,
        Register::R14,
        Register::R15,
    ];
    const DWORDS: [Register; 16] = [
        Register::EAX,
        Register::ECX,
        Register::EDX,
        Register::EBX,
        Register::ESP,
        Register::EBP,
        Register::ESI,
        Register::EDI,
        Register::R8D,
        Register::R9D,
        Register::R10D,
        Register::R11D,
        Register::R12D,
        Register::R13D,
        Register::R14D,
        Register::R15D,
    ];
    /// With a REX prefix: `spl` to `dil` for 4 to 7, never `ah` to `bh`.
    const BYTES: [Register; 16] = [
        Register::AL,
        Register::CL,
        Register::DL,
        Register::BL,
        Register::SPL,
        Register::BPL,
        Register::SIL,
        Register::DIL,
        Register::R8L,
        Register::R9L,
        Register::R10L,
        Register::R11L,
        Register::R12L,
        Register::R13L,
        Register::R14L,
        Register::R15L,
    ];
    const XMMS: [Register; 16] = [
        Register::XMM0,
        Register::XMM1,
        Register::XMM2,
        Register::XMM3,
        Register::XMM4,
        Register::XMM5,
        Register::XMM6,
        Register::XMM7,
        Register::XMM8,
        Register::XMM9,
        Register::XMM10,
        Register::XMM11,
        Register::XMM12,
        Register::XMM13,
        Register::XMM14,
        Register::XMM15,
    ];

    /// Memory operands: every base register, short and long displacements.
    fn memories() -> Vec<Memory> {
        let mut all = Vec::new();
        for base in 0..16 {
            for displacement in [0, -128, 127, 128, -129, 300, 0x7FFF_FFFF] {
                all.push(Memory { base, displacement });
            }
        }
        all
    }

    fn at(memory: Memory) -> Operand {
        Operand::Memory(QWORDS[memory.base as usize], i64::from(memory.displacement))
    }

    fn emitted(emit: impl FnOnce(&mut Vec<u8>)) -> Vec<u8> {
        let mut code = Vec::new();
        emit(&mut code);
        code
    }

    #[test]
    fn memory_forms_decode_as_meant() {
        for memory in memories() {
            for r in 0..16u8 {
                let (byte, dword, qword, xmm) = (
                    BYTES[r as usize],
                    DWORDS[r as usize],
                    QWORDS[r as usize],
                    XMMS[r as usize],
                );
                check(
                    &emitted(|c| movzx_load(c, r, memory)),
                    Mnemonic::Movzx,
                    &[Operand::Register(dword), at(memory)],
                );
                check(
                    &emitted(|c| combine_load(c, true, r, memory)),
                    Mnemonic::And,
                    &[Operand::Register(byte), at(memory)],
                );
                check(
                    &emitted(|c| combine_load(c, false, r, memory)),
                    Mnemonic::Or,
                    &[Operand::Register(byte), at(memory)],
                );
                check(
                    &emitted(|c| store_byte(c, r, memory)),
                    Mnemonic::Mov,
                    &[at(memory), Operand::Register(byte)],
                );
                check(
                    &emitted(|c| movdqu_load(c, r, memory)),
                    Mnemonic::Movdqu,
                    &[Operand::Register(xmm), at(memory)],
                );
                check(
                    &emitted(|c| lea(c, r, memory)),
                    Mnemonic::Lea,
                    &[Operand::Register(qword), at(memory)],
                );
            }
            for value in [0u8, 1] {
                check(
                    &emitted(|c| compare_byte(c, memory, value)),
                    Mnemonic::Cmp,
                    &[at(memory), Operand::Immediate(u64::from(value))],
                );
                check(
                    &emitted(|c| set_byte(c, memory, value)),
                    Mnemonic::Mov,
                    &[at(memory), Operand::Immediate(u64::from(value))],
                );
            }
        }
    }

    #[test]
    fn register_forms_decode_as_meant() {
        for r in 0..16u8 {
            let (dword, qword, xmm) = (DWORDS[r as usize], QWORDS[r as usize], XMMS[r as usize]);
            for displacement in [0, 8, 0x7FFF_FFF8] {
                check(
                    &emitted(|c| store_word(c, r, displacement)),
                    Mnemonic::Mov,
                    &[
                        Operand::Memory(Register::RSI, i64::from(displacement)),
                        Operand::Register(qword),
                    ],
                );
            }
            for value in [0, 1, 0xFFFF_FFFF] {
                check(
                    &emitted(|c| mov_immediate(c, r, value)),
                    Mnemonic::Mov,
                    &[Operand::Register(dword), Operand::Immediate(u64::from(value))],
                );
            }
            for s in 0..16u8 {
                for (op, mnemonic) in [
                    (Alu::And, Mnemonic::And),
                    (Alu::Or, Mnemonic::Or),
                    (Alu::Xor, Mnemonic::Xor),
                ] {
                    for (wide, names) in [(false, &DWORDS), (true, &QWORDS)] {
                        check(
                            &emitted(|c| alu(c, op, wide, r, s)),
                            mnemonic,
                            &[
                                Operand::Register(names[r as usize]),
                                Operand::Register(names[s as usize]),
                            ],
                        );
                    }
                }
                check(
                    &emitted(|c| pmovmskb(c, r, s)),
                    Mnemonic::Pmovmskb,
                    &[Operand::Register(dword), Operand::Register(XMMS[s as usize])],
                );
            }
            check(
                &emitted(|c| xor_immediate(c, r, 1)),
                Mnemonic::Xor,
                &[Operand::Register(dword), Operand::Immediate(1)],
            );
            for by in [1u8, 7, 63] {
                check(
                    &emitted(|c| shift_left(c, r, by)),
                    Mnemonic::Shl,
                    &[Operand::Register(qword), Operand::Immediate(u64::from(by))],
                );
            }
            check(
                &emitted(|c| psllw(c, r, 7)),
                Mnemonic::Psllw,
                &[Operand::Register(xmm), Operand::Immediate(7)],
            );
            check(
                &emitted(|c| push(c, r)),
                Mnemonic::Push,
                &[Operand::Register(qword)],
            );
            check(
                &emitted(|c| pop(c, r)),
                Mnemonic::Pop,
                &[Operand::Register(qword)],
            );
        }
        check(&emitted(ret), Mnemonic::Ret, &[]);
    }

    #[test]
    fn jumps_land_where_patched() {
        for (emit, mnemonic) in [
            (jump_if_equal as fn(&mut Vec<u8>) -> usize, Mnemonic::Je),
            (jump, Mnemonic::Jmp),
        ] {
            let mut code = Vec::new();
            let end = emit(&mut code);
            code.extend([0x90; 10]);
            patch(&mut code, end);
            let target = code.len() as u64;
            check(&code[..end], mnemonic, &[Operand::Near(target)]);
        }
    }

    /// A byte register from 4 to 7 gets a REX prefix even when no bit of it
    /// is needed, so that it is `spl` .. `dil`, not `ah` .. `bh`.
    #[test]
    fn byte_registers_four_to_seven_take_a_rex_prefix() {
        let memory = Memory {
            base: 0,
            displacement: 0,
        };
        for r in 4..8u8 {
            let code = emitted(|c| store_byte(c, r, memory));
            assert_eq!(code[0], 0x40, "{code:02X?}");
        }
        assert_eq!(emitted(|c| store_byte(c, 1, memory)), [0x88, 0x48, 0x00]);
    }
}
