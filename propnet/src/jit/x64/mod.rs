//! Native code for the sweep's programs on x86-64 Unix: each gate becomes
//! straight-line machine code (a byte load of its first operand, an `and` or
//! `or` with each further operand, a byte store), so that evaluating a circuit
//! reads no operand records, checks no bounds and runs no loop. A gate read
//! once, by a later gate of the same program, and by nothing else (no output)
//! is computed in a register where its reader needs it and never stored: the
//! program evaluates trees of such gates as expressions. Cyclic
//! components are evaluated by the caller between native segments. A program ends
//! by packing chosen slots' values into words (legality, next state): the
//! caller may place the values of gates that bits take in 64 consecutive
//! bytes per word (see [`Layout`]), which the code reads 16 at a time, and
//! the others are read one by one. Elsewhere, or when the system refuses
//! executable memory, programs are interpreted.
//!
//! Consecutive stored gates may form a flagged block with a flag, a byte past
//! the net's slots: the code evaluates the block only when the flag is set,
//! and clears it. The caller sets the flag whenever a base or input that a
//! gate of the block depends on changes (and before the first run), so that
//! gates skipped still hold the values their operands give. Consecutive stored
//! gates may also share a condition: a slot computed before them, whose value
//! `skip_when` makes the code jump over them (their values do not matter then;
//! see the `conditions` module).

//! The code addresses the values through base registers, each pointing into
//! a window of 256 value bytes that it reaches with one-byte displacements:
//! `rdi` and up to eight more, set on entry (those the System V calling
//! convention makes a function preserve are saved and restored), at the
//! windows that the program's operands fall in most; a value outside every
//! window is addressed from `rdi` with a 32-bit displacement. The short form
//! makes an instruction three bytes shorter, and code bytes are what bounds
//! this code's speed on this project's machine kinds: one byte more per
//! value operand made English checkers' sweep 19% slower, and the programs
//! of bigger games exceed the instruction caches. The packed words are
//! addressed through `rsi`; expressions use `rax`, `rcx`, `rdx`, `r8`, `r9`.

mod encode;
mod memory;
mod program;

pub(crate) use program::{Condition, Layout, NativeGate, NativeProgram, NativeStep, Skip};
