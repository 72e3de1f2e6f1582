//! The five sections, after macro expansion, read into a checked description:
//! declarations, the board, and the rules as a regular expression over actions
//! (the extended paper's low-level grammar plus the high-level sugar `^n`,
//! `[a, b]` and `[$ a = 1, b = 2]`).

use crate::board::{self, Board, Grid};
use crate::error::{ErrorKind, Pos, RbgError};
use crate::lexer::{self, Tok, Token};
use crate::macros::{self, Section};
use std::collections::HashMap;

/// The largest bound of a variable.
pub const MAX_BOUND: i64 = (1 << 31) - 1;
/// The deepest nesting of parentheses, patterns and arithmetic.
pub const MAX_NESTING: usize = 200;
/// The most action occurrences the rules may have (after `^n` repetition).
pub const MAX_ACTIONS: usize = 200_000;
/// The most pieces, and the most players and variables together.
pub const MAX_NAMES: usize = 1 << 12;

/// A regular expression over actions; every action carries where it was written.
#[derive(Clone, Debug)]
pub(crate) enum Re {
    Act(Action, Pos),
    Concat(Vec<Re>),
    Sum(Vec<Re>),
    Star(Box<Re>),
}

/// An arithmetic expression: numbers, variables, piece counts.
#[derive(Clone, Debug)]
pub(crate) enum Expr {
    Num(i64),
    Var(u16),
    Count(u16),
    Bin(char, Box<Expr>, Box<Expr>),
}

/// A comparison operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cmp {
    Lt,
    Le,
    Eq,
    Ne,
    Gt,
    Ge,
}

/// One action of the rules.
#[derive(Clone, Debug)]
pub(crate) enum Action {
    Shift(u16),
    /// The pieces accepted, one flag per piece.
    On(Vec<bool>),
    Off(u16),
    Assign(u16, Expr),
    Compare(Expr, Cmp, Expr),
    /// `->p` (player index from 0) or `->>` (`None`, the keeper).
    Switch(Option<u16>),
    /// `{? M}` (true) or `{! M}` (false).
    Pattern(bool, Box<Re>),
}

/// A game description, checked.
#[derive(Clone, Debug)]
pub(crate) struct Description {
    pub(crate) players: Vec<String>,
    pub(crate) pieces: Vec<String>,
    /// Every variable: the players' first (in `#players` order), then `#variables`.
    pub(crate) variables: Vec<String>,
    pub(crate) bounds: Vec<i64>,
    pub(crate) board: Board,
    pub(crate) rules: Re,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Name {
    Player(u16),
    Piece(u16),
    Var(u16),
    Dir(u16),
}

/// Reads a whole description.
pub(crate) fn parse(text: &str) -> Result<Description, RbgError> {
    let [board, players, pieces, variables, rules] = macros::expand_sections(lexer::tokens(text)?)?;
    let mut names: HashMap<String, Name> = HashMap::new();
    let mut d = Description {
        players: Vec::new(),
        pieces: Vec::new(),
        variables: Vec::new(),
        bounds: Vec::new(),
        board: Board::default(),
        rules: Re::Concat(Vec::new()),
    };
    for (name, bound, pos) in Cursor::new(&players).bounded_list(false)? {
        declare(&mut names, &name, Name::Player(d.players.len() as u16), pos)?;
        d.players.push(name.clone());
        d.variables.push(name);
        d.bounds.push(bound);
    }
    if d.players.is_empty() {
        return Err(RbgError::new(
            ErrorKind::Syntax,
            players.pos,
            "#players declares no player",
        ));
    }
    for (name, _, pos) in Cursor::new(&pieces).bounded_list(true)? {
        declare(&mut names, &name, Name::Piece(d.pieces.len() as u16), pos)?;
        d.pieces.push(name);
    }
    if d.pieces.is_empty() {
        return Err(RbgError::new(
            ErrorKind::Syntax,
            pieces.pos,
            "#pieces declares no piece",
        ));
    }
    for (name, bound, pos) in Cursor::new(&variables).bounded_list(false)? {
        declare(&mut names, &name, Name::Var(d.variables.len() as u16), pos)?;
        d.variables.push(name);
        d.bounds.push(bound);
    }
    if d.pieces.len() > MAX_NAMES || d.variables.len() > MAX_NAMES {
        return Err(RbgError::new(
            ErrorKind::RulesTooLarge,
            pieces.pos,
            "too many pieces or variables",
        ));
    }
    d.board = Cursor::new(&board).board(&names)?;
    for (k, dir) in d.board.dirs.iter().enumerate() {
        declare(&mut names, dir, Name::Dir(k as u16), board.pos)?;
    }
    let mut cursor = Cursor::new(&rules);
    cursor.names = names;
    cursor.pieces = d.pieces.len();
    d.rules = cursor.rule(0)?;
    if let Some(t) = cursor.peek() {
        return Err(cursor.unexpected(t, "expected an action, '+', '*', '^' or the end of the rules"));
    }
    Ok(d)
}

fn declare(names: &mut HashMap<String, Name>, name: &str, what: Name, pos: Pos) -> Result<(), RbgError> {
    if names.insert(name.to_string(), what).is_some() {
        let reason =
            format!("{name} is declared twice (players, pieces, variables and directions are disjoint)");
        return Err(RbgError::new(ErrorKind::Duplicate, pos, reason));
    }
    Ok(())
}

/// A position in one section's tokens.
struct Cursor<'a> {
    toks: &'a [Token],
    at: usize,
    end: Pos,
    names: HashMap<String, Name>,
    pieces: usize,
    actions: usize,
    operators: usize,
}

impl<'a> Cursor<'a> {
    fn new(section: &'a Section) -> Cursor<'a> {
        let end = section.tokens.last().map_or(section.pos, |t| Pos {
            line: t.pos.line,
            column: t.pos.column + t.tok.text().chars().count() as u32,
        });
        Cursor {
            toks: &section.tokens,
            at: 0,
            end,
            names: HashMap::new(),
            pieces: 0,
            actions: 0,
            operators: 0,
        }
    }

    fn peek(&self) -> Option<&'a Token> {
        self.toks.get(self.at)
    }

    fn peek_is(&self, p: &str) -> bool {
        self.peek().is_some_and(|t| t.tok.is(p))
    }

    fn pos(&self) -> Pos {
        self.peek().map_or(self.end, |t| t.pos)
    }

    fn unexpected(&self, t: &Token, expected: &str) -> RbgError {
        RbgError::new(
            ErrorKind::Syntax,
            t.pos,
            format!("{expected}, found '{}'", t.tok.text()),
        )
    }

    fn next(&mut self, expected: &str) -> Result<&'a Token, RbgError> {
        let t = self.peek().ok_or_else(|| {
            RbgError::new(
                ErrorKind::Syntax,
                self.end,
                format!("{expected}, found the end of the section"),
            )
        })?;
        self.at += 1;
        Ok(t)
    }

    fn expect(&mut self, p: &str) -> Result<Pos, RbgError> {
        let t = self.next(&format!("expected '{p}'"))?;
        if !t.tok.is(p) {
            return Err(self.unexpected(t, &format!("expected '{p}'")));
        }
        Ok(t.pos)
    }

    fn ident(&mut self, what: &str) -> Result<(String, Pos), RbgError> {
        let t = self.next(&format!("expected {what}"))?;
        match &t.tok {
            Tok::Ident(s) => Ok((s.to_string(), t.pos)),
            _ => Err(self.unexpected(t, &format!("expected {what}"))),
        }
    }

    fn nat(&mut self, max: i64) -> Result<i64, RbgError> {
        let t = self.next("expected a number")?;
        let Tok::Nat(s) = &t.tok else {
            return Err(self.unexpected(t, "expected a number"));
        };
        match s.parse::<i64>() {
            Ok(v) if v <= max => Ok(v),
            _ => Err(RbgError::new(
                ErrorKind::NumberTooLarge,
                t.pos,
                format!("{s} is larger than {max}"),
            )),
        }
    }

    /// `name(bound), ...` (or `name, ...` for pieces); possibly empty.
    fn bounded_list(&mut self, pieces: bool) -> Result<Vec<(String, i64, Pos)>, RbgError> {
        let mut out = Vec::new();
        while self.peek().is_some() {
            let (name, pos) = self.ident(if pieces { "a piece name" } else { "a name" })?;
            let mut bound = 0;
            if !pieces {
                if !self.peek_is("(") {
                    let reason = format!("{name} needs a bound: {name}(bound)");
                    return Err(RbgError::new(ErrorKind::MissingBound, pos, reason));
                }
                self.expect("(")?;
                bound = self.nat(MAX_BOUND)?;
                self.expect(")")?;
            }
            out.push((name, bound, pos));
            if self.peek().is_some() {
                self.expect(",")?;
            }
        }
        Ok(out)
    }

    fn piece(&mut self, names: &HashMap<String, Name>) -> Result<u16, RbgError> {
        let (name, pos) = self.ident("a piece name")?;
        match names.get(&name) {
            Some(Name::Piece(p)) => Ok(*p),
            _ => Err(RbgError::new(
                ErrorKind::Undeclared,
                pos,
                format!("{name} is not a declared piece"),
            )),
        }
    }

    /// `[a, , b]`: a line of a generated board, holes allowed.
    fn line(&mut self, names: &HashMap<String, Name>) -> Result<Vec<Option<u16>>, RbgError> {
        self.expect("[")?;
        let mut out = Vec::new();
        loop {
            if self.peek_is(",") || self.peek_is("]") {
                out.push(None);
            } else {
                out.push(Some(self.piece(names)?));
            }
            if self.peek_is("]") {
                self.at += 1;
                return Ok(out);
            }
            self.expect(",")?;
            if out.len() > board::MAX_CELLS {
                return Err(RbgError::new(
                    ErrorKind::Board,
                    self.pos(),
                    "a board line is too long",
                ));
            }
        }
    }

    fn lines(&mut self, names: &HashMap<String, Name>) -> Result<Vec<Vec<Option<u16>>>, RbgError> {
        let mut out = vec![self.line(names)?];
        let mut total = out[0].len();
        while self.peek_is("[") {
            out.push(self.line(names)?);
            total += out.last().map_or(0, Vec::len);
            if total > board::MAX_CELLS {
                return Err(RbgError::new(
                    ErrorKind::Board,
                    self.pos(),
                    "the board has too many vertices",
                ));
            }
        }
        Ok(out)
    }

    fn labels(&mut self, n: usize) -> Result<Vec<String>, RbgError> {
        let mut out: Vec<String> = Vec::new();
        for _ in 0..n {
            let (label, pos) = self.ident("a direction name")?;
            if out.contains(&label) {
                return Err(RbgError::new(
                    ErrorKind::Duplicate,
                    pos,
                    format!("direction {label} twice"),
                ));
            }
            out.push(label);
            self.expect(",")?;
        }
        Ok(out)
    }

    fn board(&mut self, names: &HashMap<String, Name>) -> Result<Board, RbgError> {
        let pos = self.pos();
        let generator = match self.peek().map(|t| &t.tok) {
            Some(Tok::Ident(g)) if self.toks.get(self.at + 1).is_some_and(|t| t.tok.is("(")) => g.to_string(),
            _ => return self.graph(names),
        };
        self.at += 2;
        let board = match generator.as_str() {
            "rectangle" => {
                let dirs = self.labels(4)?;
                board::rectangle(&dirs, &self.lines(names)?, pos)?
            }
            "hexagon" => {
                let dirs = self.labels(6)?;
                board::hexagon(&dirs, &self.lines(names)?, pos)?
            }
            "cuboid" => {
                let dirs = self.labels(6)?;
                let mut layers: Grid = Vec::new();
                while self.peek_is("[") {
                    self.at += 1;
                    layers.push(self.lines(names)?);
                    self.expect("]")?;
                    if layers
                        .iter()
                        .map(|l| l.iter().map(Vec::len).sum::<usize>())
                        .sum::<usize>()
                        > board::MAX_CELLS
                    {
                        return Err(RbgError::new(
                            ErrorKind::Board,
                            pos,
                            "the board has too many vertices",
                        ));
                    }
                }
                if layers.is_empty() {
                    return Err(RbgError::new(
                        ErrorKind::Board,
                        self.pos(),
                        "a cuboid needs layers",
                    ));
                }
                board::cuboid(&dirs, &layers, pos)?
            }
            other => {
                let reason = format!("unknown board generator {other} (rectangle, hexagon or cuboid)");
                return Err(RbgError::new(ErrorKind::Syntax, pos, reason));
            }
        };
        self.expect(")")?;
        if let Some(t) = self.peek() {
            return Err(self.unexpected(t, "expected the end of #board"));
        }
        Ok(board)
    }

    /// The explicit form: `name [piece] { label : name, ... }` for every vertex.
    fn graph(&mut self, names: &HashMap<String, Name>) -> Result<Board, RbgError> {
        let mut board = Board::default();
        let mut ids: HashMap<String, u32> = HashMap::new();
        let mut edges: Vec<(u32, usize, String, Pos)> = Vec::new();
        let mut dir_ids: HashMap<String, usize> = HashMap::new();
        while self.peek().is_some() {
            let (name, pos) = self.ident("a vertex name")?;
            let me = board.names.len() as u32;
            if ids.insert(name.clone(), me).is_some() {
                return Err(RbgError::new(
                    ErrorKind::Duplicate,
                    pos,
                    format!("vertex {name} twice"),
                ));
            }
            board.check_room(pos)?;
            board.names.push(name);
            self.expect("[")?;
            board.initial.push(self.piece(names)?);
            self.expect("]")?;
            self.expect("{")?;
            let mut mine: Vec<usize> = Vec::new();
            while !self.peek_is("}") {
                let (label, pos) = self.ident("a direction name")?;
                self.expect(":")?;
                let (to, to_pos) = self.ident("a vertex name")?;
                let n = dir_ids.len();
                let d = *dir_ids.entry(label.clone()).or_insert(n);
                if mine.contains(&d) {
                    return Err(RbgError::new(
                        ErrorKind::Duplicate,
                        pos,
                        format!("two {label} edges from a vertex"),
                    ));
                }
                mine.push(d);
                edges.push((me, d, to, to_pos));
                if !self.peek_is("}") {
                    self.expect(",")?;
                }
            }
            self.expect("}")?;
        }
        board.dirs = vec![String::new(); dir_ids.len()];
        for (label, d) in dir_ids {
            board.dirs[d] = label;
        }
        board::check_size(board.cells(), board.dirs.len(), self.end)?;
        if board.cells() == 0 {
            return Err(RbgError::new(
                ErrorKind::Board,
                self.end,
                "the board has no vertex",
            ));
        }
        board.next = vec![board::NONE; board.cells() * board.dirs.len()];
        for (from, d, to, pos) in edges {
            let Some(&t) = ids.get(&to) else {
                return Err(RbgError::new(ErrorKind::Board, pos, format!("no vertex {to}")));
            };
            board.next[from as usize * board.dirs.len() + d] = t;
        }
        Ok(board)
    }
}

impl Board {
    fn check_room(&self, pos: Pos) -> Result<(), RbgError> {
        if self.cells() >= board::MAX_CELLS {
            return Err(RbgError::new(
                ErrorKind::Board,
                pos,
                "the board has too many vertices",
            ));
        }
        Ok(())
    }
}

/// The rules grammar.
impl Cursor<'_> {
    fn deeper(&self, depth: usize) -> Result<usize, RbgError> {
        if depth >= MAX_NESTING {
            let reason = format!("nested deeper than {MAX_NESTING}");
            return Err(RbgError::new(ErrorKind::NestingTooDeep, self.pos(), reason));
        }
        Ok(depth + 1)
    }

    /// A sum of concatenations.
    fn rule(&mut self, depth: usize) -> Result<Re, RbgError> {
        let depth = self.deeper(depth)?;
        let mut terms = vec![self.concat(depth)?];
        while self.peek_is("+") {
            self.at += 1;
            terms.push(self.concat(depth)?);
        }
        Ok(if terms.len() == 1 {
            terms.pop().unwrap_or(Re::Concat(Vec::new()))
        } else {
            Re::Sum(terms)
        })
    }

    fn starts_element(&self) -> bool {
        match self.peek().map(|t| &t.tok) {
            Some(Tok::Ident(_)) => true,
            Some(Tok::Punct(p)) => ["(", "{", "{?", "{!", "{$", "[", "[$", "->", "->>"].contains(p),
            _ => false,
        }
    }

    fn concat(&mut self, depth: usize) -> Result<Re, RbgError> {
        let mut items = Vec::new();
        while self.starts_element() {
            items.push(self.postfix(depth)?);
        }
        if items.is_empty() {
            let reason = "expected an action or '('";
            return Err(match self.peek() {
                Some(t) => self.unexpected(t, reason),
                None => RbgError::new(
                    ErrorKind::Syntax,
                    self.end,
                    format!("{reason}, found the end of the section"),
                ),
            });
        }
        Ok(if items.len() == 1 {
            items.pop().unwrap_or(Re::Concat(Vec::new()))
        } else {
            Re::Concat(items)
        })
    }

    fn postfix(&mut self, depth: usize) -> Result<Re, RbgError> {
        let mut re = if self.peek_is("(") {
            self.at += 1;
            let inner = self.rule(depth)?;
            self.expect(")")?;
            inner
        } else {
            self.action(depth)?
        };
        for _ in 0..MAX_NESTING {
            if self.peek_is("*") {
                self.at += 1;
                if !matches!(re, Re::Star(_)) {
                    re = Re::Star(Box::new(re));
                }
            } else if self.peek_is("^") {
                let pos = self.expect("^")?;
                let n = self.nat(MAX_ACTIONS as i64)?;
                if n == 0 {
                    return Err(RbgError::new(
                        ErrorKind::Syntax,
                        pos,
                        "'^' needs a positive number",
                    ));
                }
                let size = count_actions(&re);
                self.actions += size * (n as usize - 1);
                if self.actions > MAX_ACTIONS {
                    let reason = format!("the rules have more than {MAX_ACTIONS} actions");
                    return Err(RbgError::new(ErrorKind::RulesTooLarge, pos, reason));
                }
                re = Re::Concat(vec![re; n as usize]);
            } else {
                return Ok(re);
            }
        }
        let reason = format!("more than {MAX_NESTING} '*' and '^' after one element");
        Err(RbgError::new(ErrorKind::NestingTooDeep, self.pos(), reason))
    }

    fn name(&mut self) -> Result<(Name, String, Pos), RbgError> {
        let (name, pos) = self.ident("a name")?;
        match self.names.get(&name) {
            Some(n) => Ok((*n, name, pos)),
            None => Err(RbgError::new(
                ErrorKind::Undeclared,
                pos,
                format!("{name} is not declared"),
            )),
        }
    }

    fn action(&mut self, depth: usize) -> Result<Re, RbgError> {
        self.actions += 1;
        if self.actions > MAX_ACTIONS {
            let reason = format!("the rules have more than {MAX_ACTIONS} actions");
            return Err(RbgError::new(ErrorKind::RulesTooLarge, self.pos(), reason));
        }
        let t = self.next("expected an action")?;
        let pos = t.pos;
        let act = |a| Ok(Re::Act(a, pos));
        match &t.tok {
            Tok::Ident(_) => {
                self.at -= 1;
                match self.name()? {
                    (Name::Dir(d), _, _) => act(Action::Shift(d)),
                    (_, name, pos) => Err(RbgError::new(
                        ErrorKind::Undeclared,
                        pos,
                        format!("{name} is not a direction"),
                    )),
                }
            }
            Tok::Punct("{") => self.on(pos),
            Tok::Punct(p @ ("{?" | "{!")) => {
                let positive = *p == "{?";
                let inner = self.rule(depth)?;
                self.expect("}")?;
                act(Action::Pattern(positive, Box::new(inner)))
            }
            Tok::Punct("{$") => {
                let left = self.expr(depth)?;
                let t = self.next("expected a comparison operator")?;
                let op = match t.tok.text() {
                    "<" => Cmp::Lt,
                    "<=" => Cmp::Le,
                    "==" => Cmp::Eq,
                    "!=" => Cmp::Ne,
                    ">" => Cmp::Gt,
                    ">=" => Cmp::Ge,
                    _ => return Err(self.unexpected(t, "expected a comparison operator")),
                };
                let right = self.expr(depth)?;
                self.expect("}")?;
                act(Action::Compare(left, op, right))
            }
            Tok::Punct("[") => self.offs(pos),
            Tok::Punct("[$") => self.assignments(depth),
            Tok::Punct("->>") => act(Action::Switch(None)),
            Tok::Punct("->") => match self.name()? {
                (Name::Player(p), _, _) => act(Action::Switch(Some(p))),
                (_, name, pos) => Err(RbgError::new(
                    ErrorKind::Undeclared,
                    pos,
                    format!("{name} is not a player"),
                )),
            },
            _ => Err(self.unexpected(t, "expected an action")),
        }
    }

    fn on(&mut self, pos: Pos) -> Result<Re, RbgError> {
        let mut set = vec![false; self.pieces];
        while !self.peek_is("}") {
            let (name, p) = self.ident("a piece name")?;
            match self.names.get(&name) {
                Some(Name::Piece(k)) => set[*k as usize] = true,
                _ => {
                    return Err(RbgError::new(
                        ErrorKind::Undeclared,
                        p,
                        format!("{name} is not a declared piece"),
                    ))
                }
            }
            if !self.peek_is("}") {
                self.expect(",")?;
            }
        }
        self.at += 1;
        Ok(Re::Act(Action::On(set), pos))
    }

    /// `[a]`, or `[a, b, ...]` meaning `[a] + [b] + ...`.
    fn offs(&mut self, pos: Pos) -> Result<Re, RbgError> {
        let names = std::mem::take(&mut self.names);
        let mut alts = Vec::new();
        let result = loop {
            match self.piece(&names) {
                Ok(p) => alts.push(Re::Act(Action::Off(p), pos)),
                Err(e) => break Err(e),
            }
            if self.peek_is("]") {
                self.at += 1;
                break Ok(());
            }
            if let Err(e) = self.expect(",") {
                break Err(e);
            }
            self.actions += 1;
        };
        self.names = names;
        result?;
        Ok(if alts.len() == 1 {
            alts.pop().unwrap_or(Re::Sum(Vec::new()))
        } else {
            Re::Sum(alts)
        })
    }

    /// `[$ v = e]`, or `[$ v = e, w = f, ...]` meaning their concatenation.
    fn assignments(&mut self, depth: usize) -> Result<Re, RbgError> {
        let mut seq = Vec::new();
        loop {
            let (name, var, pos) = self.name()?;
            let v = match name {
                Name::Var(v) | Name::Player(v) => v,
                _ => {
                    return Err(RbgError::new(
                        ErrorKind::Undeclared,
                        pos,
                        format!("{var} is not a variable"),
                    ))
                }
            };
            self.expect("=")?;
            seq.push(Re::Act(Action::Assign(v, self.expr(depth)?), pos));
            if self.peek_is("]") {
                self.at += 1;
                break;
            }
            self.expect(",")?;
            self.actions += 1;
        }
        Ok(if seq.len() == 1 {
            seq.pop().unwrap_or(Re::Concat(Vec::new()))
        } else {
            Re::Concat(seq)
        })
    }

    /// Counts one more arithmetic operator; expressions have at most [`MAX_NESTING`].
    fn operator(&mut self) -> Result<(), RbgError> {
        self.operators += 1;
        if self.operators > MAX_NESTING {
            let reason = format!("an expression with more than {MAX_NESTING} operators");
            return Err(RbgError::new(ErrorKind::NestingTooDeep, self.pos(), reason));
        }
        self.at += 1;
        Ok(())
    }

    /// A whole arithmetic expression.
    fn expr(&mut self, depth: usize) -> Result<Expr, RbgError> {
        self.operators = 0;
        self.sum(depth)
    }

    fn sum(&mut self, depth: usize) -> Result<Expr, RbgError> {
        let depth = self.deeper(depth)?;
        let mut e = self.product(depth)?;
        while self.peek_is("+") || self.peek_is("-") {
            let op = if self.peek_is("+") { '+' } else { '-' };
            self.operator()?;
            e = Expr::Bin(op, Box::new(e), Box::new(self.product(depth)?));
        }
        Ok(e)
    }

    fn product(&mut self, depth: usize) -> Result<Expr, RbgError> {
        let mut e = self.factor(depth)?;
        while self.peek_is("*") || self.peek_is("/") {
            let op = if self.peek_is("*") { '*' } else { '/' };
            self.operator()?;
            e = Expr::Bin(op, Box::new(e), Box::new(self.factor(depth)?));
        }
        Ok(e)
    }

    fn factor(&mut self, depth: usize) -> Result<Expr, RbgError> {
        if self.peek_is("(") {
            self.at += 1;
            let e = self.sum(depth)?;
            self.expect(")")?;
            return Ok(e);
        }
        if matches!(self.peek().map(|t| &t.tok), Some(Tok::Nat(_))) {
            return Ok(Expr::Num(self.nat(i64::MAX)?));
        }
        match self.name()? {
            (Name::Var(v) | Name::Player(v), _, _) => Ok(Expr::Var(v)),
            (Name::Piece(p), _, _) => Ok(Expr::Count(p)),
            (_, name, pos) => {
                let reason = format!("{name} is not a variable or a piece");
                Err(RbgError::new(ErrorKind::Undeclared, pos, reason))
            }
        }
    }
}

/// The number of action occurrences in `re` (patterns' included).
pub(crate) fn count_actions(re: &Re) -> usize {
    match re {
        Re::Act(Action::Pattern(_, inner), _) => 1 + count_actions(inner),
        Re::Act(..) => 1,
        Re::Concat(v) | Re::Sum(v) => v.iter().map(count_actions).sum(),
        Re::Star(r) => count_actions(r),
    }
}
