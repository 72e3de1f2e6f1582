//! Errors of reading an RBG description: a kind a caller can match on, the
//! place (`line:column`, 1-based) and the reason.

use std::fmt;

/// What went wrong while reading a game description.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// A character that starts no token, or an unterminated `/* ... */` comment.
    BadToken,
    /// A token where the grammar wants another one, or the text ends too early.
    Syntax,
    /// A number too large for its place (a bound, a repetition count, a constant).
    NumberTooLarge,
    /// A section (`#board`, `#players`, `#pieces`, `#variables`, `#rules`) missing or given twice.
    Section,
    /// A name used as a piece, variable, player or direction that is not declared as one.
    Undeclared,
    /// A name declared twice, or in two of the sets that must be disjoint.
    Duplicate,
    /// A player or variable declared without its bound `name(bound)`.
    MissingBound,
    /// A macro that refers to itself, directly or through other macros.
    MacroRecursion,
    /// A macro called with a number of arguments it has no definition for, or a bad `~` paste.
    MacroUse,
    /// Macro expansion producing more tokens, or nesting deeper, than the limits allow.
    MacroTooLarge,
    /// Parentheses, patterns or arithmetic nested deeper than the limit.
    NestingTooDeep,
    /// A board larger than the limits, or malformed (lines of wrong lengths, an edge to no vertex).
    Board,
    /// Rules whose expression or automaton is larger than the limits.
    RulesTooLarge,
    /// Rules outside the well-formed class: a switch inside a pattern, a star over offs only.
    IllFormed,
    /// Rules [`crate::to_gdl`] cannot translate faithfully: a move whose tests after
    /// a modifier read what the move changes, a modifier inside a pattern, a
    /// player named like a GDL keyword.
    Untranslatable,
}

/// An error reading an RBG description: its [`ErrorKind`], where (line and
/// column, from 1) and why.
///
/// ```
/// let err = ggpnet_rbg::Game::parse("#players = a(1)\n#pieces = e\n#variables =\n#board = rectangle(u,d,l,r,[e])\n#rules = ->a x").unwrap_err();
/// assert_eq!(err.kind(), ggpnet_rbg::ErrorKind::Undeclared);
/// assert_eq!((err.line(), err.column()), (5, 14));
/// assert!(err.to_string().starts_with("5:14: "));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RbgError {
    kind: ErrorKind,
    line: u32,
    column: u32,
    reason: String,
}

impl RbgError {
    pub(crate) fn new(kind: ErrorKind, pos: Pos, reason: impl Into<String>) -> RbgError {
        RbgError {
            kind,
            line: pos.line,
            column: pos.column,
            reason: reason.into(),
        }
    }

    /// The kind of the error, for a caller to match on.
    ///
    /// ```
    /// let err = ggpnet_rbg::Game::parse("#players = a(1) @").unwrap_err();
    /// assert_eq!(err.kind(), ggpnet_rbg::ErrorKind::BadToken);
    /// ```
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The line (from 1) the error is reported at.
    ///
    /// ```
    /// assert_eq!(ggpnet_rbg::Game::parse("\n\n @").unwrap_err().line(), 3);
    /// ```
    pub fn line(&self) -> u32 {
        self.line
    }

    /// The column (from 1, in characters) the error is reported at.
    ///
    /// ```
    /// assert_eq!(ggpnet_rbg::Game::parse("\n\n @").unwrap_err().column(), 2);
    /// ```
    pub fn column(&self) -> u32 {
        self.column
    }

    /// The reason, without the place.
    ///
    /// ```
    /// assert!(ggpnet_rbg::Game::parse("@").unwrap_err().reason().contains("'@'"));
    /// ```
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

impl fmt::Display for RbgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}: {}", self.line, self.column, self.reason)
    }
}

impl std::error::Error for RbgError {}

/// A place in the text: line and column from 1.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Pos {
    pub(crate) line: u32,
    pub(crate) column: u32,
}
