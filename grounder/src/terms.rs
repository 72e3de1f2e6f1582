//! Hash-consed ground terms: each distinct ground term is stored once and named
//! by a [`TermId`], so equality is an integer compare and sets of facts are
//! sets of integers.

use ggpnet_kif::{SymbolId, SymbolTable};
use rustc_hash::FxHashMap;
use std::collections::hash_map::Entry;
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

    /// The id at `index` of a store's dense tables.
    pub(crate) fn from_index(index: usize) -> TermId {
        TermId(index as u32)
    }
}

/// Estimated bytes one interned term takes besides its arguments: its slot, its
/// hash-table entry (the key is a second copy), and two allocation headers.
const TERM_BYTES: usize = 96;

/// Estimated bytes one argument takes (stored twice: in the slot and the key).
const ARG_BYTES: usize = 8;

/// The estimated bytes of interning `term`.
fn term_bytes(term: &GroundTerm) -> usize {
    match term {
        GroundTerm::Atom(_) => TERM_BYTES,
        GroundTerm::Compound(_, args) => TERM_BYTES + ARG_BYTES * args.len(),
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

/// Owns every ground term of a game. Two stores are equal when they hold the same
/// terms under the same ids.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TermStore {
    terms: Vec<GroundTerm>,
    ids: FxHashMap<GroundTerm, TermId>,
    /// An estimate of the memory the terms take, for the grounder's memory limit.
    bytes: usize,
}

impl TermStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// The id of `term`, interning it if new.
    pub fn intern(&mut self, term: GroundTerm) -> TermId {
        let next = TermId(u32::try_from(self.terms.len()).expect("fewer than 2^32 ground terms"));
        match self.ids.entry(term) {
            Entry::Occupied(entry) => *entry.get(),
            Entry::Vacant(entry) => {
                self.bytes += term_bytes(entry.key());
                self.terms.push(entry.key().clone());
                entry.insert(next);
                next
            }
        }
    }

    /// Forgets the terms interned after the first `len`.
    pub(crate) fn truncate(&mut self, len: usize) {
        for term in self.terms.drain(len..) {
            self.bytes -= term_bytes(&term);
            self.ids.remove(&term);
        }
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

    /// An estimate of the bytes the terms take.
    pub fn bytes(&self) -> usize {
        self.bytes
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

/// Terms built while a [`TermStore`] is shared read-only (by the threads of a
/// grounding round): a term already in the store keeps its id, a new one gets a
/// provisional id past the store's end, and [`TermStore::absorb`] later interns the
/// new terms in the order they were made.
#[derive(Debug)]
pub(crate) struct LocalTerms {
    /// The length of the store when these terms were started: provisional ids begin here.
    base_len: u32,
    new: TermStore,
}

impl LocalTerms {
    /// No new terms yet, over `base`.
    pub(crate) fn new(base: &TermStore) -> Self {
        LocalTerms {
            base_len: base.terms.len() as u32,
            new: TermStore::new(),
        }
    }

    /// The id of `term`: its id in `base` if it is there, else a provisional one.
    /// `base` must be the store these terms were started over, unchanged since.
    pub(crate) fn intern(&mut self, base: &TermStore, term: GroundTerm) -> TermId {
        if let Some(id) = base.get(&term) {
            return id;
        }
        TermId(self.base_len + self.new.intern(term).0)
    }
    /// An estimate of the bytes the new terms take.
    pub(crate) fn bytes(&self) -> usize {
        self.new.bytes
    }
}

/// From the ids [`LocalTerms`] gave to the ids [`TermStore::absorb`] interned them at.
#[derive(Debug)]
pub(crate) struct TermMap {
    base_len: u32,
    ids: Vec<TermId>,
}

impl TermMap {
    /// The final id of `id`.
    pub(crate) fn get(&self, id: TermId) -> TermId {
        match id.0.checked_sub(self.base_len) {
            Some(local) => self.ids[local as usize],
            None => id,
        }
    }

    /// True when no id changes.
    pub(crate) fn is_identity(&self) -> bool {
        self.ids.is_empty()
    }
}

impl TermStore {
    /// Interns the terms of `local`, in the order they were made, and says where each went.
    /// The store must have been `local`'s base, possibly grown since (by other absorbs).
    pub(crate) fn absorb(&mut self, local: LocalTerms) -> TermMap {
        debug_assert!(self.terms.len() >= local.base_len as usize);
        let mut map = TermMap {
            base_len: local.base_len,
            ids: Vec::with_capacity(local.new.terms.len()),
        };
        for mut term in local.new.terms {
            if let GroundTerm::Compound(_, args) = &mut term {
                for arg in args.iter_mut() {
                    *arg = map.get(*arg);
                }
            }
            let id = self.intern(term);
            map.ids.push(id);
        }
        map
    }
}

impl std::fmt::Display for TermId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_char('t')?;
        write!(f, "{}", self.0)
    }
}
