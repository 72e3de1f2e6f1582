//! Simplified Boardgames (SBG; Kowalski, Sutowicz, Szykuła, arXiv:1606.02645):
//! two-player fairy-chess-like games whose piece moves are regular expressions
//! over letters `(dx, dy, on)`.
//!
//! The crate has three parts, each usable alone:
//!
//! - [`parse`]: the formal grammar of the paper's Figure 1 (and the older
//!   informal variant's differences, accepted with [`Warning`]s) into checked
//!   [`Rules`]; errors carry `line:col`.
//! - [`to_gdl`]: the translation to GDL. Each piece's expression is compiled to
//!   a small automaton ([`automaton`]: Glushkov NFA, then a minimal DFA when that
//!   is smaller) whose states become the relation
//!   `(reach PLAYER PIECE STATE X0 Y0 X Y)`: the board bounds the walk, so
//!   grounding stays small even under Kleene stars.
//! - [`board`]: an independent move generator working on the board directly
//!   (the expression is evaluated as a function on sets of squares, with no
//!   automaton), used as the oracle the translated propnet is tested against.
//!
//! [`random`] writes random valid games for testing the translation.
//!
//! Semantics (section 2.3 of the paper; where the paper is silent, the choice is
//! documented here and in `docs/LANGUAGES.md`):
//!
//! - White (upper case) moves first; the board's first row is the top, square
//!   `(0, 0)` the lower left; black's letters are mirrored vertically (`dy`
//!   negated, `dx` kept).
//! - `e` is an empty square, `p` a square holding an opponent's piece, `w` a
//!   square holding one of the mover's own pieces. Every letter's square (the
//!   intermediate ones and the last) must meet its condition; the board does not
//!   change during the walk, so the start square holds the moving piece.
//! - A move goes from the start to the last square; a piece there is captured
//!   (whoever owns it); a move ending where it started changes nothing.
//!   Distinct words with the same start and end are the same move.
//! - A state is terminal, with outcome decided in this order: the player who
//!   just moved a piece onto one of its `@` squares wins; else if a player's
//!   count of some piece type is at most a `#` amount, that player loses (both:
//!   draw); else if the player to move has no legal move, it loses; else when the
//!   turn limit of half-moves is reached, draw. Win 100, loss 0, draw 50 (and 50
//!   each in non-terminal states).

#![warn(missing_docs)]
#![cfg_attr(not(test), warn(clippy::too_many_lines))]

pub mod automaton;
pub mod board;
mod gdl;
mod parse;
pub mod random;
mod rules;

pub use gdl::to_gdl;
pub use parse::{parse, ParseError, Parsed, Warning};
pub use rules::{CountGoal, Letter, On, Piece, Player, ReachGoal, Regex, Rules, MAX_SIDE};
