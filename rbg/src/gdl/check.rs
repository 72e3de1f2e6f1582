//! Whether the translation is faithful: for every modifier occurrence of the
//! rules, the lookahead `fin` (evaluated on the state before the modifier)
//! must decide exactly whether its move can be completed. That holds when
//! the rest of the move reads nothing the modifier or a later one of the move
//! writes (`conflict`); failing that, when the rest of the move reaches a
//! switch whatever its tests give (`total`: the tests read a board that
//! only the modifier itself changed, so equal patterns at a cell agree, and
//! every valuation of at most `MAX_ATOMS` tests leaves a way to a switch),
//! the modifier needs no lookahead at all (a `tot` fact). Otherwise the game
//! is refused with the modifier's place.

use super::RESERVED;
use crate::automaton::{Act, Automaton};
use crate::error::{ErrorKind, Pos, RbgError};
use crate::game::Game;
use crate::syntax::Expr;
use std::collections::{BTreeSet, HashMap};

/// The most (state, cell) visits the checks may make.
pub const MAX_CHECK_WORK: usize = 1 << 24;
/// The most distinct tests the totality check enumerates the values of.
const MAX_ATOMS: usize = 10;

/// Checks the names, the patterns and every modifier; the modifiers whose
/// move completes whatever the tests give (no lookahead needed).
pub(super) fn check(game: &Game, levels: &[usize]) -> Result<Vec<u32>, RbgError> {
    check_names(game)?;
    check_patterns(&game.automaton, levels)?;
    let a = &game.automaton;
    let mut work = 0usize;
    let mut total_ones = Vec::new();
    let mut signatures = Signatures {
        pieces: game.pieces().len(),
        ids: HashMap::new(),
        of: HashMap::new(),
    };
    for t in 0..a.acts.len() as u32 {
        if levels[t as usize] > 0 || !matches!(a.acts[t as usize], Act::Off(_) | Act::Assign(..)) {
            continue;
        }
        let Some(what) = conflict(game, t, true, &mut work)? else {
            continue;
        };
        if conflict(game, t, false, &mut work)?.is_none() && total(game, t, &mut signatures, &mut work)? {
            total_ones.push(t);
            continue;
        }
        return Err(untranslatable(
            a.pos[t as usize],
            format!("the rest of this modifier's move tests {what}; the GDL translation decides whether a partial move can be completed on the current state, which is exact only without such tests (or when every outcome of the tests completes it)"),
        ));
    }
    Ok(total_ones)
}

fn untranslatable(pos: Pos, reason: impl Into<String>) -> RbgError {
    RbgError::new(ErrorKind::Untranslatable, pos, reason)
}

/// Players must be names GDL leaves free.
fn check_names(game: &Game) -> Result<(), RbgError> {
    match game
        .players()
        .iter()
        .find(|p| RESERVED.contains(&p.to_ascii_lowercase().as_str()))
    {
        Some(p) => Err(untranslatable(
            Pos { line: 1, column: 1 },
            format!("the player '{p}' has a name GDL reserves"),
        )),
        None => Ok(()),
    }
}

/// Refuses modifiers inside patterns (their temporary effects are not translated).
fn check_patterns(a: &Automaton, levels: &[usize]) -> Result<(), RbgError> {
    for (s, act) in a.acts.iter().enumerate() {
        if levels[s] > 0 && matches!(act, Act::Off(_) | Act::Assign(..)) {
            return Err(untranslatable(
                a.pos[s],
                "a modifier inside a pattern: the GDL translation evaluates patterns without changing the state",
            ));
        }
    }
    Ok(())
}

/// What some tests read.
#[derive(Clone, Default)]
struct Reads {
    /// Cells by `{...}` at the cell reached (checked cell by cell).
    ons: bool,
    /// Any cell (a pattern with `{...}`).
    board: bool,
    /// Piece counts.
    counts: bool,
    vars: BTreeSet<u16>,
}

impl Reads {
    fn add(&mut self, other: &Reads) {
        self.ons |= other.ons;
        self.board |= other.board;
        self.counts |= other.counts;
        self.vars.extend(&other.vars);
    }

    fn expr(&mut self, e: &Expr) {
        match e {
            Expr::Num(_) => {}
            Expr::Var(v) => {
                self.vars.insert(*v);
            }
            Expr::Count(_) => self.counts = true,
            Expr::Bin(_, l, r) => {
                self.expr(l);
                self.expr(r);
            }
        }
    }
}

/// What the pattern expression `r` reads, nested patterns included (its `{...}` count as the whole board).
fn pattern_reads(a: &Automaton, r: u32) -> Reads {
    let mut reads = Reads::default();
    let mut seen = BTreeSet::new();
    let mut stack = vec![a.starts[r as usize]];
    while let Some(s) = stack.pop() {
        for &t in a.next(s) {
            if seen.insert(t) {
                reads.add(&act_reads(a, t));
                stack.push(t);
            }
        }
    }
    if reads.ons {
        reads.board = true;
    }
    reads
}

/// What entering state `t` reads.
fn act_reads(a: &Automaton, t: u32) -> Reads {
    let mut reads = Reads::default();
    match a.acts[t as usize] {
        Act::On(_) => reads.ons = true,
        Act::Compare(l, _, r) => {
            reads.expr(&a.exprs[l as usize]);
            reads.expr(&a.exprs[r as usize]);
        }
        Act::Assign(_, e) => reads.expr(&a.exprs[e as usize]),
        Act::Pattern(r, _) => reads = pattern_reads(a, r),
        _ => {}
    }
    reads
}

/// The states after the modifier `t` up to the end of its move (switches
/// included, not followed), with what they read and write.
struct Rest {
    reads: Reads,
    offs: bool,
    vars: BTreeSet<u16>,
}

/// The rest of the move after `t`; with `own`, what `t` writes counts too.
fn rest_of_move(a: &Automaton, t: u32, own: bool) -> Rest {
    let mut rest = Rest {
        reads: Reads::default(),
        offs: own && matches!(a.acts[t as usize], Act::Off(_)),
        vars: BTreeSet::new(),
    };
    if let (true, Act::Assign(v, _)) = (own, a.acts[t as usize]) {
        rest.vars.insert(v);
    }
    let mut seen = BTreeSet::new();
    let mut stack = vec![t];
    while let Some(s) = stack.pop() {
        for &u in a.next(s) {
            if !seen.insert(u) {
                continue;
            }
            match a.acts[u as usize] {
                Act::Switch(_) => continue,
                Act::Off(_) => rest.offs = true,
                Act::Assign(v, _) => {
                    rest.vars.insert(v);
                }
                _ => {}
            }
            rest.reads.add(&act_reads(a, u));
            stack.push(u);
        }
    }
    rest
}

/// What the rest of the move after the modifier `t` tests that it, or `t`
/// itself when `own`, writes (`None`: nothing).
fn conflict(game: &Game, t: u32, own: bool, work: &mut usize) -> Result<Option<&'static str>, RbgError> {
    let rest = rest_of_move(&game.automaton, t, own);
    Ok(if rest.vars.iter().any(|v| rest.reads.vars.contains(v)) {
        Some("a variable this modifier (or a later one of its move) assigns")
    } else if rest.offs && (rest.reads.board || rest.reads.counts) {
        Some("the board or piece counts, which this modifier (or a later one of its move) changes")
    } else if rest.offs && rest.reads.ons && ons_read_writes(game, t, own, work)? {
        Some("a cell this modifier (or a later one of its move) sets")
    } else {
        None
    })
}

/// Whether, from the modifier `t` at some cell, the rest of its move may
/// test with `{...}` a cell an off of that rest (or `t`) sets: positions
/// explored as if every test passed.
fn ons_read_writes(game: &Game, t: u32, own: bool, work: &mut usize) -> Result<bool, RbgError> {
    let (a, board) = (&game.automaton, &game.board);
    let (cells, dirs) = (board.cells(), board.dirs.len());
    let mut seen = vec![u32::MAX; a.acts.len() * cells];
    for c in 0..cells as u32 {
        let (mut written, mut read) = (BTreeSet::new(), BTreeSet::new());
        if let (true, Act::Off(_)) = (own, a.acts[t as usize]) {
            written.insert(c);
        }
        let mut stack = vec![(t, c)];
        while let Some((s, x)) = stack.pop() {
            spend(work, a.pos[t as usize])?;
            for &u in a.next(s) {
                let to = match a.acts[u as usize] {
                    Act::Switch(_) => continue,
                    Act::Shift(d) => board.next[x as usize * dirs + d as usize],
                    Act::On(_) => {
                        read.insert(x);
                        x
                    }
                    Act::Off(_) => {
                        written.insert(x);
                        x
                    }
                    _ => x,
                };
                let slot = u as usize * cells + to as usize;
                if to != crate::board::NONE && seen[slot] != c {
                    seen[slot] = c;
                    stack.push((u, to));
                }
            }
        }
        if written.intersection(&read).next().is_some() {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The states of the rest of the move after `t` (reached without passing a switch; switches included).
pub(super) fn rest_states(a: &Automaton, t: u32) -> BTreeSet<u32> {
    let mut seen = BTreeSet::new();
    let mut stack = vec![t];
    while let Some(s) = stack.pop() {
        for &u in a.next(s) {
            if seen.insert(u) && !matches!(a.acts[u as usize], Act::Switch(_)) {
                stack.push(u);
            }
        }
    }
    seen
}

/// Counts one unit of the checks' work; past [`MAX_CHECK_WORK`], an error at `pos`.
fn spend(work: &mut usize, pos: Pos) -> Result<(), RbgError> {
    *work += 1;
    if *work > MAX_CHECK_WORK {
        let reason = "checking the translation's faithfulness passes its work limit";
        return Err(RbgError::new(ErrorKind::RulesTooLarge, pos, reason));
    }
    Ok(())
}

/// A canonical text of every pattern expression, so that two occurrences of
/// the same pattern (one macro written twice) are known equal.
struct Signatures {
    pieces: usize,
    ids: HashMap<String, usize>,
    of: HashMap<u32, usize>,
}

impl Signatures {
    /// The number of the pattern expression `r`'s signature.
    fn of(&mut self, a: &Automaton, r: u32) -> usize {
        if let Some(&id) = self.of.get(&r) {
            return id;
        }
        let start = a.starts[r as usize];
        let mut number = HashMap::from([(start, 0usize)]);
        let (mut order, mut text) = (vec![start], String::new());
        let mut k = 0;
        while k < order.len() {
            let s = order[k];
            let act = match a.acts[s as usize] {
                Act::Pattern(inner, positive) => format!("P{}{positive}", self.of(a, inner)),
                Act::On(m) => format!("{:?}", &a.on[m as usize..m as usize + self.pieces]),
                Act::Compare(l, op, r) => {
                    format!("C{:?}{op:?}{:?}", a.exprs[l as usize], a.exprs[r as usize])
                }
                other => format!("{other:?}"),
            };
            text.push_str(&format!("{act}{}[", a.accept[s as usize]));
            for &t in a.next(s) {
                let next = number.len();
                let n = *number.entry(t).or_insert_with(|| {
                    order.push(t);
                    next
                });
                text.push_str(&format!("{n},"));
            }
            text.push(']');
            k += 1;
        }
        let next = self.ids.len();
        let id = *self.ids.entry(text).or_insert(next);
        self.of.insert(r, id);
        id
    }
}

/// A test whose outcome the totality check leaves open: a pattern (by
/// signature) at a cell, or any other test occurrence at a cell.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Atom {
    Pattern(usize, u32),
    Test(u32, u32),
}

/// Whether, from the modifier `t` at any cell, the rest of its move reaches a
/// switch for every outcome of its tests (shifts follow the board).
fn total(game: &Game, t: u32, signatures: &mut Signatures, work: &mut usize) -> Result<bool, RbgError> {
    for c in 0..game.cells() as u32 {
        let mut atoms = HashMap::new();
        walk(game, t, c, signatures, &mut atoms, None, work)?;
        if atoms.len() > MAX_ATOMS {
            return Ok(false);
        }
        for mask in 0..1u32 << atoms.len() {
            let valuation = (&atoms, mask);
            if !walk(game, t, c, signatures, &mut HashMap::new(), Some(valuation), work)? {
                return Ok(false);
            }
        }
    }
    Ok(true)
}

/// The outcome of a test: with a valuation, the atom's bit; without, every
/// test passes and its atom is recorded.
fn outcome(
    atom: Atom,
    found: &mut HashMap<Atom, usize>,
    valuation: Option<(&HashMap<Atom, usize>, u32)>,
) -> bool {
    match valuation {
        Some((atoms, mask)) => atoms.get(&atom).is_some_and(|&k| mask >> k & 1 == 1),
        None => {
            let next = found.len();
            found.entry(atom).or_insert(next);
            true
        }
    }
}

/// Explores the rest of the move from the modifier `t` at `c`; whether a
/// switch is reached (tests as `outcome` says).
fn walk(
    game: &Game,
    t: u32,
    c: u32,
    signatures: &mut Signatures,
    found: &mut HashMap<Atom, usize>,
    valuation: Option<(&HashMap<Atom, usize>, u32)>,
    work: &mut usize,
) -> Result<bool, RbgError> {
    let (a, board) = (&game.automaton, &game.board);
    let dirs = board.dirs.len();
    let mut seen = BTreeSet::new();
    let mut stack = vec![(t, c)];
    let mut switch = false;
    while let Some((s, x)) = stack.pop() {
        spend(work, a.pos[t as usize])?;
        for &u in a.next(s) {
            let pass = match a.acts[u as usize] {
                Act::Switch(_) => {
                    switch = true;
                    continue;
                }
                Act::Shift(d) => {
                    let to = board.next[x as usize * dirs + d as usize];
                    if to != crate::board::NONE && seen.insert((u, to)) {
                        stack.push((u, to));
                    }
                    continue;
                }
                Act::Off(_) | Act::Start => true,
                Act::Assign(v, e) => {
                    always_valid(&a.exprs[e as usize], game.bounds[v as usize])
                        || outcome(Atom::Test(u, x), found, valuation)
                }
                Act::Pattern(r, positive) => {
                    outcome(Atom::Pattern(signatures.of(a, r), x), found, valuation) == positive
                        || valuation.is_none()
                }
                Act::On(_) | Act::Compare(..) => outcome(Atom::Test(u, x), found, valuation),
            };
            if pass && seen.insert((u, x)) {
                stack.push((u, x));
            }
        }
    }
    Ok(switch)
}

/// Whether assigning `e` is always valid: a constant within `0..=bound`.
fn always_valid(e: &Expr, bound: i64) -> bool {
    matches!(e, Expr::Num(n) if (0..=bound).contains(n))
}

#[cfg(test)]
mod tests {
    use crate::{to_gdl, ErrorKind, Game};

    /// The translation of a game with players a and b, pieces e and x, a 3x1 board.
    fn translate(rules: &str) -> Result<String, crate::RbgError> {
        let text = format!(
            "#players = a(100), b(100) #pieces = e, x #variables = v(5)
             #board = rectangle(up, down, left, right, [e, e, e]) #rules = {rules}"
        );
        to_gdl(&Game::parse(&text).unwrap())
    }

    fn refusal(rules: &str) -> ErrorKind {
        translate(rules).unwrap_err().kind()
    }

    #[test]
    fn exact_lookaheads_translate() {
        // Tests before the modifier, or after it on other cells.
        assert!(translate("(->a (left* + right*) {e} [x] ->b ->>)*").is_ok());
        assert!(translate("(->a (left* + right*) {e} [x] right {e} ->b ->>)*").is_ok());
        // A variable assigned, then another one read.
        assert!(translate("(->a [$ a = 1] {$ v == 0} ->b ->>)*").is_ok());
    }

    #[test]
    fn lookaheads_reading_the_move_are_refused() {
        // The cell just emptied, the board through a pattern, a count, a variable.
        assert_eq!(
            refusal("(->a (left* + right*) [x] right left {x} ->b)*"),
            ErrorKind::Untranslatable
        );
        assert_eq!(
            refusal("(->a [x] {? right {x}} {? left} ->b)*"),
            ErrorKind::Untranslatable
        );
        assert_eq!(refusal("(->a [x] {$ x == 1} ->b)*"), ErrorKind::Untranslatable);
        assert_eq!(
            refusal("(->a [$ v = 1] {$ v == 1} ->b)*"),
            ErrorKind::Untranslatable
        );
        // A modifier inside a pattern; a player named like a GDL keyword.
        assert_eq!(refusal("->a {? [x]} ->b"), ErrorKind::Untranslatable);
        let text = "#players = random(1) #pieces = e #variables = #board = rectangle(u, d, l, r, [e]) #rules = ->random";
        assert_eq!(
            to_gdl(&Game::parse(text).unwrap()).unwrap_err().kind(),
            ErrorKind::Untranslatable
        );
    }

    #[test]
    fn a_move_complete_whatever_its_tests_needs_no_lookahead() {
        // Both outcomes of the same pattern lead to a switch: translated, with `tot`.
        let gdl =
            translate("(->a (left* + right*) [x] ({! right {x}} ->b + {? right {x}} [$ a = 100] ->> {}))*")
                .unwrap();
        assert!(gdl.contains("(tot "));
        // Only one outcome leads on: refused.
        assert_eq!(
            refusal("(->a (left* + right*) [x] {? right {x}} ->b)*"),
            ErrorKind::Untranslatable
        );
    }

    #[test]
    fn expression_tables_are_bounded() {
        let text = "#players = a(1) #pieces = e #variables = big(2000000)
            #board = rectangle(u, d, l, r, [e]) #rules = ->a {$ big * big > 1} ->a";
        assert_eq!(
            to_gdl(&Game::parse(text).unwrap()).unwrap_err().kind(),
            ErrorKind::RulesTooLarge
        );
    }
}
