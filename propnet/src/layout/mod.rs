//! The circuit laid out for evaluation: layering (cycles evaluated to their
//! least fixpoint) and the compiled net built from it, every node a slot in
//! evaluation order; and the plain evaluation of its steps that the evaluators
//! build on. The compiled net is immutable and caches nothing from above:
//! the evaluators compiled from it are kept by the game.

mod fixpoint;
pub mod layer;
mod net;
mod steps;

pub(crate) use fixpoint::{fixpoint, fixpoint_by_passes};
pub use layer::{layer, CycleError, Layering};
pub use net::{CompiledNet, Gate, Step};
pub(crate) use net::{FaninWalk, Visit};
pub(crate) use steps::{bit, pack, role_words, run_steps, GateValue};
