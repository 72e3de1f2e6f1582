//! ggpnet: compiles GDL games into propositional networks and runs them.
//!
//! The agent API: load a [`Game`] once (the propnet, or the reference
//! interpreter when the game is too large to ground), give each thread a
//! [`Machine`], and query states and moves, or run random [`Playouts`] from any
//! state on every core:
//!
//! ```
//! use ggpnet::{Budget, Config, Game, Playouts, Stream};
//!
//! let game = Game::load(ggpnet::DEFAULT_GAME, &Config::default())?; // connect four
//! let mut machine = game.machine(); // one per thread; the game is shared
//! let mut state = game.initial_state();
//! let mut rng = Stream::new(1, 0);
//! for _ in 0..3 {
//!     let joint = (0..game.roles().len())
//!         .map(|role| machine.random_move(&state, role, &mut rng).map(Option::unwrap))
//!         .collect::<Result<Vec<_>, _>>()?;
//!     state = machine.next_state(&state, &joint)?; // illegal moves are refused
//! }
//! let report = game.playouts(&state, &Playouts::new(Budget::Seconds(0.1)).threads(2))?;
//! println!("from {:?}: {:?}", game.state_to_kif(&state)?, report.avg_goals());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! The stage crates are re-exported — [`kif`] (parsing), [`grounder`] (checks
//! and instantiation), [`propnet`] (circuit, optimizer, evaluators, state
//! machine). [`sbg`] reads Simplified Boardgames and translates them to GDL.
//! [`realtime`] (the crate `ggpnet-rtgdl`) is real-time GDL (rtGDL): its
//! reading and checks, its interpreter, and games with timed states, the
//! event-driven update and timed playouts. [`manager`] and [`player`] speak the
//! GGP match protocol. `examples/` holds a flat Monte-Carlo and a UCT agent.
//! The command line and the machinery tools and tests share (trace replay,
//! differential testing, the corpus locator, the fuzz targets, the SBG oracle)
//! are in the `ggpnet-tools` crate (`tools/`).

#![warn(missing_docs)]
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

mod game;
mod joint;
mod machine;
pub mod manager;
pub mod player;
mod playouts;

pub use game::{Calibration, Config, Engine, EngineChoice, EvaluatorChoice, Game, LoadError, Refusal};
pub use ggpnet_grounder::SettingError;

pub use joint::Expansion;
pub use machine::{Error, Machine, Move, PlayoutEnd, State, MAX_JOINT_MOVES};
pub use playouts::{Budget, PlayoutReport, Playouts, MAX_THREADS};
pub use propnet::driver::PlayoutTotals;
pub use propnet::evaluator::EvaluatorKind;
pub use propnet::random::Stream;
pub use propnet::MachineError;

pub use ggpnet_grounder as grounder;
pub use ggpnet_kif as kif;
pub use ggpnet_propnet as propnet;
pub use ggpnet_rtgdl as realtime;
pub use ggpnet_sbg as sbg;

/// The game built into the program, used when no game file is given: connect
/// four on a 7x6 board, written for this project.
pub const DEFAULT_GAME: &str = include_str!("../games/connect_four.kif");
