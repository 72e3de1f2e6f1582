//! Errors of the checks and of grounding, each naming the rule it concerns.

use ggpnet_kif::Span;
use std::fmt;

/// What kind of problem a [`GdlError`] reports.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum ErrorKind {
    /// A relation or function used with different numbers of arguments.
    Arity,
    /// A variable not bound by a positive literal.
    Unsafe,
    /// Negation inside a recursive cycle.
    Unstratified,
    /// Recursion that could generate infinitely many terms.
    RecursionRestriction,
    /// A GDL keyword used where the spec forbids it.
    Keyword,
    /// Grounding passed a limit (rule instances, atoms, term depth, memory,
    /// join steps, time) whose value was `max` (milliseconds for
    /// [`Limit::Time`]).
    TooLarge {
        /// The limit passed.
        limit: Limit,
        /// Its value.
        max: usize,
    },
    /// A game that cannot be played: no role, no `terminal`, a role without a goal
    /// rule or without a legal move in the initial state.
    Unplayable,
}

/// A problem that makes a description invalid or impossible to ground.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct GdlError {
    /// The kind of problem.
    pub kind: ErrorKind,
    /// Where the offending rule starts, when one rule is to blame.
    pub span: Option<Span>,
    /// The offending rule in canonical KIF, when one rule is to blame.
    pub rule: Option<String>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for GdlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.span, &self.rule) {
            (Some(span), Some(rule)) => write!(f, "error at {span}: {}\n  in rule {rule}", self.message),
            (Some(span), None) => write!(f, "error at {span}: {}", self.message),
            _ => write!(f, "error: {}", self.message),
        }
    }
}

impl std::error::Error for GdlError {}

/// Which limit grounding passed (the settings of [`crate::Config`], and the
/// fixed bound on what one rule's `or`s expand into).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[non_exhaustive]
pub enum Limit {
    /// Rule instances found (static and dynamic, duplicates included).
    Rules,
    /// Distinct ground sentences.
    Atoms,
    /// Nesting of a ground term.
    Depth,
    /// Estimated bytes of terms, facts, indexes and rules.
    Memory,
    /// Candidate facts tried by the joins.
    Steps,
    /// Wall time, in milliseconds.
    Time,
    /// Rules that one rule's `or`s expand into (a fixed bound, not a setting).
    Expansion,
}
