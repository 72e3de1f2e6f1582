//! The game: a parsed and compiled description, with the paper's transition
//! model (as `shared/traces-rbg/FORMAT.md` states it): a move is the sequence
//! of (modifier occurrence, cell) pairs up to and including the first switch;
//! after a player's move the keeper applies its first legal move as long as it
//! is to move, and a keeper without a legal move ends the game.

use crate::automaton::{self, Act, Automaton};
use crate::board::Board;
use crate::error::RbgError;
use crate::random::Rng;
use crate::search::{Mode, Scratch, Search, Semi};
use crate::syntax;
use std::sync::Mutex;

/// The most keeper moves applied in a row; a description whose keeper goes on
/// longer is not proper, and its game is ended there.
pub const MAX_KEEPER_MOVES: usize = 100_000;

/// A game read from RBG text, ready to play.
///
/// ```
/// let text = "#players = a(1), b(1) #pieces = e, x #variables =
///             #board = rectangle(up, down, left, right, [e, e])
///             #rules = (->a (left* + right*) {e} [x] ->b (left* + right*) {e} [x])*";
/// let game = ggpnet_rbg::Game::parse(text).unwrap();
/// let s = game.initial_state();
/// assert_eq!(game.perft(&s, 1), 2);
/// assert_eq!(game.perft(&s, 2), 2);
/// assert_eq!(game.perft(&s, 3), 0);
/// ```
#[derive(Debug)]
pub struct Game {
    players: Vec<String>,
    pieces: Vec<String>,
    variables: Vec<String>,
    pub(crate) bounds: Vec<i64>,
    pub(crate) board: Board,
    pub(crate) automaton: Automaton,
    scratch: Mutex<Vec<Scratch>>,
}

/// A game state: the board, the variables, the player to move, the current
/// cell and the position in the rules.
///
/// ```
/// let game = ggpnet_rbg::Game::parse("#players = a(5) #pieces = e #variables =
///     #board = rectangle(u, d, l, r, [e]) #rules = [$ a = 5] ->a").unwrap();
/// let s = game.initial_state();
/// assert_eq!(game.scores(&s), vec![5]);
/// assert_eq!(game.current_player(&s), Some(0));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct State {
    semi: Semi,
    /// 0 for the keeper, `p + 1` for the player `p`.
    player: u16,
    cell: u32,
    rule: u32,
    over: bool,
}

/// A move: the (modifier occurrence, cell) pairs it applies, the last one a switch.
///
/// ```
/// let game = ggpnet_rbg::Game::parse("#players = a(1) #pieces = e, x #variables =
///     #board = rectangle(u, d, l, r, [e, e]) #rules = ->a (l* + r*) [x] ->>").unwrap();
/// let mut moves = Vec::new();
/// game.legal_moves(&game.initial_state(), &mut moves);
/// assert_eq!(moves.len(), 2);
/// assert_eq!(moves[0].steps().len(), 2);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Move {
    steps: Vec<(u32, u32)>,
}

impl Move {
    /// The (modifier occurrence, cell) pairs of the move, in order; occurrences
    /// are numbered by the engine, cells as in [`Game::cell_name`].
    ///
    /// ```
    /// let game = ggpnet_rbg::Game::parse("#players = a(1) #pieces = e #variables =
    ///     #board = rectangle(u, d, l, r, [e]) #rules = ->a ->>").unwrap();
    /// let mut moves = Vec::new();
    /// game.legal_moves(&game.initial_state(), &mut moves);
    /// assert_eq!(moves[0].steps()[0].1, 0);
    /// ```
    pub fn steps(&self) -> &[(u32, u32)] {
        &self.steps
    }
}

/// The end of one random playout.
///
/// ```
/// let game = ggpnet_rbg::Game::parse("#players = a(1) #pieces = e #variables =
///     #board = rectangle(u, d, l, r, [e]) #rules = ->a [$ a = 1] ->>").unwrap();
/// let end = game.random_playout(&game.initial_state(), &mut ggpnet_rbg::Rng::new(1), 100);
/// assert_eq!((end.moves, end.scores, end.ended), (1, vec![1], true));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Playout {
    /// The number of player moves (keeper moves not counted).
    pub moves: usize,
    /// Every player's score at the end, in [`Game::players`] order.
    pub scores: Vec<i64>,
    /// Whether the play is over (else the playout stopped at its move limit).
    pub ended: bool,
}

impl Game {
    /// Reads and checks an RBG description and compiles its rules.
    ///
    /// ```
    /// let text = "#players = a #pieces = e #variables = #board = rectangle(u, d, l, r, [e]) #rules = ->a";
    /// let err = ggpnet_rbg::Game::parse(text).unwrap_err();
    /// assert_eq!(err.kind(), ggpnet_rbg::ErrorKind::MissingBound);
    /// ```
    pub fn parse(text: &str) -> Result<Game, RbgError> {
        let d = syntax::parse(text)?;
        let automaton = automaton::compile(&d.rules, &d.bounds)?;
        // One visited table of states x vertices per pattern nesting level.
        let levels = automaton.pattern_depth + 1;
        let size = automaton
            .acts
            .len()
            .saturating_mul(d.board.cells())
            .saturating_mul(levels);
        if size > crate::MAX_SEARCH_TABLE {
            let reason = format!(
                "{} automaton states on {} vertices at {levels} pattern levels exceed the search table limit",
                automaton.acts.len(),
                d.board.cells()
            );
            let pos = crate::error::Pos { line: 1, column: 1 };
            return Err(RbgError::new(crate::ErrorKind::RulesTooLarge, pos, reason));
        }
        Ok(Game {
            players: d.players,
            pieces: d.pieces,
            variables: d.variables,
            bounds: d.bounds,
            board: d.board,
            automaton,
            scratch: Mutex::new(Vec::new()),
        })
    }

    /// The players, in `#players` order (the keeper is not one of them).
    ///
    /// ```
    /// let game = ggpnet_rbg::Game::parse("#players = w(1), b(1) #pieces = e #variables =
    ///     #board = rectangle(u, d, l, r, [e]) #rules = ->w").unwrap();
    /// assert_eq!(game.players(), ["w", "b"]);
    /// ```
    pub fn players(&self) -> &[String] {
        &self.players
    }

    /// The pieces, in `#pieces` order.
    ///
    /// ```
    /// let game = ggpnet_rbg::Game::parse("#players = w(1) #pieces = e, x #variables =
    ///     #board = rectangle(u, d, l, r, [e]) #rules = ->w").unwrap();
    /// assert_eq!(game.pieces(), ["e", "x"]);
    /// ```
    pub fn pieces(&self) -> &[String] {
        &self.pieces
    }

    /// The variables: the players' score variables first, then `#variables`.
    ///
    /// ```
    /// let game = ggpnet_rbg::Game::parse("#players = w(1) #pieces = e #variables = t(3)
    ///     #board = rectangle(u, d, l, r, [e]) #rules = ->w").unwrap();
    /// assert_eq!(game.variables(), ["w", "t"]);
    /// ```
    pub fn variables(&self) -> &[String] {
        &self.variables
    }

    /// The number of board vertices.
    ///
    /// ```
    /// let game = ggpnet_rbg::Game::parse("#players = w(1) #pieces = e #variables =
    ///     #board = rectangle(u, d, l, r, [e, e] [e, ]) #rules = ->w").unwrap();
    /// assert_eq!(game.cells(), 3);
    /// ```
    pub fn cells(&self) -> usize {
        self.board.cells()
    }

    /// The name of a vertex: as written in the explicit form, else
    /// `layer_row_column` of the generator.
    ///
    /// ```
    /// let game = ggpnet_rbg::Game::parse("#players = w(1) #pieces = e #variables =
    ///     #board = rectangle(u, d, l, r, [e, e]) #rules = ->w").unwrap();
    /// assert_eq!(game.cell_name(1), "0_0_1");
    /// ```
    pub fn cell_name(&self, cell: usize) -> &str {
        &self.board.names[cell]
    }

    /// The piece (index into [`Game::pieces`]) on a vertex.
    ///
    /// ```
    /// let game = ggpnet_rbg::Game::parse("#players = w(1) #pieces = e, x #variables =
    ///     #board = rectangle(u, d, l, r, [e, x]) #rules = ->w").unwrap();
    /// assert_eq!(game.piece_at(&game.initial_state(), 1), 1);
    /// ```
    pub fn piece_at(&self, state: &State, cell: usize) -> usize {
        state.semi.board[cell] as usize
    }

    /// The value of a variable (index into [`Game::variables`]).
    ///
    /// ```
    /// let game = ggpnet_rbg::Game::parse("#players = w(1) #pieces = e #variables = t(3)
    ///     #board = rectangle(u, d, l, r, [e]) #rules = [$ t = 2] ->w").unwrap();
    /// assert_eq!(game.variable(&game.initial_state(), 1), 2);
    /// ```
    pub fn variable(&self, state: &State, variable: usize) -> i64 {
        state.semi.vars[variable]
    }

    /// The start of a play: the keeper to move at the first vertex, all
    /// variables 0, then the keeper's forced moves applied.
    ///
    /// ```
    /// let game = ggpnet_rbg::Game::parse("#players = w(1) #pieces = e #variables =
    ///     #board = rectangle(u, d, l, r, [e]) #rules = ->>").unwrap();
    /// assert!(game.is_terminal(&game.initial_state()));
    /// ```
    pub fn initial_state(&self) -> State {
        let mut counts = vec![0; self.pieces.len()];
        for &p in &self.board.initial {
            counts[p as usize] += 1;
        }
        let mut state = State {
            semi: Semi {
                board: self.board.initial.clone(),
                counts,
                vars: vec![0; self.variables.len()],
            },
            player: 0,
            cell: 0,
            rule: self.automaton.starts[0],
            over: false,
        };
        self.with_scratch(|s| self.complete(&mut state, s));
        state
    }

    /// The player to move (index into [`Game::players`]), or `None` when the
    /// keeper ended the game.
    ///
    /// ```
    /// let game = ggpnet_rbg::Game::parse("#players = w(1), b(1) #pieces = e #variables =
    ///     #board = rectangle(u, d, l, r, [e]) #rules = ->b").unwrap();
    /// assert_eq!(game.current_player(&game.initial_state()), Some(1));
    /// ```
    pub fn current_player(&self, state: &State) -> Option<usize> {
        (!state.over && state.player > 0).then(|| state.player as usize - 1)
    }

    fn with_scratch<T>(&self, f: impl FnOnce(&mut Scratch) -> T) -> T {
        let mut scratch = self
            .scratch
            .lock()
            .map(|mut pool| pool.pop())
            .ok()
            .flatten()
            .unwrap_or_default();
        let out = f(&mut scratch);
        if let Ok(mut pool) = self.scratch.lock() {
            pool.push(scratch);
        }
        out
    }

    /// Runs the move search from `state` in `mode`; the results are in `s`.
    fn search(&self, state: &State, s: &mut Scratch, mode: Mode) {
        s.reset(mode);
        if state.over {
            return;
        }
        let mut semi = std::mem::take(&mut s.semi);
        semi.clone_from(&state.semi);
        Search {
            a: &self.automaton,
            board: &self.board,
            bounds: &self.bounds,
            semi: &mut semi,
            s,
        }
        .moves(state.rule, state.cell);
        s.semi = semi;
    }

    /// Applies the steps of one move (no keeper completion).
    fn replay(&self, state: &mut State, steps: &[(u32, u32)]) {
        for &(t, cell) in steps {
            state.cell = cell;
            state.rule = t;
            match self.automaton.acts[t as usize] {
                Act::Off(p) => {
                    state.semi.set_piece(cell, p);
                }
                Act::Assign(v, e) => {
                    let value = state.semi.eval(&self.automaton.exprs[e as usize]);
                    if let Some(value) = value.filter(|x| (0..=self.bounds[v as usize]).contains(x)) {
                        state.semi.vars[v as usize] = value;
                    }
                }
                Act::Switch(p) => state.player = p,
                _ => {}
            }
        }
    }

    /// While the keeper is to move, applies its first legal move; ends the game
    /// when it has none.
    fn complete(&self, state: &mut State, s: &mut Scratch) {
        let mut applied = 0;
        while state.player == 0 && !state.over {
            self.search(state, s, Mode::First);
            if s.ends.is_empty() || applied >= MAX_KEEPER_MOVES {
                state.over = true;
                return;
            }
            let steps = std::mem::take(&mut s.moves);
            self.replay(state, &steps);
            s.moves = steps;
            applied += 1;
        }
    }

    /// The legal moves of the player to move, in the engine's order (none when
    /// the game is over); `moves` is cleared first.
    ///
    /// ```
    /// let game = ggpnet_rbg::Game::parse("#players = w(1) #pieces = e, x #variables =
    ///     #board = rectangle(u, d, l, r, [e, e, e]) #rules = ->w (l* + r*) {e} [x] ->w").unwrap();
    /// let mut moves = Vec::new();
    /// game.legal_moves(&game.initial_state(), &mut moves);
    /// assert_eq!(moves.len(), 3);
    /// ```
    pub fn legal_moves(&self, state: &State, moves: &mut Vec<Move>) {
        moves.clear();
        self.with_scratch(|s| {
            self.search(state, s, Mode::Collect);
            let mut start = 0;
            for &end in &s.ends {
                moves.push(Move {
                    steps: s.moves[start..end].to_vec(),
                });
                start = end;
            }
        });
    }

    /// Applies a legal move of `state`, then the keeper's forced moves.
    ///
    /// ```
    /// let game = ggpnet_rbg::Game::parse("#players = w(1) #pieces = e, x #variables =
    ///     #board = rectangle(u, d, l, r, [e]) #rules = ->w {e} [x] ->w").unwrap();
    /// let mut s = game.initial_state();
    /// let mut moves = Vec::new();
    /// game.legal_moves(&s, &mut moves);
    /// game.apply(&mut s, &moves[0]);
    /// assert_eq!(game.piece_at(&s, 0), 1);
    /// assert!(game.is_terminal(&s));
    /// ```
    pub fn apply(&self, state: &mut State, mv: &Move) {
        self.replay(state, &mv.steps);
        self.with_scratch(|s| self.complete(state, s));
    }

    /// Whether the play is over: the keeper had no legal move, or the player to
    /// move has none.
    ///
    /// ```
    /// let game = ggpnet_rbg::Game::parse("#players = w(1) #pieces = e #variables =
    ///     #board = rectangle(u, d, l, r, [e]) #rules = ->w {} ->w").unwrap();
    /// assert!(game.is_terminal(&game.initial_state()));
    /// ```
    pub fn is_terminal(&self, state: &State) -> bool {
        state.over
            || self.with_scratch(|s| {
                self.search(state, s, Mode::First);
                s.ends.is_empty()
            })
    }

    /// Every player's score: the value of the variable named after the player.
    ///
    /// ```
    /// let game = ggpnet_rbg::Game::parse("#players = w(100), b(100) #pieces = e #variables =
    ///     #board = rectangle(u, d, l, r, [e]) #rules = [$ w = 100, b = 0] ->>").unwrap();
    /// assert_eq!(game.scores(&game.initial_state()), vec![100, 0]);
    /// ```
    pub fn scores(&self, state: &State) -> Vec<i64> {
        state.semi.vars[..self.players.len()].to_vec()
    }

    /// The number of sequences of `depth` legal player moves from `state`
    /// (keeper moves applied in between, not counted); the last ply is counted
    /// without being applied.
    ///
    /// ```
    /// let game = ggpnet_rbg::Game::parse("#players = w(1) #pieces = e, x #variables =
    ///     #board = rectangle(u, d, l, r, [e, e, e]) #rules = (->w (l* + r*) {e} [x])*").unwrap();
    /// let s = game.initial_state();
    /// assert_eq!([game.perft(&s, 0), game.perft(&s, 2), game.perft(&s, 3), game.perft(&s, 4)], [1, 6, 6, 0]);
    /// ```
    pub fn perft(&self, state: &State, depth: usize) -> u64 {
        self.with_scratch(|s| self.perft_in(state, depth, s))
    }

    fn perft_in(&self, state: &State, depth: usize, s: &mut Scratch) -> u64 {
        if depth == 0 {
            return 1;
        }
        if depth == 1 {
            self.search(state, s, Mode::Count);
            return s.count;
        }
        self.search(state, s, Mode::Collect);
        let (moves, ends) = (std::mem::take(&mut s.moves), std::mem::take(&mut s.ends));
        let (mut total, mut start) = (0, 0);
        for &end in &ends {
            let mut next = state.clone();
            self.replay(&mut next, &moves[start..end]);
            self.complete(&mut next, s);
            total += self.perft_in(&next, depth - 1, s);
            start = end;
        }
        total
    }

    /// After a search of `state` in [`Mode::Draw`] that found moves: one of
    /// them drawn uniformly with `rng`, as the range of its pairs in
    /// `s.moves` (searched for again when there were too many to keep).
    fn draw(&self, state: &State, s: &mut Scratch, rng: &mut Rng) -> (usize, usize) {
        let mut k = rng.below(usize::try_from(s.count).unwrap_or(usize::MAX));
        if s.ends.len() as u64 != s.count {
            s.nth = k as u64;
            self.search(state, s, Mode::Nth);
            k = 0;
        }
        let start = if k == 0 { 0 } else { s.ends[k - 1] };
        (start, s.ends[k])
    }

    /// Plays uniformly random legal moves from `state` until the play is over,
    /// or `max_moves` moves have been played. A state's moves are kept to
    /// draw from up to [`crate::MAX_DRAW_STEPS`] (modifier, cell) pairs;
    /// beyond, they are counted and the one drawn is searched for again
    /// (the same draw, in bounded memory).
    ///
    /// ```
    /// let game = ggpnet_rbg::Game::parse("#players = w(1) #pieces = e, x #variables =
    ///     #board = rectangle(u, d, l, r, [e, e, e]) #rules = (->w (l* + r*) {e} [x])*").unwrap();
    /// let mut rng = ggpnet_rbg::Rng::new(7);
    /// let end = game.random_playout(&game.initial_state(), &mut rng, 100);
    /// assert_eq!((end.moves, end.ended), (3, true));
    /// let end = game.random_playout(&game.initial_state(), &mut rng, 2);
    /// assert_eq!((end.moves, end.ended), (2, false));
    /// ```
    pub fn random_playout(&self, state: &State, rng: &mut Rng, max_moves: usize) -> Playout {
        let mut state = state.clone();
        let mut moves = 0;
        let ended = self.with_scratch(|s| loop {
            self.search(&state, s, Mode::Draw);
            if s.count == 0 {
                return true;
            }
            if moves >= max_moves {
                return false;
            }
            let (start, end) = self.draw(&state, s, rng);
            self.replay(&mut state, &s.moves[start..end]);
            self.complete(&mut state, s);
            moves += 1;
        });
        Playout {
            moves,
            scores: self.scores(&state),
            ended,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    /// A description with players a and b, pieces e and x, variable v(5), a 3x1 board.
    fn game(rules: &str) -> Game {
        let text = format!(
            "#players = a(100), b(100) #pieces = e, x #variables = v(5)
             #board = rectangle(up, down, left, right, [e, e, e]) #rules = {rules}"
        );
        Game::parse(&text).unwrap_or_else(|e| panic!("{rules}: {e}"))
    }

    fn perfts(g: &Game, depth: usize) -> Vec<u64> {
        let s = g.initial_state();
        (1..=depth).map(|d| g.perft(&s, d)).collect()
    }

    const TIC_TAC_TOE: &str = "#players = x(100), o(100) #pieces = e, X, O #variables =
        #board = rectangle(up, down, left, right, [e, e, e] [e, e, e] [e, e, e])
        #any = (up* + down*)(left* + right*)
        #win(p) = any ({p} right {p} right {p} + {p} down {p} down {p}
                       + {p} down right {p} down right {p} + {p} down left {p} down left {p})
        #turn(me; opp; mine) = ->me any {e} [mine] ->>
            ({! win(mine)} + {? win(mine)} [$ me = 100, opp = 0] ->> {})
        #rules = [$ x = 50, o = 50] (turn(x; o; X) turn(o; x; O))*";

    #[test]
    fn a_state_with_more_moves_than_kept_draws_the_same_move() {
        // 3^7 x 10 moves of 309 pairs each: more pairs than a draw keeps.
        let text = "#players = a(100), b(100) #pieces = e, x #variables = v(5)
             #board = rectangle(u, d, l, r, [e, e, e]) #rules = ->a ([$ v = 1]) ^ 300 ((l* + r*) [x]) ^ 7
             ([$ a = 0] + [$ a = 1] + [$ a = 2] + [$ a = 3] + [$ a = 4] + [$ a = 5] + [$ a = 6]
              + [$ a = 7] + [$ a = 8] + [$ a = 9]) ->b";
        let g = Game::parse(text).unwrap();
        let start = g.initial_state();
        g.with_scratch(|s| {
            g.search(&start, s, Mode::Collect);
            let all = (std::mem::take(&mut s.moves), std::mem::take(&mut s.ends));
            assert_eq!(all.1.len(), 21_870);
            assert!(all.0.len() > crate::MAX_DRAW_STEPS);
            for seed in 0..4 {
                let k = Rng::new(seed).below(all.1.len());
                let expected = &all.0[if k == 0 { 0 } else { all.1[k - 1] }..all.1[k]];
                g.search(&start, s, Mode::Draw);
                assert_eq!(s.count, 21_870);
                assert!(s.moves.len() <= crate::MAX_DRAW_STEPS);
                let (from, to) = g.draw(&start, s, &mut Rng::new(seed));
                assert_eq!(&s.moves[from..to], expected, "seed {seed}");
            }
        });
        let end = g.random_playout(&start, &mut Rng::new(1), 10);
        assert_eq!((end.moves, end.ended), (1, true));
    }

    #[test]
    fn tic_tac_toe_has_the_known_perft() {
        let g = Game::parse(TIC_TAC_TOE).unwrap();
        let known = [9, 72, 504, 3024, 15120, 54720, 148176, 200448, 127872, 0];
        assert_eq!(perfts(&g, 10), known);
        assert_eq!(g.scores(&g.initial_state()), [50, 50]);
    }

    #[test]
    fn moves_are_occurrence_and_cell_sequences() {
        // Two occurrences with the same effect: two moves.
        assert_eq!(perfts(&game("->a ([x] + [x]) ->>"), 1), [2]);
        // Two paths to the same occurrence at the same cell: one move.
        assert_eq!(perfts(&game("->a (right right left + right) [x] ->>"), 1), [1]);
        // Shifts and tests are not part of a move; an empty on is never valid.
        assert_eq!(perfts(&game("->a (right + right {e}) ->>"), 1), [1]);
        assert_eq!(perfts(&game("->a {} ->>"), 1), [0]);
        // The same modifier again at the same cell is another step: v = 0..=5 before the switch.
        assert_eq!(perfts(&game("->a ([$ v = v + 1])* ->>"), 1), [6]);
    }

    #[test]
    fn the_cell_and_the_rules_position_carry_over() {
        assert_eq!(perfts(&game("(->a right [x])*"), 3), [1, 1, 0]);
        let g = game("(->a right [x] ->b left ->a)*");
        assert_eq!(perfts(&g, 4), [1, 1, 1, 1]);
        let mut s = g.initial_state();
        let mut moves = Vec::new();
        g.legal_moves(&s, &mut moves);
        g.apply(&mut s, &moves[0]);
        assert_eq!((g.current_player(&s), g.piece_at(&s, 1)), (Some(1), 1));
    }

    #[test]
    fn keeper_moves_are_applied_and_can_end_the_game() {
        let g = game("->a (right + right right) ->> [x] [$ a = 100] ->b ->> {}");
        assert_eq!(perfts(&g, 3), [2, 2, 0]);
        let mut s = g.initial_state();
        let mut moves = Vec::new();
        g.legal_moves(&s, &mut moves);
        let far = moves.iter().find(|m| m.steps()[0].1 == 2).unwrap();
        g.apply(&mut s, far);
        assert_eq!((g.piece_at(&s, 2), g.scores(&s)), (1, vec![100, 0]));
        assert_eq!(g.current_player(&s), Some(1));
        g.legal_moves(&s, &mut moves);
        g.apply(&mut s, &moves[0]);
        assert!(g.is_terminal(&s));
        assert_eq!(g.current_player(&s), None);
        // A player without moves ends the game too; no implicit pass.
        let g = game("->a {x} ->b");
        assert!(g.is_terminal(&g.initial_state()));
        assert_eq!(g.current_player(&g.initial_state()), Some(0));
    }

    #[test]
    fn assignments_and_comparisons() {
        // Out of bounds and division by zero are invalid.
        assert_eq!(
            perfts(
                &game("->a ([$ v = 5] + [$ v = 6] + [$ v = 1 / 0] + [$ v = 0 - 1]) ->>"),
                1
            ),
            [1]
        );
        // Precedence, left associativity, piece counts.
        let g = game("[$ v = 1 + 2 * 3 - 8 / 4 - 1] ->a");
        assert_eq!(g.variable(&g.initial_state(), 2), 4);
        let g = game("[$ v = (1 + 2) * x + e] ->a");
        assert_eq!(g.variable(&g.initial_state(), 2), 3);
        for (cmp, holds) in [
            ("<", false),
            ("<=", true),
            ("==", true),
            ("!=", false),
            (">", false),
            (">=", true),
        ] {
            let g = game(&format!("->a {{$ e {cmp} 3}} ->>"));
            assert_eq!(g.perft(&g.initial_state(), 1), u64::from(holds), "{cmp}");
        }
    }

    #[test]
    fn patterns_search_with_modifiers_and_undo_them() {
        // The pattern applies [x] twice and counts; nothing stays applied.
        let g = game("->a {? [x] right [x] {$ x == 2}} {$ x == 0} ->>");
        assert_eq!(perfts(&g, 1), [1]);
        let g = game("->a {! (right)* {x}} ->>");
        assert_eq!(perfts(&g, 1), [1]);
        let g = game("->a {? right right right} ->>");
        assert_eq!(perfts(&g, 1), [0]);
        // Nested patterns.
        let g = game("->a {? right {! left {x}}} ->>");
        assert_eq!(perfts(&g, 1), [1]);
    }

    #[test]
    fn boards_explicit_hexagon_cuboid() {
        let text = "#players = a(1) #pieces = e, x #variables =
            #board = v1 [e] {next: v2} v2 [x] {next: v1, self: v2}
            #rules = ->a next {x} self self [e] ->a";
        let g = Game::parse(text).unwrap();
        assert_eq!((g.cells(), g.cell_name(1)), (2, "v2"));
        assert_eq!(perfts(&g, 2), [1, 0]);
        let text = "#players = a(1) #pieces = e #variables =
            #board = hexagon(nw, ne, e1, se, sw, w, [e, e] [e, e, e] [e, e])
            #rules = ->a (nw + ne + e1 + se + sw + w)* [e] ->a";
        assert_eq!(
            Game::parse(text)
                .unwrap()
                .perft(&Game::parse(text).unwrap().initial_state(), 1),
            7
        );
        let text = "#players = a(1) #pieces = e #variables =
            #board = cuboid(u, d, l, r, f, b, [[e, e] [e, e]] [[e, e] [e, e]])
            #rules = ->a (d + r + f)* [e] ->a";
        assert_eq!(
            Game::parse(text)
                .unwrap()
                .perft(&Game::parse(text).unwrap().initial_state(), 1),
            8
        );
    }

    #[test]
    fn parse_errors() {
        let bad = |rules: &str| {
            let text = format!(
                "#players = a(1) #pieces = e #variables = #board = rectangle(u, d, l, r, [e]) #rules = {rules}"
            );
            Game::parse(&text).unwrap_err().kind()
        };
        assert_eq!(bad("->a ("), ErrorKind::Syntax);
        assert_eq!(bad("->a {$ 1 = 1}"), ErrorKind::Syntax);
        assert_eq!(bad("->a [$ e = 1]"), ErrorKind::Undeclared);
        assert_eq!(bad("->a {? [e]* }"), ErrorKind::IllFormed);
        assert_eq!(bad("->a [e, e, d]"), ErrorKind::Undeclared);
        let text = "#players = a(1) #pieces = e #variables = #board = rectangle(u, d, l, r, [e] [e, e]) #rules = ->a";
        assert_eq!(Game::parse(text).unwrap_err().kind(), ErrorKind::Board);
        let text = "#players = a(1) #pieces = e #variables = #board = v [e] {u: w} #rules = ->a";
        assert_eq!(Game::parse(text).unwrap_err().kind(), ErrorKind::Board);
        assert_eq!(Game::parse("x #players").unwrap_err().kind(), ErrorKind::Syntax);
    }
}
