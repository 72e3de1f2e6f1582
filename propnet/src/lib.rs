//! Propositional networks: the circuit built from a ground program, the
//! optimizer passes, layering (cycles evaluated to their least fixpoint), the
//! compiled evaluators, the state machine API, the flat Monte-Carlo and perft
//! drivers, size breakdowns and export to DOT, JSON and AIGER.
//!
//! # Layers
//!
//! The modules follow the pipeline, and each uses only those before it in
//! this list (`tools/tests/layers.rs` checks it on the source):
//!
//! 1. [`random`]: the random streams every draw takes (a leaf utility).
//! 2. [`ir`]: the circuit, its builder from a ground program, its
//!    verification, and its strongly connected components.
//! 3. [`opt`]: the optimizer passes, circuit to circuit.
//! 4. [`layout`]: layering and the compiled net (private fields, validated
//!    once by its constructor, caching nothing from above), with the plain
//!    evaluation of its steps.
//! 5. `jit`: native code (x86-64), which knows slots, bytes and words only.
//! 6. `profile`: measurements along random playouts that the cost models
//!    decide by (of the skip conditions native code jumps on, too), and every
//!    constant of the cost models.
//! 7. [`evaluator`]: the evaluators behind one trait, each split into its
//!    shared immutable plan and a per-thread cache; an evaluator gives the
//!    candidate plans worth choosing between, and does not choose.
//! 8. [`game`]: the compiled game every thread shares, which keeps the
//!    evaluators made for it.
//! 9. [`driver`]: the one playout loop, the chooser (races of candidate plans
//!    and the calibration of `Auto`, both on that loop), flat Monte-Carlo,
//!    lanes playouts and perft.
//! 10. [`machine`]: the state machine over a game's evaluator.
//! 11. [`pipeline`], [`inspect`], [`export`]: loading a game from KIF, size
//!     breakdowns, and export (which loads games back too).
//!
//! Where this departs from a plain pipeline, and why: the chooser sits in
//! the driver, above the evaluators, because choosing by measurement runs
//! playouts, and playouts drive evaluators; so an evaluator's constructor
//! returns candidates and the game keeps the chosen evaluator (the game sits between
//! the two, the chooser fills it). The game is a layer of its own, apart
//! from the state machine, because the driver needs the game's names and
//! goals while the state machine's playouts need the driver's loop. The
//! profile's measuring walk is not the driver's loop: it runs below the
//! evaluators it measures for and evaluates every slot of the net.

#![warn(missing_docs)]
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

pub mod driver;
pub mod evaluator;
pub mod export;
pub mod game;
pub mod inspect;
pub mod ir;
mod jit;
pub mod layout;
pub mod machine;
pub mod opt;
pub mod pipeline;
mod profile;
pub mod random;

pub use evaluator::{Choice, EvaluatorConfig, EvaluatorKind};
pub use game::{Game, MachineError, Move, State};
pub use ir::{Circuit, NodeId, NodeKind};
pub use machine::StateMachine;
pub use opt::OptimizeConfig;
pub use pipeline::{compile, load, LoadConfig, LoadError, LoadReport, Loaded};

/// Games the unit tests of several modules share.
#[cfg(test)]
pub(crate) mod test_games {
    /// One role switches between two states; the game ends in the second.
    pub const SWITCH: &str = "(role r) (init a)
        (<= (legal r go) (true a)) (<= (legal r stay) (true b))
        (<= (next b) (does r go)) (<= (next a) (does r stay))
        (<= terminal (true b)) (<= (goal r 100) (true b)) (<= (goal r 0) (not (true b)))";
}
