//! The abstract syntax of a GDL description: terms, literals, rules.

use crate::symbol::{SymbolId, SymbolTable};

/// A position in the source text, 1-based.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, PartialOrd, Ord, Hash)]
pub struct Span {
    /// Line number, starting at 1.
    pub line: u32,
    /// Column number (in characters), starting at 1.
    pub column: u32,
}

impl std::fmt::Display for Span {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// A term: a constant, a variable, or a function applied to arguments.
///
/// Sentences (atoms of a relation) use the same shape: `(cell 1 1 b)` is a
/// `Compound` whose functor is the relation `cell`, and `terminal` is an `Atom`.
#[derive(Clone, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub enum Term {
    /// A constant such as `noop` or `10`.
    Atom(SymbolId),
    /// A variable such as `?x` (the symbol includes the `?`).
    Var(SymbolId),
    /// A function term `(f a b)`; zero arguments (`(f)`) is distinct from the atom `f`.
    Compound(SymbolId, Vec<Term>),
}

impl Term {
    /// The functor or constant name; `None` for variables.
    pub fn functor(&self) -> Option<SymbolId> {
        match self {
            Term::Atom(s) | Term::Compound(s, _) => Some(*s),
            Term::Var(_) => None,
        }
    }

    /// The arguments (empty for atoms and variables).
    pub fn args(&self) -> &[Term] {
        match self {
            Term::Compound(_, args) => args,
            _ => &[],
        }
    }

    /// True when the term contains no variable.
    pub fn is_ground(&self) -> bool {
        match self {
            Term::Atom(_) => true,
            Term::Var(_) => false,
            Term::Compound(_, args) => args.iter().all(Term::is_ground),
        }
    }

    /// Calls `visit` on every variable of the term, left to right.
    pub fn for_each_var(&self, visit: &mut impl FnMut(SymbolId)) {
        match self {
            Term::Atom(_) => {}
            Term::Var(v) => visit(*v),
            Term::Compound(_, args) => args.iter().for_each(|a| a.for_each_var(visit)),
        }
    }
}

/// A body literal of a rule.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Literal {
    /// A positive sentence such as `(true (cell ?x ?y b))`.
    Atom(Term),
    /// `(not L)`.
    Not(Box<Literal>),
    /// `(distinct a b)`.
    Distinct(Term, Term),
    /// `(or L1 L2 ...)`.
    Or(Vec<Literal>),
}

impl Literal {
    /// Calls `visit` on every variable of the literal.
    pub fn for_each_var(&self, visit: &mut impl FnMut(SymbolId)) {
        match self {
            Literal::Atom(t) => t.for_each_var(visit),
            Literal::Not(l) => l.for_each_var(visit),
            Literal::Distinct(a, b) => {
                a.for_each_var(visit);
                b.for_each_var(visit);
            }
            Literal::Or(ls) => ls.iter().for_each(|l| l.for_each_var(visit)),
        }
    }
}

/// A rule `(<= head body...)`, or a fact when the body is empty.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Rule {
    /// The derived sentence.
    pub head: Term,
    /// The conditions, all of which must hold.
    pub body: Vec<Literal>,
    /// Where the rule starts in the source.
    pub span: Span,
}

/// A parse warning: a deviation from the GDL spec that was accepted because its
/// meaning is unambiguous.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Warning {
    /// Where the deviation is.
    pub span: Span,
    /// What was accepted and how it was read.
    pub message: String,
}

impl std::fmt::Display for Warning {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "warning at {}: {}", self.span, self.message)
    }
}

/// A parsed game description.
#[derive(Clone, Debug)]
pub struct Description {
    /// Every symbol of the description.
    pub symbols: SymbolTable,
    /// Facts and rules in source order (a fact is a rule with an empty body).
    pub rules: Vec<Rule>,
    /// Accepted deviations from the spec.
    pub warnings: Vec<Warning>,
}

/// The function symbol of a tuple, a list whose first element is a variable.
/// Its name is empty, so a tuple prints as it was written, `( ?n1 ?c1)`, and no
/// symbol read from a description can be it.
pub const TUPLE: &str = "";

/// Whether `description` is GDL-II: it has the role `random` or a rule for `sees`.
pub fn is_gdl2(description: &Description) -> bool {
    description.rules.iter().any(|r| {
        r.head.functor() == Some(SymbolId::SEES)
            || (r.head.functor() == Some(SymbolId::ROLE) && r.head.args() == [Term::Atom(SymbolId::RANDOM)])
    })
}
