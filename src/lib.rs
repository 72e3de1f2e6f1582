//! ggpnet: compiles GDL games into propositional networks and runs them.
//!
//! This facade re-exports the stage crates: [`kif`] (parsing), [`grounder`]
//! (checks and instantiation) and [`propnet`] (circuit, optimizer, evaluator,
//! state machine).

pub use ggpnet_grounder as grounder;
pub use ggpnet_kif as kif;
pub use ggpnet_propnet as propnet;
