//! Rule terms with numbered variables, and the operations a join needs on them:
//! matching against a ground term, finding or building the instance under the
//! current bindings, and comparing two instances.
//!
//! All functions here recurse over the nesting of one term only, never over rules.

use crate::terms::{Node, TermId, Terms};
use ggpnet_kif::SymbolId;

/// A term of a rule, compiled: variables are numbered per rule and every ground
/// subterm is already interned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Pat {
    /// The variable with this number.
    Var(u32),
    /// A ground term.
    Ground(TermId),
    /// A function term or sentence with at least one variable inside.
    Compound(SymbolId, Box<[Pat]>),
}

impl Pat {
    /// The pattern `(functor args...)`: ground (and interned) when every argument is.
    pub(crate) fn compound(functor: SymbolId, args: Box<[Pat]>, terms: &mut crate::terms::Terms<'_>) -> Pat {
        let ground: Option<Vec<TermId>> = args
            .iter()
            .map(|a| match a {
                Pat::Ground(g) => Some(*g),
                _ => None,
            })
            .collect();
        match ground {
            Some(ids) => Pat::Ground(terms.compound(functor, &ids)),
            None => Pat::Compound(functor, args),
        }
    }

    /// Calls `visit` on every variable occurrence, left to right.
    pub(crate) fn for_each_var(&self, visit: &mut impl FnMut(u32)) {
        match self {
            Pat::Var(v) => visit(*v),
            Pat::Ground(_) => {}
            Pat::Compound(_, args) => args.iter().for_each(|a| a.for_each_var(visit)),
        }
    }

    /// True when every variable of the pattern is marked in `bound`.
    pub(crate) fn is_bound_by(&self, bound: &[bool]) -> bool {
        let mut all = true;
        self.for_each_var(&mut |v| all &= bound[v as usize]);
        all
    }
}

/// The values of a rule's variables during a join, with a trail to undo bindings.
#[derive(Debug)]
pub(crate) struct Bindings {
    values: Vec<Option<TermId>>,
    trail: Vec<u32>,
}

impl Bindings {
    /// `count` unbound variables.
    pub(crate) fn new(count: usize) -> Self {
        Bindings {
            values: vec![None; count],
            trail: Vec::new(),
        }
    }

    /// The value of variable `var`, if bound.
    pub(crate) fn get(&self, var: u32) -> Option<TermId> {
        self.values[var as usize]
    }

    /// Binds `var` to `value` (undone by [`Bindings::undo`]).
    pub(crate) fn bind(&mut self, var: u32, value: TermId) {
        self.values[var as usize] = Some(value);
        self.trail.push(var);
    }

    /// A point to come back to with [`Bindings::undo`].
    pub(crate) fn mark(&self) -> usize {
        self.trail.len()
    }

    /// Unbinds every variable bound since `mark`.
    pub(crate) fn undo(&mut self, mark: usize) {
        for var in self.trail.drain(mark..) {
            self.values[var as usize] = None;
        }
    }
}

/// Matches `pat` against the ground term `id`, binding unbound variables on the way.
/// On failure some bindings may have been made: the caller undoes them to its mark.
pub(crate) fn matches(pat: &Pat, id: TermId, terms: &Terms, bindings: &mut Bindings) -> bool {
    match pat {
        Pat::Ground(g) => *g == id,
        Pat::Var(v) => match bindings.get(*v) {
            Some(value) => value == id,
            None => {
                bindings.bind(*v, id);
                true
            }
        },
        Pat::Compound(f, pats) => match terms.node(id) {
            Node::Compound(g, args) if g == f && args.len() == pats.len() => pats
                .iter()
                .zip(args.iter())
                .all(|(p, &a)| matches(p, a, terms, bindings)),
            _ => false,
        },
    }
}

/// The id of the instance of `pat` under `bindings`, or `None` when that term was
/// never interned (so no fact can contain it) or a variable is unbound.
pub(crate) fn find(pat: &Pat, terms: &Terms, bindings: &Bindings) -> Option<TermId> {
    match pat {
        Pat::Ground(g) => Some(*g),
        Pat::Var(v) => bindings.get(*v),
        Pat::Compound(f, pats) => terms.find_compound_from(*f, pats.iter().map(|p| find(p, terms, bindings))),
    }
}

/// Interns the instance of `pat` under `bindings`; every variable must be bound.
pub(crate) fn instantiate(pat: &Pat, terms: &mut Terms, bindings: &Bindings) -> Option<TermId> {
    match pat {
        Pat::Ground(g) => Some(*g),
        Pat::Var(v) => bindings.get(*v),
        Pat::Compound(f, pats) => {
            let args = pats
                .iter()
                .map(|p| instantiate(p, terms, bindings))
                .collect::<Option<Vec<_>>>()?;
            Some(terms.compound(*f, &args))
        }
    }
}

/// True when the instances of `a` and `b` under `bindings` are the same term.
/// Every variable of both must be bound.
pub(crate) fn same(a: &Pat, b: &Pat, terms: &Terms, bindings: &Bindings) -> bool {
    match (a, b) {
        (Pat::Ground(x), Pat::Ground(y)) => x == y,
        (Pat::Var(v), other) | (other, Pat::Var(v)) => match bindings.get(*v) {
            Some(value) => equals_ground(other, value, terms, bindings),
            None => false,
        },
        (Pat::Ground(g), other @ Pat::Compound(..)) | (other @ Pat::Compound(..), Pat::Ground(g)) => {
            equals_ground(other, *g, terms, bindings)
        }
        (Pat::Compound(f, xs), Pat::Compound(g, ys)) => {
            f == g
                && xs.len() == ys.len()
                && xs.iter().zip(ys.iter()).all(|(x, y)| same(x, y, terms, bindings))
        }
    }
}

/// True when the instance of `pat` under `bindings` is the ground term `id`.
fn equals_ground(pat: &Pat, id: TermId, terms: &Terms, bindings: &Bindings) -> bool {
    match pat {
        Pat::Ground(g) => *g == id,
        Pat::Var(v) => bindings.get(*v) == Some(id),
        Pat::Compound(f, pats) => match terms.node(id) {
            Node::Compound(g, args) if g == f && args.len() == pats.len() => pats
                .iter()
                .zip(args.iter())
                .all(|(p, &a)| equals_ground(p, a, terms, bindings)),
            _ => false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terms::TermStore;
    use ggpnet_kif::{parse_term, SymbolTable};

    #[test]
    fn match_find_instantiate_and_compare() {
        let mut symbols = SymbolTable::new();
        let cell = symbols.intern("cell");
        let empty = TermStore::default();
        let mut terms = Terms::over(&empty);
        let fact = terms
            .intern(&parse_term("(cell 1 (f 2) 1)", &mut symbols).unwrap())
            .unwrap();
        let one = terms.intern(&parse_term("1", &mut symbols).unwrap()).unwrap();
        // (cell ?0 ?1 ?0)
        let pat = Pat::Compound(cell, vec![Pat::Var(0), Pat::Var(1), Pat::Var(0)].into());
        let mut b = Bindings::new(2);
        assert!(matches(&pat, fact, &terms, &mut b));
        assert_eq!(b.get(0), Some(one));
        assert_eq!(find(&pat, &terms, &b), Some(fact));
        assert!(same(&Pat::Var(0), &Pat::Ground(one), &terms, &b));
        assert!(!same(&Pat::Var(0), &Pat::Var(1), &terms, &b));
        b.undo(0);
        assert_eq!(b.get(0), None);
        // A repeated variable must take the same value twice.
        let other = terms
            .intern(&parse_term("(cell 1 (f 2) 3)", &mut symbols).unwrap())
            .unwrap();
        let mark = b.mark();
        assert!(!matches(&pat, other, &terms, &mut b));
        b.undo(mark);
        // Instances that were never interned are found to be absent, then built.
        b.bind(0, other);
        b.bind(1, other);
        assert_eq!(find(&pat, &terms, &b), None);
        let built = instantiate(&pat, &mut terms, &b).unwrap();
        assert_eq!(find(&pat, &terms, &b), Some(built));
    }
}
