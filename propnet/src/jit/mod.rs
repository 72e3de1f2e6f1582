//! Native code: the sweep's programs compiled to machine code at load time,
//! where the platform allows ([`x64`]: x86-64 Unix). It knows slots, bytes
//! and packed words only, nothing of the evaluators that use it.

pub(crate) mod x64;

pub(crate) use x64::{Condition, Layout, NativeGate, NativeProgram, NativeStep, Skip};
