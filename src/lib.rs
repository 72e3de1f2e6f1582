//! ggpnet: compiles GDL games into propositional networks and runs them.
//!
//! This facade re-exports the stage crates — [`kif`] (parsing), [`grounder`]
//! (checks and instantiation), [`propnet`] (circuit, optimizer, evaluator,
//! state machine) — and adds what tools and tests share: trace [`replay`],
//! [`differential`] testing against the reference interpreter, the
//! [`corpus`] locator, and the [`fuzz`] targets.

pub mod corpus;
pub mod differential;
pub mod fuzz;
mod game;
mod machine;
mod playouts;
pub mod replay;

pub use game::{Config, Engine, EngineChoice, EvaluatorChoice, Game, LoadError};
pub use machine::{Error, Machine, Move, PlayoutEnd, State};
pub use playouts::{Budget, PlayoutReport, Playouts, MAX_THREADS};
pub use propnet::eval::EvaluatorKind;
pub use propnet::playout::PlayoutTotals;
pub use propnet::random::Stream;

pub use ggpnet_grounder as grounder;
pub use ggpnet_kif as kif;
pub use ggpnet_propnet as propnet;

/// The game built into the program, used when no game file is given: connect
/// four on a 7x6 board, written for this project.
pub const DEFAULT_GAME: &str = include_str!("../games/connect_four.kif");
