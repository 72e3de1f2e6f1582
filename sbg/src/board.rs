//! The direct move generator: the oracle the GDL translation is tested against.
//!
//! It shares only [`Rules`] with the translation. A piece's moves are found by
//! evaluating its expression as a function on sets of squares (a letter maps
//! each square to the square one step on, kept when on the board and meeting
//! the condition; concatenation composes; `+` unites; `^n` iterates; `^*` is
//! the least fixpoint), with no automaton: a bug in the automata cannot hide
//! behind the same bug here. The closure of a star inside another star is
//! computed once per start square and position.

use crate::rules::{Letter, On, Piece, Player, Regex, Rules, MAX_SIDE};

/// A set of squares, bit `y * width + x`.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
struct Squares([u64; MAX_SIDE * MAX_SIDE / 64]);

impl Squares {
    fn single(i: usize) -> Squares {
        let mut s = Squares::default();
        s.insert(i);
        s
    }
    fn insert(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }
    fn minus(self, other: Squares) -> Squares {
        let mut out = self;
        for (a, b) in out.0.iter_mut().zip(other.0) {
            *a &= !b;
        }
        out
    }
    fn union(self, other: Squares) -> Squares {
        let mut out = self;
        for (a, b) in out.0.iter_mut().zip(other.0) {
            *a |= b;
        }
        out
    }
    fn iter(self) -> impl Iterator<Item = usize> {
        self.0.into_iter().enumerate().flat_map(|(w, mut bits)| {
            std::iter::from_fn(move || {
                (bits != 0).then(|| {
                    let b = bits.trailing_zeros() as usize;
                    bits &= bits - 1;
                    w * 64 + b
                })
            })
        })
    }
}

/// Closures of stars inside stars already computed in one position: (the
/// star's address in the rules, start square) to the squares reached.
type Closures = std::collections::HashMap<(usize, usize), Squares>;

/// A move: from a square to a square, `(x, y)` each.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Move {
    /// The square the piece leaves.
    pub from: (usize, usize),
    /// The square it ends on.
    pub to: (usize, usize),
}

/// A state: the board, whose turn, half-moves played, and who (if anyone) won
/// by the last move reaching an `@` square.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct Position {
    board: Vec<Option<Piece>>,
    to_move: Player,
    turn: u32,
    reached: Option<Player>,
}

impl Position {
    /// The initial state of `rules`.
    pub fn initial(rules: &Rules) -> Position {
        Position {
            board: rules.initial_board().to_vec(),
            to_move: Player::White,
            turn: 0,
            reached: None,
        }
    }

    /// Every piece with its square `(x, y)`, bottom row first.
    pub fn pieces<'a>(&'a self, rules: &'a Rules) -> impl Iterator<Item = ((usize, usize), Piece)> + 'a {
        self.board
            .iter()
            .enumerate()
            .filter_map(|(i, p)| p.map(|p| ((i % rules.width(), i / rules.width()), p)))
    }

    /// Whose turn it is.
    pub fn to_move(&self) -> Player {
        self.to_move
    }

    /// Half-moves played.
    pub fn turn(&self) -> u32 {
        self.turn
    }

    /// The legal moves of the player to move, sorted (terminal or not).
    pub fn legal_moves(&self, rules: &Rules) -> Vec<Move> {
        let w = rules.width();
        let mut moves = Vec::new();
        let mut closures = Closures::default();
        for (i, piece) in self.board.iter().enumerate() {
            let Some(piece) = piece.filter(|p| p.owner == self.to_move) else {
                continue;
            };
            let Some(regex) = rules.moves_of(piece.kind) else {
                continue;
            };
            let ends = self.eval(rules, regex, Squares::single(i), false, &mut closures);
            moves.extend(ends.iter().map(|j| Move {
                from: (i % w, i / w),
                to: (j % w, j / w),
            }));
        }
        moves.sort();
        moves
    }

    /// The squares `regex` leads to from any of `from`; `nested` when inside a
    /// star. Results are unions over the start squares (the board is fixed
    /// during the walk), so the closure of a star inside another star is kept
    /// per start square in `closures` for the rest of the
    /// [`Position::legal_moves`] call: stars nested in stars cost a polynomial,
    /// not an exponential, number of steps.
    fn eval(
        &self,
        rules: &Rules,
        regex: &Regex,
        from: Squares,
        nested: bool,
        closures: &mut Closures,
    ) -> Squares {
        match regex {
            Regex::Letter(letter) => self.step(rules, *letter, from),
            Regex::Concat(parts) => parts
                .iter()
                .fold(from, |set, p| self.eval(rules, p, set, nested, closures)),
            Regex::Alt(parts) => parts.iter().fold(Squares::default(), |acc, p| {
                acc.union(self.eval(rules, p, from, nested, closures))
            }),
            Regex::Power(inner, n) => {
                (0..*n).fold(from, |set, _| self.eval(rules, inner, set, nested, closures))
            }
            Regex::Star(inner) if nested => from.iter().fold(Squares::default(), |acc, square| {
                let key = (std::ptr::from_ref(regex) as usize, square);
                let reached = match closures.get(&key) {
                    Some(done) => *done,
                    None => {
                        let reached = self.closure(rules, inner, Squares::single(square), closures);
                        closures.insert(key, reached);
                        reached
                    }
                };
                acc.union(reached)
            }),
            Regex::Star(inner) => self.closure(rules, inner, from, closures),
        }
    }

    /// The squares any number of `inner` leads to from `from`: the least
    /// fixpoint, grown from the squares found last.
    fn closure(&self, rules: &Rules, inner: &Regex, from: Squares, closures: &mut Closures) -> Squares {
        let mut all = from;
        let mut fresh = from;
        while fresh != Squares::default() {
            fresh = self.eval(rules, inner, fresh, true, closures).minus(all);
            all = all.union(fresh);
        }
        all
    }

    /// One letter from each of `from`, for the player to move.
    fn step(&self, rules: &Rules, letter: Letter, from: Squares) -> Squares {
        let (w, h) = (rules.width() as i32, rules.height() as i32);
        let (dx, dy) = letter.step(self.to_move);
        let mut out = Squares::default();
        for i in from.iter() {
            let (x, y) = ((i as i32 % w) + dx, (i as i32 / w) + dy);
            if !(0..w).contains(&x) || !(0..h).contains(&y) {
                continue;
            }
            let j = (y * w + x) as usize;
            let ok = match (letter.on, self.board[j]) {
                (On::Empty, None) => true,
                (On::Own, Some(p)) => p.owner == self.to_move,
                (On::Opponent, Some(p)) => p.owner != self.to_move,
                _ => false,
            };
            if ok {
                out.insert(j);
            }
        }
        out
    }

    /// The state after the player to move plays `m`, which should be one of
    /// [`Position::legal_moves`]: the piece moves, whatever stood on the end
    /// square (if not the start) is captured. `None` if `m` is not even a move
    /// of one of the mover's pieces between squares of the board.
    pub fn play(&self, rules: &Rules, m: Move) -> Option<Position> {
        let (w, h) = (rules.width(), rules.height());
        let on_board = |(x, y): (usize, usize)| (x < w && y < h).then_some(y * w + x);
        let (from, to) = (on_board(m.from)?, on_board(m.to)?);
        let mut board = self.board.clone();
        let piece = board[from].take().filter(|p| p.owner == self.to_move)?;
        board[to] = Some(piece);
        let reached = rules
            .is_reach_square(piece.owner, piece.kind, m.to.0, m.to.1)
            .then_some(piece.owner);
        Some(Position {
            board,
            to_move: self.to_move.opponent(),
            turn: self.turn + 1,
            reached,
        })
    }

    /// How many pieces of type `kind` `player` has.
    pub fn count(&self, player: Player, kind: u8) -> u32 {
        let piece = Some(Piece { owner: player, kind });
        self.board.iter().filter(|p| **p == piece).count() as u32
    }

    /// `None` if the game goes on, else the goals `[white, black]`: the
    /// outcome in the order of the crate's semantics (reach, counts, no move,
    /// turn limit).
    pub fn outcome(&self, rules: &Rules) -> Option<[u8; 2]> {
        self.outcome_given(rules, &self.legal_moves(rules))
    }

    /// [`Position::outcome`], given the player to move's `legal` moves (to
    /// spare generating them twice).
    pub fn outcome_given(&self, rules: &Rules, legal: &[Move]) -> Option<[u8; 2]> {
        let win = |p: Player| {
            let mut goals = [0; 2];
            goals[p.index()] = 100;
            goals
        };
        if let Some(p) = self.reached {
            return Some(win(p));
        }
        let lost = Player::BOTH.map(|p| {
            rules
                .count_goals()
                .iter()
                .any(|g| g.player == p && self.count(p, g.kind) <= g.at_most)
        });
        match lost {
            [true, true] => return Some([50, 50]),
            [true, false] => return Some(win(Player::Black)),
            [false, true] => return Some(win(Player::White)),
            [false, false] => {}
        }
        if legal.is_empty() {
            return Some(win(self.to_move.opponent()));
        }
        (self.turn >= rules.turn_limit()).then_some([50, 50])
    }

    /// The goals `[white, black]` in any state: as [`Position::outcome`], and
    /// 50 each while the game goes on.
    pub fn goals(&self, rules: &Rules) -> [u8; 2] {
        self.outcome(rules).unwrap_or([50, 50])
    }
}

/// Perft: `counts[d - 1]` is the number of move sequences of length `d` from the
/// initial state, terminal states not expanded.
pub fn perft(rules: &Rules, depth: usize) -> Vec<u128> {
    fn walk(rules: &Rules, position: &Position, d: usize, counts: &mut [u128]) {
        if d == counts.len() {
            return;
        }
        let moves = position.legal_moves(rules);
        if position.outcome_given(rules, &moves).is_some() {
            return;
        }
        counts[d] += moves.len() as u128;
        for m in moves {
            if let Some(next) = position.play(rules, m) {
                walk(rules, &next, d + 1, counts);
            }
        }
    }
    let mut counts = vec![0; depth];
    walk(rules, &Position::initial(rules), 0, &mut counts);
    counts
}
