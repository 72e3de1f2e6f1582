//! Hash-consed ground terms.
//!
//! Every ground term the interpreter meets — constants, function terms and whole
//! sentences such as `(cell 1 1 b)` or `(true (control white))` — is interned once and
//! named by a [`TermId`], so two ground terms are equal exactly when their ids are.
//!
//! The terms of the static part of a game (everything computed when a
//! [`crate::Reference`] is built) live in a frozen [`TermStore`]. Evaluating one state
//! needs a few more (moves, successor facts, derived sentences): they go into a
//! [`Terms`] layer over the frozen store and are dropped with it.
//!
//! Sharing makes a term's id cheap whatever its size as a tree: `(p ?x ?x)`
//! applied to itself n times is n nodes here and 2^n symbols written out. So
//! every node records its [`Shape`] (its size and depth as a tree), and terms
//! leave the interpreter as trees ([`Terms::to_term`]) only within an
//! [`OutputBudget`]: [`MAX_OUTPUT_SYMBOLS`] in all per query, each nested at
//! most [`MAX_TERM_DEPTH`] deep. A game whose terms grow without bound fails
//! with [`TermsTooLarge`] (a `ReferenceError`) instead of exhausting memory or the
//! stack.

use crate::hash::{FastHasher, FastMap};
use ggpnet_kif::{SymbolId, Term};
use std::hash::Hasher;

/// The id of an interned ground term.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub(crate) struct TermId(u32);

impl TermId {
    /// The id as a number, for hashing.
    pub(crate) fn raw(self) -> u32 {
        self.0
    }
}

/// The shape of one interned term; arguments are themselves interned.
#[derive(Debug)]
pub(crate) enum Node {
    /// A constant such as `noop` or `10`.
    Atom(SymbolId),
    /// A function term or sentence; no arguments (`(f)`) differs from the atom `f`.
    Compound(SymbolId, Box<[TermId]>),
}

/// The most symbols, written out, that the terms one query lets out of the
/// interpreter (a state's facts; its legal moves and goals; its percepts) may
/// have in all: a million (the corpus's largest states and move lists have
/// some thousands).
pub const MAX_OUTPUT_SYMBOLS: u32 = 1_000_000;

/// The deepest nesting of a term that leaves the interpreter (a constant has
/// depth 1): deep enough for any counter a game keeps as nested terms, shallow
/// enough for the recursive functions that read, write and drop terms.
pub const MAX_TERM_DEPTH: u32 = 1_000;

/// Terms refused by an [`OutputBudget`]: the symbols let out with the refused
/// term's, and its depth.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct TermsTooLarge {
    pub(crate) symbols: u64,
    pub(crate) depth: u64,
}

/// What is left of the symbols one query may let out ([`MAX_OUTPUT_SYMBOLS`]).
pub(crate) struct OutputBudget {
    left: u32,
}

impl OutputBudget {
    /// The whole budget of a query.
    pub(crate) fn new() -> OutputBudget {
        OutputBudget {
            left: MAX_OUTPUT_SYMBOLS,
        }
    }
}

/// A term's size and depth as a tree, each saturating at `u32::MAX`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Shape {
    size: u32,
    depth: u32,
}

impl Shape {
    /// The shape of a node whose arguments have the shapes `args`.
    fn of(args: impl Iterator<Item = Shape>) -> Shape {
        args.fold(Shape { size: 1, depth: 1 }, |s, a| Shape {
            size: s.size.saturating_add(a.size),
            depth: s.depth.max(a.depth.saturating_add(1)),
        })
    }
}

/// An owned table of interned terms whose ids start at some offset.
#[derive(Default, Debug)]
pub(crate) struct TermStore {
    nodes: Vec<Node>,
    /// Per node, its shape.
    shapes: Vec<Shape>,
    atoms: FastMap<SymbolId, TermId>,
    /// Compound terms by the hash of their functor and arguments.
    compounds: FastMap<u64, TermId>,
    /// Further compound terms whose hash was already taken (rare).
    collisions: FastMap<u64, Vec<TermId>>,
}

impl TermStore {
    /// Number of terms in the store.
    pub(crate) fn len(&self) -> usize {
        self.nodes.len()
    }
}

/// The hash a compound term is filed under.
fn compound_hash(functor: SymbolId, args: &[TermId]) -> u64 {
    let mut hasher = FastHasher::default();
    hasher.write_u32(functor.index() as u32);
    args.iter().for_each(|a| hasher.write_u32(a.0));
    hasher.finish()
}

/// A growable layer of terms over a frozen [`TermStore`]: lookups see both, new
/// terms go into the layer and get ids after the frozen ones.
#[derive(Debug)]
pub(crate) struct Terms<'a> {
    base: &'a TermStore,
    own: TermStore,
    offset: u32,
}

impl<'a> Terms<'a> {
    /// A layer over `base`, initially empty.
    pub(crate) fn over(base: &'a TermStore) -> Self {
        Terms {
            base,
            own: TermStore::default(),
            offset: u32::try_from(base.len()).expect("fewer than 2^32 terms"),
        }
    }

    /// The terms added by this layer, as a store of their own. Their ids stay valid
    /// only when the base was empty, which is how the static store is built.
    pub(crate) fn into_own(self) -> TermStore {
        debug_assert_eq!(self.offset, 0, "only a layer over an empty store is frozen");
        self.own
    }

    /// The node of an id produced by this layer or its base.
    pub(crate) fn node(&self, id: TermId) -> &Node {
        match id.0.checked_sub(self.offset) {
            Some(own) => &self.own.nodes[own as usize],
            None => &self.base.nodes[id.0 as usize],
        }
    }

    /// The id of the constant `symbol`, if it was interned.
    pub(crate) fn find_atom(&self, symbol: SymbolId) -> Option<TermId> {
        let found = self.base.atoms.get(&symbol);
        found.or_else(|| self.own.atoms.get(&symbol)).copied()
    }

    /// The id of `(functor args...)`, if it was interned.
    pub(crate) fn find_compound(&self, functor: SymbolId, args: &[TermId]) -> Option<TermId> {
        let hash = compound_hash(functor, args);
        let found = self.find_in(self.base, hash, functor, args);
        found.or_else(|| self.find_in(&self.own, hash, functor, args))
    }

    /// Like [`Terms::find_compound`] with arguments that may be missing: `None` when
    /// one is. The arguments are gathered on the stack for the usual small arities.
    pub(crate) fn find_compound_from(
        &self,
        functor: SymbolId,
        args: impl ExactSizeIterator<Item = Option<TermId>>,
    ) -> Option<TermId> {
        let arity = args.len();
        let mut inline = [TermId(0); 16];
        let mut heap = Vec::new();
        let gathered: &mut [TermId] = if arity <= inline.len() {
            &mut inline[..arity]
        } else {
            heap.resize(arity, TermId(0));
            &mut heap
        };
        for (slot, arg) in gathered.iter_mut().zip(args) {
            *slot = arg?;
        }
        self.find_compound(functor, gathered)
    }

    /// The id of `(functor args...)` in `store` (the base or this layer's own).
    fn find_in(&self, store: &TermStore, hash: u64, functor: SymbolId, args: &[TermId]) -> Option<TermId> {
        let is_it =
            |id: &TermId| matches!(self.node(*id), Node::Compound(f, a) if *f == functor && a[..] == *args);
        let first = store.compounds.get(&hash)?;
        if is_it(first) {
            return Some(*first);
        }
        store.collisions.get(&hash)?.iter().find(|id| is_it(id)).copied()
    }

    fn push(&mut self, node: Node) -> TermId {
        let index = self.offset as usize + self.own.nodes.len();
        let id = TermId(u32::try_from(index).expect("fewer than 2^32 terms"));
        let shape = Shape::of(self.args_of(&node).iter().map(|&a| self.shape(a)));
        self.own.nodes.push(node);
        self.own.shapes.push(shape);
        id
    }

    /// The shape of an id produced by this layer or its base.
    fn shape(&self, id: TermId) -> Shape {
        match id.0.checked_sub(self.offset) {
            Some(own) => self.own.shapes[own as usize],
            None => self.base.shapes[id.0 as usize],
        }
    }

    fn args_of<'n>(&self, node: &'n Node) -> &'n [TermId] {
        match node {
            Node::Atom(_) => &[],
            Node::Compound(_, args) => args,
        }
    }

    /// Interns the constant `symbol`.
    pub(crate) fn atom(&mut self, symbol: SymbolId) -> TermId {
        if let Some(id) = self.find_atom(symbol) {
            return id;
        }
        let id = self.push(Node::Atom(symbol));
        self.own.atoms.insert(symbol, id);
        id
    }

    /// Interns the compound term `(functor args...)`.
    pub(crate) fn compound(&mut self, functor: SymbolId, args: &[TermId]) -> TermId {
        let hash = compound_hash(functor, args);
        let found = self.find_in(self.base, hash, functor, args);
        if let Some(id) = found.or_else(|| self.find_in(&self.own, hash, functor, args)) {
            return id;
        }
        let id = self.push(Node::Compound(functor, args.into()));
        if let Some(taken) = self.own.compounds.get(&hash) {
            debug_assert_ne!(*taken, id);
            self.own.collisions.entry(hash).or_default().push(id);
        } else {
            self.own.compounds.insert(hash, id);
        }
        id
    }

    /// Interns a ground AST term; `None` if it contains a variable.
    pub(crate) fn intern(&mut self, term: &Term) -> Option<TermId> {
        match term {
            Term::Atom(s) => Some(self.atom(*s)),
            Term::Var(_) => None,
            Term::Compound(f, args) => {
                let args = args.iter().map(|a| self.intern(a)).collect::<Option<Vec<_>>>()?;
                Some(self.compound(*f, &args))
            }
        }
    }

    /// The AST form of an interned term, if it is nested at most
    /// [`MAX_TERM_DEPTH`] deep and fits in what is left of `budget`.
    pub(crate) fn to_term(&self, id: TermId, budget: &mut OutputBudget) -> Result<Term, TermsTooLarge> {
        let Shape { size, depth } = self.shape(id);
        if size > budget.left || depth > MAX_TERM_DEPTH {
            return Err(TermsTooLarge {
                symbols: u64::from(MAX_OUTPUT_SYMBOLS - budget.left) + u64::from(size),
                depth: u64::from(depth),
            });
        }
        budget.left -= size;
        Ok(self.unfold(id))
    }

    /// The AST form of an interned term (within the bounds of [`Terms::to_term`]).
    fn unfold(&self, id: TermId) -> Term {
        match self.node(id) {
            Node::Atom(s) => Term::Atom(*s),
            Node::Compound(f, args) => Term::Compound(*f, args.iter().map(|&a| self.unfold(a)).collect()),
        }
    }

    /// The arguments of a compound term (empty for a constant).
    pub(crate) fn args(&self, id: TermId) -> &[TermId] {
        match self.node(id) {
            Node::Atom(_) => &[],
            Node::Compound(_, args) => args,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ggpnet_kif::{parse_term, SymbolTable};

    #[test]
    fn equal_terms_share_an_id_across_layers() {
        let mut symbols = SymbolTable::new();
        let cell = parse_term("(cell 1 (f) b)", &mut symbols).unwrap();
        let f_atom = parse_term("f", &mut symbols).unwrap();
        let f_call = parse_term("(f)", &mut symbols).unwrap();
        let empty = TermStore::default();
        let mut layer = Terms::over(&empty);
        let id = layer.intern(&cell).unwrap();
        let atom = layer.intern(&f_atom).unwrap();
        let call = layer.intern(&f_call).unwrap();
        assert_ne!(atom, call, "(f) and f are different terms");
        let frozen = layer.into_own();

        let mut upper = Terms::over(&frozen);
        assert_eq!(upper.intern(&cell), Some(id));
        assert_eq!(upper.to_term(id, &mut OutputBudget::new()), Ok(cell));
        let other = upper.intern(&parse_term("(cell 2)", &mut symbols).unwrap());
        assert!(other.unwrap().raw() as usize >= frozen.len());
        let var = parse_term("(cell ?x)", &mut symbols).unwrap();
        assert_eq!(upper.intern(&var), None);
    }

    #[test]
    fn terms_with_equal_hashes_stay_apart() {
        let mut symbols = SymbolTable::new();
        let a = parse_term("(f a)", &mut symbols).unwrap();
        let b = parse_term("(f b)", &mut symbols).unwrap();
        let empty = TermStore::default();
        let mut layer = Terms::over(&empty);
        let a_id = layer.intern(&a).unwrap();
        let b_atom = layer.intern(&parse_term("b", &mut symbols).unwrap()).unwrap();
        let f = symbols.get("f").unwrap();
        // Pretend (f b) hashes like (f a): its slot is taken by (f a).
        layer.own.compounds.insert(compound_hash(f, &[b_atom]), a_id);
        let b_id = layer.intern(&b).unwrap();
        assert_ne!(a_id, b_id);
        assert_eq!(layer.find_compound(f, &[b_atom]), Some(b_id));
        assert_eq!(layer.intern(&b), Some(b_id));
        assert_eq!(layer.to_term(b_id, &mut OutputBudget::new()), Ok(b));
    }

    #[test]
    fn wide_terms_are_interned_too() {
        let mut symbols = SymbolTable::new();
        let wide = format!(
            "(w {})",
            (0..40).map(|i| i.to_string()).collect::<Vec<_>>().join(" ")
        );
        let term = parse_term(&wide, &mut symbols).unwrap();
        let empty = TermStore::default();
        let mut layer = Terms::over(&empty);
        let id = layer.intern(&term).unwrap();
        assert_eq!(layer.intern(&term), Some(id));
        assert_eq!(layer.args(id).len(), 40);
    }
}
