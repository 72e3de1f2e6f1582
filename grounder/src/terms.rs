//! Hash-consed ground terms: each distinct ground term is stored once and named
//! by a [`TermId`], so equality is an integer compare and sets of facts are
//! sets of integers.

use ggpnet_kif::{SymbolId, SymbolTable};
use hashbrown::HashTable;
use rustc_hash::FxHasher;
use std::fmt::Write;
use std::hash::{Hash, Hasher};

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
/// hash-table entry and allocation header, rounded up to the figure of the
/// store that kept each term twice, so that the memory limit stops where it did.
const TERM_BYTES: usize = 96;

/// Estimated bytes one argument takes (rounded up likewise).
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
///
/// Each term is kept once, in `terms`; the table holds ids, hashed on the
/// term's functor and arguments and compared in `terms`, so that a term can
/// be looked up by its parts ([`TermStore::intern_compound`]) without
/// building it first: a join builds most of its terms many times over.
#[derive(Clone, Debug, Default)]
pub struct TermStore {
    terms: Vec<GroundTerm>,
    ids: HashTable<TermId>,
    /// An estimate of the memory the terms take, for the grounder's memory limit.
    bytes: usize,
}

impl PartialEq for TermStore {
    fn eq(&self, other: &TermStore) -> bool {
        // The table is a function of the terms.
        self.terms == other.terms
    }
}

impl Eq for TermStore {}

/// The hash of a term given by its parts: a constant has no arguments, a
/// compound term a (possibly empty) list of them.
fn hash_parts(functor: SymbolId, args: Option<&[TermId]>) -> u64 {
    let mut hasher = FxHasher::default();
    functor.hash(&mut hasher);
    args.hash(&mut hasher);
    hasher.finish()
}

/// [`hash_parts`] of a term.
fn hash_term(term: &GroundTerm) -> u64 {
    match term {
        GroundTerm::Atom(s) => hash_parts(*s, None),
        GroundTerm::Compound(f, args) => hash_parts(*f, Some(&args[..])),
    }
}

/// Whether `term` is the term of these parts.
fn is_term_of(term: &GroundTerm, functor: SymbolId, args: Option<&[TermId]>) -> bool {
    match (term, args) {
        (GroundTerm::Atom(s), None) => *s == functor,
        (GroundTerm::Compound(f, own), Some(args)) => *f == functor && **own == *args,
        _ => false,
    }
}

impl TermStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// The id of `term`, interning it if new.
    pub fn intern(&mut self, term: GroundTerm) -> TermId {
        match self.get(&term) {
            Some(id) => id,
            None => self.push(term),
        }
    }

    /// The id of the compound term `(functor args...)`, interning it if new;
    /// its arguments are copied only then.
    ///
    /// ```
    /// use ggpnet_grounder::{GroundTerm, TermStore};
    /// let mut symbols = ggpnet_kif::SymbolTable::new();
    /// let mut store = TermStore::new();
    /// let one = store.intern(GroundTerm::Atom(symbols.intern("1")));
    /// let cell = store.intern_compound(symbols.intern("cell"), &[one, one]);
    /// assert_eq!(store.get_compound(symbols.intern("cell"), &[one, one]), Some(cell));
    /// assert_eq!(store.intern(GroundTerm::Compound(symbols.intern("cell"), vec![one, one].into())), cell);
    /// ```
    pub fn intern_compound(&mut self, functor: SymbolId, args: &[TermId]) -> TermId {
        match self.find(functor, Some(args)) {
            Some(id) => id,
            None => self.push(GroundTerm::Compound(functor, args.into())),
        }
    }

    /// Stores `term`, which is not in the store yet.
    fn push(&mut self, term: GroundTerm) -> TermId {
        let id = TermId(u32::try_from(self.terms.len()).expect("fewer than 2^32 ground terms"));
        let hash = hash_term(&term);
        self.bytes += term_bytes(&term);
        self.terms.push(term);
        let terms = &self.terms;
        self.ids
            .insert_unique(hash, id, |other| hash_term(&terms[other.index()]));
        id
    }

    /// Forgets the terms interned after the first `len`.
    pub(crate) fn truncate(&mut self, len: usize) {
        for index in (len..self.terms.len()).rev() {
            let term = &self.terms[index];
            self.bytes -= term_bytes(term);
            if let Ok(entry) = self.ids.find_entry(hash_term(term), |id| id.index() == index) {
                entry.remove();
            }
        }
        self.terms.truncate(len);
    }

    /// The id of `term` if it was interned.
    pub fn get(&self, term: &GroundTerm) -> Option<TermId> {
        match term {
            GroundTerm::Atom(s) => self.find(*s, None),
            GroundTerm::Compound(f, args) => self.find(*f, Some(&args[..])),
        }
    }

    /// The id of the compound term `(functor args...)` if it was interned.
    pub fn get_compound(&self, functor: SymbolId, args: &[TermId]) -> Option<TermId> {
        self.find(functor, Some(args))
    }

    /// The id of the term of these parts if it was interned.
    fn find(&self, functor: SymbolId, args: Option<&[TermId]>) -> Option<TermId> {
        let hash = hash_parts(functor, args);
        let terms = &self.terms;
        self.ids
            .find(hash, |id| is_term_of(&terms[id.index()], functor, args))
            .copied()
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

    /// The id of the compound term `(functor args...)`: its id in `base` if it
    /// is there, else a provisional one. `base` must be the store these terms
    /// were started over, unchanged since.
    pub(crate) fn intern_compound(&mut self, base: &TermStore, functor: SymbolId, args: &[TermId]) -> TermId {
        if let Some(id) = base.get_compound(functor, args) {
            return id;
        }
        TermId(self.base_len + self.new.intern_compound(functor, args).0)
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_by_parts_and_whole_are_one_and_truncation_forgets_them() {
        let mut symbols = SymbolTable::new();
        let (f, a, b) = (symbols.intern("f"), symbols.intern("a"), symbols.intern("b"));
        let mut store = TermStore::new();
        let ta = store.intern(GroundTerm::Atom(a));
        let tb = store.intern(GroundTerm::Atom(b));
        // `(f)` with no arguments is not the constant `f`.
        let f0 = store.intern_compound(f, &[]);
        assert_ne!(Some(f0), store.get(&GroundTerm::Atom(f)));
        let fab = store.intern_compound(f, &[ta, tb]);
        assert_eq!(store.intern(GroundTerm::Compound(f, vec![ta, tb].into())), fab);
        assert_eq!(store.get_compound(f, &[tb, ta]), None);
        let mark = store.len();
        let fba = store.intern_compound(f, &[tb, ta]);
        let bytes = store.bytes();
        store.intern_compound(f, &[fab, fba]);
        store.truncate(mark);
        assert_eq!((store.len(), store.get_compound(f, &[tb, ta])), (mark, None));
        assert!(store.bytes() < bytes);
        assert_eq!(store.get_compound(f, &[ta, tb]), Some(fab), "earlier terms stay");
        assert_eq!(store.intern_compound(f, &[tb, ta]), fba, "the id is given again");
        // Many terms: the table grows and still finds each.
        let ids: Vec<TermId> = (0..5000)
            .map(|k| store.intern_compound(f, &[fab, TermId(k)]))
            .collect();
        for (k, &id) in ids.iter().enumerate() {
            assert_eq!(store.get_compound(f, &[fab, TermId(k as u32)]), Some(id));
        }
        let mut local = LocalTerms::new(&store);
        let seen = local.intern_compound(&store, f, &[ta, tb]);
        let fresh = local.intern_compound(&store, f, &[fba, fba]);
        assert_eq!(seen, fab);
        let map = store.absorb(local);
        assert_eq!(store.get_compound(f, &[fba, fba]), Some(map.get(fresh)));
    }
}
