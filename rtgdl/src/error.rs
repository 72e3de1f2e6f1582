//! The errors of rtGDL, by kind: a description refused (unreadable, not
//! rtGDL, failing GDL's checks of its embedding, refused by an engine), and a
//! request refused (a state of another game, a bad update, a setting out of
//! range). The interpreter and the game share them, so that a caller tells
//! an illegal move from an update with no event without reading text.

use crate::syntax::RtgdlError;
use crate::time::Time;
use ggpnet_grounder::GdlError;
use ggpnet_kif::{ParseError, Span};
use ggpnet_propnet::LoadError;
use ggpnet_reference::ReferenceError;
use std::fmt;

/// A refused rtGDL game or request, by kind. `Display` gives the message,
/// starting `error at L:C: ` when a rule is to blame, else `error: `;
/// [`RtError::message`] gives it without the `error: `.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum RtError {
    /// The text is not KIF (the source).
    Parse(ParseError),
    /// The description is not rtGDL, or breaks one of rtGDL's own checks (the source).
    Invalid(RtgdlError),
    /// The embedding into GDL breaks one of GDL's checks (keyword
    /// restrictions, safety, stratification, recursion): the rule as
    /// written in rtGDL (the source).
    Gdl(GdlError),
    /// The interpreter refuses the embedding of the description (the source).
    Interpreter(ReferenceError),
    /// A rule outside the fragment of rtGDL the propnet compiles (the
    /// source); [`EngineChoice::Auto`](crate::EngineChoice::Auto) runs such a game
    /// on the interpreter.
    OutsideFragment(RtgdlError),
    /// The propnet's pipeline refuses the circuit form of the game (past a
    /// grounding limit, say).
    Propnet {
        /// The rtGDL rule that the refused rule of the circuit form comes
        /// from, when one does: where it starts, and the rule in canonical KIF.
        rule: Option<(Span, String)>,
        /// The pipeline's error (the source).
        error: LoadError,
    },
    /// An `init` or `next` fact derived with a lifetime that is not a
    /// positive time or `infinity` (copied from a fact argument, say).
    InvalidLifetime {
        /// The fact, in canonical KIF.
        fact: String,
        /// The lifetime it was derived with, in canonical KIF.
        lifetime: String,
        /// What is wrong with it.
        reason: String,
    },
    /// An update without exactly one (possibly absent) move per role.
    WrongJointLength {
        /// The number of roles.
        expected: usize,
        /// The number of moves given.
        found: usize,
    },
    /// A move that is not legal for its role in the state updated.
    IllegalMove {
        /// The role.
        role: String,
        /// The move as given.
        chosen: String,
    },
    /// An update after no time.
    NoElapsedTime,
    /// An update later than the next expiry of the state, which comes first.
    PastExpiry {
        /// The time of the update since the state began.
        elapsed: Time,
        /// The time of the next expiry since the state began.
        expiry: Time,
    },
    /// An update with no event: no move, and no fact expires at its time.
    NoEvent {
        /// The time of the update since the state began.
        elapsed: Time,
    },
    /// On the propnet, a fact that would copy the lifetime of a fact with
    /// several finite lifetimes at once: its base keeps one (the
    /// interpreter runs such games).
    SeveralLifetimes {
        /// The fact that would copy, in canonical KIF (`_` at a carried time argument).
        fact: String,
        /// The fact copied from, in canonical KIF.
        source: String,
        /// Its finite lifetimes, sorted.
        lifetimes: Vec<Time>,
    },
    /// On the propnet, a fact that would take the time argument of facts
    /// with one key and several values at once: its base keeps one (the
    /// interpreter runs such games).
    SeveralArguments {
        /// The fact that would take it, in canonical KIF (`_` at a carried time argument).
        fact: String,
        /// The key, a fact with `_` at its time argument.
        key: String,
        /// The values, sorted.
        values: Vec<Time>,
    },
    /// A state made by another game.
    ForeignState,
    /// A role number past the game's roles.
    NoSuchRole {
        /// The number given.
        role: usize,
        /// How many roles the game has.
        roles: usize,
    },
    /// A setting out of its range (the threads or the budget of timed playouts).
    InvalidSetting(ggpnet_grounder::SettingError),
}

impl RtError {
    /// What was refused and why: the message without the leading `error: `
    /// (a message naming its rule keeps its `error at L:C: `).
    pub fn message(&self) -> String {
        let shown = self.to_string();
        match shown.strip_prefix("error: ") {
            Some(message) => message.to_owned(),
            None => shown,
        }
    }
}

/// Times listed in a message: `0.5, 1.5`.
fn listed(times: &[Time]) -> String {
    let shown: Vec<String> = times.iter().map(Time::to_string).collect();
    shown.join(", ")
}

impl fmt::Display for RtError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RtError::Parse(e) => write!(f, "error: {e}"),
            RtError::Invalid(e) | RtError::OutsideFragment(e) => e.fmt(f),
            RtError::Gdl(e) => e.fmt(f),
            RtError::Interpreter(e) => write!(f, "error: {e}"),
            RtError::Propnet {
                rule: Some((span, rule)),
                error,
            } => write!(
                f,
                "error at {span}: the propnet: {}\n  in rule {rule}",
                error.to_string().lines().next().unwrap_or_default()
            ),
            RtError::Propnet { rule: None, error } => write!(f, "error: the propnet: {error}"),
            RtError::InvalidLifetime {
                fact,
                lifetime,
                reason,
            } => write!(f, "error: fact {fact} derived with lifetime {lifetime}: {reason}"),
            RtError::WrongJointLength { expected, found } => write!(
                f,
                "error: a joint move needs one move per role: expected {expected}, found {found}"
            ),
            RtError::IllegalMove { role, chosen } => {
                write!(f, "error: move {chosen} is not legal for role {role}")
            }
            RtError::NoElapsedTime => f.write_str("error: invalid update: the elapsed time must be positive"),
            RtError::PastExpiry { elapsed, expiry } => write!(
                f,
                "error: invalid update: {elapsed} is past the next expiry at {expiry}"
            ),
            RtError::NoEvent { elapsed } => write!(
                f,
                "error: invalid update: no move and no fact expires at {elapsed}: no event"
            ),
            RtError::SeveralLifetimes {
                fact,
                source,
                lifetimes,
            } => write!(
                f,
                "error: fact {fact} would copy the lifetime of {source}, which has {} finite lifetimes ({}): the propnet keeps one lifetime per source (the interpreter runs such games)",
                lifetimes.len(),
                listed(lifetimes)
            ),
            RtError::SeveralArguments { fact, key, values } => write!(
                f,
                "error: fact {fact} would take the time argument of {key}, which has {} values ({}): the propnet keeps one value per key (the interpreter runs such games)",
                values.len(),
                listed(values)
            ),
            RtError::ForeignState => f.write_str("error: the state belongs to another game"),
            RtError::NoSuchRole { role, roles } => {
                write!(f, "error: no role number {role}: the game has {roles} role(s)")
            }
            RtError::InvalidSetting(e) => write!(f, "error: {e}"),
        }
    }
}

impl std::error::Error for RtError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RtError::Parse(e) => Some(e),
            RtError::Invalid(e) | RtError::OutsideFragment(e) => Some(e),
            RtError::Gdl(e) => Some(e),
            RtError::Interpreter(e) => Some(e),
            RtError::Propnet { error, .. } => Some(error),
            _ => None,
        }
    }
}
