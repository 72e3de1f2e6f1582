//! Reachability and instantiation in one semi-naive fixpoint.
//!
//! Static relations are evaluated exactly, stratum by stratum. Then every dynamic
//! rule is joined against an over-approximation of what can ever hold: `true`
//! ranges over everything `init` or `next` can produce, `does` over everything
//! `legal` can produce, and negated dynamic sentences are taken as possibly true.
//! Each binding a rule admits is found exactly once (semi-naive: in each round at
//! least one literal uses facts new in the previous round) and becomes a ground
//! rule. Joins are ordered dynamically: at every step the literal with the fewest
//! candidate facts (found through indexes on every subterm) is bound next, and
//! each filter (`distinct`, static negation) runs as soon as its variables are bound.
//!
//! The joins of a round with enough work run on the threads of the current rayon
//! pool, each cut into parts over the candidates of its first step; the parts build
//! their new terms beside the shared term store, and their results are merged in a
//! fixed order, so the ground program is the same whatever the number of threads.

use crate::check::Analysis;
use crate::config::Config;
use crate::error::GdlError;
use crate::error::Limit;
use crate::limits::{too_large, too_many_rules, Budget, Spent};
use crate::normalize::{NormalLiteral, NormalRule};
use crate::program::{GroundLiteral, GroundProgram, GroundRule};
use crate::terms::{GroundTerm, LocalTerms, TermId, TermMap, TermStore};
use ggpnet_kif::{Description, SymbolId, SymbolTable, Term};
use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet, FxHasher};
use std::collections::hash_map::Entry;
use std::hash::{Hash, Hasher};
use std::ops::Range;

/// Instances a join finds between two charges to the [`Budget`].
const CHARGE_EVERY: usize = 1024;

/// Candidate facts a join tries between two charges to the [`Budget`].
const STEPS_EVERY: usize = 1 << 16;

const UNBOUND: TermId = TermId::NONE;

/// A rule term with variables replaced by slot numbers.
#[derive(Clone, Debug)]
enum Pattern {
    Ground(TermId),
    Var(u32),
    Func(SymbolId, Box<[Pattern]>),
}

#[derive(Clone, Debug)]
struct Atom {
    relation: SymbolId,
    args: Box<[Pattern]>,
    sentence: Pattern,
}

#[derive(Clone, Debug)]
enum Filter {
    Distinct(Pattern, Pattern),
    Equal(Pattern, Pattern),
    Absent(Atom),
}

#[derive(Clone, Debug)]
struct CompiledRule {
    head: Pattern,
    head_relation: SymbolId,
    positives: Vec<Atom>,
    filters: Vec<Filter>,
    /// The variables of each filter.
    filter_vars: Vec<Vec<u32>>,
    vars: usize,
}

/// An index key: the subterm at a path of a fact is a given term, or has a given functor.
type Key = (u64, u32);

const FUNCTOR_TAG: u32 = 1 << 31;
const MAX_PATH_DEPTH: u32 = 7;

/// Extends a path (one byte per level, innermost last) by argument `position`.
fn child_path(path: u64, depth: u32, position: usize) -> Option<u64> {
    (depth < MAX_PATH_DEPTH && position < 255).then(|| path | ((position as u64 + 1) << (8 * depth)))
}

/// An index list longer than this, where several arguments are bound, asks for
/// an index on all of them.
const COMPOSITE_THRESHOLD: usize = 64;

/// The hash of the arguments of `args` at the positions in `mask` (a composite
/// index key; a collision only adds candidates that unification then rejects).
fn composite_key(mask: u64, args: impl Iterator<Item = (usize, TermId)>) -> u64 {
    let mut hasher = FxHasher::default();
    mask.hash(&mut hasher);
    for (position, term) in args {
        if mask & (1 << position) != 0 {
            term.raw().hash(&mut hasher);
        }
    }
    hasher.finish()
}

/// The facts of one relation, indexed by the value and the functor of every
/// subterm (up to a small depth), so literals like `(true (cell ?x 3 ?p))` find
/// their candidates without a scan; and, built on demand, by the values of
/// several top-level arguments at once.
#[derive(Default, Debug)]
struct Relation {
    sentences: Vec<TermId>,
    /// Each fact's position in `sentences`.
    members: FxHashMap<TermId, u32>,
    index: FxHashMap<Key, Vec<u32>>,
    /// Composite indexes: a mask of argument positions (below 64) → key → facts.
    composite: FxHashMap<u64, FxHashMap<u64, Vec<u32>>>,
    /// Facts before `stable` are old; `stable..end` are the current delta.
    stable: u32,
    end: u32,
    /// An estimate of the bytes the facts and their indexes take.
    bytes: usize,
}

/// Estimated bytes of one fact in its relation (its slot and membership entry).
const FACT_BYTES: usize = 32;

/// Estimated bytes of one entry of an index list, its share of the key included.
const INDEX_ENTRY_BYTES: usize = 16;

impl Relation {
    fn insert(&mut self, sentence: TermId, store: &TermStore) -> bool {
        let at = self.sentences.len() as u32;
        match self.members.entry(sentence) {
            Entry::Occupied(_) => return false,
            Entry::Vacant(slot) => slot.insert(at),
        };
        self.sentences.push(sentence);
        let mut entries = self.composite.len();
        for (&mask, index) in &mut self.composite {
            let key = composite_key(mask, store.args(sentence).iter().copied().enumerate());
            index.entry(key).or_default().push(at);
        }
        let mut stack: Vec<(TermId, u64, u32)> = store
            .args(sentence)
            .iter()
            .enumerate()
            .filter_map(|(i, &a)| child_path(0, 0, i).map(|p| (a, p, 1)))
            .collect();
        while let Some((term, path, depth)) = stack.pop() {
            self.index.entry((path, term.raw())).or_default().push(at);
            entries += 1;
            if let GroundTerm::Compound(f, args) = store.term(term) {
                if !args.is_empty() {
                    self.index
                        .entry((path, FUNCTOR_TAG | f.index() as u32))
                        .or_default()
                        .push(at);
                    entries += 1;
                    for (i, &a) in args.iter().enumerate() {
                        if let Some(p) = child_path(path, depth, i) {
                            stack.push((a, p, depth + 1));
                        }
                    }
                }
            }
        }
        self.bytes += FACT_BYTES + INDEX_ENTRY_BYTES * entries;
        true
    }

    fn len(&self) -> u32 {
        self.sentences.len() as u32
    }

    /// Builds the composite index on the argument positions of `mask`.
    fn add_composite(&mut self, mask: u64, store: &TermStore) {
        let mut index: FxHashMap<u64, Vec<u32>> = FxHashMap::default();
        for (at, &sentence) in self.sentences.iter().enumerate() {
            let key = composite_key(mask, store.args(sentence).iter().copied().enumerate());
            index.entry(key).or_default().push(at as u32);
        }
        self.bytes += INDEX_ENTRY_BYTES * self.sentences.len();
        self.composite.insert(mask, index);
    }

    /// The shortest index list that every match of `atom` under `binding` must be in;
    /// `Ok(Some(&[]))` when nothing can match, `Ok(None)` when no argument constrains
    /// the match, `Err(mask)` when the list is long and a composite index on the bound
    /// argument positions `mask` should be built first.
    fn candidates<'r>(
        &'r self,
        store: &TermStore,
        atom: &Atom,
        binding: &[TermId],
    ) -> Result<Option<&'r [u32]>, u64> {
        let mut best: Option<&[u32]> = None;
        let mut bound = Vec::new();
        for (position, arg) in atom.args.iter().enumerate().take(64) {
            match resolve(store, arg, binding) {
                Some(None) => return Ok(Some(&[])),
                Some(Some(id)) => bound.push((position, id)),
                None => {}
            }
        }
        let mut missing = None;
        if bound.len() >= 2 {
            let mask = bound.iter().fold(0u64, |m, &(p, _)| m | (1 << p));
            match self.composite.get(&mask) {
                Some(index) => {
                    let list = index
                        .get(&composite_key(mask, bound.iter().copied()))
                        .map_or(&[][..], Vec::as_slice);
                    if list.is_empty() {
                        return Ok(Some(&[]));
                    }
                    best = Some(list);
                }
                None => missing = Some(mask),
            }
        }
        let mut stack: Vec<(&Pattern, u64, u32)> = atom
            .args
            .iter()
            .enumerate()
            .filter_map(|(i, a)| child_path(0, 0, i).map(|p| (a, p, 1)))
            .collect();
        while let Some((pattern, path, depth)) = stack.pop() {
            let key = match resolve(store, pattern, binding) {
                Some(None) => return Ok(Some(&[])),
                Some(Some(id)) => (path, id.raw()),
                None => {
                    let Pattern::Func(f, args) = pattern else { continue };
                    for (i, a) in args.iter().enumerate() {
                        if let Some(p) = child_path(path, depth, i) {
                            stack.push((a, p, depth + 1));
                        }
                    }
                    (path, FUNCTOR_TAG | f.index() as u32)
                }
            };
            let list = self.index.get(&key).map_or(&[][..], Vec::as_slice);
            if best.is_none_or(|b| list.len() < b.len()) {
                best = Some(list);
                if list.is_empty() {
                    break;
                }
            }
        }
        match (missing, best) {
            (Some(mask), Some(list)) if list.len() > COMPOSITE_THRESHOLD => Err(mask),
            _ => Ok(best),
        }
    }
}

/// Where a positive literal looks for facts in one join.
#[derive(Clone, Copy)]
enum Window {
    Old,
    Delta,
    Current,
    All,
}

/// The rule instances one join (or one part of it) found: heads in order, each
/// with its body literals `literals[body_ends[k - 1]..body_ends[k]]`.
#[derive(Default)]
struct Output {
    heads: Vec<TermId>,
    body_ends: Vec<u32>,
    literals: Vec<GroundLiteral>,
    /// What was charged to the budget for these.
    charged: Spent,
}

impl Output {
    /// An estimate of the bytes these instances take.
    fn bytes(&self) -> usize {
        8 * (self.heads.len() + self.literals.len())
    }

    /// Replaces provisional term ids by their final ones.
    fn remap(&mut self, map: &TermMap) {
        if map.is_identity() {
            return;
        }
        for head in &mut self.heads {
            *head = map.get(*head);
        }
        for literal in &mut self.literals {
            literal.atom = map.get(literal.atom);
        }
    }
}

struct Engine<'a> {
    store: TermStore,
    relations: FxHashMap<SymbolId, Relation>,
    dynamic: &'a FxHashSet<SymbolId>,
    /// Demand relations: their rules, facts and literals stay out of the program.
    demand: &'a FxHashSet<SymbolId>,
    symbols: &'a SymbolTable,
    config: &'a Config,
    /// Instances found and bytes in use, against the limits.
    budget: Budget,
    /// Distinct facts of every relation.
    facts: usize,
    /// Rule instances found so far by the finished joins of each head relation
    /// (duplicates included, as the budget counts them), named when the
    /// instance limit is passed. Facts and rules without a positive literal are
    /// not counted: they are as many as the game text has, never the blowup.
    found: FxHashMap<SymbolId, usize>,
    /// The estimated bytes of every relation's facts and indexes.
    fact_bytes: usize,
    /// The nesting depth of each interned term, by id, as far as computed.
    depths: Vec<u32>,
    parallel_min: ParallelMin,
    /// Threads a round may run on (the current rayon pool has at least as many).
    threads: usize,
}

/// The facts the joins of a round read, shared by the threads that run them.
#[derive(Clone, Copy)]
struct Facts<'a> {
    relations: &'a FxHashMap<SymbolId, Relation>,
    dynamic: &'a FxHashSet<SymbolId>,
    demand: &'a FxHashSet<SymbolId>,
}

/// Where a join reads ground terms and puts the ones it builds.
trait Terms {
    fn store(&self) -> &TermStore;
    /// The id of the compound term `(functor args...)`, interned if new.
    fn intern_compound(&mut self, functor: SymbolId, args: &[TermId]) -> TermId;
    /// An estimate of the bytes of the terms this holds.
    fn bytes(&self) -> usize;
}

/// Terms built straight into the store: a join that has the store to itself.
struct OwnStore<'s>(&'s mut TermStore);

impl Terms for OwnStore<'_> {
    fn store(&self) -> &TermStore {
        self.0
    }

    fn intern_compound(&mut self, functor: SymbolId, args: &[TermId]) -> TermId {
        self.0.intern_compound(functor, args)
    }

    fn bytes(&self) -> usize {
        self.0.bytes()
    }
}

/// Terms built beside a store that other threads read too.
struct SharedStore<'s> {
    store: &'s TermStore,
    new: LocalTerms,
}

impl<'s> SharedStore<'s> {
    fn new(store: &'s TermStore) -> Self {
        SharedStore {
            store,
            new: LocalTerms::new(store),
        }
    }
}

impl Terms for SharedStore<'_> {
    fn store(&self) -> &TermStore {
        self.store
    }

    fn intern_compound(&mut self, functor: SymbolId, args: &[TermId]) -> TermId {
        self.new.intern_compound(self.store, functor, args)
    }

    fn bytes(&self) -> usize {
        self.new.bytes()
    }
}

fn compile_term(term: &Term, vars: &mut FxHashMap<SymbolId, u32>, store: &mut TermStore) -> Pattern {
    if let Some(id) = store.intern_term(term) {
        return Pattern::Ground(id);
    }
    match term {
        Term::Var(v) => {
            let next = vars.len() as u32;
            Pattern::Var(*vars.entry(*v).or_insert(next))
        }
        Term::Compound(f, args) => {
            Pattern::Func(*f, args.iter().map(|a| compile_term(a, vars, store)).collect())
        }
        Term::Atom(_) => unreachable!("atoms are ground"),
    }
}

fn compile_atom(sentence: &Term, vars: &mut FxHashMap<SymbolId, u32>, store: &mut TermStore) -> Atom {
    Atom {
        relation: sentence.functor().expect("checked: sentences have a functor"),
        args: sentence
            .args()
            .iter()
            .map(|a| compile_term(a, vars, store))
            .collect(),
        sentence: compile_term(sentence, vars, store),
    }
}

fn compile_rule(rule: &NormalRule, store: &mut TermStore) -> CompiledRule {
    let mut vars = FxHashMap::default();
    // Positive literals first so they number the variables.
    let positives: Vec<Atom> = rule
        .body
        .iter()
        .filter_map(|l| match l {
            NormalLiteral::Pos(s) => Some(compile_atom(s, &mut vars, store)),
            _ => None,
        })
        .collect();
    let filters: Vec<Filter> = rule
        .body
        .iter()
        .filter_map(|l| match l {
            NormalLiteral::Pos(_) => None,
            NormalLiteral::Neg(s) => Some(Filter::Absent(compile_atom(s, &mut vars, store))),
            NormalLiteral::Distinct(a, b) => Some(Filter::Distinct(
                compile_term(a, &mut vars, store),
                compile_term(b, &mut vars, store),
            )),
            NormalLiteral::Equal(a, b) => Some(Filter::Equal(
                compile_term(a, &mut vars, store),
                compile_term(b, &mut vars, store),
            )),
        })
        .collect();
    let head = compile_term(&rule.head, &mut vars, store);
    let filter_vars = filters.iter().map(filter_vars).collect();
    CompiledRule {
        head,
        head_relation: rule.head.functor().expect("checked"),
        positives,
        filters,
        filter_vars,
        vars: vars.len(),
    }
}

fn pattern_vars(pattern: &Pattern, out: &mut Vec<u32>) {
    match pattern {
        Pattern::Ground(_) => {}
        Pattern::Var(v) => out.push(*v),
        Pattern::Func(_, args) => args.iter().for_each(|a| pattern_vars(a, out)),
    }
}

fn filter_vars(filter: &Filter) -> Vec<u32> {
    let mut out = Vec::new();
    match filter {
        Filter::Distinct(a, b) | Filter::Equal(a, b) => {
            pattern_vars(a, &mut out);
            pattern_vars(b, &mut out);
        }
        Filter::Absent(atom) => pattern_vars(&atom.sentence, &mut out),
    }
    out
}

/// Unifies `pattern` with the ground `term`, recording new bindings on `trail`.
fn unify(
    store: &TermStore,
    pattern: &Pattern,
    term: TermId,
    binding: &mut [TermId],
    trail: &mut Vec<u32>,
) -> bool {
    match pattern {
        Pattern::Ground(id) => *id == term,
        Pattern::Var(v) => {
            let slot = &mut binding[*v as usize];
            if *slot == UNBOUND {
                *slot = term;
                trail.push(*v);
                true
            } else {
                *slot == term
            }
        }
        Pattern::Func(f, args) => match store.term(term) {
            GroundTerm::Compound(g, targs) if g == f && targs.len() == args.len() => {
                let targs: &[TermId] = targs;
                // Safe to index: lengths match.
                args.iter()
                    .zip(targs.iter())
                    .all(|(p, &t)| unify(store, p, t, binding, trail))
            }
            _ => false,
        },
    }
}

/// The term a fully bound pattern denotes: `None` if a variable is unbound,
/// `Some(None)` if the term does not exist (so no fact can match it).
fn resolve(store: &TermStore, pattern: &Pattern, binding: &[TermId]) -> Option<Option<TermId>> {
    match pattern {
        Pattern::Ground(id) => Some(Some(*id)),
        Pattern::Var(v) => {
            let t = binding[*v as usize];
            (t != UNBOUND).then_some(Some(t))
        }
        Pattern::Func(f, args) => {
            let mut ids = ArgBuffer::new(args.len());
            let mut missing = false;
            for (slot, a) in ids.slots().iter_mut().zip(args.iter()) {
                match resolve(store, a, binding)? {
                    Some(id) => *slot = id,
                    None => missing = true,
                }
            }
            if missing {
                return Some(None);
            }
            Some(store.get_compound(*f, ids.slots()))
        }
    }
}

/// Builds the ground term of a fully bound pattern.
fn build(terms: &mut impl Terms, pattern: &Pattern, binding: &[TermId]) -> TermId {
    match pattern {
        Pattern::Ground(id) => *id,
        Pattern::Var(v) => binding[*v as usize],
        Pattern::Func(f, args) => {
            let mut ids = ArgBuffer::new(args.len());
            for (slot, a) in ids.slots().iter_mut().zip(args.iter()) {
                *slot = build(terms, a, binding);
            }
            terms.intern_compound(*f, ids.slots())
        }
    }
}

/// The arguments of a term being built or looked up: on the stack for the
/// usual few, so that a term that exists already costs no allocation.
enum ArgBuffer {
    Few([TermId; ArgBuffer::FEW], usize),
    Many(Vec<TermId>),
}

impl ArgBuffer {
    /// Arguments kept on the stack.
    const FEW: usize = 8;

    /// Room for `len` arguments.
    fn new(len: usize) -> ArgBuffer {
        if len <= ArgBuffer::FEW {
            ArgBuffer::Few([TermId::NONE; ArgBuffer::FEW], len)
        } else {
            ArgBuffer::Many(vec![TermId::NONE; len])
        }
    }

    /// The arguments.
    fn slots(&mut self) -> &mut [TermId] {
        match self {
            ArgBuffer::Few(few, len) => &mut few[..*len],
            ArgBuffer::Many(many) => many,
        }
    }
}

/// Whether the fully bound `pattern` denotes the ground `term`.
fn denotes(store: &TermStore, pattern: &Pattern, term: TermId, binding: &[TermId]) -> bool {
    match pattern {
        Pattern::Ground(id) => *id == term,
        Pattern::Var(v) => binding[*v as usize] == term,
        Pattern::Func(f, args) => match store.term(term) {
            GroundTerm::Compound(g, targs) if g == f && targs.len() == args.len() => args
                .iter()
                .zip(targs.iter())
                .all(|(p, &t)| denotes(store, p, t, binding)),
            _ => false,
        },
    }
}

/// Whether two fully bound patterns denote the same ground term (without building either).
fn same_term(store: &TermStore, a: &Pattern, b: &Pattern, binding: &[TermId]) -> bool {
    match (a, b) {
        (Pattern::Func(f, xs), Pattern::Func(g, ys)) => {
            f == g
                && xs.len() == ys.len()
                && xs
                    .iter()
                    .zip(ys.iter())
                    .all(|(x, y)| same_term(store, x, y, binding))
        }
        (pattern, Pattern::Ground(t)) | (Pattern::Ground(t), pattern) => denotes(store, pattern, *t, binding),
        (pattern, Pattern::Var(v)) | (Pattern::Var(v), pattern) => {
            denotes(store, pattern, binding[*v as usize], binding)
        }
    }
}

/// A composite index a join stopped for: the relation and the argument positions.
type Wanted = (SymbolId, u64);

/// Why a join stopped before its end.
#[derive(Clone, Copy, Debug)]
enum Halt {
    /// A composite index is missing: the join runs again once it is built.
    Index(Wanted),
    /// A limit was passed: grounding stops.
    Limit(Limit),
}

/// What one join run beside the store gives: the new terms and instances of each of
/// its parts, in order, or why it stopped.
type SharedResult = Result<Vec<(LocalTerms, Output)>, Halt>;

/// One join of a round: a rule and the window of each of its positive literals.
struct JoinSpec<'r> {
    rule: &'r CompiledRule,
    windows: Vec<Window>,
}

/// The next step of a join.
enum Step<'a> {
    /// No binding extends the current one (or a composite index is missing).
    Stop,
    /// Every positive literal is bound: the binding is an instance.
    Emit,
    /// Bind the pending literal at this position to each of the candidates.
    Bind(usize, Candidates<'a>),
}

/// The state of one join: a rule, the window of each literal, the current binding,
/// and what it found so far.
struct Join<'a, T: Terms> {
    facts: Facts<'a>,
    rule: &'a CompiledRule,
    windows: &'a [Window],
    record: bool,
    binding: Vec<TermId>,
    /// The fact each positive literal matched.
    matched: Vec<TermId>,
    /// Positive literals not bound yet.
    pending: Vec<usize>,
    trail: Vec<u32>,
    /// A composite index this join stopped for: the join must be run again once it is built.
    wanted: Option<Wanted>,
    /// The limit this join passed, if any.
    over: Option<Limit>,
    /// Candidate facts tried so far.
    steps: usize,
    budget: &'a Budget,
    /// The bytes of `terms` when the join began.
    bytes_base: usize,
    terms: T,
    out: Output,
}

impl<'a, T: Terms> Join<'a, T> {
    fn new(facts: Facts<'a>, spec: &'a JoinSpec, record: bool, budget: &'a Budget, terms: T) -> Self {
        let rule = spec.rule;
        Join {
            over: None,
            steps: 0,
            budget,
            bytes_base: terms.bytes(),
            facts,
            rule,
            windows: &spec.windows,
            // A demand relation's instances only add facts: their bodies are not kept.
            record: record && !facts.demand.contains(&rule.head_relation),
            binding: vec![UNBOUND; rule.vars],
            matched: vec![UNBOUND; rule.positives.len()],
            pending: (0..rule.positives.len()).collect(),
            trail: Vec::new(),
            wanted: None,
            terms,
            out: Output::default(),
        }
    }

    /// The first step: checks the filters without variables, then chooses a literal.
    fn first_step(&mut self) -> Step<'a> {
        if self.filters_pass(usize::MAX) {
            self.choose()
        } else {
            Step::Stop
        }
    }

    /// Runs the join; with `part`, only over that range of the first step's candidates.
    /// Returns the instances and the new terms they need, or the composite index the
    /// join stopped for.
    fn run(mut self, part: Option<Range<usize>>) -> Result<(T, Output), Halt> {
        match self.first_step() {
            Step::Stop => {}
            Step::Emit => self.emit(),
            Step::Bind(k, candidates) => {
                let candidates = match part {
                    Some(part) => candidates.slice(part),
                    None => candidates,
                };
                self.bind_each(k, candidates);
            }
        }
        self.charge();
        if let Some(limit) = self.over {
            return Err(Halt::Limit(limit));
        }
        match self.wanted {
            Some(wanted) => {
                self.budget.refund(self.out.charged);
                Err(Halt::Index(wanted))
            }
            None => Ok((self.terms, self.out)),
        }
    }

    /// Charges the budget with what the join spent since the last charge.
    fn charge(&mut self) {
        let bytes = (self.out.bytes() + self.terms.bytes()).saturating_sub(self.bytes_base);
        let spent = Spent {
            instances: self.out.heads.len(),
            bytes: bytes.max(self.out.charged.bytes),
            steps: self.steps,
        };
        let new = spent.since(self.out.charged);
        self.out.charged = spent;
        if let Some(limit) = self.budget.charge(new) {
            self.over.get_or_insert(limit);
        }
    }

    /// Whether the join must stop: for a missing index or a passed limit.
    fn halted(&self) -> bool {
        self.wanted.is_some() || self.over.is_some()
    }

    /// The facts `literal` may match now, restricted to its window (none, with
    /// `wanted` set, when a composite index is missing).
    fn candidates(&mut self, literal: usize) -> Candidates<'a> {
        let relations = self.facts.relations;
        let store = self.terms.store();
        let atom = &self.rule.positives[literal];
        let Some(relation) = relations.get(&atom.relation) else {
            return Candidates::List(&[]);
        };
        let range = window_range(relation, self.windows[literal]);
        if let Some(sentence) = resolve(store, &atom.sentence, &self.binding) {
            // Fully bound: a membership test.
            return match sentence.and_then(|s| relation.members.get(&s)) {
                Some(&at) if range.contains(&at) => Candidates::Range(at..at + 1),
                _ => Candidates::List(&[]),
            };
        }
        match relation.candidates(store, atom, &self.binding) {
            Ok(Some(list)) => {
                let lo = list.partition_point(|&i| i < range.start);
                let hi = list.partition_point(|&i| i < range.end);
                Candidates::List(&list[lo..hi])
            }
            Ok(None) => Candidates::Range(range),
            Err(mask) => {
                self.wanted = Some((atom.relation, mask));
                Candidates::List(&[])
            }
        }
    }

    /// Checks the filters that became fully bound by the bindings on `trail[mark..]`.
    fn filters_pass(&self, mark: usize) -> bool {
        let fresh = self.trail.get(mark..).unwrap_or(&[]);
        self.rule
            .filters
            .iter()
            .zip(&self.rule.filter_vars)
            .all(|(filter, vars)| {
                let now_bound = if mark == usize::MAX {
                    vars.is_empty()
                } else {
                    vars.iter().any(|v| fresh.contains(v))
                        && vars.iter().all(|&v| self.binding[v as usize] != UNBOUND)
                };
                !now_bound || self.passes(filter)
            })
    }

    /// Chooses the pending literal with the fewest candidates to bind next.
    fn choose(&mut self) -> Step<'a> {
        let mut best: Option<(usize, Candidates<'a>)> = None;
        for k in 0..self.pending.len() {
            let candidates = self.candidates(self.pending[k]);
            let count = candidates.len();
            if count == 0 || self.halted() {
                return Step::Stop;
            }
            if best.as_ref().is_none_or(|(_, b)| count < b.len()) {
                best = Some((k, candidates));
            }
        }
        match best {
            Some((k, candidates)) => Step::Bind(k, candidates),
            None => Step::Emit,
        }
    }

    fn search(&mut self) {
        match self.choose() {
            Step::Stop => {}
            Step::Emit => self.emit(),
            Step::Bind(k, candidates) => self.bind_each(k, candidates),
        }
    }

    /// Binds the pending literal at position `k` to each candidate in turn, searching on.
    fn bind_each(&mut self, k: usize, candidates: Candidates<'a>) {
        let literal = self.pending.swap_remove(k);
        let relations: &'a FxHashMap<SymbolId, Relation> = self.facts.relations;
        let relation = &relations[&self.rule.positives[literal].relation];
        match candidates {
            Candidates::List(list) => {
                for &fact in list {
                    self.bind(literal, relation.sentences[fact as usize]);
                    if self.halted() {
                        break;
                    }
                }
            }
            Candidates::Range(range) => {
                for fact in range {
                    self.bind(literal, relation.sentences[fact as usize]);
                    if self.halted() {
                        break;
                    }
                }
            }
        }
        self.pending.push(literal);
        let last = self.pending.len() - 1;
        self.pending.swap(k, last);
    }

    fn bind(&mut self, literal: usize, sentence: TermId) {
        self.steps += 1;
        if self.steps - self.out.charged.steps >= STEPS_EVERY {
            self.charge();
        }
        let mark = self.trail.len();
        let atom = &self.rule.positives[literal];
        if unify(
            self.terms.store(),
            &atom.sentence,
            sentence,
            &mut self.binding,
            &mut self.trail,
        ) && self.filters_pass(mark)
        {
            self.matched[literal] = sentence;
            self.search();
        }
        for v in self.trail.drain(mark..) {
            self.binding[v as usize] = UNBOUND;
        }
    }

    fn passes(&self, filter: &Filter) -> bool {
        let Facts {
            relations, dynamic, ..
        } = self.facts;
        let store = self.terms.store();
        match filter {
            Filter::Distinct(a, b) => !same_term(store, a, b, &self.binding),
            Filter::Equal(a, b) => same_term(store, a, b, &self.binding),
            Filter::Absent(atom) => {
                if dynamic.contains(&atom.relation) {
                    // Possibly true: decided per state by the circuit.
                    return true;
                }
                match resolve(store, &atom.sentence, &self.binding).expect("safe rules bind negations") {
                    None => true,
                    Some(id) => !relations
                        .get(&atom.relation)
                        .is_some_and(|r| r.members.contains_key(&id)),
                }
            }
        }
    }

    fn emit(&mut self) {
        let Facts { dynamic, demand, .. } = self.facts;
        let out = &mut self.out;
        out.heads
            .push(build(&mut self.terms, &self.rule.head, &self.binding));
        if self.record {
            for (atom, &sentence) in self.rule.positives.iter().zip(&self.matched) {
                if dynamic.contains(&atom.relation) && !demand.contains(&atom.relation) {
                    out.literals.push(GroundLiteral {
                        atom: sentence,
                        positive: true,
                    });
                }
            }
            for filter in &self.rule.filters {
                if let Filter::Absent(atom) = filter {
                    if dynamic.contains(&atom.relation) {
                        out.literals.push(GroundLiteral {
                            atom: build(&mut self.terms, &atom.sentence, &self.binding),
                            positive: false,
                        });
                    }
                }
            }
        }
        out.body_ends.push(out.literals.len() as u32);
        if out.heads.len() - out.charged.instances >= CHARGE_EVERY {
            self.charge();
        }
    }
}

/// Facts a literal may match: an index list, or a whole window.
enum Candidates<'a> {
    List(&'a [u32]),
    Range(Range<u32>),
}

impl Candidates<'_> {
    fn len(&self) -> usize {
        match self {
            Candidates::List(list) => list.len(),
            Candidates::Range(range) => range.len(),
        }
    }

    /// The candidates at positions `part` of these.
    fn slice(self, part: Range<usize>) -> Self {
        match self {
            Candidates::List(list) => Candidates::List(&list[part]),
            Candidates::Range(range) => {
                Candidates::Range(range.start + part.start as u32..range.start + part.end as u32)
            }
        }
    }
}

fn window_range(relation: &Relation, window: Window) -> Range<u32> {
    match window {
        Window::Old => 0..relation.stable,
        Window::Delta => relation.stable..relation.end,
        Window::Current => 0..relation.end,
        Window::All => 0..relation.len(),
    }
}

/// How much work a round needs to be run on several threads.
#[derive(Clone, Copy)]
struct ParallelMin {
    /// Instances found by the round before.
    instances: usize,
    /// For a first round: candidate facts of its joins' first steps, in all.
    candidates: usize,
}

/// Below this, handing a round's work to other threads costs more than it saves.
const PARALLEL_MIN: ParallelMin = ParallelMin {
    instances: 16_384,
    candidates: 4096,
};

/// In a parallel round, the joins' first-step candidates are cut into about this
/// many parts per thread, so that threads that finish early find work left.
const PARTS_PER_THREAD: usize = 16;

/// In a parallel round, a join with at least this many first-step candidates per
/// thread is cut into at least that many parts per thread.
const PARTS_PER_JOIN: usize = 2;

impl Engine<'_> {
    fn facts(&self) -> Facts<'_> {
        Facts {
            relations: &self.relations,
            dynamic: self.dynamic,
            demand: self.demand,
        }
    }

    fn window(&self, relation: SymbolId, window: Window) -> Range<u32> {
        self.relations
            .get(&relation)
            .map_or(0..0, |r| window_range(r, window))
    }

    /// Runs the joins of one round and returns their instances, in a fixed order
    /// whatever the number of threads. `previous` is the number of instances the
    /// round before found (`None` for the first round).
    ///
    /// The joins of a pass read the facts and indexes as they were when the pass
    /// began, and their new terms are interned join by join, in the order of the
    /// joins: alone, each join interns them as it goes; in parallel, each part of a
    /// join builds them beside the store and they are interned after the parts
    /// before it, which gives the same ids. A join that finds a composite index
    /// missing is dropped from the pass (with its terms); the indexes are built after
    /// the pass and the dropped joins run again in another. Each output comes with
    /// the relation of its rule's head.
    fn round(
        &mut self,
        specs: &[JoinSpec],
        record: bool,
        previous: Option<usize>,
    ) -> Result<Vec<(SymbolId, Output)>, GdlError> {
        for spec in specs {
            if self.cartesian_instances(spec) > self.budget.remaining_instances() {
                return Err(self.too_large(Limit::Rules, spec.rule.head_relation));
            }
        }
        let mut outputs = Vec::new();
        let mut todo: Vec<&JoinSpec> = specs.iter().collect();
        while !todo.is_empty() {
            let mut again = Vec::new();
            let mut wanted = Vec::new();
            let results = match self.parallel_pass(&todo, record, previous) {
                Some(results) => results,
                None => self.serial_pass(&todo, record),
            };
            for (spec, result) in todo.iter().zip(results) {
                let relation = spec.rule.head_relation;
                match result {
                    Ok(parts) => {
                        for (terms, mut out) in parts {
                            if !spec.rule.positives.is_empty() {
                                *self.found.entry(relation).or_default() += out.heads.len();
                            }
                            out.remap(&self.store.absorb(terms));
                            outputs.push((relation, out));
                        }
                    }
                    Err(Halt::Index(want)) => {
                        again.push(*spec);
                        wanted.push(want);
                    }
                    Err(Halt::Limit(limit)) => return Err(self.too_large(limit, relation)),
                }
            }
            for (relation, mask) in wanted {
                self.add_composite(relation, mask)?;
            }
            todo = again;
        }
        Ok(outputs)
    }

    /// Runs `joins` one after the other on this thread, their new terms straight
    /// into the store (a join dropped for a missing index takes its terms back).
    fn serial_pass(&mut self, joins: &[&JoinSpec], record: bool) -> Vec<SharedResult> {
        let facts = Facts {
            relations: &self.relations,
            dynamic: self.dynamic,
            demand: self.demand,
        };
        let mut results = Vec::with_capacity(joins.len());
        for spec in joins {
            let mark = self.store.len();
            let join = Join::new(facts, spec, record, &self.budget, OwnStore(&mut self.store));
            let result = join.run(None).map(|(_, out)| out);
            if result.is_err() {
                self.store.truncate(mark);
            }
            results.push(result.map(|out| vec![(LocalTerms::new(&self.store), out)]));
        }
        results
    }

    /// Builds the composite index `mask` of `relation` if it is missing, and counts its bytes.
    fn add_composite(&mut self, relation: SymbolId, mask: u64) -> Result<(), GdlError> {
        let Some(r) = self.relations.get_mut(&relation) else {
            return Ok(());
        };
        if r.composite.contains_key(&mask) {
            return Ok(());
        }
        let before = r.bytes;
        r.add_composite(mask, &self.store);
        let added = r.bytes - before;
        self.fact_bytes += added;
        let spent = Spent {
            bytes: added,
            ..Spent::default()
        };
        match self.budget.charge(spent) {
            Some(limit) => Err(self.too_large(limit, relation)),
            None => Ok(()),
        }
    }

    /// The error for passing `limit` while grounding `relation`.
    /// The instances `spec` will find, known before it runs when its rule is a
    /// plain product (no filter, and every positive literal's arguments are
    /// variables found nowhere else): the product of its windows' sizes; else 0.
    /// A product past the rule limit stops grounding at once, not after minutes of
    /// instances (8 free variables over 30 values are 6.6e11 of them).
    fn cartesian_instances(&self, spec: &JoinSpec) -> usize {
        let rule = spec.rule;
        let mut seen = vec![false; rule.vars];
        let mut fresh = |pattern: &Pattern| match *pattern {
            Pattern::Var(v) => !std::mem::replace(&mut seen[v as usize], true),
            _ => false,
        };
        let plain = rule.positives.iter().all(|atom| atom.args.iter().all(&mut fresh));
        if !plain || !rule.filters.is_empty() {
            return 0;
        }
        let sizes = rule.positives.iter().zip(&spec.windows).map(|(atom, &window)| {
            let relation = self.relations.get(&atom.relation);
            relation.map_or(0, |r| window_range(r, window).len())
        });
        sizes.fold(1usize, |product, n| product.saturating_mul(n))
    }

    fn too_large(&self, limit: Limit, relation: SymbolId) -> GdlError {
        let max = match limit {
            Limit::Atoms => self.config.get_max_ground_atoms(),
            Limit::Depth => self.config.get_max_term_depth(),
            Limit::Expansion => crate::normalize::MAX_EXPANSION,
            _ => self.budget.max(limit),
        };
        let name = self.symbols.name(relation);
        if limit != Limit::Rules {
            return too_large(limit, max, name);
        }
        let found: Vec<(&str, usize)> = self
            .found
            .iter()
            .map(|(&r, &n)| (self.symbols.name(r), n))
            .collect();
        too_many_rules(max, name, &found)
    }

    /// Runs `joins` on the current rayon pool's threads, each join cut into parts,
    /// against the facts and terms as they are; `None` when one thread is better
    /// (there is one thread, or too little work, judged by the round before or, in a
    /// first round, by the candidates of the joins' first steps).
    fn parallel_pass(
        &self,
        joins: &[&JoinSpec],
        record: bool,
        previous: Option<usize>,
    ) -> Option<Vec<SharedResult>> {
        let threads = self.threads;
        if threads == 1 || previous.is_some_and(|n| n < self.parallel_min.instances) {
            return None;
        }
        let facts = self.facts();
        // Each join's first step, the same in every part of it.
        let firsts: Vec<Result<usize, Halt>> = joins
            .iter()
            .map(|spec| {
                let store = SharedStore::new(&self.store);
                let mut join = Join::new(facts, spec, record, &self.budget, store);
                match join.first_step() {
                    Step::Stop => join.wanted.map(Halt::Index).map_or(Ok(0), Err),
                    Step::Emit => Ok(1),
                    Step::Bind(_, candidates) => Ok(candidates.len()),
                }
            })
            .collect();
        let total: usize = firsts.iter().filter_map(|f| f.as_ref().ok()).sum();
        if previous.is_none() && total < self.parallel_min.candidates {
            return None;
        }
        let round_part_len = total.div_ceil(threads * PARTS_PER_THREAD);
        let mut tasks: Vec<(usize, Option<Range<usize>>)> = Vec::new();
        for (j, first) in firsts.iter().enumerate() {
            match *first {
                Ok(count) if count > 1 => {
                    // The work of a join is often below its first step: cut even a
                    // join with few first candidates into a part per thread or two.
                    let part_len = round_part_len
                        .min(count.div_ceil(PARTS_PER_JOIN * threads))
                        .max(1);
                    tasks.extend(
                        (0..count)
                            .step_by(part_len)
                            .map(|lo| (j, Some(lo..(lo + part_len).min(count)))),
                    )
                }
                Ok(1) => tasks.push((j, None)),
                _ => {}
            }
        }
        if tasks.len() < 2 {
            return None;
        }
        let mut done = tasks
            .par_iter()
            .map(|(j, part)| {
                let store = SharedStore::new(&self.store);
                let join = Join::new(facts, joins[*j], record, &self.budget, store);
                (*j, join.run(part.clone()).map(|(terms, out)| (terms.new, out)))
            })
            .collect::<Vec<_>>()
            .into_iter()
            .peekable();
        let results = firsts
            .into_iter()
            .enumerate()
            .map(|(j, first)| {
                first?;
                let mut parts = Vec::new();
                let mut halt = None;
                while let Some((_, result)) = done.next_if(|(task_join, _)| *task_join == j) {
                    match result {
                        Ok(part) => parts.push(part),
                        Err(Halt::Limit(limit)) => halt = Some(Halt::Limit(limit)),
                        Err(want) => {
                            halt.get_or_insert(want);
                        }
                    }
                }
                let Some(halt) = halt else { return Ok(parts) };
                // The join is dropped whole: what its finished parts charged is taken back.
                for (_, out) in &parts {
                    self.budget.refund(out.charged);
                }
                Err(halt)
            })
            .collect();
        Some(results)
    }

    /// Adds a derived sentence (and its `true`/`does` alias) to its relation; an
    /// error when there are too many facts or the sentence is nested too deep.
    fn insert(&mut self, sentence: TermId, alias: bool) -> Result<bool, GdlError> {
        let relation = self.store.functor(sentence);
        let r = self.relations.entry(relation).or_default();
        let before = r.bytes;
        let new = r.insert(sentence, &self.store);
        self.fact_bytes += r.bytes - before;
        if !new {
            return Ok(false);
        }
        self.facts += 1;
        if self.facts > self.config.get_max_ground_atoms() {
            return Err(self.too_large(Limit::Atoms, relation));
        }
        // The sentence is one level above its arguments.
        if self.depth(sentence) > self.config.get_max_term_depth().saturating_add(1) {
            return Err(self.too_large(Limit::Depth, relation));
        }
        if alias {
            let target = match relation {
                SymbolId::NEXT => Some(SymbolId::TRUE),
                SymbolId::LEGAL => Some(SymbolId::DOES),
                _ => None,
            };
            if let Some(target) = target {
                let args: Box<[TermId]> = self.store.args(sentence).into();
                let aliased = self.store.intern(GroundTerm::Compound(target, args));
                self.insert(aliased, false)?;
            }
        }
        Ok(true)
    }

    /// The nesting depth of an interned term (a constant has depth 1).
    fn depth(&mut self, term: TermId) -> usize {
        // Arguments are interned before the terms that hold them, so their ids are smaller.
        for index in self.depths.len()..self.store.len() {
            let args = self.store.args(TermId::from_index(index));
            let deepest = args.iter().filter_map(|a| self.depths.get(a.index())).max();
            self.depths.push(deepest.map_or(1, |d| d.saturating_add(1)));
        }
        self.depths.get(term.index()).map_or(1, |&d| d as usize)
    }

    /// The estimated bytes of the terms and facts kept so far.
    fn bytes(&self) -> usize {
        self.store.bytes() + self.fact_bytes + 4 * self.depths.len()
    }

    /// Evaluates `rules` to their fixpoint; relations in `growing` may gain facts.
    fn fixpoint(
        &mut self,
        rules: &[CompiledRule],
        growing: &FxHashSet<SymbolId>,
        mut record: Option<&mut RuleSink>,
    ) -> Result<(), GdlError> {
        for relation in growing {
            let r = self.relations.entry(*relation).or_default();
            r.stable = 0;
            r.end = r.len();
        }
        let mut previous = None;
        loop {
            let mut specs = Vec::new();
            for rule in rules {
                let windows_base: Vec<Window> = rule
                    .positives
                    .iter()
                    .map(|a| {
                        if growing.contains(&a.relation) {
                            Window::Current
                        } else {
                            Window::All
                        }
                    })
                    .collect();
                let growing_positions: Vec<usize> = (0..rule.positives.len())
                    .filter(|&i| growing.contains(&rule.positives[i].relation))
                    .collect();
                if growing_positions.is_empty() {
                    if previous.is_none() {
                        specs.push(JoinSpec {
                            rule,
                            windows: windows_base,
                        });
                    }
                    continue;
                }
                for (k, &j) in growing_positions.iter().enumerate() {
                    if self.window(rule.positives[j].relation, Window::Delta).is_empty() {
                        continue;
                    }
                    let mut windows = windows_base.clone();
                    for &i in &growing_positions[..k] {
                        windows[i] = Window::Old;
                    }
                    windows[j] = Window::Delta;
                    specs.push(JoinSpec { rule, windows });
                }
            }
            let mut any_new = false;
            let mut instances = 0;
            let kept = |record: &Option<&mut RuleSink>| record.as_ref().map_or(0, |sink| sink.bytes);
            self.budget.set_bytes(self.bytes() + kept(&record));
            for (relation, out) in self.round(&specs, record.is_some(), previous)? {
                instances += out.heads.len();
                let mut start = 0;
                for (&head, &end) in out.heads.iter().zip(&out.body_ends) {
                    any_new |= self.insert(head, true)?;
                    if let Some(sink) = record.as_deref_mut().filter(|_| !self.demand.contains(&relation)) {
                        sink.add(head, &out.literals[start..end as usize]);
                    }
                    start = end as usize;
                }
                if self.bytes() + kept(&record) > self.budget.max(Limit::Memory) {
                    return Err(self.too_large(Limit::Memory, relation));
                }
            }
            for relation in growing {
                let r = self.relations.entry(*relation).or_default();
                r.stable = r.end;
                r.end = r.len();
            }
            previous = Some(instances);
            if !any_new {
                return Ok(());
            }
        }
    }
}

/// Collects ground rules, without duplicates, flat: heads in one list, the
/// bodies one after the other in another, found through a table of their
/// positions hashed by their content. The rules become [`GroundRule`]s (an
/// allocation per body) only in [`RuleSink::into_rules`], once the relations
/// are gone: during grounding a rule takes 8 bytes per literal plus 16, not
/// 24 plus an allocation (on the full amazons, 1.5 M rules: about 40 MB
/// instead of 90 at the grounding's peak).
#[derive(Default)]
struct RuleSink {
    heads: Vec<TermId>,
    /// Where each rule's body ends in `literals`.
    ends: Vec<usize>,
    literals: Vec<GroundLiteral>,
    /// Positions in `heads`, by [`rule_hash`].
    positions: hashbrown::HashTable<u32>,
    /// An estimate of the bytes the rules take.
    bytes: usize,
}

/// Estimated bytes of one ground rule besides its body, as the program
/// will keep it (a [`GroundRule`] and an allocation header): the limit on
/// memory counts what the rules will take, not their flat form.
const RULE_BYTES: usize = 48;

/// The hash of a ground rule in a [`RuleSink`].
fn rule_hash(head: TermId, body: &[GroundLiteral]) -> u64 {
    let mut hasher = FxHasher::default();
    head.hash(&mut hasher);
    body.hash(&mut hasher);
    hasher.finish()
}

/// The body of rule `i` of a [`RuleSink`] whose bodies end at `ends` in `literals`.
fn body_of<'a>(ends: &[usize], literals: &'a [GroundLiteral], i: usize) -> &'a [GroundLiteral] {
    let start = if i == 0 { 0 } else { ends[i - 1] };
    &literals[start..ends[i]]
}

impl RuleSink {
    /// The body of rule `i`.
    fn body(&self, i: usize) -> &[GroundLiteral] {
        body_of(&self.ends, &self.literals, i)
    }

    fn add(&mut self, head: TermId, body: &[GroundLiteral]) {
        let hash = rule_hash(head, body);
        let same = |&i: &u32| self.heads[i as usize] == head && self.body(i as usize) == body;
        if self.positions.find(hash, same).is_some() {
            return;
        }
        let RuleSink {
            heads,
            ends,
            literals,
            positions,
            bytes,
        } = self;
        let at = heads.len() as u32;
        heads.push(head);
        literals.extend_from_slice(body);
        ends.push(literals.len());
        let rehash = |&i: &u32| rule_hash(heads[i as usize], body_of(ends, literals, i as usize));
        positions.insert_unique(hash, at, rehash);
        *bytes += RULE_BYTES + 8 * body.len();
    }

    /// The rules collected, each body without the literals that `keep`
    /// rejects (duplicates that leaves stay), sorted.
    fn into_rules(mut self, keep: impl Fn(&GroundLiteral) -> bool) -> Vec<GroundRule> {
        self.positions = hashbrown::HashTable::new();
        let mut rules: Vec<GroundRule> = (0..self.heads.len())
            .map(|i| GroundRule {
                head: self.heads[i],
                body: self.body(i).iter().copied().filter(&keep).collect(),
            })
            .collect();
        drop(self);
        rules.par_sort_unstable();
        rules
    }
}

/// Grounds a checked description: evaluates static relations and instantiates
/// every dynamic rule over the reachable sentences.
///
/// Where `prepare` added demand relations, the rules are first grounded without
/// them, under at most [`DEMAND_AFTER`] rule instances: the demand rules' own
/// rounds cost start-up where the plain instantiation is small. Past that, the
/// rules are grounded on demand, and if that passes a limit too, plainly under
/// the full limits (the time limit counts from the first attempt).
///
/// Where `prepare` also split rules on values the state fixes (module
/// `functional`), the rules as written are grounded first, plainly under at
/// most [`DEMAND_AFTER`] rule instances; past that, the split rules as above,
/// kept only if their assumption is proved on their ground program; failing
/// that, the rules as written as above.
pub fn instantiate(
    description: &Description,
    rules: &[NormalRule],
    analysis: &Analysis,
    config: &Config,
) -> Result<GroundProgram, GdlError> {
    let Some(variant) = &analysis.functional else {
        return instantiate_in_stages(description, rules, analysis, config, std::time::Instant::now());
    };
    let start = std::time::Instant::now();
    let (plain_rules, plain) = crate::demand::without_demand(rules, analysis);
    let limit = config.get_max_ground_rules();
    let small = config.clone().max_ground_rules(limit.min(DEMAND_AFTER));
    let first = match instantiate_once(description, &plain_rules, &plain, &small) {
        Err(e) if past_a_size_limit(&e) => e,
        done => return done,
    };
    match instantiate_in_stages(description, &variant.rules, &variant.analysis, config, start) {
        Ok(program) if crate::functional::proved(&program, &variant.invariants) => return Ok(program),
        Err(e) if !past_a_size_limit(&e) => return Err(e),
        _ => {}
    }
    if limit <= DEMAND_AFTER && analysis.demand.is_empty() {
        // The rules as written were grounded under the full limits already.
        return Err(first);
    }
    instantiate_in_stages(description, rules, analysis, config, start)
}

/// [`instantiate`] without a variant, the time limit counted from `start`.
fn instantiate_in_stages(
    description: &Description,
    rules: &[NormalRule],
    analysis: &Analysis,
    config: &Config,
    start: std::time::Instant,
) -> Result<GroundProgram, GdlError> {
    let remaining = || {
        let left = config.get_max_time().map(|t| t.saturating_sub(start.elapsed()));
        config.clone().max_time(left)
    };
    if analysis.demand.is_empty() {
        return instantiate_once(description, rules, analysis, &remaining());
    }
    let (plain_rules, plain) = crate::demand::without_demand(rules, analysis);
    let small = remaining().max_ground_rules(config.get_max_ground_rules().min(DEMAND_AFTER));
    match instantiate_once(description, &plain_rules, &plain, &small) {
        Err(e) if past_a_size_limit(&e) => {}
        done => return done,
    }
    match instantiate_once(
        description,
        rules,
        &crate::demand::with_demand(analysis),
        &remaining(),
    ) {
        Err(e) if past_a_size_limit(&e) && config.get_max_ground_rules() > DEMAND_AFTER => {
            instantiate_once(description, &plain_rules, &plain, &remaining())
        }
        done => done,
    }
}

/// Rule instances the plain instantiation may find before rules with demand
/// relations are grounded on demand instead.
pub const DEMAND_AFTER: usize = 2_000_000;

/// Whether `error` is a size limit (not the time limit, not an invalid game).
fn past_a_size_limit(error: &GdlError) -> bool {
    matches!(error.kind, crate::ErrorKind::TooLarge { limit, .. } if limit != Limit::Time)
}

/// [`instantiate`] of exactly `rules`, on the configured threads.
fn instantiate_once(
    description: &Description,
    rules: &[NormalRule],
    analysis: &Analysis,
    config: &Config,
) -> Result<GroundProgram, GdlError> {
    if config.get_threads() <= 1 {
        return instantiate_with(description, rules, analysis, config, PARALLEL_MIN);
    }
    match rayon::ThreadPoolBuilder::new()
        .num_threads(config.get_threads())
        .build()
    {
        Ok(pool) => pool.install(|| instantiate_with(description, rules, analysis, config, PARALLEL_MIN)),
        // Without a pool of its own, grounding runs on the calling thread.
        Err(_) => instantiate_with(
            description,
            rules,
            analysis,
            &config.clone().threads(1).expect("one thread"),
            PARALLEL_MIN,
        ),
    }
}

fn instantiate_with(
    description: &Description,
    rules: &[NormalRule],
    analysis: &Analysis,
    config: &Config,
    parallel_min: ParallelMin,
) -> Result<GroundProgram, GdlError> {
    let mut engine = Engine {
        store: TermStore::new(),
        relations: FxHashMap::default(),
        dynamic: &analysis.dynamic,
        demand: &analysis.demand,
        symbols: &description.symbols,
        config,
        budget: Budget::new(
            config.get_max_ground_rules(),
            config.get_max_bytes(),
            config.get_max_join_steps(),
            config.get_max_time(),
        ),
        facts: 0,
        found: FxHashMap::default(),
        fact_bytes: 0,
        depths: Vec::new(),
        parallel_min,
        threads: config.get_threads(),
    };
    let compiled: Vec<CompiledRule> = rules.iter().map(|r| compile_rule(r, &mut engine.store)).collect();

    // Static strata, in dependency order, each to its exact fixpoint.
    for stratum in &analysis.static_strata {
        let growing: FxHashSet<SymbolId> = stratum.iter().copied().collect();
        let stratum_rules: Vec<CompiledRule> = compiled
            .iter()
            .filter(|r| growing.contains(&r.head_relation))
            .cloned()
            .collect();
        engine.fixpoint(&stratum_rules, &growing, None)?;
    }

    let initial_state: Vec<TermId> = engine
        .relations
        .get(&SymbolId::INIT)
        .map(|r| r.sentences.iter().map(|&s| engine.store.args(s)[0]).collect())
        .unwrap_or_default();
    for &fact in &initial_state {
        let sentence = engine
            .store
            .intern(GroundTerm::Compound(SymbolId::TRUE, vec![fact].into()));
        engine.insert(sentence, false)?;
    }
    let roles = roles(description, &mut engine.store);

    let dynamic_rules: Vec<CompiledRule> = compiled
        .iter()
        .filter(|r| analysis.dynamic.contains(&r.head_relation))
        .cloned()
        .collect();
    let mut growing: FxHashSet<SymbolId> = analysis.dynamic.clone();
    growing.insert(SymbolId::TRUE);
    growing.insert(SymbolId::DOES);
    let mut sink = RuleSink::default();
    engine.fixpoint(&dynamic_rules, &growing, Some(&mut sink))?;
    let atoms = dynamic_atoms(&engine.relations, &growing, &analysis.demand);
    // From here on only whether a sentence holds somewhere is asked: a flag
    // per term replaces the relations (facts, membership and join indexes: a
    // third of the full amazons' peak memory) before the rules are cleaned
    // and sorted.
    let holds = holding(&engine.relations, engine.store.len());
    engine.relations = FxHashMap::default();
    engine.depths = Vec::new();
    // A negated sentence that can never hold is simply true: drop the literal.
    let ground_rules = sink.into_rules(|l| l.positive || holds.get(l.atom.index()) == Some(&true));
    Ok(GroundProgram {
        symbols: description.symbols.clone(),
        terms: engine.store,
        roles,
        initial_state,
        atoms,
        rules: ground_rules,
        warnings: Vec::new(),
    })
}

/// The sentences of the dynamic relations (`growing` but not `demand`), by
/// relation in the order of their symbols.
fn dynamic_atoms(
    relations: &FxHashMap<SymbolId, Relation>,
    growing: &FxHashSet<SymbolId>,
    demand: &FxHashSet<SymbolId>,
) -> Vec<TermId> {
    let mut dynamic_relations: Vec<&SymbolId> = growing.difference(demand).collect();
    dynamic_relations.sort();
    let mut atoms = Vec::new();
    for relation in dynamic_relations {
        if let Some(r) = relations.get(relation) {
            atoms.extend_from_slice(&r.sentences);
        }
    }
    atoms
}

/// Per term id below `terms`, whether it is a sentence of one of the
/// `relations` (each sentence is filed under its own relation).
fn holding(relations: &FxHashMap<SymbolId, Relation>, terms: usize) -> Vec<bool> {
    let mut holds = vec![false; terms];
    for sentence in relations.values().flat_map(|r| &r.sentences) {
        holds[sentence.index()] = true;
    }
    holds
}

fn roles(description: &Description, store: &mut TermStore) -> Vec<TermId> {
    let mut roles = Vec::new();
    for rule in &description.rules {
        if rule.head.functor() == Some(SymbolId::ROLE) {
            if let Some(role) = rule.head.args().first().and_then(|r| store.intern_term(r)) {
                if !roles.contains(&role) {
                    roles.push(role);
                }
            }
        }
    }
    roles
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::DEFAULT_MAX_TERM_DEPTH;

    /// A rule sink keeps each rule once, in its flat lists, and hands them
    /// over sorted, without the literals rejected: a rule that then equals
    /// another stays.
    #[test]
    fn a_rule_sink_keeps_each_rule_once_and_hands_them_over_sorted() {
        let t = TermId::from_index;
        let literal = |i: usize, positive: bool| GroundLiteral { atom: t(i), positive };
        let mut sink = RuleSink::default();
        sink.add(t(2), &[literal(5, true), literal(6, false)]);
        sink.add(t(1), &[]);
        sink.add(t(2), &[literal(5, true), literal(6, false)]);
        sink.add(t(2), &[literal(5, true)]);
        sink.add(t(2), &[literal(6, false), literal(5, true)]);
        assert_eq!(sink.heads.len(), 4);
        assert_eq!(sink.body(3), [literal(6, false), literal(5, true)]);
        let rules = sink.into_rules(|l| l.atom != t(6));
        let rule = |head: usize, body: &[GroundLiteral]| GroundRule {
            head: t(head),
            body: body.into(),
        };
        let five = [literal(5, true)];
        assert_eq!(
            rules,
            [rule(1, &[]), rule(2, &five), rule(2, &five), rule(2, &five)]
        );
    }

    /// A game where `legal` joins a large relation `p` with two bound arguments, so
    /// that the join stops for a composite index and runs again once it is built.
    fn composite_game() -> Description {
        let mut source = String::from(
            "(role robot) (r 1) (r 2) (s 3) (s 4) (<= (legal robot (m ?x ?y ?z)) (r ?x) (s ?y) (p ?x ?y ?z))",
        );
        for x in 0..20 {
            for y in 0..20 {
                for z in 0..5 {
                    source.push_str(&format!(" (p {x} {y} {z})"));
                }
            }
        }
        ggpnet_kif::parse(&source).unwrap()
    }

    fn legal(program: &GroundProgram) -> Vec<String> {
        let mut legal: Vec<String> = program
            .atoms
            .iter()
            .map(|&a| program.kif(a))
            .filter(|a| a.starts_with("(legal"))
            .collect();
        legal.sort();
        legal
    }

    /// The join goes through a composite index and finds exactly the matches.
    #[test]
    fn composite_index_finds_exactly_the_matches() {
        let program = crate::ground(&composite_game(), &Default::default()).unwrap();
        let expected: Vec<String> = (1..=2)
            .flat_map(|x| {
                (3..=4).flat_map(move |y| (0..5).map(move |z| format!("(legal robot (m {x} {y} {z}))")))
            })
            .collect();
        assert_eq!(legal(&program), expected);
    }

    /// Every round run in parallel, in parts that stop for the composite index and run
    /// again, gives the program one thread gives.
    #[test]
    fn parallel_rounds_with_composite_indexes_match_one_thread() {
        let mut description = composite_game();
        let (rules, analysis) = crate::prepare(&mut description).unwrap();
        let one = instantiate(&description, &rules, &analysis, &Config::default()).unwrap();
        let always = ParallelMin {
            instances: 0,
            candidates: 0,
        };
        let config = Config::new().threads(2).expect("a setting in range");
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let two = pool
            .install(|| instantiate_with(&description, &rules, &analysis, &config, always))
            .unwrap();
        assert!(one.terms == two.terms);
        assert_eq!(one.atoms, two.atoms);
        assert_eq!(one.rules, two.rules);
        assert_eq!(legal(&one).len(), 20);
    }

    /// A rule over eight independent variables of a 30-element domain (30^8 instances).
    /// A rule of eight free variables over 30 values; `filter` is added to its body.
    fn eight_variables_with(filter: &str) -> Description {
        let domain: String = (1..=30).map(|i| format!("(d {i}) ")).collect();
        ggpnet_kif::parse(&format!(
            "(role r) {domain} (<= (p ?a ?b ?c ?d ?e ?f ?g ?h) (d ?a) (d ?b) (d ?c) (d ?d) (d ?e) (d ?f) \
             (d ?g) (d ?h) {filter}) (<= (legal r (m ?a)) (p ?a ?a ?a ?a ?a ?a ?a ?a))"
        ))
        .unwrap()
    }

    /// The eight-variable rule with a filter that keeps every binding, so that no
    /// count is known before the join runs and the limits are met inside it.
    fn eight_variables() -> Description {
        eight_variables_with("(distinct ?a 0)")
    }

    #[test]
    fn a_plain_product_past_the_rule_limit_stops_before_its_join() {
        // 30^8 instances, more than the limit: without the count made before the
        // join, the join-step limit would stop it at its first charge.
        let config = Config::new().max_ground_rules(1_000_000_000).max_join_steps(1);
        assert_eq!(
            ground_error(&eight_variables_with(""), &config).message,
            "grounding too large: more than 1000000000 ground rules (at relation `p`); raise --max-ground-rules"
        );
        // The same rule with a filter runs, and meets the join-step limit.
        assert!(ground_error(&eight_variables(), &config)
            .message
            .contains("join steps"));
    }

    fn ground_error(description: &Description, config: &Config) -> GdlError {
        crate::ground(description, config).unwrap_err()
    }

    #[test]
    fn rule_instances_stop_inside_a_join() {
        let config = Config::new().max_ground_rules(5000);
        let e = ground_error(&eight_variables(), &config);
        let limit = crate::Limit::Rules;
        assert_eq!(e.kind, crate::ErrorKind::TooLarge { limit, max: 5000 });
        assert_eq!(
            e.message,
            "grounding too large: more than 5000 ground rules (at relation `p`); raise --max-ground-rules"
        );
    }

    #[test]
    fn the_rule_limit_names_the_relations_with_most_instances() {
        // `pair` has 60 x 60 instances before `p` passes the limit; the 60 facts
        // of `e` are more than 1% of it too, but facts are not counted.
        let domain: String = (1..=30).map(|i| format!("(d {i}) ")).collect();
        let elements: String = (1..=60).map(|i| format!("(e {i}) ")).collect();
        let game = ggpnet_kif::parse(&format!(
            "(role r) {domain} {elements} (<= (pair ?a ?b) (e ?a) (e ?b)) \
             (<= (p ?a ?b ?c ?d ?e ?f) (pair ?a ?b) (d ?c) (d ?d) (d ?e) (d ?f) (distinct ?a 0)) \
             (<= (legal r (m ?a)) (p ?a ?a ?a ?a ?a ?a))"
        ))
        .unwrap();
        assert_eq!(
            ground_error(&game, &Config::new().max_ground_rules(5000)).message,
            "grounding too large: more than 5000 ground rules \
             (at relation `p`; most instances so far: `pair` 3600); raise --max-ground-rules"
        );
    }

    #[test]
    fn estimated_memory_stops_grounding() {
        let config = Config::new().max_bytes(1 << 20);
        assert_eq!(
            ground_error(&eight_variables(), &config).message,
            "grounding too large: more than 1 MiB of memory (estimated) (at relation `p`); raise --max-mem"
        );
    }

    #[test]
    fn ground_atoms_are_bounded() {
        let config = Config::new().max_ground_atoms(20);
        assert_eq!(
            ground_error(&eight_variables(), &config).message,
            "grounding too large: more than 20 ground atoms (at relation `d`); raise --max-ground-atoms"
        );
    }

    /// `next` nests the state one level deeper each step, without end.
    #[test]
    fn ever_deeper_terms_stop_at_the_depth_limit() {
        let game = ggpnet_kif::parse(
            "(role r) (init (c 0)) (<= (next (c (s ?x))) (true (c ?x))) (<= (legal r go) (true (c ?x)))",
        )
        .unwrap();
        let e = ground_error(&game, &Config::default());
        assert_eq!(
            e.message,
            format!(
                "grounding too large: terms nested deeper than {DEFAULT_MAX_TERM_DEPTH} (at relation `next`); \
                 raise --max-term-depth"
            )
        );
        let config = Config::new().max_term_depth(5);
        assert!(ground_error(&game, &config)
            .message
            .contains("nested deeper than 5 "));
    }

    /// Nesting up to the limit is accepted: `(c (s (s (s 0))))` has depth 5.
    #[test]
    fn terms_at_the_depth_limit_ground() {
        let game = ggpnet_kif::parse(
            "(role r) (init (c 0)) (small 0) (small (s 0)) (small (s (s 0))) \
             (<= (next (c (s ?x))) (true (c ?x)) (small ?x)) (<= (legal r go) (true (c ?x)))",
        )
        .unwrap();
        let config = Config::new().max_term_depth(5);
        assert!(crate::ground(&game, &config).is_ok());
        let config = Config::new().max_term_depth(4);
        assert!(ground_error(&game, &config)
            .message
            .contains("nested deeper than 4 "));
    }

    /// A join that tries every binding of eight variables and keeps none stops at
    /// the step limit instead of running for hours.
    #[test]
    fn joins_that_find_nothing_stop_at_the_step_limit() {
        let domain: String = (1..=30).map(|i| format!("(d {i}) ")).collect();
        let game = ggpnet_kif::parse(&format!(
            "(role r) {domain} (<= (legal r go) (d ?a) (d ?b) (d ?c) (d ?d) (d ?e) (d ?f) (d ?g) (d ?h) \
             (distinct (f ?a ?b ?c ?d ?e ?f ?g ?h) (f ?a ?b ?c ?d ?e ?f ?g ?h)))"
        ))
        .unwrap();
        let config = Config::new().max_join_steps(200_000);
        assert_eq!(
            ground_error(&game, &config).message,
            "grounding too large: more than 200000 join steps (candidate facts tried) (at relation `legal`); \
             raise --max-join-steps"
        );
    }

    /// The rule limit stops a parallel round as it stops a serial one.
    #[test]
    fn parallel_rounds_stop_at_the_rule_limit() {
        let mut description = eight_variables();
        let (rules, analysis) = crate::prepare(&mut description).unwrap();
        let always = ParallelMin {
            instances: 0,
            candidates: 0,
        };
        let config = Config::new()
            .threads(2)
            .expect("a setting in range")
            .max_ground_rules(5000);
        let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
        let e = pool
            .install(|| instantiate_with(&description, &rules, &analysis, &config, always))
            .unwrap_err();
        assert!(
            e.message
                .starts_with("grounding too large: more than 5000 ground rules"),
            "{e}"
        );
    }
}
