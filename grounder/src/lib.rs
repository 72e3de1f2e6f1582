//! From a parsed GDL description to a ground program.
//!
//! The stages, each in its own module: [`normalize`] (expand `or`, push `not`
//! down), [`check`] (the GDL spec's restrictions, each error naming the rule),
//! and [`instantiate`] (static relations evaluated, dynamic rules instantiated
//! over the reachable sentences). [`ground`] runs them all.
//!
//! ```
//! let game = ggpnet_kif::parse("
//!     (role robot) (init off)
//!     (<= (legal robot press) (true off))
//!     (<= (next on) (does robot press))
//!     (<= terminal (true on)) (goal robot 100)").unwrap();
//! let program = ggpnet_grounder::ground(&game, &Default::default()).unwrap();
//! assert_eq!(program.roles.len(), 1);
//! assert_eq!(program.kif(program.initial_state[0]), "off");
//! ```

pub mod check;
pub mod error;
pub mod instantiate;
pub mod normalize;
pub mod program;
pub mod terms;

pub use check::{check, Analysis};
pub use error::{ErrorKind, GdlError};
pub use instantiate::{instantiate, Config};
pub use normalize::{normalize, NormalLiteral, NormalRule};
pub use program::{GroundLiteral, GroundProgram, GroundRule};
pub use terms::{GroundTerm, TermId, TermStore};

/// Checks `description` and grounds it.
pub fn ground(description: &ggpnet_kif::Description, config: &Config) -> Result<GroundProgram, GdlError> {
    let rules = normalize(description)?;
    let analysis = check(description, &rules)?;
    instantiate(description, &rules, &analysis, config)
}
