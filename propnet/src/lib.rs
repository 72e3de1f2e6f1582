//! Propositional networks: the circuit built from a ground program, the
//! optimizer passes, layering (cycles evaluated to their least fixpoint), the
//! compiled evaluator, the state machine API, the flat Monte-Carlo and perft
//! drivers, size breakdowns and export to DOT, JSON and AIGER.

pub mod choose;
pub mod circuit;
pub mod eval;
pub mod export;
pub mod inspect;
pub mod layer;
pub mod machine;
pub mod optimize;
pub mod pipeline;
pub mod playout;
pub mod random;

pub use circuit::{Circuit, NodeId, NodeKind};
pub use machine::{Game, MachineError, Move, State, StateMachine};
pub use optimize::OptimizeConfig;
pub use pipeline::{load, LoadConfig, LoadError, LoadReport, Loaded};

/// Games the unit tests of several modules share.
#[cfg(test)]
pub(crate) mod test_games {
    /// One role switches between two states; the game ends in the second.
    pub const SWITCH: &str = "(role r) (init a)
        (<= (legal r go) (true a)) (<= (legal r stay) (true b))
        (<= (next b) (does r go)) (<= (next a) (does r stay))
        (<= terminal (true b)) (<= (goal r 100) (true b)) (<= (goal r 0) (not (true b)))";
}
