//! Propositional networks: the circuit built from a ground program, the
//! optimizer passes, layering (cycles evaluated to their least fixpoint), the
//! compiled evaluator, the state machine API, and the flat Monte-Carlo and perft
//! drivers.

pub mod circuit;
pub mod eval;
pub mod layer;
pub mod machine;
pub mod optimize;
pub mod pipeline;
pub mod playout;

pub use circuit::{Circuit, NodeId, NodeKind};
pub use machine::{Game, MachineError, Move, State, StateMachine};
pub use optimize::OptimizeConfig;
pub use pipeline::{load, LoadConfig, LoadError, LoadReport, Loaded};
