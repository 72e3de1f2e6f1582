//! A small GDL reference interpreter: the "second opinion" the propnet engine is
//! differentially tested against.
//!
//! It evaluates the (non-ground) rules of a game directly on one concrete state by
//! stratified bottom-up evaluation, following the Stanford GDL specification. The
//! stages, one module each:
//!
//! - `normalize`: `or` is multiplied out wherever it occurs, `not` is pushed down to
//!   sentences, `(not (distinct a b))` is read as `a = b`; every clause must be safe;
//! - `program`: the rules are grouped into the strongly connected components of their
//!   dependency graph; negation inside a component is rejected; components that do
//!   not depend on `true` or `does` are static;
//! - `demand`: relations meant to be queried with bound arguments (and too big to
//!   compute in full) are rewritten to be computed only for the values asked for;
//! - `prepare`: the static components are evaluated once, the dynamic ones planned;
//! - `plan`, `relation`, `eval`: joins ordered greedily and narrowed by hash
//!   indexes, `distinct` and negation checked as soon as their variables are bound
//!   (never before), each component taken to its least fixpoint by semi-naive
//!   iteration;
//! - `reference` and `state`: the public state machine, and the evaluation
//!   of the rules on any facts and moves ([`Reference::derive_next`],
//!   [`Reference::derive_outputs`]) on which the rtGDL interpreter
//!   (`ggpnet-rtgdl`) is built; `last`: the one-entry cache of a state's
//!   outputs both keep.
//!
//! No recursion in the interpreter follows the length of rule chains or of
//! recursive derivations: only the nesting of one term, or the length of one body.
//!
//! ```
//! use ggpnet_reference::Reference;
//! let game = ggpnet_kif::parse(
//!     "(role you) (p a) (p b) (q a) (q b)
//!      (<= (legal you (do ?a ?b)) (distinct ?a ?b) (p ?a) (q ?b))",
//! ).unwrap();
//! let reference = Reference::new(&game).unwrap();
//! let moves = reference.legal_moves(&reference.initial_state(), 0).unwrap();
//! assert_eq!(moves, ["(do a b)", "(do b a)"]);
//! ```

#![warn(missing_docs)]
#![cfg_attr(not(test), warn(clippy::too_many_lines))]
#![forbid(unsafe_code)]

mod database;
mod demand;
mod error;
mod eval;
mod hash;
mod last;
mod normalize;
mod pattern;
mod plan;
mod prepare;
mod program;
mod reference;
mod relation;
mod state;
mod terms;

pub use error::ReferenceError;
pub use last::LastQuery;
pub use reference::{Derived, Reference, DEFAULT_MAX_JOIN_STEPS};
pub use state::RefState;
pub use terms::{MAX_OUTPUT_SYMBOLS, MAX_TERM_DEPTH};
