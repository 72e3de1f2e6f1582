//! The search for moves: from an automaton state and a cell, the closure over
//! shifts and tests (every (state, cell) pair entered once between two
//! modifiers, so the search ends), then each modifier reached, applied in
//! place and undone after the search below it; a switch ends a move. Patterns
//! run the same search on their own expression (one visited table per pattern
//! nesting level) until their expression can end.

use crate::automaton::{Act, Automaton};
use crate::board::{Board, NONE};
use crate::syntax::{Cmp, Expr};

/// The most modifiers a search may have applied at once (those of the move so
/// far and of the patterns being matched inside it); beyond, the search does not
/// go (a proper description never gets there). This bounds the search's depth;
/// its time on an improper description may still grow exponentially.
pub const MAX_MOVE_MODIFIERS: usize = 1024;

/// The most (modifier, cell) pairs a random playout keeps of the moves of
/// one state (32 MiB); beyond, it counts the moves, then searches again for
/// the one drawn, so that a state with more moves than memory holds is still
/// played with the same uniform draw.
pub const MAX_DRAW_STEPS: usize = 1 << 22;

/// The part of a game state the actions read and change.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub(crate) struct Semi {
    pub(crate) board: Vec<u16>,
    pub(crate) counts: Vec<i64>,
    pub(crate) vars: Vec<i64>,
}

impl Semi {
    #[inline]
    pub(crate) fn set_piece(&mut self, cell: u32, piece: u16) -> u16 {
        let old = std::mem::replace(&mut self.board[cell as usize], piece);
        self.counts[old as usize] -= 1;
        self.counts[piece as usize] += 1;
        old
    }

    pub(crate) fn eval(&self, e: &Expr) -> Option<i64> {
        match e {
            Expr::Num(n) => Some(*n),
            Expr::Var(v) => Some(self.vars[*v as usize]),
            Expr::Count(p) => Some(self.counts[*p as usize]),
            Expr::Bin(op, l, r) => {
                let (l, r) = (self.eval(l)?, self.eval(r)?);
                match op {
                    '+' => l.checked_add(r),
                    '-' => l.checked_sub(r),
                    '*' => l.checked_mul(r),
                    _ => l.checked_div(r),
                }
            }
        }
    }

    fn compare(&self, l: &Expr, op: Cmp, r: &Expr) -> bool {
        let (Some(l), Some(r)) = (self.eval(l), self.eval(r)) else {
            return false;
        };
        match op {
            Cmp::Lt => l < r,
            Cmp::Le => l <= r,
            Cmp::Eq => l == r,
            Cmp::Ne => l != r,
            Cmp::Gt => l > r,
            Cmp::Ge => l >= r,
        }
    }
}

/// What the search does with a complete move.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Keep every move in [`Scratch::moves`].
    Collect,
    /// As `Collect` up to [`MAX_DRAW_STEPS`] pairs kept, then only count.
    Draw,
    /// Keep the move of index [`Scratch::nth`] (from 0, in the order of `Collect`) and stop.
    Nth,
    /// Keep the first move and stop.
    First,
    /// Only count the moves.
    Count,
}

/// Reusable memory of the search.
#[derive(Debug, Default)]
pub(crate) struct Scratch {
    visited: Vec<Vec<u32>>,
    stamps: Vec<u32>,
    work: Vec<(u32, u32)>,
    edges: Vec<(u32, u32)>,
    path: Vec<(u32, u32)>,
    /// The moves found, one after the other; `ends[k]` is where move `k` ends.
    pub(crate) moves: Vec<(u32, u32)>,
    pub(crate) ends: Vec<usize>,
    pub(crate) count: u64,
    /// The index of the move [`Mode::Nth`] keeps.
    pub(crate) nth: u64,
    /// The modifiers applied now (the move's and the patterns').
    applied: usize,
    /// A copy of the state's [`Semi`] the search changes in place (kept for its memory).
    pub(crate) semi: Semi,
    mode: Option<Mode>,
    stop: bool,
}

impl Scratch {
    pub(crate) fn reset(&mut self, mode: Mode) {
        self.moves.clear();
        self.ends.clear();
        self.count = 0;
        self.applied = 0;
        self.stop = false;
        self.mode = Some(mode);
    }

    /// A new stamp for the visited table of `level`, sized for `size` entries.
    fn stamp(&mut self, level: usize, size: usize) -> u32 {
        while self.visited.len() <= level {
            self.visited.push(Vec::new());
            self.stamps.push(0);
        }
        if self.visited[level].len() != size {
            self.visited[level] = vec![0; size];
            self.stamps[level] = 0;
        }
        if self.stamps[level] == u32::MAX {
            self.visited[level].fill(0);
            self.stamps[level] = 0;
        }
        self.stamps[level] += 1;
        self.stamps[level]
    }
}

/// A change to undo.
enum Undo {
    Piece(u32, u16),
    Var(u16, i64),
}

/// One search: the rules, the board, the bounds, and the state it changes in place.
pub(crate) struct Search<'a> {
    pub(crate) a: &'a Automaton,
    pub(crate) board: &'a Board,
    pub(crate) bounds: &'a [i64],
    pub(crate) semi: &'a mut Semi,
    pub(crate) s: &'a mut Scratch,
}

impl Search<'_> {
    /// Every move from automaton state `q` at `cell`, handled as `s.mode` says.
    pub(crate) fn moves(&mut self, q: u32, cell: u32) {
        self.moves_from(q, cell);
    }

    fn moves_from(&mut self, q: u32, cell: u32) {
        if self.s.applied >= MAX_MOVE_MODIFIERS {
            return;
        }
        let base = self.s.edges.len();
        self.closure(q, cell, 0, false);
        let end = self.s.edges.len();
        for k in base..end {
            let (t, c) = self.s.edges[k];
            self.s.path.push((t, c));
            if let Act::Switch(_) = self.a.acts[t as usize] {
                self.emit();
            } else if let Some(undo) = self.modify(t, c) {
                self.s.applied += 1;
                self.moves_from(t, c);
                self.s.applied -= 1;
                self.undo(undo);
            }
            self.s.path.pop();
            if self.s.stop {
                break;
            }
        }
        self.s.edges.truncate(base);
    }

    fn emit(&mut self) {
        match self.s.mode {
            Some(Mode::Count) => self.s.count += 1,
            Some(mode) => {
                let keep = match mode {
                    Mode::Draw => self.s.moves.len() + self.s.path.len() <= MAX_DRAW_STEPS,
                    Mode::Nth => self.s.count == self.s.nth,
                    _ => true,
                };
                if keep {
                    self.s.moves.extend_from_slice(&self.s.path);
                    self.s.ends.push(self.s.moves.len());
                }
                self.s.count += 1;
                self.s.stop = mode == Mode::First || (mode == Mode::Nth && keep);
            }
            None => {}
        }
    }

    /// Applies the modifier `t` (an off or an assignment) at `cell`, if valid.
    fn modify(&mut self, t: u32, cell: u32) -> Option<Undo> {
        match self.a.acts[t as usize] {
            Act::Off(p) => Some(Undo::Piece(cell, self.semi.set_piece(cell, p))),
            Act::Assign(v, e) => {
                let value = self.semi.eval(&self.a.exprs[e as usize])?;
                if !(0..=self.bounds[v as usize]).contains(&value) {
                    return None;
                }
                Some(Undo::Var(
                    v,
                    std::mem::replace(&mut self.semi.vars[v as usize], value),
                ))
            }
            _ => None,
        }
    }

    fn undo(&mut self, undo: Undo) {
        match undo {
            Undo::Piece(cell, old) => {
                self.semi.set_piece(cell, old);
            }
            Undo::Var(v, old) => self.semi.vars[v as usize] = old,
        }
    }

    /// Whether the pattern expression `r` matches from `cell` (searching at `level`).
    fn pattern(&mut self, r: u32, cell: u32, level: usize) -> bool {
        self.pattern_from(self.a.starts[r as usize], cell, level)
    }

    fn pattern_from(&mut self, q: u32, cell: u32, level: usize) -> bool {
        if self.s.applied >= MAX_MOVE_MODIFIERS {
            return false;
        }
        let base = self.s.edges.len();
        let mut found = self.closure(q, cell, level, true);
        let end = self.s.edges.len();
        for k in base..end {
            if found {
                break;
            }
            let (t, c) = self.s.edges[k];
            if let Some(undo) = self.modify(t, c) {
                self.s.applied += 1;
                found = self.pattern_from(t, c, level);
                self.s.applied -= 1;
                self.undo(undo);
            }
        }
        self.s.edges.truncate(base);
        found
    }

    /// Explores from `(q, cell)` over shifts and tests, pushing the modifier
    /// transitions reached onto `edges`; with `accept`, stops and returns true
    /// as soon as an accepting state is entered.
    fn closure(&mut self, q: u32, cell: u32, level: usize, accept: bool) -> bool {
        let stamp = self.s.stamp(level, self.a.acts.len() * self.board.cells());
        // This level's table, out of the scratch while patterns use the deeper ones.
        let mut visited = std::mem::take(&mut self.s.visited[level]);
        let found = self.explore(q, cell, level, accept, stamp, &mut visited);
        self.s.visited[level] = visited;
        found
    }

    fn explore(
        &mut self,
        q: u32,
        cell: u32,
        level: usize,
        accept: bool,
        stamp: u32,
        visited: &mut [u32],
    ) -> bool {
        let (a, board) = (self.a, self.board);
        let (cells, dirs) = (board.cells(), board.dirs.len());
        // The start is not marked: it is a start state, which no transition
        // enters, or a modifier, which only a modifier edge (recorded, not
        // followed) enters: `[x]` after `[x]` at the same cell is another step.
        if accept && a.accept[q as usize] {
            return true;
        }
        let base = self.s.work.len();
        self.s.work.push((q, cell));
        while let Some((st, c)) = self.s.work.pop() {
            for &t in a.next(st) {
                let act = a.acts[t as usize];
                let to = match act {
                    Act::Shift(d) => board.next[c as usize * dirs + d as usize],
                    _ => c,
                };
                if to == NONE {
                    continue;
                }
                let slot = t as usize * cells + to as usize;
                if visited[slot] == stamp {
                    continue;
                }
                visited[slot] = stamp;
                let pass = match act {
                    Act::Shift(_) => true,
                    Act::On(m) => a.on[m as usize + self.semi.board[c as usize] as usize],
                    Act::Compare(l, op, r) => {
                        self.semi.compare(&a.exprs[l as usize], op, &a.exprs[r as usize])
                    }
                    Act::Pattern(r, positive) => self.pattern(r, c, level + 1) == positive,
                    Act::Off(_) | Act::Assign(..) | Act::Switch(_) => {
                        self.s.edges.push((t, c));
                        false
                    }
                    Act::Start => false,
                };
                if !pass {
                    continue;
                }
                if accept && a.accept[t as usize] {
                    self.s.work.truncate(base);
                    return true;
                }
                self.s.work.push((t, to));
            }
            if self.s.work.len() == base {
                break;
            }
        }
        false
    }
}
