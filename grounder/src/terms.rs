//! Hash-consed ground terms: each distinct ground term is stored once and named
//! by a [`TermId`], so equality is an integer compare and sets of facts are
//! sets of integers.

use ggpnet_kif::{SymbolId, SymbolTable};
use rustc_hash::FxHashMap;
use std::fmt::Write;

/// A ground term interned in a [`TermStore`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct TermId(u32);

impl TermId {
    /// A sentinel that names no term (an unbound variable slot while joining).
    pub(crate) const NONE: TermId = TermId(u32::MAX);

    /// The id as an index into dense tables.
    pub fn index(self) -> usize {
        self.0 as usize
    }

    /// The raw number, for compact keys.
    pub fn raw(self) -> u32 {
        self.0
    }
}

/// The shape of a ground term.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum GroundTerm {
    /// A constant.
    Atom(SymbolId),
    /// A function applied to ground arguments (possibly none).
    Compound(SymbolId, Box<[TermId]>),
}

/// Owns every ground term of a game.
#[derive(Clone, Debug, Default)]
pub struct TermStore {
    terms: Vec<GroundTerm>,
    ids: FxHashMap<GroundTerm, TermId>,
}

impl TermStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// The id of `term`, interning it if new.
    pub fn intern(&mut self, term: GroundTerm) -> TermId {
        if let Some(&id) = self.ids.get(&term) {
            return id;
        }
        let id = TermId(u32::try_from(self.terms.len()).expect("fewer than 2^32 ground terms"));
        self.terms.push(term.clone());
        self.ids.insert(term, id);
        id
    }

    /// The id of `term` if it was interned.
    pub fn get(&self, term: &GroundTerm) -> Option<TermId> {
        self.ids.get(term).copied()
    }

    /// The shape of a term.
    pub fn term(&self, id: TermId) -> &GroundTerm {
        &self.terms[id.index()]
    }

    /// The functor or constant of a term.
    pub fn functor(&self, id: TermId) -> SymbolId {
        match self.term(id) {
            GroundTerm::Atom(s) | GroundTerm::Compound(s, _) => *s,
        }
    }

    /// The arguments of a term (empty for constants).
    pub fn args(&self, id: TermId) -> &[TermId] {
        match self.term(id) {
            GroundTerm::Atom(_) => &[],
            GroundTerm::Compound(_, args) => args,
        }
    }

    /// Number of interned terms.
    pub fn len(&self) -> usize {
        self.terms.len()
    }

    /// True when nothing is interned.
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// Interns a parsed term; `None` if it contains a variable.
    pub fn intern_term(&mut self, term: &ggpnet_kif::Term) -> Option<TermId> {
        Some(match term {
            ggpnet_kif::Term::Atom(s) => self.intern(GroundTerm::Atom(*s)),
            ggpnet_kif::Term::Var(_) => return None,
            ggpnet_kif::Term::Compound(f, args) => {
                let args = args
                    .iter()
                    .map(|a| self.intern_term(a))
                    .collect::<Option<Box<[TermId]>>>()?;
                self.intern(GroundTerm::Compound(*f, args))
            }
        })
    }

    /// Looks a parsed ground term up without interning it.
    pub fn find_term(&self, term: &ggpnet_kif::Term) -> Option<TermId> {
        match term {
            ggpnet_kif::Term::Atom(s) => self.get(&GroundTerm::Atom(*s)),
            ggpnet_kif::Term::Var(_) => None,
            ggpnet_kif::Term::Compound(f, args) => {
                let args = args
                    .iter()
                    .map(|a| self.find_term(a))
                    .collect::<Option<Box<[TermId]>>>()?;
                self.get(&GroundTerm::Compound(*f, args))
            }
        }
    }

    /// Writes the canonical KIF text of a term.
    pub fn write(&self, out: &mut String, id: TermId, symbols: &SymbolTable) {
        match self.term(id) {
            GroundTerm::Atom(s) => out.push_str(symbols.name(*s)),
            GroundTerm::Compound(f, args) => {
                out.push('(');
                out.push_str(symbols.name(*f));
                for &a in args.iter() {
                    out.push(' ');
                    self.write(out, a, symbols);
                }
                out.push(')');
            }
        }
    }

    /// The canonical KIF text of a term.
    ///
    /// ```
    /// use ggpnet_grounder::{GroundTerm, TermStore};
    /// let mut symbols = ggpnet_kif::SymbolTable::new();
    /// let mut store = TermStore::new();
    /// let one = store.intern(GroundTerm::Atom(symbols.intern("1")));
    /// let cell = store.intern(GroundTerm::Compound(symbols.intern("cell"), vec![one, one].into()));
    /// assert_eq!(store.to_kif(cell, &symbols), "(cell 1 1)");
    /// ```
    pub fn to_kif(&self, id: TermId, symbols: &SymbolTable) -> String {
        let mut s = String::new();
        self.write(&mut s, id, symbols);
        s
    }
}

impl std::fmt::Display for TermId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_char('t')?;
        write!(f, "{}", self.0)
    }
}
