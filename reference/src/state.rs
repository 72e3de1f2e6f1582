//! Game states: sets of ground facts, kept both as canonical strings (what users
//! see and compare) and as terms (what the interpreter evaluates).

use crate::error::ReferenceError;
use crate::reference::Reference;
use ggpnet_kif::{term_to_string, SymbolTable, Term};

/// A state: a set of ground facts (the arguments of `true`), such as
/// `(cell 1 1 b)` or `(control white)`.
///
/// A state belongs to the [`Reference`] that made it: its terms use that game's
/// symbols.
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

    /// Reads a state of `reference`'s game from canonical (or any valid KIF)
    /// strings. Fails on text that is not one ground term, and on symbols that
    /// occur nowhere in the game (no rule could ever see such a fact).
    ///
    /// ```
    /// use ggpnet_reference::{RefState, Reference};
    /// let game = ggpnet_kif::parse("(role r) (init (at 1)) (<= (legal r go) (true (at 1)))").unwrap();
    /// let reference = Reference::new(&game).unwrap();
    /// let state = RefState::from_facts(&reference, &["(at  1)".to_string()]).unwrap();
    /// assert_eq!(state, reference.initial_state());
    /// assert!(RefState::from_facts(&reference, &["(at 2)".to_string()]).is_err());
    /// ```
    pub fn from_facts(reference: &Reference, facts: &[String]) -> Result<RefState, ReferenceError> {
        reference.read_state(facts)
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
