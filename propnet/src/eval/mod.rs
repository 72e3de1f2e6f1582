//! Evaluators of a compiled circuit.

pub mod compiled;
pub mod sweep;

pub use compiled::CompiledNet;
pub use sweep::Sweep;
