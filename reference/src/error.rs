//! The errors of the reference interpreter: descriptions it rejects and requests it
//! refuses, each with the rule, role, move or fact concerned.

use std::fmt;

/// Why a description was rejected or a request refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ReferenceError {
    /// A rule the interpreter cannot give a meaning to (for example one defining
    /// `true`, or a goal value that is not an integer).
    InvalidRule {
        /// The rule, in canonical KIF.
        rule: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A rule with a variable that no positive literal binds (GDL safety).
    UnsafeRule {
        /// The rule, in canonical KIF.
        rule: String,
        /// The unbound variable, such as `?x`.
        variable: String,
        /// Where the variable occurs: the head, a negative literal or a `distinct`.
        place: &'static str,
    },
    /// Negation inside a recursive cycle (the program is not stratified).
    Unstratified {
        /// A rule with a negative literal inside the cycle, in canonical KIF.
        rule: String,
        /// The relation negated inside its own cycle, as `name/arity`.
        relation: String,
    },
    /// The `role` facts are missing or malformed.
    InvalidRoles {
        /// What is wrong.
        reason: String,
    },
    /// A static relation too big to compute.
    TooLarge {
        /// The relation, as `name/arity`.
        relation: String,
        /// The derivations allowed (and twice as many join steps).
        limit: usize,
    },
    /// One query (a state's legal moves, goals and terminal flag, its next
    /// state, its percepts, or the initial state) needed more join steps
    /// than the interpreter's per-query limit: rules whose work per state is
    /// too large (large relations multiplied, bindings tried that never match).
    WorkLimit {
        /// The limit, in join steps (candidate facts tried).
        limit: usize,
    },
    /// The terms one query derives (a state's facts; its legal moves and
    /// goals; its percepts) are more than the interpreter lets out: more than
    /// [`MAX_OUTPUT_SYMBOLS`](crate::MAX_OUTPUT_SYMBOLS) symbols written out,
    /// or a term nested deeper than [`MAX_TERM_DEPTH`](crate::MAX_TERM_DEPTH):
    /// rules that nest or double terms at every step.
    TermsTooLarge {
        /// The symbols let out, the refused term's included (saturating).
        symbols: u64,
        /// The refused term's depth (a constant has depth 1).
        depth: u64,
    },
    /// A joint move with a number of moves different from the number of roles.
    WrongJointLength {
        /// The number of roles.
        expected: usize,
        /// The number of moves given.
        found: usize,
    },
    /// A move that is not legal for its role in the given state.
    IllegalMove {
        /// The role, in canonical KIF.
        role: String,
        /// The move that was given.
        chosen: String,
    },
    /// A state fact that cannot be read in this game.
    InvalidFact {
        /// The fact as given.
        fact: String,
        /// What is wrong with it.
        reason: String,
    },
}

impl fmt::Display for ReferenceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReferenceError::InvalidRule { rule, reason } => {
                write!(f, "invalid rule {rule}: {reason}")
            }
            ReferenceError::UnsafeRule {
                rule,
                variable,
                place,
            } => write!(
                f,
                "unsafe rule {rule}: variable {variable} occurs in {place} but in no positive literal"
            ),
            ReferenceError::Unstratified { rule, relation } => write!(
                f,
                "unstratified negation in rule {rule}: {relation} is negated inside its own recursion"
            ),
            ReferenceError::InvalidRoles { reason } => write!(f, "invalid roles: {reason}"),
            ReferenceError::TooLarge { relation, limit } => write!(
                f,
                "the static relation {relation} is too large to compute: more than {limit} derivations or {} join steps",
                limit.saturating_mul(2)
            ),
            ReferenceError::WorkLimit { limit } => write!(
                f,
                "evaluating one state took more than {limit} join steps (candidate facts tried; the interpreter's limit per state)"
            ),
            ReferenceError::TermsTooLarge { symbols, depth } => write!(
                f,
                "the terms one state derives are too large: {symbols} symbols, a term nested {depth} deep (the interpreter's limits: {} symbols, {} levels)",
                crate::MAX_OUTPUT_SYMBOLS,
                crate::MAX_TERM_DEPTH
            ),
            ReferenceError::WrongJointLength { expected, found } => write!(
                f,
                "a joint move needs one move per role: expected {expected}, found {found}"
            ),
            ReferenceError::IllegalMove { role, chosen } => {
                write!(f, "move {chosen} is not legal for role {role}")
            }
            ReferenceError::InvalidFact { fact, reason } => {
                write!(f, "invalid state fact {fact}: {reason}")
            }
        }
    }
}

impl std::error::Error for ReferenceError {}

impl From<crate::terms::TermsTooLarge> for ReferenceError {
    fn from(e: crate::terms::TermsTooLarge) -> ReferenceError {
        ReferenceError::TermsTooLarge {
            symbols: e.symbols,
            depth: e.depth,
        }
    }
}
