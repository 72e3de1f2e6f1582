//! Regular Boardgames (RBG; Kowalski, Mika, Sutowicz, Szykuła, AAAI 2019):
//! game descriptions whose rules are a regular expression over actions on a
//! board graph, read and played directly.
//!
//! [`Game::parse`] reads the whole language: the five sections (`#players`
//! and `#variables` with bounds, `#pieces`, `#board` as an explicit graph or
//! one of the generators `rectangle`, `hexagon`, `cuboid`, and `#rules`),
//! macros with parameters and `~` pasting, and the sugar `^n`, `[a, b]` and
//! `[$ a = 1, b = 2]`. Errors are [`RbgError`]s naming `line:column`, with an
//! [`ErrorKind`] to match on; every input size has a limit that is an error,
//! never a panic or a hang.
//!
//! The rules are compiled once into a position automaton; a move is found by
//! a search over (automaton state, cell) pairs from the state's position in
//! the rules and its current cell, entering each pair once between two
//! modifiers, until a switch. Semantics, as the oracle traces
//! (`shared/traces-rbg/FORMAT.md`) and the paper define them:
//!
//! - a move is the sequence of (modifier occurrence, cell) pairs up to and
//!   including the first switch; distinct sequences are distinct moves even
//!   when they lead to the same state, equal ones are one move;
//! - the current cell and the position in the rules carry over to the next move;
//! - while the keeper (`->>`) is to move, its first legal move is applied; a
//!   keeper without a legal move ends the game; keeper moves are not plies;
//! - a player without a legal move ends the game (there is no implicit pass);
//! - `{? M}` / `{! M}` hold when `M` can (cannot) be matched completely from
//!   the current state; its modifiers are tried and undone;
//! - an assignment whose value is outside `0..=bound` is not valid, nor is
//!   an expression that divides by zero or overflows;
//! - scores are the values of the variables named after the players.
//!
//! [`to_gdl`] translates a game to GDL, one GDL step per modifier of a move
//! (its module documentation gives the design), for the games whose partial
//! moves it can prove completable on the current state; the others are
//! refused with [`ErrorKind::Untranslatable`].
//!
//! ```
//! let text = "
//!     #players = x(100), o(100)
//!     #pieces = e, X, O
//!     #variables =
//!     #board = rectangle(up, down, left, right, [e, e, e] [e, e, e] [e, e, e])
//!     #any = (up* + down*)(left* + right*)
//!     #win(p) = any ({p} right {p} right {p} + {p} down {p} down {p}
//!                    + {p} down right {p} down right {p} + {p} down left {p} down left {p})
//!     #turn(me; opp; mine) = ->me any {e} [mine] ->>
//!         ({! win(mine)} + {? win(mine)} [$ me = 100, opp = 0] ->> {})
//!     #rules = [$ x = 50, o = 50] (turn(x; o; X) turn(o; x; O))*";
//! let game = ggpnet_rbg::Game::parse(text).unwrap();
//! let start = game.initial_state();
//! assert_eq!(game.perft(&start, 2), 72);
//! assert_eq!(game.perft(&start, 5), 15120);
//! ```

#![warn(missing_docs)]
#![cfg_attr(not(test), warn(clippy::too_many_lines))]
#![forbid(unsafe_code)]

mod automaton;
mod board;
mod error;
mod game;
mod gdl;
mod lexer;
mod macros;
mod random;
mod search;
mod syntax;

pub use automaton::MAX_TRANSITIONS;
pub use board::{MAX_CELLS, MAX_DIRECTIONS};
pub use error::{ErrorKind, RbgError};
pub use game::{Game, Move, Playout, State, MAX_KEEPER_MOVES};
pub use gdl::{to_gdl, MAX_CHECK_WORK, MAX_GDL_BYTES, MAX_VALUES};
pub use random::Rng;
pub use search::{MAX_DRAW_STEPS, MAX_MOVE_MODIFIERS};
pub use syntax::{MAX_ACTIONS, MAX_BOUND, MAX_NAMES, MAX_NESTING};

/// The most entries (4 bytes each) of the search's visited tables: automaton
/// states x board vertices x (pattern nesting depth + 1).
pub const MAX_SEARCH_TABLE: usize = 1 << 25;
