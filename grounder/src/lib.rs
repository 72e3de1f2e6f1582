//! From a parsed GDL description to a ground program.
//!
//! The stages, each in its own module: `normalize` (expand `or`, push `not`
//! down), `check` (the GDL spec's restrictions, each error naming the rule),
//! `factor` (independent parts of a rule body split apart), `project`
//! (variables local to one literal projected away), `branch` (parts of a body
//! that meet the rest through one variable split into relations of their own),
//! `decompose` (long rule bodies split so variables are dropped early),
//! `demand` (recursive relations instantiated only for the arguments their
//! callers bind), `functional` (a variant of the rules whose tests over
//! values the state fixes are split apart, grounded only where the rules as
//! written are too large, and kept only where its assumption is proved),
//! and `instantiate` (static relations evaluated, dynamic rules instantiated
//! over the reachable sentences). [`ground`] runs them all; [`prepare`] runs
//! all but the last. The stages are private: what they produce is public
//! ([`GroundProgram`], [`NormalRule`], [`Analysis`]), how is not.
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

#![warn(missing_docs)]
#![cfg_attr(not(test), warn(clippy::too_many_lines))]
#![forbid(unsafe_code)]

mod branch;
mod check;
mod config;
mod decompose;
mod demand;
mod error;
mod factor;
mod functional;
mod instantiate;
mod limits;
mod normalize;
mod overload;
mod playable;
mod program;
mod project;
mod terms;

use branch::branch;
use check::check;
pub use check::Analysis;
pub use config::{
    Config, SettingError, DEFAULT_MAX_BYTES, DEFAULT_MAX_GROUND_ATOMS, DEFAULT_MAX_GROUND_RULES,
    DEFAULT_MAX_JOIN_STEPS, DEFAULT_MAX_TERM_DEPTH, MAX_SECONDS, MAX_THREADS,
};
use decompose::decompose;
use demand::demand;
pub use error::{ErrorKind, GdlError, Limit};
use factor::factor;
pub use instantiate::{instantiate, DEMAND_AFTER};
pub use limits::time_limit_passed;
use normalize::normalize;
pub use normalize::{NormalLiteral, NormalRule};
pub use playable::check_playable;
pub use program::{GroundLiteral, GroundProgram, GroundRule};
use project::project;
pub use terms::{GroundTerm, TermId, TermStore};

/// Normalizes and checks `description`, then splits long rules; returns the
/// rules to ground and their analysis. Aux relations are added to the symbols.
pub fn prepare(description: &mut ggpnet_kif::Description) -> Result<(Vec<NormalRule>, Analysis), GdlError> {
    ggpnet_kif::read_as_gdl2(description);
    overload::split_arities(description);
    let rules = normalize::drop_unread_declarations(normalize(description)?);
    let gdl2 = overload::is_gdl2(description);
    let rules = normalize::gdl2_readings(rules, &mut description.symbols, gdl2);
    let checked_analysis = check(description, &rules)?;
    let checked = rules.clone();
    let (rules, mut analysis) = rewrite(description, rules, &checked_analysis)?;
    // After the rules as written, so that their relations keep their names.
    let variant = functional::split(&checked, &checked_analysis, &mut description.symbols).and_then(
        |(split, invariants)| {
            let split_analysis = check(description, &split).ok()?;
            let (rules, analysis) = rewrite(description, split, &split_analysis).ok()?;
            Some(check::Variant {
                rules,
                analysis,
                invariants,
            })
        },
    );
    analysis.functional = variant.map(Box::new);
    Ok((rules, analysis))
}

/// The rewrites of checked rules before grounding: `factor`, `project`,
/// `branch`, `decompose` and `demand`, with the analysis of their result.
fn rewrite(
    description: &mut ggpnet_kif::Description,
    rules: Vec<NormalRule>,
    analysis: &Analysis,
) -> Result<(Vec<NormalRule>, Analysis), GdlError> {
    let rules = factor(rules, analysis, &mut description.symbols);
    // New relations are never recursive: the analysis still says which heads are.
    let rules = project(rules, analysis, &mut description.symbols);
    let mut analysis = check(description, &rules)?;
    let rules = branch(rules, &mut analysis, &mut description.symbols);
    let rules = decompose(rules, &analysis, &mut description.symbols);
    let mut analysis = check(description, &rules)?;
    // Demand rules are checked by construction: the analysis is extended, not redone.
    let rules = demand(rules, &mut analysis, &mut description.symbols);
    Ok((rules, analysis))
}

/// Checks `description` and grounds it.
pub fn ground(description: &ggpnet_kif::Description, config: &Config) -> Result<GroundProgram, GdlError> {
    let mut description = description.clone();
    let (rules, analysis) = prepare(&mut description)?;
    instantiate(&description, &rules, &analysis, config)
}
