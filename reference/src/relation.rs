//! The facts of one relation, as interned sentences, with hash indexes.
//!
//! An index serves one kind of lookup: "facts whose subterm at path P has the shape
//! `(f _ _)`, and whose subterms at paths K1, K2... are these ground terms". The
//! [`IndexSpec`] lists the shapes and key paths; a fact is filed under the hash of
//! its key subterms (facts of another shape are left out). A bucket may hold facts
//! with colliding hashes, so whoever reads one still matches every fact against its
//! pattern: an index only narrows the search, it never decides.

use crate::hash::{FastHasher, FastMap, FastSet};
use crate::terms::{Node, TermId, Terms};
use ggpnet_kif::SymbolId;
use std::hash::Hasher;

/// A position in a sentence: argument numbers from the root.
pub(crate) type Path = Box<[u16]>;

/// One condition of an [`IndexSpec`].
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub(crate) enum SpecEntry {
    /// The subterm at `path` must be a compound term `(functor ...)` of this arity.
    Shape {
        /// Where.
        path: Path,
        /// Its function symbol.
        functor: SymbolId,
        /// Its number of arguments.
        arity: usize,
    },
    /// The subterm at this path is part of the key.
    Key(Path),
}

/// What an index files facts under; entries are in pattern order, every `Shape`
/// before the entries below it.
#[derive(Clone, PartialEq, Eq, Hash, Debug, Default)]
pub(crate) struct IndexSpec {
    /// The conditions.
    pub(crate) entries: Vec<SpecEntry>,
}

impl IndexSpec {
    /// Number of key subterms.
    pub(crate) fn keys(&self) -> usize {
        self.entries
            .iter()
            .filter(|e| matches!(e, SpecEntry::Key(_)))
            .count()
    }

    /// The hash `fact` is filed under, or `None` when it lacks a required shape.
    pub(crate) fn key_of(&self, fact: TermId, terms: &Terms) -> Option<u64> {
        let mut hasher = FastHasher::default();
        for entry in &self.entries {
            match entry {
                SpecEntry::Shape { path, functor, arity } => match terms.node(subterm(fact, path, terms)?) {
                    Node::Compound(f, args) if f == functor && args.len() == *arity => {}
                    _ => return None,
                },
                SpecEntry::Key(path) => hasher.write_u32(subterm(fact, path, terms)?.raw()),
            }
        }
        Some(hasher.finish())
    }
}

/// The hash of key subterms, as [`IndexSpec::key_of`] computes it; `None` when
/// one is missing.
pub(crate) fn key_hash(keys: impl Iterator<Item = Option<TermId>>) -> Option<u64> {
    let mut hasher = FastHasher::default();
    for key in keys {
        hasher.write_u32(key?.raw());
    }
    Some(hasher.finish())
}

/// The subterm of `id` at `path`, if the term has that position.
fn subterm(id: TermId, path: &[u16], terms: &Terms) -> Option<TermId> {
    path.iter()
        .try_fold(id, |at, &i| terms.args(at).get(usize::from(i)).copied())
}

#[derive(Clone, Debug)]
struct Index {
    spec: IndexSpec,
    buckets: FastMap<u64, Vec<TermId>>,
}

/// The facts of one relation, in insertion order, with their indexes.
#[derive(Clone, Debug, Default)]
pub(crate) struct Relation {
    facts: Vec<TermId>,
    set: FastSet<TermId>,
    indexes: Vec<Index>,
}

impl Relation {
    /// Every fact, in insertion order.
    pub(crate) fn facts(&self) -> &[TermId] {
        &self.facts
    }

    /// Number of facts.
    pub(crate) fn len(&self) -> usize {
        self.facts.len()
    }

    /// True when `fact` holds.
    pub(crate) fn contains(&self, fact: TermId) -> bool {
        self.set.contains(&fact)
    }

    /// Adds `fact`; false if it was already there.
    pub(crate) fn insert(&mut self, fact: TermId, terms: &Terms) -> bool {
        if !self.set.insert(fact) {
            return false;
        }
        self.facts.push(fact);
        for index in &mut self.indexes {
            if let Some(key) = index.spec.key_of(fact, terms) {
                index.buckets.entry(key).or_default().push(fact);
            }
        }
        true
    }

    /// The number of the index for `spec`, creating it (over the current facts)
    /// if needed.
    pub(crate) fn index_for(&mut self, spec: &IndexSpec, terms: &Terms) -> usize {
        if let Some(i) = self.indexes.iter().position(|x| &x.spec == spec) {
            return i;
        }
        let mut index = Index {
            spec: spec.clone(),
            buckets: FastMap::default(),
        };
        for &fact in &self.facts {
            if let Some(key) = spec.key_of(fact, terms) {
                index.buckets.entry(key).or_default().push(fact);
            }
        }
        self.indexes.push(index);
        self.indexes.len() - 1
    }

    /// The facts filed under `key` in index number `index` (a superset of the
    /// matching facts; empty for an unknown index).
    pub(crate) fn lookup(&self, index: usize, key: u64) -> &[TermId] {
        self.indexes
            .get(index)
            .and_then(|x| x.buckets.get(&key))
            .map_or(&[], Vec::as_slice)
    }

    /// An empty relation with the same indexes.
    pub(crate) fn empty_like(&self) -> Relation {
        Relation {
            facts: Vec::new(),
            set: FastSet::default(),
            indexes: self
                .indexes
                .iter()
                .map(|x| Index {
                    spec: x.spec.clone(),
                    buckets: FastMap::default(),
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::terms::TermStore;
    use ggpnet_kif::{parse_term, SymbolTable};

    #[test]
    fn index_files_facts_by_shape_and_key() {
        let mut symbols = SymbolTable::new();
        let empty = TermStore::default();
        let mut terms = Terms::over(&empty);
        let mut fact =
            |text: &str, terms: &mut Terms| terms.intern(&parse_term(text, &mut symbols).unwrap()).unwrap();
        let a = fact("(true (cell 1 2 x))", &mut terms);
        let b = fact("(true (cell 1 3 o))", &mut terms);
        let c = fact("(true (control x))", &mut terms);
        let one = fact("1", &mut terms);
        let cell = symbols.get("cell").unwrap();
        let mut relation = Relation::default();
        assert!(relation.insert(a, &terms));
        assert!(!relation.insert(a, &terms));
        // (true (cell 1 ?y ?p)): shape at [0], key at [0, 0].
        let spec = IndexSpec {
            entries: vec![
                SpecEntry::Shape {
                    path: vec![0].into(),
                    functor: cell,
                    arity: 3,
                },
                SpecEntry::Key(vec![0, 0].into()),
            ],
        };
        let index = relation.index_for(&spec, &terms);
        relation.insert(b, &terms);
        relation.insert(c, &terms);
        assert_eq!(
            relation.lookup(index, key_hash([Some(one)].into_iter()).unwrap()),
            &[a, b]
        );
        assert_eq!(relation.len(), 3);
        assert!(relation.empty_like().facts().is_empty());
        assert_eq!(relation.empty_like().index_for(&spec, &terms), index);
    }
}
