//! The translation to GDL: [`to_gdl`].
//!
//! **Granularity: one GDL step per modifier.** An RBG move is a sequence of
//! (modifier occurrence, cell) pairs ending with a switch; the translation
//! makes each pair one GDL step of the player to move (`(m T X)` for an off or
//! an assignment, `(s T X)` for the closing switch, `T` the automaton state
//! of the occurrence, `X` the cell), the other players playing `noop`. One GDL
//! step per whole move would need, in the legality rules, the board after
//! every prefix of every move (a relation per prefix of modifiers), which no
//! grounder can afford on a real game; one step per modifier keeps the
//! board of the partial move in the state, so every test of the next step
//! reads the true board, and grounding grows with automaton states × cells.
//! The cost: a move of `k` modifiers takes `k + 1` GDL steps, and the
//! keeper's moves take steps where every role plays `noop`, so GDL perft and
//! playout lengths count steps; an RBG move ends exactly at an `(s T X)` step
//! of a player, which is how `ggpnet perft` counts RBG moves on the translation.
//!
//! **No partial move without a completion.** A step is legal only when the
//! move can still reach a switch from it: `(fin Q X)`, a backward
//! reachability over the current state. That is exact when the tests and
//! assignments after a modifier, up to the end of its move, never read what
//! that modifier or a later one of the same move writes (a cell it sets, any
//! cell when they read the whole board or count pieces, a variable it
//! assigns). The translator checks this for every modifier occurrence (cell
//! by cell for `{...}` tests after offs); where it fails, a modifier whose
//! rest of move reaches a switch whatever its tests give (hex's and gomoku's
//! keeper: `[piece]`, then `{! win}` or `{? win} [$ me = 100] ->> {}`) needs
//! no lookahead (`tot`). A game it cannot prove either for is refused, with
//! [`ErrorKind::Untranslatable`] at the modifier's line and column: such a
//! game (chess's "not in check after the move", a draughts capture chain,
//! reversi's flips) would need the board after the pending modifiers in the
//! lookahead, a relation per pending modifier and cell that no grounder
//! affords on these boards. Modifiers inside patterns are refused the same way.
//!
//! **State.** `(cell X P)`, `(var V N)` for every variable (the players' first),
//! `(at Q X)` (the automaton state after the last action and the current
//! cell, which carry over to the next move) and `(control N)` (0 the keeper,
//! `i + 1` player `i`). Cells, pieces, variables and directions are numbers
//! (their names are listed in a comment at the top). The keeper's steps are
//! deterministic: the least legal `(T, X)` (state first, then cell), which is
//! a complete keeper move like the one the direct engine applies; where the
//! keeper has several, the two may pick different ones (the shared games'
//! keepers never had a choice that mattered). A state where the one to move
//! has no legal step is terminal (a player without a move, or a keeper
//! without one), as in RBG; `goal` is the player's variable.
//!
//! **Arithmetic.** An expression's values are enumerated statically (a
//! variable `0..=bound`, a piece count `0..=cells`, an operation over the
//! pairs of its operands' values) into fact tables; more than
//! [`MAX_VALUES`] values or pairs is [`ErrorKind::RulesTooLarge`].

mod check;

use crate::automaton::{Act, Automaton};
use crate::error::{ErrorKind, Pos, RbgError};
use crate::game::Game;
use crate::syntax::{Cmp, Expr};
use check::rest_states;
pub use check::MAX_CHECK_WORK;
use std::collections::BTreeSet;
use std::fmt::Write;

/// The most values an expression, or pairs of values an operation, may have.
pub const MAX_VALUES: usize = 100_000;
/// The longest translation, in bytes (256 MiB).
pub const MAX_GDL_BYTES: usize = 1 << 28;

/// Names GDL gives a meaning to; a player may not be called so.
pub(crate) const RESERVED: [&str; 15] = [
    "role", "init", "true", "next", "legal", "does", "goal", "terminal", "distinct", "not", "or", "base",
    "input", "sees", "random",
];

/// The GDL (KIF) text of `game`, or why it cannot be translated faithfully.
///
/// ```
/// let game = ggpnet_rbg::Game::parse("#players = a(100), b(100) #pieces = e, x #variables =
///     #board = rectangle(u, d, l, r, [e, e]) #rules = [$ a = 50, b = 50] (->a (l* + r*) {e} [x] ->b ->>)*").unwrap();
/// let gdl = ggpnet_rbg::to_gdl(&game).unwrap();
/// assert!(gdl.contains("(role a)") && gdl.contains("(init (cell 1 0))"));
/// ```
pub fn to_gdl(game: &Game) -> Result<String, RbgError> {
    let a = &game.automaton;
    let levels = levels(a);
    let total = check::check(game, &levels)?;
    let mut w = Writer {
        game,
        out: String::new(),
        nodes: 0,
        counted: vec![false; game.pieces().len()],
        levels,
        total,
    };
    w.write()?;
    Ok(w.out)
}

/// The pattern nesting level of every state: 0 for the rules, `k` inside a
/// pattern nested `k` deep (states of one expression are linked only to each other).
fn levels(a: &Automaton) -> Vec<usize> {
    let mut level = vec![0; a.acts.len()];
    let mut seen = vec![false; a.acts.len()];
    let mut expr_level = vec![0; a.starts.len()];
    for (r, &start) in a.starts.iter().enumerate() {
        let mut stack = vec![start];
        level[start as usize] = expr_level[r];
        while let Some(s) = stack.pop() {
            if let Act::Pattern(inner, _) = a.acts[s as usize] {
                expr_level[inner as usize] = expr_level[r] + 1;
            }
            for &t in a.next(s) {
                if !std::mem::replace(&mut seen[t as usize], true) {
                    level[t as usize] = expr_level[r];
                    stack.push(t);
                }
            }
        }
    }
    level
}

/// A number as a GDL constant (`n5` for -5).
fn num(n: i64) -> String {
    if n < 0 {
        format!("n{}", n.unsigned_abs())
    } else {
        n.to_string()
    }
}

/// The writer of one translation.
struct Writer<'a> {
    game: &'a Game,
    out: String,
    /// Expression nodes numbered so far.
    nodes: usize,
    /// The pieces some expression counts.
    counted: Vec<bool>,
    levels: Vec<usize>,
    /// The modifiers whose move completes whatever its tests give.
    total: Vec<u32>,
}

/// The generic rules: the closure over shifts and tests from `(at Q X)`, the
/// lookahead `fin`, legality, the keeper's choice and the next state.
const RULES: &str = "
;; The search: from the state's position over shifts and tests; the
;; modifiers and switches reached are the options.
(<= (reach ?q ?x) (true (at ?q ?x)))
(<= (reach ?t ?y) (reach ?q ?x) (tsh ?q ?t ?d) (nb ?x ?d ?y))
(<= (reach ?t ?x) (reach ?q ?x) (ton ?q ?t ?p) (true (cell ?x ?p)))
(<= (reach ?t ?x) (reach ?q ?x) (tcm ?q ?t) (cmp ?t))
(<= (opt ?t ?x) (reach ?q ?x) (tmo ?q ?t))
(<= (opt ?t ?x) (reach ?q ?x) (tsw ?q ?t))

;; Lookahead: from (Q, X) the move can reach a switch.
(<= (fin ?t ?x) (isw ?t) (cellf ?x))
(<= (fin ?t ?x) (tot ?t) (cellf ?x))
(<= (fin ?q ?x) (inl ?q) (tsh ?q ?t ?d) (nb ?x ?d ?y) (fin ?t ?y))
(<= (fin ?q ?x) (inl ?q) (ton ?q ?t ?p) (true (cell ?x ?p)) (fin ?t ?x))
(<= (fin ?q ?x) (inl ?q) (tcm ?q ?t) (cmp ?t) (fin ?t ?x))
(<= (fin ?q ?x) (inl ?q) (tmo ?q ?t) (good ?t) (fin ?t ?x))
(<= (fin ?q ?x) (inl ?q) (tsw ?q ?t) (cellf ?x))
(<= (good ?t) (aval ?t ?z))

(<= (opt3 ?t ?x) (opt ?t ?x) (good ?t) (fin ?t ?x))
(<= hasopt (opt3 ?t ?x))
(<= terminal (not hasopt))
(<= (mover ?r) (true (control ?n)) (pnum ?r ?n))
(<= (legal ?r (m ?t ?x)) (mover ?r) (opt3 ?t ?x) (ismod ?t))
(<= (legal ?r (s ?t ?x)) (mover ?r) (opt3 ?t ?x) (isw ?t))
(<= (legal ?r noop) (role ?r) (not (mover ?r)))
(<= (goal ?r ?z) (pvar ?r ?i) (true (var ?i ?z)))

;; The keeper takes its least option: state first, then cell.
(<= (khas ?t) (kst ?t) (opt3 ?t ?x))
(<= (kbelow ?t) (snext ?s ?t) (khas ?s))
(<= (kbelow ?t) (snext ?s ?t) (kbelow ?s))
(<= (kbelowx ?t ?x) (kst ?t) (cnext ?w ?x) (opt3 ?t ?w))
(<= (kbelowx ?t ?x) (kst ?t) (cnext ?w ?x) (kbelowx ?t ?w))
(<= (chosen ?t ?x) (true (control 0)) (kst ?t) (opt3 ?t ?x) (not (kbelow ?t)) (not (kbelowx ?t ?x)))
(<= (chosen ?t ?x) (does ?r (m ?t ?x)))
(<= (chosen ?t ?x) (does ?r (s ?t ?x)))

(<= (next (at ?t ?x)) (chosen ?t ?x))
(<= (written ?x) (chosen ?t ?x) (offp ?t ?p))
(<= (next (cell ?x ?p)) (chosen ?t ?x) (offp ?t ?p))
(<= (next (cell ?x ?p)) (true (cell ?x ?p)) (not (written ?x)))
(<= (assigned ?v) (chosen ?t ?x) (asgv ?t ?v))
(<= (next (var ?v ?z)) (chosen ?t ?x) (asgv ?t ?v) (aval ?t ?z))
(<= (next (var ?v ?z)) (true (var ?v ?z)) (not (assigned ?v)))
(<= switched (chosen ?t ?x) (isw ?t))
(<= (next (control ?n)) (chosen ?t ?x) (swp ?t ?n))
(<= (next (control ?n)) (true (control ?n)) (not switched))
";

/// The search and the lookahead through the rules' patterns.
const PATTERN_USE: &str = "
(<= (reach ?t ?x) (reach ?q ?x) (tpp ?q ?t ?r) (pt1 ?r ?x))
(<= (reach ?t ?x) (reach ?q ?x) (tpn ?q ?t ?r) (not (pt1 ?r ?x)))
(<= (fin ?q ?x) (inl ?q) (tpp ?q ?t ?r) (pt1 ?r ?x) (fin ?t ?x))
(<= (fin ?q ?x) (inl ?q) (tpn ?q ?t ?r) (fin ?t ?x) (not (pt1 ?r ?x)))
";

/// Rules of the patterns of nesting level `k` (`{k}`) and their inner ones (`{k1}`).
const PATTERN_RULES: &str = "
(<= (pa{k} ?q ?x) (pacc{k} ?q) (cellf ?x))
(<= (pa{k} ?q ?x) (tsh ?q ?t ?d) (nb ?x ?d ?y) (pa{k} ?t ?y))
(<= (pa{k} ?q ?x) (ton ?q ?t ?p) (true (cell ?x ?p)) (pa{k} ?t ?x))
(<= (pa{k} ?q ?x) (tcm ?q ?t) (cmp ?t) (pa{k} ?t ?x))
(<= (pa{k} ?q ?x) (tpp ?q ?t ?r) (pt{k1} ?r ?x) (pa{k} ?t ?x))
(<= (pa{k} ?q ?x) (tpn ?q ?t ?r) (pa{k} ?t ?x) (not (pt{k1} ?r ?x)))
(<= (pt{k} ?r ?x) (pst{k} ?r ?q) (pa{k} ?q ?x))
";

/// Counting pieces cell by cell.
const COUNT_RULES: &str = "
(<= (cnt ?p 0 1) (counted ?p) (true (cell 0 ?p)))
(<= (cnt ?p 0 0) (counted ?p) (not (true (cell 0 ?p))))
(<= (cnt ?p ?j ?m) (cnext ?i ?j) (cnt ?p ?i ?n) (true (cell ?j ?p)) (succ ?n ?m))
(<= (cnt ?p ?j ?n) (cnext ?i ?j) (cnt ?p ?i ?n) (not (true (cell ?j ?p))))
";

impl Writer<'_> {
    /// Writes the whole translation (writing into a String cannot fail).
    fn write(&mut self) -> Result<(), RbgError> {
        let _ = self.header();
        let _ = self.initial();
        let _ = self.board();
        self.room()?;
        let _ = self.transitions();
        self.room()?;
        let _ = self.kinds();
        let _ = self.keeper();
        self.room()?;
        self.expressions()?;
        self.out.push_str(RULES);
        let depth = self.game.automaton.pattern_depth;
        if depth > 0 {
            self.out.push_str(PATTERN_USE);
        }
        for k in 1..=depth {
            let rules = PATTERN_RULES
                .replace("{k1}", &(k + 1).to_string())
                .replace("{k}", &k.to_string());
            self.out.push_str(&rules);
        }
        if self.counted.iter().any(|&c| c) {
            let _ = self.counts();
        }
        Ok(())
    }

    /// Refuses a translation longer than [`MAX_GDL_BYTES`].
    fn room(&self) -> Result<(), RbgError> {
        if self.out.len() <= MAX_GDL_BYTES {
            return Ok(());
        }
        let reason = format!("the GDL translation would be longer than {MAX_GDL_BYTES} bytes");
        Err(RbgError::new(
            ErrorKind::RulesTooLarge,
            Pos { line: 1, column: 1 },
            reason,
        ))
    }

    fn header(&mut self) -> std::fmt::Result {
        let g = self.game;
        let list = |names: &[String]| -> String {
            let parts: Vec<String> = names
                .iter()
                .enumerate()
                .map(|(i, n)| format!("{i} {n}"))
                .collect();
            parts.join(", ")
        };
        writeln!(
            self.out,
            ";; Translated from Regular Boardgames by ggpnet rbg2gdl."
        )?;
        writeln!(self.out, ";; pieces: {}", list(g.pieces()))?;
        writeln!(self.out, ";; variables: {}", list(g.variables()))?;
        writeln!(self.out, ";; directions: {}", list(&g.board.dirs))?;
        let cells: Vec<String> = (0..g.cells()).map(|c| g.cell_name(c).to_owned()).collect();
        writeln!(self.out, ";; cells: {}\n", list(&cells))?;
        for (i, p) in g.players().iter().enumerate() {
            writeln!(self.out, "(role {p})\n(pnum {p} {})\n(pvar {p} {i})", i + 1)?;
        }
        Ok(())
    }

    fn initial(&mut self) -> std::fmt::Result {
        let g = self.game;
        let start = g.automaton.starts[0];
        writeln!(self.out, "(init (control 0))\n(init (at {start} 0))")?;
        for c in 0..g.cells() {
            writeln!(self.out, "(init (cell {c} {}))", g.board.initial[c])?;
        }
        for v in 0..g.variables().len() {
            writeln!(self.out, "(init (var {v} 0))")?;
        }
        Ok(())
    }

    fn board(&mut self) -> std::fmt::Result {
        let b = &self.game.board;
        let dirs = b.dirs.len();
        for c in 0..b.cells() {
            writeln!(self.out, "(cellf {c})")?;
            if c > 0 {
                writeln!(self.out, "(cnext {} {c})", c - 1)?;
            }
            for d in 0..dirs {
                let to = b.next[c * dirs + d];
                if to != crate::board::NONE {
                    writeln!(self.out, "(nb {c} {d} {to})")?;
                }
            }
        }
        Ok(())
    }

    /// A fact for every transition, by the action of its target.
    fn transitions(&mut self) -> std::fmt::Result {
        let game = self.game;
        let a = &game.automaton;
        for q in 0..a.acts.len() as u32 {
            if self.out.len() > MAX_GDL_BYTES {
                return Err(std::fmt::Error);
            }
            for &t in a.next(q) {
                match a.acts[t as usize] {
                    Act::Shift(d) => writeln!(self.out, "(tsh {q} {t} {d})")?,
                    Act::On(m) => {
                        for p in 0..self.game.pieces().len() {
                            if a.on[m as usize + p] {
                                writeln!(self.out, "(ton {q} {t} {p})")?;
                            }
                        }
                    }
                    Act::Compare(..) => writeln!(self.out, "(tcm {q} {t})")?,
                    Act::Pattern(r, true) => writeln!(self.out, "(tpp {q} {t} {r})")?,
                    Act::Pattern(r, false) => writeln!(self.out, "(tpn {q} {t} {r})")?,
                    Act::Off(_) | Act::Assign(..) => writeln!(self.out, "(tmo {q} {t})")?,
                    Act::Switch(_) => writeln!(self.out, "(tsw {q} {t})")?,
                    Act::Start => {}
                }
            }
        }
        Ok(())
    }

    /// The modifiers' and switches' facts, the lookahead's states, the patterns' starts and accepting states.
    fn kinds(&mut self) -> std::fmt::Result {
        let game = self.game;
        let a = &game.automaton;
        let mut lookahead = BTreeSet::new();
        for (t, act) in a.acts.iter().enumerate() {
            match *act {
                Act::Off(p) => writeln!(self.out, "(ismod {t})\n(good {t})\n(offp {t} {p})")?,
                Act::Assign(v, _) => writeln!(self.out, "(ismod {t})\n(asgv {t} {v})")?,
                Act::Switch(n) => writeln!(self.out, "(isw {t})\n(good {t})\n(swp {t} {n})")?,
                _ => continue,
            }
            if !matches!(act, Act::Switch(_)) && self.levels[t] == 0 {
                lookahead.insert(t as u32);
                lookahead.extend(rest_states(a, t as u32));
            }
        }
        for s in lookahead {
            writeln!(self.out, "(inl {s})")?;
        }
        for t in &self.total {
            writeln!(self.out, "(tot {t})")?;
        }
        for (r, &start) in a.starts.iter().enumerate().skip(1) {
            let k = self.levels[start as usize];
            writeln!(self.out, "(pst{k} {r} {start})")?;
        }
        for (s, &accept) in a.accept.iter().enumerate() {
            if accept && self.levels[s] > 0 {
                writeln!(self.out, "(pacc{} {s})", self.levels[s])?;
            }
        }
        Ok(())
    }

    /// The keeper's option states, chained in order for its choice.
    fn keeper(&mut self) -> std::fmt::Result {
        let game = self.game;
        let a = &game.automaton;
        let mut froms = vec![a.starts[0]];
        froms.extend((0..a.acts.len() as u32).filter(|&t| a.acts[t as usize] == Act::Switch(0)));
        let mut options = BTreeSet::new();
        for from in froms {
            options.extend(
                rest_states(a, from).into_iter().filter(|&s| {
                    matches!(a.acts[s as usize], Act::Off(_) | Act::Assign(..) | Act::Switch(_))
                }),
            );
        }
        let mut before = None;
        for t in options {
            writeln!(self.out, "(kst {t})")?;
            if let Some(s) = before {
                writeln!(self.out, "(snext {s} {t})")?;
            }
            before = Some(t);
        }
        Ok(())
    }

    /// The tables of every comparison and assignment.
    fn expressions(&mut self) -> Result<(), RbgError> {
        let game = self.game;
        let a = &game.automaton;
        for (t, act) in a.acts.iter().enumerate() {
            self.room()?;
            let pos = a.pos[t];
            match *act {
                Act::Compare(l, op, r) => {
                    let (ln, lv) = self.node(&a.exprs[l as usize], pos)?;
                    let (rn, rv) = self.node(&a.exprs[r as usize], pos)?;
                    pairs(&lv, &rv, pos)?;
                    let _ = writeln!(
                        self.out,
                        "(<= (cmp {t}) (ev {ln} ?x) (ev {rn} ?y) (cp {t} ?x ?y))"
                    );
                    for x in &lv {
                        for y in rv.iter().filter(|y| holds(*x, op, **y)) {
                            let _ = writeln!(self.out, "(cp {t} {} {})", num(*x), num(*y));
                        }
                    }
                }
                Act::Assign(v, e) if self.levels[t] == 0 => {
                    let (en, ev) = self.node(&a.exprs[e as usize], pos)?;
                    let _ = writeln!(self.out, "(<= (aval {t} ?z) (ev {en} ?z) (aok {t} ?z))");
                    let bound = self.game.bounds[v as usize];
                    for z in ev.iter().filter(|z| (0..=bound).contains(*z)) {
                        let _ = writeln!(self.out, "(aok {t} {z})");
                    }
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// Writes the rules of an expression node (of the action at `pos`); its
    /// number and its possible values.
    fn node(&mut self, e: &Expr, pos: Pos) -> Result<(usize, Vec<i64>), RbgError> {
        let id = self.nodes;
        self.nodes += 1;
        let range = |top: i64| -> Result<Vec<i64>, RbgError> {
            match usize::try_from(top) {
                Ok(n) if n < MAX_VALUES => Ok((0..=top).collect()),
                _ => Err(too_many(pos)),
            }
        };
        let values = match e {
            Expr::Num(n) => {
                let _ = writeln!(self.out, "(ev {id} {})", num(*n));
                vec![*n]
            }
            Expr::Var(v) => {
                let _ = writeln!(self.out, "(<= (ev {id} ?n) (true (var {v} ?n)))");
                range(self.game.bounds[*v as usize])?
            }
            Expr::Count(p) => {
                self.counted[*p as usize] = true;
                let _ = writeln!(self.out, "(<= (ev {id} ?n) (count {p} ?n))");
                range(self.game.cells() as i64)?
            }
            Expr::Bin(op, l, r) => {
                let (ln, lv) = self.node(l, pos)?;
                let (rn, rv) = self.node(r, pos)?;
                pairs(&lv, &rv, pos)?;
                let _ = writeln!(
                    self.out,
                    "(<= (ev {id} ?z) (ev {ln} ?x) (ev {rn} ?y) (ar {id} ?x ?y ?z))"
                );
                let mut values = BTreeSet::new();
                for x in &lv {
                    for y in &rv {
                        if let Some(z) = apply(*op, *x, *y) {
                            let _ = writeln!(self.out, "(ar {id} {} {} {})", num(*x), num(*y), num(z));
                            values.insert(z);
                        }
                    }
                }
                values.into_iter().collect()
            }
        };
        Ok((id, values))
    }

    fn counts(&mut self) -> std::fmt::Result {
        let cells = self.game.cells();
        for (p, _) in self.counted.iter().enumerate().filter(|(_, &c)| c) {
            writeln!(
                self.out,
                "(counted {p})\n(<= (count {p} ?n) (cnt {p} {} ?n))",
                cells - 1
            )?;
        }
        for n in 0..cells {
            writeln!(self.out, "(succ {n} {})", n + 1)?;
        }
        self.out.push_str(COUNT_RULES);
        Ok(())
    }
}

fn too_many(pos: Pos) -> RbgError {
    let reason =
        format!("an expression with more than {MAX_VALUES} values (or pairs of values) to tabulate in GDL");
    RbgError::new(ErrorKind::RulesTooLarge, pos, reason)
}

/// Refuses tabulating more than [`MAX_VALUES`] pairs.
fn pairs(l: &[i64], r: &[i64], pos: Pos) -> Result<(), RbgError> {
    match l.len().checked_mul(r.len()) {
        Some(n) if n <= MAX_VALUES => Ok(()),
        _ => Err(too_many(pos)),
    }
}

fn holds(x: i64, op: Cmp, y: i64) -> bool {
    match op {
        Cmp::Lt => x < y,
        Cmp::Le => x <= y,
        Cmp::Eq => x == y,
        Cmp::Ne => x != y,
        Cmp::Gt => x > y,
        Cmp::Ge => x >= y,
    }
}

fn apply(op: char, x: i64, y: i64) -> Option<i64> {
    match op {
        '+' => x.checked_add(y),
        '-' => x.checked_sub(y),
        '*' => x.checked_mul(y),
        _ => x.checked_div(y),
    }
}
