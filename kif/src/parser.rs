//! From tokens to the AST: S-expressions first (built with an explicit stack, so
//! deeply nested input cannot overflow the call stack), then rules and literals.

pub use crate::ast::Description;
use crate::ast::{is_gdl2, Literal, Rule, Span, Term, Warning, TUPLE};
use crate::lexer::{tokenize, Token, LINE_ENDS};
use crate::symbol::{SymbolId, SymbolTable};
use std::fmt;

/// Deepest parenthesis nesting accepted; real games stay below 20.
pub const MAX_NESTING: usize = 256;

/// A syntax error with its place in the source and what was expected there.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct ParseError {
    /// Where the problem is.
    pub span: Span,
    /// What was expected, or what is wrong.
    pub message: String,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "parse error at {}: {}", self.span, self.message)
    }
}

impl std::error::Error for ParseError {}

/// An S-expression of the source: a symbol or a parenthesized list, each with
/// the byte offset where it starts. Messages of the match protocol are read as these.
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum SExpr<'a> {
    /// A symbol (any token other than a parenthesis), and its offset.
    Symbol(&'a str, usize),
    /// A list, and the offset of its `(`.
    List(Vec<SExpr<'a>>, usize),
}

impl SExpr<'_> {
    fn offset(&self) -> usize {
        match self {
            SExpr::Symbol(_, o) | SExpr::List(_, o) => *o,
        }
    }
}

/// Prints the expression with one space between items, as KIF reads it back.
impl fmt::Display for SExpr<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SExpr::Symbol(s, _) => f.write_str(s),
            SExpr::List(items, _) => {
                f.write_str("(")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(" ")?;
                    }
                    item.fmt(f)?;
                }
                f.write_str(")")
            }
        }
    }
}

/// Reads `source` as a sequence of S-expressions (nesting at most [`MAX_NESTING`]).
///
/// ```
/// use ggpnet_kif::SExpr;
/// let exprs = ggpnet_kif::sexprs("( PLAY m1 NIL )").unwrap();
/// let SExpr::List(items, _) = &exprs[0] else { panic!() };
/// assert_eq!(items[0], SExpr::Symbol("PLAY", 2));
/// assert_eq!(exprs[0].to_string(), "(PLAY m1 NIL)");
/// ```
pub fn sexprs(source: &str) -> Result<Vec<SExpr<'_>>, ParseError> {
    read_sexprs(source, &Lines::new(source))
}

/// Maps byte offsets to line:column.
struct Lines<'a> {
    source: &'a str,
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    /// A line starts after each `\n`, `\r\n` and lone `\r`.
    fn new(source: &'a str) -> Self {
        let mut starts = vec![0];
        let crlf = |i: usize| source.as_bytes()[i] == b'\r' && source.as_bytes().get(i + 1) == Some(&b'\n');
        starts.extend(
            source
                .match_indices(LINE_ENDS)
                .filter(|&(i, _)| !crlf(i))
                .map(|(i, _)| i + 1),
        );
        Lines { source, starts }
    }

    fn span(&self, offset: usize) -> Span {
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let column = self.source[self.starts[line]..offset].chars().count() + 1;
        Span {
            line: line as u32 + 1,
            column: column as u32,
        }
    }
}

fn read_sexprs<'a>(source: &'a str, lines: &Lines<'_>) -> Result<Vec<SExpr<'a>>, ParseError> {
    let mut stack: Vec<(Vec<SExpr<'a>>, usize)> = vec![(Vec::new(), 0)];
    for (offset, token) in tokenize(source) {
        match token {
            Token::Open => {
                if stack.len() > MAX_NESTING {
                    return Err(ParseError {
                        span: lines.span(offset),
                        message: format!("parentheses nested deeper than {MAX_NESTING}"),
                    });
                }
                stack.push((Vec::new(), offset));
            }
            Token::Close => {
                if stack.len() == 1 {
                    return Err(ParseError {
                        span: lines.span(offset),
                        message: "expected '(' or a symbol, found an unmatched ')'".into(),
                    });
                }
                let (items, start) = stack.pop().expect("stack holds the top level");
                stack
                    .last_mut()
                    .expect("top level remains")
                    .0
                    .push(SExpr::List(items, start));
            }
            Token::Symbol(s) => stack
                .last_mut()
                .expect("top level remains")
                .0
                .push(SExpr::Symbol(s, offset)),
        }
    }
    if stack.len() > 1 {
        let (_, start) = stack.last().expect("open list");
        return Err(ParseError {
            span: lines.span(*start),
            message: "expected ')' to close this '(' before the end of the file".into(),
        });
    }
    Ok(stack.pop().expect("top level").0)
}

struct Converter<'s> {
    symbols: SymbolTable,
    warnings: Vec<Warning>,
    lines: Lines<'s>,
    /// Where a list starts with a variable, and what GDL expected there: a
    /// tuple in GDL-II ([`TUPLE`]), an error in GDL.
    tuples: Vec<(usize, String)>,
}

impl Converter<'_> {
    fn error<T>(&self, at: usize, message: impl Into<String>) -> Result<T, ParseError> {
        Err(ParseError {
            span: self.lines.span(at),
            message: message.into(),
        })
    }

    /// The tuple `items`, a list whose first element is the variable `name` at
    /// `at` where GDL expects `what`.
    fn tuple(&mut self, items: &[SExpr<'_>], name: &str, at: usize, what: &str) -> Result<Term, ParseError> {
        self.tuples
            .push((at, format!("expected {what}, found the variable {name}")));
        let tuple = self.symbols.intern(TUPLE);
        let elements = items.iter().map(|t| self.term(t)).collect::<Result<_, _>>()?;
        Ok(Term::Compound(tuple, elements))
    }

    /// `error`, or the GDL error of a tuple before it: the first error of the
    /// description, as if tuples were errors (they are in GDL).
    fn earlier_tuple_error(&self, error: ParseError) -> ParseError {
        let place = |span: Span| (span.line, span.column);
        match self.tuples.first() {
            Some((at, message)) if place(self.lines.span(*at)) < place(error.span) => ParseError {
                span: self.lines.span(*at),
                message: message.clone(),
            },
            _ => error,
        }
    }

    /// Refuses the first list that starts with a variable, unless `tuples` are read.
    fn check_tuples(&self, tuples: bool) -> Result<(), ParseError> {
        match self.tuples.first() {
            Some((at, message)) if !tuples => self.error(*at, message.clone()),
            _ => Ok(()),
        }
    }

    fn warn(&mut self, at: usize, message: impl Into<String>) {
        self.warnings.push(Warning {
            span: self.lines.span(at),
            message: message.into(),
        });
    }

    fn rule(&mut self, expr: &SExpr<'_>) -> Result<Rule, ParseError> {
        let span = self.lines.span(expr.offset());
        if let SExpr::List(items, at) = expr {
            if let Some(SExpr::Symbol("<=", _)) = items.first() {
                let Some(head) = items.get(1) else {
                    return self.error(*at, "expected a head after '<='");
                };
                let head = self.sentence(head)?;
                if items.len() == 2 {
                    self.warn(*at, "rule with an empty body read as a fact");
                }
                let body = items[2..]
                    .iter()
                    .map(|l| self.literal(l))
                    .collect::<Result<_, _>>()?;
                return Ok(Rule { head, body, span });
            }
        }
        let head = self.sentence(expr)?;
        Ok(Rule {
            head,
            body: Vec::new(),
            span,
        })
    }

    fn name(&mut self, text: &str, at: usize, what: &str) -> Result<SymbolId, ParseError> {
        if text.starts_with('?') {
            return self.error(at, format!("expected {what}, found the variable {text}"));
        }
        if text == "<=" {
            return self.error(at, format!("expected {what}, found '<=' inside an expression"));
        }
        Ok(self.symbols.intern(text))
    }

    fn sentence(&mut self, expr: &SExpr<'_>) -> Result<Term, ParseError> {
        match expr {
            SExpr::Symbol(s, at) => Ok(Term::Atom(self.name(s, *at, "a sentence")?)),
            SExpr::List(items, at) => {
                let Some(first) = items.first() else {
                    return self.error(*at, "expected a sentence, found '()'");
                };
                let SExpr::Symbol(name, name_at) = first else {
                    return self.error(first.offset(), "expected a relation name, found '('");
                };
                if name.starts_with('?') {
                    return self.tuple(items, name, *name_at, "a relation name");
                }
                let relation = self.name(name, *name_at, "a relation name")?;
                if items.len() == 1 {
                    // `(terminal)` can only mean `terminal`; for other names the
                    // parenthesized form is a distinct zero-argument sentence, as
                    // in the reference reasoner (games-test/test_case_3a).
                    if relation.is_keyword() {
                        self.warn(*at, format!("sentence ({name}) read as {name}"));
                        return Ok(Term::Atom(relation));
                    }
                    self.warn(
                        *at,
                        format!(
                            "sentence ({name}) has no arguments; it is distinct from the constant {name}"
                        ),
                    );
                    return Ok(Term::Compound(relation, Vec::new()));
                }
                let args = items[1..]
                    .iter()
                    .map(|t| self.term(t))
                    .collect::<Result<_, _>>()?;
                Ok(Term::Compound(relation, args))
            }
        }
    }

    fn term(&mut self, expr: &SExpr<'_>) -> Result<Term, ParseError> {
        match expr {
            SExpr::Symbol(s, at) => {
                if s.starts_with('?') {
                    Ok(Term::Var(self.symbols.intern(s)))
                } else {
                    Ok(Term::Atom(self.name(s, *at, "a term")?))
                }
            }
            SExpr::List(items, at) => {
                let Some(first) = items.first() else {
                    return self.error(*at, "expected a term, found '()'");
                };
                let SExpr::Symbol(name, name_at) = first else {
                    return self.error(first.offset(), "expected a function name, found '('");
                };
                if name.starts_with('?') {
                    return self.tuple(items, name, *name_at, "a function name");
                }
                let functor = self.name(name, *name_at, "a function name")?;
                let args = items[1..]
                    .iter()
                    .map(|t| self.term(t))
                    .collect::<Result<_, _>>()?;
                Ok(Term::Compound(functor, args))
            }
        }
    }

    fn literal(&mut self, expr: &SExpr<'_>) -> Result<Literal, ParseError> {
        let SExpr::List(items, at) = expr else {
            return Ok(Literal::Atom(self.sentence(expr)?));
        };
        let keyword = match items.first() {
            Some(SExpr::Symbol(name, _)) => self.symbols.get(name),
            _ => None,
        };
        let arity = items.len().saturating_sub(1);
        match keyword {
            Some(SymbolId::NOT) => {
                if arity != 1 {
                    return self.error(*at, format!("expected one literal after 'not', found {arity}"));
                }
                let inner = self.literal(&items[1])?;
                if matches!(inner, Literal::Distinct(..)) {
                    self.warn(*at, "(not (distinct a b)) is not GDL; read as a = b");
                }
                Ok(Literal::Not(Box::new(inner)))
            }
            Some(SymbolId::DISTINCT) => {
                if arity != 2 {
                    return self.error(*at, format!("expected two terms after 'distinct', found {arity}"));
                }
                Ok(Literal::Distinct(self.term(&items[1])?, self.term(&items[2])?))
            }
            Some(SymbolId::OR) => {
                if arity == 0 {
                    return self.error(*at, "expected at least one literal after 'or'");
                }
                let alternatives = items[1..]
                    .iter()
                    .map(|l| self.literal(l))
                    .collect::<Result<_, _>>()?;
                Ok(Literal::Or(alternatives))
            }
            _ => Ok(Literal::Atom(self.sentence(expr)?)),
        }
    }
}

/// Parses a whole game description.
///
/// ```
/// let game = ggpnet_kif::parse("(role x) (<= (legal x noop) (true on))").unwrap();
/// assert_eq!(game.rules.len(), 2);
/// let err = ggpnet_kif::parse("(role x").unwrap_err();
/// assert_eq!(err.span.line, 1);
/// ```
pub fn parse(source: &str) -> Result<Description, ParseError> {
    let lines = Lines::new(source);
    let sexprs = read_sexprs(source, &lines)?;
    let mut converter = Converter {
        symbols: SymbolTable::new(),
        warnings: Vec::new(),
        lines,
        tuples: Vec::new(),
    };
    let mut description = Description {
        symbols: SymbolTable::new(),
        rules: Vec::with_capacity(sexprs.len()),
        warnings: Vec::new(),
    };
    for expr in &sexprs {
        match converter.rule(expr) {
            Ok(rule) => description.rules.push(rule),
            // In what reads as GDL so far, a tuple before the error is the first error.
            Err(e) if is_gdl2(&description) => return Err(e),
            Err(e) => return Err(converter.earlier_tuple_error(e)),
        }
    }
    description.symbols = std::mem::take(&mut converter.symbols);
    let gdl2 = is_gdl2(&description);
    converter.check_tuples(gdl2)?;
    for (at, _) in std::mem::take(&mut converter.tuples) {
        converter.warn(
            at,
            "a list that starts with a variable is read as a tuple (GDL-II)",
        );
    }
    description.warnings = converter.warnings;
    Ok(description)
}

/// Parses one ground or non-ground term, such as a move `(mark 1 1)`, into `symbols`.
pub fn parse_term(source: &str, symbols: &mut SymbolTable) -> Result<Term, ParseError> {
    let lines = Lines::new(source);
    let mut sexprs = read_sexprs(source, &lines)?;
    if sexprs.len() != 1 {
        return Err(ParseError {
            span: Span { line: 1, column: 1 },
            message: format!("expected exactly one term, found {}", sexprs.len()),
        });
    }
    let expr = sexprs.pop().expect("one expression");
    let mut converter = Converter {
        symbols: std::mem::take(symbols),
        warnings: Vec::new(),
        lines,
        tuples: Vec::new(),
    };
    let term = converter
        .term(&expr)
        .and_then(|t| converter.check_tuples(false).map(|()| t));
    *symbols = converter.symbols;
    term
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_facts_and_literals() {
        let d = parse(
            "(role white) (<= (next (cell ?x)) (does white (mark ?x)) (not (true (cell ?x))) \
             (distinct ?x 1) (or (p ?x) q))",
        )
        .unwrap();
        assert_eq!(d.rules.len(), 2);
        assert!(d.rules[0].body.is_empty());
        let body = &d.rules[1].body;
        assert!(matches!(body[1], Literal::Not(_)));
        assert!(matches!(body[2], Literal::Distinct(..)));
        assert!(matches!(&body[3], Literal::Or(v) if v.len() == 2));
        assert!(d.warnings.is_empty());
    }

    #[test]
    fn keywords_case_insensitive_other_symbols_kept() {
        let d = parse("(ROLE White) (<= Terminal (TRUE (cellHolds 1)))").unwrap();
        assert_eq!(d.rules[0].head.functor(), Some(SymbolId::ROLE));
        assert_eq!(
            d.symbols.name(d.rules[0].head.args()[0].functor().unwrap()),
            "White"
        );
        assert_eq!(d.rules[1].head, Term::Atom(SymbolId::TERMINAL));
    }

    #[test]
    fn lists_that_start_with_a_variable_are_gdl2_tuples_and_gdl_errors() {
        let rule = "(<= (paid ?p) (does ?p (buy ?c (?n ?k))) (?r ?p))";
        let e = parse(&format!("(role white)\n{rule}")).unwrap_err();
        assert_eq!(e.span, Span { line: 2, column: 33 });
        assert_eq!(e.message, "expected a function name, found the variable ?n");
        let e = parse("(role white) (<= p (?r 1))").unwrap_err();
        assert_eq!(e.message, "expected a relation name, found the variable ?r");
        // In GDL the first error is reported, a tuple's or another.
        let e = parse("(role white) (<= p (?r 1)) (<= q (not a b))").unwrap_err();
        assert_eq!(e.message, "expected a relation name, found the variable ?r");
        let e = parse("(role white) (<= q (not a b)) (<= p (?r 1))").unwrap_err();
        assert!(e.message.contains("one literal after 'not'"), "{e:?}");
        let e = parse("(role random) (<= p (?r 1)) (<= q (not a b))").unwrap_err();
        assert!(e.message.contains("one literal after 'not'"), "{e:?}");
        let d = parse(&format!("(role random)\n{rule}")).unwrap();
        assert_eq!(d.warnings.len(), 2, "{:?}", d.warnings);
        assert_eq!(
            crate::rule_to_string(&d.rules[1], &d.symbols),
            "(<= (paid ?p) (does ?p (buy ?c ( ?n ?k))) ( ?r ?p))"
        );
        let mut symbols = SymbolTable::new();
        assert!(parse_term("(?n 1)", &mut symbols).is_err());
    }

    #[test]
    fn zero_arity_sentence_and_empty_body_warn() {
        let d = parse("(<= (terminal) (true (over)))\n(<= (legal r go))").unwrap();
        assert_eq!(d.rules[0].head, Term::Atom(SymbolId::TERMINAL));
        // A zero-argument function term stays distinct from the constant.
        let inner = &d.rules[0].body[0];
        let Literal::Atom(Term::Compound(_, args)) = inner else {
            panic!()
        };
        assert!(matches!(&args[0], Term::Compound(_, a) if a.is_empty()));
        assert_eq!(d.warnings.len(), 2);
        assert_eq!(d.warnings[1].span, Span { line: 2, column: 1 });
        // Other zero-argument sentences stay distinct from the constant.
        let d = parse("(<= (open) (true x))").unwrap();
        assert!(matches!(&d.rules[0].head, Term::Compound(_, a) if a.is_empty()));
        assert!(d.warnings[0].message.contains("distinct from the constant open"));
    }

    #[test]
    fn errors_name_place_and_expectation() {
        let e = parse("(role x)\n  (p ?x))").unwrap_err();
        assert_eq!(e.span, Span { line: 2, column: 9 });
        assert!(e.message.contains("unmatched ')'"));
        let e = parse("(role x)\n(<= (p 1)\n (q 1)").unwrap_err();
        assert_eq!(e.span, Span { line: 2, column: 1 });
        assert!(e.message.contains("expected ')'"));
        let e = parse("(<= (p ?x) (not a b))").unwrap_err();
        assert!(e.message.contains("one literal after 'not'"));
        let e = parse("(?x 1)").unwrap_err();
        assert!(e.message.contains("variable ?x"));
        let e = parse("(p (q (<= 1)))").unwrap_err();
        assert!(e.message.contains("'<='"));
        let e = parse("(p ())").unwrap_err();
        assert_eq!(e.span, Span { line: 1, column: 4 });
    }

    /// LF, CRLF and CR-only files read the same rules at the same lines, and
    /// an error names the same line:column in each.
    #[test]
    fn every_line_ending_ends_comments_and_lines() {
        let lines = [
            "; a game",
            "(role r) ; the only role",
            "(init s)",
            "  (<= terminal (true s))",
        ];
        let printed = |source: &str| {
            let d = parse(source).unwrap();
            let rules = d
                .rules
                .iter()
                .map(|r| (crate::rule_to_string(r, &d.symbols), r.span));
            rules.collect::<Vec<_>>()
        };
        let expected = printed(&lines.join("\n"));
        assert_eq!(expected.len(), 3);
        assert_eq!(expected[2].1, Span { line: 4, column: 3 });
        for end in ["\r\n", "\r"] {
            assert_eq!(printed(&lines.join(end)), expected, "{end:?}");
        }
        for end in ["\n", "\r\n", "\r"] {
            let broken = format!("{}{end}  (p ?x))", lines.join(end));
            let e = parse(&broken).unwrap_err();
            assert_eq!(e.span, Span { line: 5, column: 9 }, "{end:?}");
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let deep = "(".repeat(100_000) + &")".repeat(100_000);
        assert!(parse(&deep).unwrap_err().message.contains("nested deeper"));
    }

    /// Rules after an unusual whitespace character (form feed, vertical tab, NEL,
    /// no-break space, ideographic space) are read, and garbage after it is an error.
    #[test]
    fn rules_after_any_whitespace_are_read() {
        for space in ['\u{0B}', '\u{0C}', '\u{85}', '\u{A0}', '\u{3000}'] {
            let source = format!("(role r){space}(<= terminal (true done)){space}(goal r 100)");
            let d = parse(&source).unwrap();
            assert_eq!(d.rules.len(), 3, "separator U+{:04X}", space as u32);
            assert_eq!(d.rules[1].head, Term::Atom(SymbolId::TERMINAL));
            assert_eq!(d.rules[2].head.functor(), Some(SymbolId::GOAL));
            let e = parse(&format!("(role r){space}(((( garbage")).unwrap_err();
            assert_eq!(e.span, Span { line: 1, column: 13 });
            assert_eq!(
                e.message,
                "expected ')' to close this '(' before the end of the file"
            );
        }
    }

    #[test]
    fn parse_term_reads_moves() {
        let mut symbols = SymbolTable::new();
        let t = parse_term("(mark 1 1)", &mut symbols).unwrap();
        assert_eq!(t.args().len(), 2);
        assert!(parse_term("a b", &mut symbols).is_err());
    }
}
