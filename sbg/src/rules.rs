//! The rules of a game, as read by [`crate::parse`]: board, piece movement
//! expressions, turn limit and goals. Only the parser builds them, so every
//! [`Rules`] value has been checked (sizes, offsets, squares in range).

use std::fmt;

/// The longest side of a board (so that a set of squares fits in 256 bits).
pub const MAX_SIDE: usize = 16;

/// One of the two players.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum Player {
    /// Upper-case pieces; moves first; forward is up.
    White,
    /// Lower-case pieces; forward is down.
    Black,
}

impl Player {
    /// Both players, white first.
    pub const BOTH: [Player; 2] = [Player::White, Player::Black];

    /// The other player.
    pub fn opponent(self) -> Player {
        match self {
            Player::White => Player::Black,
            Player::Black => Player::White,
        }
    }

    /// The role's name in the GDL translation.
    pub fn name(self) -> &'static str {
        match self {
            Player::White => "white",
            Player::Black => "black",
        }
    }

    /// 0 for white, 1 for black (the role's index in the GDL translation).
    pub fn index(self) -> usize {
        self as usize
    }
}

/// A piece on the board: its owner and its type (an upper-case ASCII letter).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Piece {
    /// Who owns it.
    pub owner: Player,
    /// Its type, `b'A'..=b'Z'`.
    pub kind: u8,
}

impl Piece {
    /// The board letter: upper case for white, lower case for black.
    pub fn letter(self) -> char {
        match self.owner {
            Player::White => self.kind as char,
            Player::Black => self.kind.to_ascii_lowercase() as char,
        }
    }
}

/// What a letter's square must hold, seen from the moving player.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum On {
    /// `e`: nothing.
    Empty,
    /// `p`: an opponent's piece.
    Opponent,
    /// `w`: one of the mover's own pieces.
    Own,
}

impl On {
    /// The letter of the grammar.
    pub fn symbol(self) -> char {
        match self {
            On::Empty => 'e',
            On::Opponent => 'p',
            On::Own => 'w',
        }
    }
}

/// A letter of a movement expression: a step `(dx, dy)` (white's view) and the
/// condition on the square reached.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Letter {
    /// Columns to the right.
    pub dx: i32,
    /// Rows forward.
    pub dy: i32,
    /// The condition on the square reached.
    pub on: On,
}

impl Letter {
    /// The step `(dx, dy)` on the board for `player` (black's `dy` negated).
    pub fn step(self, player: Player) -> (i32, i32) {
        match player {
            Player::White => (self.dx, self.dy),
            Player::Black => (self.dx, -self.dy),
        }
    }
}

/// A movement expression.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum Regex {
    /// One letter.
    Letter(Letter),
    /// The parts one after another.
    Concat(Vec<Regex>),
    /// Any one of the parts (`+`).
    Alt(Vec<Regex>),
    /// Exactly `n` repetitions (`^n`).
    Power(Box<Regex>, u32),
    /// Any number of repetitions, none included (`^*`).
    Star(Box<Regex>),
}

impl Regex {
    /// The number of letters once every `^n` is written out (saturating): the
    /// size of the Glushkov automaton, bounded by the parser.
    pub fn expanded_len(&self) -> u64 {
        match self {
            Regex::Letter(_) => 1,
            Regex::Concat(parts) | Regex::Alt(parts) => {
                parts.iter().fold(0u64, |n, p| n.saturating_add(p.expanded_len()))
            }
            Regex::Power(inner, n) => inner.expanded_len().saturating_mul(u64::from(*n)),
            Regex::Star(inner) => inner.expanded_len(),
        }
    }

    /// Every letter that occurs.
    pub fn letters(&self, out: &mut Vec<Letter>) {
        match self {
            Regex::Letter(l) => out.push(*l),
            Regex::Concat(parts) | Regex::Alt(parts) => parts.iter().for_each(|p| p.letters(out)),
            Regex::Power(inner, _) | Regex::Star(inner) => inner.letters(out),
        }
    }
}

/// Prints in the grammar's syntax (parenthesised where needed).
impl fmt::Display for Regex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Regex::Letter(l) => write!(f, "({},{},{})", l.dx, l.dy, l.on.symbol()),
            Regex::Concat(parts) => parts.iter().try_for_each(|p| match p {
                Regex::Alt(_) => write!(f, "({p})"),
                _ => write!(f, "{p}"),
            }),
            Regex::Alt(parts) => {
                for (i, p) in parts.iter().enumerate() {
                    if i > 0 {
                        write!(f, " + ")?;
                    }
                    write!(f, "{p}")?;
                }
                Ok(())
            }
            Regex::Power(inner, n) => write_powered(f, inner, &n.to_string()),
            Regex::Star(inner) => write_powered(f, inner, "*"),
        }
    }
}

/// `inner^power`, with parentheses unless `inner` is a letter.
fn write_powered(f: &mut fmt::Formatter<'_>, inner: &Regex, power: &str) -> fmt::Result {
    match inner {
        Regex::Letter(_) => write!(f, "{inner}^{power}"),
        _ => write!(f, "({inner})^{power}"),
    }
}

/// `@`: the player wins by moving a piece of type `kind` onto one of `squares`.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ReachGoal {
    /// Whose goal.
    pub player: Player,
    /// The piece type that must get there.
    pub kind: u8,
    /// The squares `(x, y)`, absolute, `(0, 0)` lower left.
    pub squares: Vec<(usize, usize)>,
}

/// `#`: the player loses when it has at most `at_most` pieces of type `kind`.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct CountGoal {
    /// Whose loss.
    pub player: Player,
    /// The piece type counted.
    pub kind: u8,
    /// The count at or below which the player loses.
    pub at_most: u32,
}

/// A checked game.
#[derive(Clone, Debug)]
pub struct Rules {
    pub(crate) name: String,
    pub(crate) width: usize,
    pub(crate) height: usize,
    /// Row-major from the bottom row: `board[y * width + x]`.
    pub(crate) board: Vec<Option<Piece>>,
    /// Movement rule per piece type (`kind - b'A'`).
    pub(crate) moves: Vec<Option<Regex>>,
    pub(crate) turn_limit: u32,
    pub(crate) reach: Vec<ReachGoal>,
    pub(crate) count: Vec<CountGoal>,
}

impl Rules {
    /// The game's name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// Columns.
    pub fn width(&self) -> usize {
        self.width
    }
    /// Rows.
    pub fn height(&self) -> usize {
        self.height
    }
    /// The initial board, row-major from the bottom row.
    pub fn initial_board(&self) -> &[Option<Piece>] {
        &self.board
    }
    /// The movement rule of piece type `kind` (`None`: the piece cannot move).
    pub fn moves_of(&self, kind: u8) -> Option<&Regex> {
        self.moves
            .get(usize::from(kind.wrapping_sub(b'A')))
            .and_then(Option::as_ref)
    }
    /// Every piece type with a movement rule, with the rule.
    pub fn piece_rules(&self) -> impl Iterator<Item = (u8, &Regex)> {
        (b'A'..=b'Z').filter_map(|k| self.moves_of(k).map(|r| (k, r)))
    }
    /// Half-moves after which the game is a draw.
    pub fn turn_limit(&self) -> u32 {
        self.turn_limit
    }
    /// The `@` goals.
    pub fn reach_goals(&self) -> &[ReachGoal] {
        &self.reach
    }
    /// The `#` goals.
    pub fn count_goals(&self) -> &[CountGoal] {
        &self.count
    }
    /// The `#` threshold of each `(player, kind)` with one (the largest if several).
    pub fn count_thresholds(&self) -> Vec<(Player, u8, u32)> {
        let mut out: Vec<(Player, u8, u32)> = Vec::new();
        for g in &self.count {
            match out.iter_mut().find(|(p, k, _)| *p == g.player && *k == g.kind) {
                Some(entry) => entry.2 = entry.2.max(g.at_most),
                None => out.push((g.player, g.kind, g.at_most)),
            }
        }
        out.sort();
        out
    }
    /// Whether `player` wins by moving a `kind` onto `(x, y)`.
    pub fn is_reach_square(&self, player: Player, kind: u8, x: usize, y: usize) -> bool {
        self.reach
            .iter()
            .any(|g| g.player == player && g.kind == kind && g.squares.contains(&(x, y)))
    }
    /// How many pieces `player` has of type `kind` on the initial board.
    pub fn initial_count(&self, player: Player, kind: u8) -> u32 {
        let piece = Piece { owner: player, kind };
        self.board.iter().filter(|p| **p == Some(piece)).count() as u32
    }
}
