//! Game states: sets of ground facts, kept both as canonical strings (what users
//! see and compare) and as terms (what the interpreter evaluates).

use ggpnet_kif::{term_to_string, SymbolTable, Term};

/// A state: a set of ground facts (the arguments of `true`), such as
/// `(cell 1 1 b)` or `(control white)`.
///
/// A state belongs to the [`Reference`](crate::Reference) that made it: its
/// terms use that game's symbols; [`Reference::state_from_facts`](crate::Reference::state_from_facts)
/// reads one from text.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RefState {
    /// Canonical strings, sorted by byte order, without duplicates.
    facts: Vec<String>,
    /// The same facts as terms, in the same order.
    terms: Vec<Term>,
}

impl RefState {
    /// The facts as canonical KIF strings, sorted by byte order.
    pub fn facts(&self) -> Vec<String> {
        self.facts.clone()
    }

    /// A state from ground terms of the game whose symbols are `symbols`.
    pub(crate) fn from_terms(terms: Vec<Term>, symbols: &SymbolTable) -> RefState {
        let mut pairs: Vec<(String, Term)> = terms
            .into_iter()
            .map(|t| (term_to_string(&t, symbols), t))
            .collect();
        pairs.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        pairs.dedup_by(|a, b| a.0 == b.0);
        let (facts, terms) = pairs.into_iter().unzip();
        RefState { facts, terms }
    }

    /// The facts as terms.
    pub(crate) fn terms(&self) -> &[Term] {
        &self.terms
    }
}
