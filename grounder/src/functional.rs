//! Splitting a rule on values the state fixes. In
//!
//! ```text
//! (<= (goodRow ?i) (true (mark ?i 1 ?m1)) .. (true (mark ?i 9 ?m9))
//!     (exactlyOne 1 ?m1 .. ?m9) .. (exactlyOne 9 ?m1 .. ?m9))
//! ```
//!
//! every test reads all nine values, so no rewrite that keeps the meaning in
//! every state can take the body apart: grounded, it has one instance per
//! combination of the values the tests accept. But in every reachable state
//! each cell holds at most one mark: the `true` literals have at most one
//! solution for given `?i`, and then `∃m (T(m) ∧ C1(m) ∧ C2(m))` is
//! `(∃m T(m) ∧ C1(m)) ∧ (∃m T(m) ∧ C2(m))`. The rule becomes one relation per
//! test, each with all the `true` literals (the binders) and the literals that
//! read none of the values, and the rule their conjunction.
//!
//! A split is made only where it pays: after the static relations a test calls
//! are unfolded into its relation (non-recursive, defined by at most
//! [`MAX_DEFINITION_RULES`] rules and no fact), every literal but the binders
//! reads at most one of the values, so `factor` then takes each relation apart
//! into one part per value. `(exactlyOne 1 ?m1 .. ?m9)` unfolds into nine
//! rules of `(eq 1 ?mk)` and `(not (eq 1 ?mj))`: each cell is tested on its
//! own, and the nine tests of a row cost 9 x 9 x 9 parts instead of 9^9
//! instances. At least two tests must read two or more values each.
//!
//! The split is sound only if the assumption holds: for each relation of a
//! binder, the position its value sits in is a function of the other
//! arguments in every reachable state (an [`Invariant`]). `prepare` keeps the
//! split rules as a variant ([`Variant`](crate::check::Variant)), and `instantiate` grounds it only
//! where the rules as written pass a size limit; [`proved`] then checks the
//! invariants on the variant's ground program, by induction over the steps:
//! the initial state holds at most one sentence per key, and any two `next`
//! rules that make two sentences with one key and two values cannot fire
//! together in a state where the invariants hold (see [`proved`]). In such a
//! state the variant means what the rules as written mean, so its next state
//! is theirs, and the induction covers every reachable state. Where the proof
//! fails, the variant is dropped.

use crate::check::{Analysis, Invariant};
use crate::decompose::literal_vars;
use crate::normalize::{fresh, NormalLiteral, NormalRule};
use crate::program::{GroundLiteral, GroundProgram};
use crate::terms::TermId;
use ggpnet_kif::{SymbolId, SymbolTable, Term};
use rustc_hash::{FxHashMap, FxHashSet};

/// Most rules a static relation may have to be unfolded into a split rule.
pub(crate) const MAX_DEFINITION_RULES: usize = 16;

/// Most rules one test's relation may unfold into.
const MAX_UNFOLDED: usize = 256;

/// Most pairs of `next` rules [`proved`] compares, and most literal visits of
/// its closure; past either the proof gives up.
const MAX_PROOF_WORK: usize = 20_000_000;

/// Binders of a body: each literal's index and its value's position.
type Binders = Vec<(usize, usize)>;

/// A sentence's invariant (its index) and key (its arguments but the value).
type Key = (usize, Vec<TermId>);

/// A substitution of variables, followed until a term is not a bound variable.
type Subst = FxHashMap<SymbolId, Term>;

fn walk<'t>(term: &'t Term, subst: &'t Subst) -> &'t Term {
    let mut term = term;
    while let Term::Var(v) = term {
        match subst.get(v) {
            Some(t) => term = t,
            None => break,
        }
    }
    term
}

fn occurs(var: SymbolId, term: &Term, subst: &Subst) -> bool {
    match walk(term, subst) {
        Term::Var(v) => *v == var,
        Term::Atom(_) => false,
        Term::Compound(_, args) => args.iter().any(|a| occurs(var, a, subst)),
    }
}

/// Unifies `a` and `b` under `subst`, binding the variables of `a` first.
fn unify(a: &Term, b: &Term, subst: &mut Subst) -> bool {
    let (a, b) = (walk(a, subst).clone(), walk(b, subst).clone());
    match (&a, &b) {
        (Term::Var(x), Term::Var(y)) if x == y => true,
        (Term::Var(x), t) | (t, Term::Var(x)) => {
            if occurs(*x, t, subst) {
                return false;
            }
            subst.insert(*x, t.clone());
            true
        }
        (Term::Atom(x), Term::Atom(y)) => x == y,
        (Term::Compound(f, xs), Term::Compound(g, ys)) => {
            f == g && xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| unify(x, y, subst))
        }
        _ => false,
    }
}

fn apply(term: &Term, subst: &Subst) -> Term {
    match walk(term, subst) {
        Term::Compound(f, args) => Term::Compound(*f, args.iter().map(|a| apply(a, subst)).collect()),
        t => t.clone(),
    }
}

fn apply_literal(literal: &NormalLiteral, subst: &Subst) -> NormalLiteral {
    match literal {
        NormalLiteral::Pos(t) => NormalLiteral::Pos(apply(t, subst)),
        NormalLiteral::Neg(t) => NormalLiteral::Neg(apply(t, subst)),
        NormalLiteral::Distinct(a, b) => NormalLiteral::Distinct(apply(a, subst), apply(b, subst)),
        NormalLiteral::Equal(a, b) => NormalLiteral::Equal(apply(a, subst), apply(b, subst)),
    }
}

/// The sentence of a `(true s)` literal, when it is compound.
fn binder_sentence(literal: &NormalLiteral) -> Option<(SymbolId, &[Term])> {
    let NormalLiteral::Pos(Term::Compound(SymbolId::TRUE, args)) = literal else {
        return None;
    };
    match args.as_slice() {
        [Term::Compound(f, sentence_args)] => Some((*f, sentence_args)),
        _ => None,
    }
}

/// The binders of a body: the indexes of its `true` literals whose relation
/// has a position that holds, in every such literal of the relation, a
/// variable outside the head (the last such position: GDL writes a cell's
/// content after its coordinates), the position of each, and the invariants.
/// `None` when no relation has one, or when a value variable also sits at a
/// key position.
fn binders(body: &[NormalLiteral], head_vars: &[SymbolId]) -> Option<(Binders, Vec<Invariant>)> {
    let mut relations: Vec<(SymbolId, usize)> = Vec::new();
    for literal in body {
        if let Some((f, args)) = binder_sentence(literal) {
            if !relations.contains(&(f, args.len())) {
                relations.push((f, args.len()));
            }
        }
    }
    let mut invariants = Vec::new();
    let mut found = Vec::new();
    for (relation, arity) in relations {
        let literals: Vec<(usize, &[Term])> = body
            .iter()
            .enumerate()
            .filter_map(|(i, l)| binder_sentence(l).map(|s| (i, s)))
            .filter(|&(_, (f, args))| f == relation && args.len() == arity)
            .map(|(i, (_, args))| (i, args))
            .collect();
        let value = (0..arity).rev().find(|&p| {
            literals
                .iter()
                .all(|(_, args)| matches!(&args[p], Term::Var(v) if !head_vars.contains(v)))
        });
        if let Some(value) = value {
            invariants.push(Invariant {
                relation,
                arity,
                value,
            });
            found.extend(literals.iter().map(|&(i, _)| (i, value)));
        }
    }
    found.sort_unstable();
    let values = values_of(body, &found);
    let keyed = found.iter().any(|&(i, p)| {
        let (_, args) = binder_sentence(&body[i]).expect("a binder");
        let mut vars = Vec::new();
        for (_, arg) in args.iter().enumerate().filter(|&(q, _)| q != p) {
            arg.for_each_var(&mut |v| vars.push(v));
        }
        vars.iter().any(|v| values.contains(v))
    });
    (!found.is_empty() && !keyed).then_some((found, invariants))
}

/// The variables at the value positions of the binders `found` of `body`.
fn values_of(body: &[NormalLiteral], found: &[(usize, usize)]) -> Vec<SymbolId> {
    let mut values = Vec::new();
    for &(i, p) in found {
        let (_, args) = binder_sentence(&body[i]).expect("a binder");
        args[p].for_each_var(&mut |v| {
            if !values.contains(&v) {
                values.push(v)
            }
        });
    }
    values
}

/// How many of `values` a literal reads.
fn reads(literal: &NormalLiteral, values: &[SymbolId]) -> usize {
    let mut vars = Vec::new();
    literal_vars(literal, &mut vars);
    vars.iter().filter(|v| values.contains(v)).count()
}

/// Whether every variable of `rule`'s head and of its negations, `distinct`
/// and equalities occurs in a positive literal.
fn safe(rule: &NormalRule) -> bool {
    let mut bound = Vec::new();
    for literal in rule.body.iter().filter(|l| matches!(l, NormalLiteral::Pos(_))) {
        literal_vars(literal, &mut bound);
    }
    let mut needed = Vec::new();
    rule.head.for_each_var(&mut |v| needed.push(v));
    for literal in rule.body.iter().filter(|l| !matches!(l, NormalLiteral::Pos(_))) {
        literal_vars(literal, &mut needed);
    }
    needed.iter().all(|v| bound.contains(v))
}

/// The static relations that may be unfolded: not recursive, defined by at
/// most [`MAX_DEFINITION_RULES`] rules, none of them a fact.
fn definitions(rules: &[NormalRule], analysis: &Analysis) -> FxHashMap<SymbolId, Vec<NormalRule>> {
    let mut count: FxHashMap<SymbolId, (usize, bool)> = FxHashMap::default();
    for rule in rules {
        let (rules, fact) = count.entry(rule.head.functor().expect("checked")).or_default();
        *rules += 1;
        *fact |= rule.body.is_empty();
    }
    count.retain(|f, &mut (rules, fact)| {
        !f.is_keyword()
            && !analysis.dynamic.contains(f)
            && !analysis.recursive.contains(f)
            && rules <= MAX_DEFINITION_RULES
            && !fact
    });
    let mut by_head: FxHashMap<SymbolId, Vec<NormalRule>> = FxHashMap::default();
    for rule in rules {
        let head = rule.head.functor().expect("checked");
        if count.contains_key(&head) {
            by_head.entry(head).or_default().push(rule.clone());
        }
    }
    by_head
}

struct Splitter<'a> {
    symbols: &'a mut SymbolTable,
    definitions: FxHashMap<SymbolId, Vec<NormalRule>>,
    counter: usize,
    renamed: usize,
    invariants: Vec<Invariant>,
}

impl Splitter<'_> {
    fn unfoldable(&self, literal: &NormalLiteral) -> bool {
        matches!(literal, NormalLiteral::Pos(t) if t.functor().is_some_and(|f| self.definitions.contains_key(&f)))
    }

    /// `term` with its variables renamed through `map`, new ones made fresh.
    fn rename(&mut self, term: &Term, map: &mut Subst) -> Term {
        match term {
            Term::Atom(_) => term.clone(),
            Term::Var(v) => {
                if let Some(t) = map.get(v) {
                    return t.clone();
                }
                let name = loop {
                    let name = format!("{}^{}", self.symbols.name(*v), self.renamed);
                    self.renamed += 1;
                    if self.symbols.get(&name).is_none() {
                        break name;
                    }
                };
                let fresh = Term::Var(self.symbols.intern(&name));
                map.insert(*v, fresh.clone());
                fresh
            }
            Term::Compound(f, args) => Term::Compound(*f, args.iter().map(|a| self.rename(a, map)).collect()),
        }
    }

    /// `rule` with its variables renamed apart.
    fn renamed_apart(&mut self, rule: &NormalRule) -> NormalRule {
        let mut map = Subst::default();
        let head = self.rename(&rule.head, &mut map);
        let mut body = Vec::with_capacity(rule.body.len());
        for literal in &rule.body {
            body.push(match literal {
                NormalLiteral::Pos(t) => NormalLiteral::Pos(self.rename(t, &mut map)),
                NormalLiteral::Neg(t) => NormalLiteral::Neg(self.rename(t, &mut map)),
                NormalLiteral::Distinct(a, b) => {
                    NormalLiteral::Distinct(self.rename(a, &mut map), self.rename(b, &mut map))
                }
                NormalLiteral::Equal(a, b) => {
                    NormalLiteral::Equal(self.rename(a, &mut map), self.rename(b, &mut map))
                }
            });
        }
        NormalRule {
            head,
            body,
            origin: rule.origin,
        }
    }

    /// The rules `rule` unfolds into when every call of a relation of
    /// `definitions` is replaced by the bodies of its rules, or `None` past
    /// [`MAX_UNFOLDED`] rules.
    fn unfold(&mut self, rule: NormalRule) -> Option<Vec<NormalRule>> {
        let mut done = Vec::new();
        let mut todo = vec![rule];
        while let Some(rule) = todo.pop() {
            let Some(i) = rule.body.iter().position(|l| self.unfoldable(l)) else {
                done.push(rule);
                continue;
            };
            let NormalLiteral::Pos(call) = &rule.body[i] else {
                unreachable!("only positive literals unfold")
            };
            let definition = self.definitions[&call.functor().expect("a relation")].clone();
            let mut alternatives = Vec::new();
            for definition in &definition {
                let renamed = self.renamed_apart(definition);
                let mut subst = Subst::default();
                if !unify(&renamed.head, call, &mut subst) {
                    continue;
                }
                let mut body: Vec<NormalLiteral> = rule.body[..i].to_vec();
                body.extend(renamed.body);
                body.extend_from_slice(&rule.body[i + 1..]);
                alternatives.push(NormalRule {
                    head: apply(&rule.head, &subst),
                    body: body.iter().map(|l| apply_literal(l, &subst)).collect(),
                    origin: rule.origin,
                });
            }
            todo.extend(alternatives.into_iter().rev());
            if done.len() + todo.len() > MAX_UNFOLDED {
                return None;
            }
        }
        Some(done)
    }
}

impl Splitter<'_> {
    /// The rules `rule` is split into, or `None` where no split pays.
    fn split(&mut self, rule: &NormalRule) -> Option<Vec<NormalRule>> {
        let mut head_vars = Vec::new();
        rule.head.for_each_var(&mut |v| head_vars.push(v));
        let (found, invariants) = binders(&rule.body, &head_vars)?;
        let values = values_of(&rule.body, &found);
        let is_binder = |i: usize| found.iter().any(|&(j, _)| j == i);
        let mut shared: Vec<NormalLiteral> = found.iter().map(|&(i, _)| rule.body[i].clone()).collect();
        let mut tests: Vec<Vec<NormalLiteral>> = Vec::new();
        let mut single = Vec::new();
        for (_, literal) in rule.body.iter().enumerate().filter(|&(i, _)| !is_binder(i)) {
            match reads(literal, &values) {
                0 => shared.push(literal.clone()),
                1 => single.push(literal.clone()),
                _ => tests.push(vec![literal.clone()]),
            }
        }
        if tests.len() < 2 {
            return None;
        }
        tests[0].extend(single);
        let mut out = Vec::new();
        let mut conjunction = Vec::new();
        for test in tests {
            let mut body = shared.clone();
            body.extend(test);
            let mut args: Vec<SymbolId> = Vec::new();
            for literal in &body {
                literal_vars(literal, &mut args);
            }
            args.retain(|v| !values.contains(v));
            let aux = fresh(self.symbols, &mut self.counter, "ggpnet_fixed");
            let head = Term::Compound(aux, args.into_iter().map(Term::Var).collect());
            let unfolded = self.unfold(NormalRule {
                head: head.clone(),
                body,
                origin: rule.origin,
            })?;
            if !unfolded.iter().all(|r| self.pays(r, found.len())) {
                return None;
            }
            out.extend(unfolded);
            conjunction.push(NormalLiteral::Pos(head));
        }
        out.push(NormalRule {
            head: rule.head.clone(),
            body: conjunction,
            origin: rule.origin,
        });
        for invariant in invariants {
            if !self.invariants.contains(&invariant) {
                self.invariants.push(invariant);
            }
        }
        Some(out)
    }

    /// Whether an unfolded rule, its first `binders` literals the binders, is
    /// safe and reads at most one value (a binder's variable outside the
    /// head) in each other literal.
    fn pays(&self, rule: &NormalRule, binders: usize) -> bool {
        let mut head_vars = Vec::new();
        rule.head.for_each_var(&mut |v| head_vars.push(v));
        let mut values = Vec::new();
        for literal in &rule.body[..binders] {
            literal_vars(literal, &mut values);
        }
        values.retain(|v| !head_vars.contains(v));
        safe(rule) && rule.body[binders..].iter().all(|l| reads(l, &values) <= 1)
    }
}

/// The split rules of `rules` and the invariants they assume, or `None` when
/// no rule is split. Definitions no rule reads any more are dropped.
pub(crate) fn split(
    rules: &[NormalRule],
    analysis: &Analysis,
    symbols: &mut SymbolTable,
) -> Option<(Vec<NormalRule>, Vec<Invariant>)> {
    let mut splitter = Splitter {
        symbols,
        definitions: definitions(rules, analysis),
        counter: 0,
        renamed: 0,
        invariants: Vec::new(),
    };
    let mut out = Vec::with_capacity(rules.len());
    let mut any = false;
    for rule in rules {
        let head = rule.head.functor().expect("checked");
        let split = if analysis.recursive.contains(&head) {
            None
        } else {
            splitter.split(rule)
        };
        match split {
            Some(rules) => {
                any = true;
                out.extend(rules);
            }
            None => out.push(rule.clone()),
        }
    }
    any.then(|| (drop_unread(out, &splitter.definitions), splitter.invariants))
}

/// `rules` without the rules of the `definitions` that no other rule reads.
fn drop_unread(
    mut rules: Vec<NormalRule>,
    definitions: &FxHashMap<SymbolId, Vec<NormalRule>>,
) -> Vec<NormalRule> {
    loop {
        let mut read: FxHashSet<SymbolId> = FxHashSet::default();
        for literal in rules.iter().flat_map(|r| &r.body) {
            if let NormalLiteral::Pos(t) | NormalLiteral::Neg(t) = literal {
                read.extend(t.functor());
            }
        }
        let before = rules.len();
        rules.retain(|r| {
            let f = r.head.functor().expect("checked");
            !definitions.contains_key(&f) || read.contains(&f)
        });
        if rules.len() == before {
            return rules;
        }
    }
}

/// Deepest chain of derived sentences [`Prover::implied`] follows.
const MAX_DEPTH: usize = 64;

/// What ground sentences imply about the state and the moves, from the ground
/// rules: a derived sentence holds only if the body of one of its rules does.
struct Prover<'p> {
    program: &'p GroundProgram,
    invariants: &'p [Invariant],
    by_head: FxHashMap<TermId, Vec<usize>>,
    memo: FxHashMap<TermId, Option<std::rc::Rc<Vec<GroundLiteral>>>>,
    visiting: FxHashSet<TermId>,
    work: usize,
}

/// The sorted union of two sorted literal lists.
fn union(a: &[GroundLiteral], b: &[GroundLiteral]) -> Vec<GroundLiteral> {
    let mut out: Vec<GroundLiteral> = a.iter().chain(b).copied().collect();
    out.sort_unstable();
    out.dedup();
    out
}

impl Prover<'_> {
    fn is_state_or_move(&self, atom: TermId) -> bool {
        matches!(self.program.terms.functor(atom), SymbolId::TRUE | SymbolId::DOES)
    }

    /// The `true` and `does` literals that hold whenever `atom` holds, sorted
    /// (a `does` sentence implies its `legal` one); `None` when it never
    /// holds. A sentence met again on its own chain implies nothing more.
    fn implied(&mut self, atom: TermId, depth: usize) -> Option<std::rc::Rc<Vec<GroundLiteral>>> {
        if let Some(known) = self.memo.get(&atom) {
            return known.clone();
        }
        let itself = GroundLiteral { atom, positive: true };
        let terms = &self.program.terms;
        let result = match terms.functor(atom) {
            SymbolId::TRUE => Some(vec![itself]),
            SymbolId::DOES => {
                let legal = terms.get_compound(SymbolId::LEGAL, terms.args(atom));
                legal
                    .and_then(|legal| self.implied(legal, depth + 1))
                    .map(|legal| union(&legal, &[itself]))
            }
            _ => {
                if depth > MAX_DEPTH || !self.visiting.insert(atom) {
                    return Some(std::rc::Rc::new(Vec::new()));
                }
                let rules = self.by_head.get(&atom).cloned().unwrap_or_default();
                let mut common: Option<Vec<GroundLiteral>> = None;
                for rule in rules {
                    let body = &self.program.rules[rule].body;
                    let Some(implied) = self.implied_by_body(body, depth + 1) else {
                        continue;
                    };
                    common = Some(match common {
                        None => implied,
                        Some(common) => common
                            .into_iter()
                            .filter(|l| implied.binary_search(l).is_ok())
                            .collect(),
                    });
                }
                self.visiting.remove(&atom);
                common
            }
        };
        let result = result.map(std::rc::Rc::new);
        self.memo.insert(atom, result.clone());
        result
    }

    /// What a rule body implies: its literals over `true` and `does` and
    /// what its positive literals imply; `None` when it can never hold.
    fn implied_by_body(&mut self, body: &[GroundLiteral], depth: usize) -> Option<Vec<GroundLiteral>> {
        let mut out = Vec::new();
        for literal in body {
            self.work += 1;
            if literal.positive {
                let implied = self.implied(literal.atom, depth)?;
                self.work += implied.len();
                out.extend_from_slice(&implied);
            } else if self.is_state_or_move(literal.atom) {
                out.push(*literal);
            }
        }
        out.sort_unstable();
        out.dedup();
        Some(out)
    }

    /// Whether the two bodies cannot hold together in a state where the
    /// invariants hold: one needs a sentence the other excludes, they make
    /// one role do two moves, or they need two values of one key.
    fn exclusive(&mut self, a: usize, b: usize) -> bool {
        let rules = &self.program.rules;
        let (Some(a), Some(b)) = (
            self.implied_by_body(&rules[a].body, 0),
            self.implied_by_body(&rules[b].body, 0),
        ) else {
            return true;
        };
        let both = union(&a, &b);
        if both.windows(2).any(|w| w[0].atom == w[1].atom) {
            return true;
        }
        let terms = &self.program.terms;
        let mut moves: FxHashMap<TermId, TermId> = FxHashMap::default();
        let mut values: FxHashMap<Key, TermId> = FxHashMap::default();
        for literal in both.iter().filter(|l| l.positive) {
            let args = terms.args(literal.atom);
            if terms.functor(literal.atom) == SymbolId::DOES {
                if moves.insert(args[0], args[1]).is_some_and(|m| m != args[1]) {
                    return true;
                }
                continue;
            }
            for (k, key, value) in keys(self.program, self.invariants, args[0]) {
                if values.insert((k, key), value).is_some_and(|v| v != value) {
                    return true;
                }
            }
        }
        false
    }
}

/// The invariants `sentence` falls under: for each, its index, the
/// sentence's key and its value.
fn keys(
    program: &GroundProgram,
    invariants: &[Invariant],
    sentence: TermId,
) -> Vec<(usize, Vec<TermId>, TermId)> {
    let terms = &program.terms;
    let args = match terms.term(sentence) {
        crate::terms::GroundTerm::Compound(..) => terms.args(sentence),
        _ => return Vec::new(),
    };
    let functor = terms.functor(sentence);
    invariants
        .iter()
        .enumerate()
        .filter(|(_, i)| i.relation == functor && i.arity == args.len())
        .map(|(k, i)| {
            let key = args
                .iter()
                .enumerate()
                .filter(|&(p, _)| p != i.value)
                .map(|(_, &a)| a)
                .collect();
            (k, key, args[i.value])
        })
        .collect()
}

/// Whether `invariants` hold in every reachable state of `program`, by
/// induction: the initial state holds at most one value per key, and any two
/// `next` rules that would make two values of one key exclude each other
/// (see [`Prover::exclusive`]) wherever the invariants hold. `false` when
/// that cannot be shown, or past [`MAX_PROOF_WORK`].
pub(crate) fn proved(program: &GroundProgram, invariants: &[Invariant]) -> bool {
    let mut initial: FxHashMap<Key, TermId> = FxHashMap::default();
    for &fact in &program.initial_state {
        for (k, key, value) in keys(program, invariants, fact) {
            if initial.insert((k, key), value).is_some_and(|v| v != value) {
                return false;
            }
        }
    }
    let mut makers: FxHashMap<Key, Vec<(usize, TermId)>> = FxHashMap::default();
    let mut by_head: FxHashMap<TermId, Vec<usize>> = FxHashMap::default();
    for (i, rule) in program.rules.iter().enumerate() {
        by_head.entry(rule.head).or_default().push(i);
        if program.terms.functor(rule.head) == SymbolId::NEXT {
            let sentence = program.terms.args(rule.head)[0];
            for (k, key, value) in keys(program, invariants, sentence) {
                makers.entry((k, key)).or_default().push((i, value));
            }
        }
    }
    let mut prover = Prover {
        program,
        invariants,
        by_head,
        memo: FxHashMap::default(),
        visiting: FxHashSet::default(),
        work: 0,
    };
    for rules in makers.values() {
        for (n, &(a, value_a)) in rules.iter().enumerate() {
            for &(b, value_b) in &rules[n + 1..] {
                prover.work += 1;
                if prover.work > MAX_PROOF_WORK || (value_a != value_b && !prover.exclusive(a, b)) {
                    return false;
                }
            }
        }
    }
    prover.work <= MAX_PROOF_WORK
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decompose::tests::{analysis_with, texts};

    /// A line of two cells tested by `t`: exactly one of `?x ?y` equals `?z`.
    const LINE: &str = "
        (<= (ok ?i) (true (m ?i 1 ?a)) (true (m ?i 2 ?b)) (t 1 ?a ?b) (t 2 ?a ?b))
        (<= (t ?z ?x ?y) (eq ?z ?x) (index ?y) (not (eq ?z ?y)))
        (<= (t ?z ?x ?y) (eq ?z ?y) (index ?x) (not (eq ?z ?x)))
        (eq 1 1) (eq 2 2) (index 1) (index 2)";

    /// The rules of `src` after the pass, `None` when it splits nothing.
    fn split_texts(src: &str) -> Option<Vec<String>> {
        let mut d = ggpnet_kif::parse(src).unwrap();
        let rules = crate::normalize(&d).unwrap();
        let (rules, _) = split(&rules, &analysis_with(&d, &["ok"]), &mut d.symbols)?;
        Some(texts(&rules, &d.symbols))
    }

    #[test]
    fn each_test_of_fixed_values_becomes_a_relation_with_its_unfolded_cases() {
        assert_eq!(
            split_texts(LINE).unwrap(),
            vec![
                "(<= (ggpnet_fixed1 ?i) (true (m ?i 1 ?a)) (true (m ?i 2 ?b)) (eq 1 ?a) (index ?b) (not (eq 1 ?b)))",
                "(<= (ggpnet_fixed1 ?i) (true (m ?i 1 ?a)) (true (m ?i 2 ?b)) (eq 1 ?b) (index ?a) (not (eq 1 ?a)))",
                "(<= (ggpnet_fixed2 ?i) (true (m ?i 1 ?a)) (true (m ?i 2 ?b)) (eq 2 ?a) (index ?b) (not (eq 2 ?b)))",
                "(<= (ggpnet_fixed2 ?i) (true (m ?i 1 ?a)) (true (m ?i 2 ?b)) (eq 2 ?b) (index ?a) (not (eq 2 ?a)))",
                "(<= (ok ?i) (ggpnet_fixed1 ?i) (ggpnet_fixed2 ?i))",
                "(eq 1 1)",
                "(eq 2 2)",
                "(index 1)",
                "(index 2)",
            ]
        );
    }

    #[test]
    fn tests_that_stay_products_or_stand_alone_are_not_split() {
        // `t` as facts: unfolded, a test still reads both values.
        let facts = "(<= (ok ?i) (true (m ?i 1 ?a)) (true (m ?i 2 ?b)) (t 1 ?a ?b) (t 2 ?a ?b))
            (t 1 1 2) (t 1 2 1) (t 2 1 2) (t 2 2 1)";
        assert_eq!(split_texts(facts), None);
        // One test only: nothing to split apart.
        let one = LINE.replace(" (t 2 ?a ?b))", ")");
        assert_eq!(split_texts(&one), None);
        // The values are head variables: fixed by the caller, not by the state.
        let bound = LINE.replace("(ok ?i)", "(ok ?i ?a ?b)");
        assert_eq!(split_texts(&bound), None);
    }

    /// A game around [`LINE`]: `legal` marks cells, `init` the given facts.
    fn proved_for(legal: &str, init: &str) -> bool {
        let src = format!(
            "(role r) {init} {legal}
            (<= (next (m ?i ?j ?v)) (does r (mark ?i ?j ?v)))
            (<= (next (m ?i ?j ?v)) (true (m ?i ?j ?v)))
            (<= (goal r 100) (ok 1)) (<= (goal r 0) (not (ok 1))) (<= terminal (ok 1)) {LINE}"
        );
        let mut d = ggpnet_kif::parse(&src).unwrap();
        let (_, analysis) = crate::prepare(&mut d).unwrap();
        let variant = analysis.functional.expect("the rule of `ok` is split");
        let program = crate::instantiate(&d, &variant.rules, &variant.analysis, &Default::default()).unwrap();
        proved(&program, &variant.invariants)
    }

    #[test]
    fn a_value_is_proved_a_function_of_its_key_only_where_it_is() {
        let guarded = "(<= (legal r (mark 1 ?j ?v)) (index ?j) (index ?v)
            (not (true (m 1 ?j 1))) (not (true (m 1 ?j 2))))";
        assert!(proved_for(guarded, ""));
        // Two marks on one cell from the start.
        assert!(!proved_for(guarded, "(init (m 1 1 1)) (init (m 1 1 2))"));
        // A marked cell may be marked again.
        assert!(!proved_for(
            "(<= (legal r (mark 1 ?j ?v)) (index ?j) (index ?v))",
            ""
        ));
    }

    /// A move that is always legal (a fact of `legal`, a rule without a body
    /// in the ground program) implies nothing, so it cannot make a rule that
    /// adds a second mark look impossible: the proof fails.
    #[test]
    fn a_second_value_made_on_a_constant_legal_move_is_not_proved_away() {
        let src = format!(
            "(role r) (role s) (init (m 1 1 1))
            (<= (legal r (mark 1 ?j ?v)) (index ?j) (index ?v) (not (true (m 1 ?j 1))) (not (true (m 1 ?j 2))))
            (legal s noop)
            (<= (next (m ?i ?j ?v)) (does r (mark ?i ?j ?v)))
            (<= (next (m ?i ?j ?v)) (true (m ?i ?j ?v)))
            (<= (next (m 1 1 2)) (does s noop) (true (m 1 1 1)))
            (<= (goal r 100) (ok 1)) (<= (goal r 0) (not (ok 1))) (goal s 0) (<= terminal (ok 1)) {LINE}"
        );
        let mut d = ggpnet_kif::parse(&src).unwrap();
        let (_, analysis) = crate::prepare(&mut d).unwrap();
        let variant = analysis.functional.expect("the rule of `ok` is split");
        let program = crate::instantiate(&d, &variant.rules, &variant.analysis, &Default::default()).unwrap();
        assert!(
            !proved(&program, &variant.invariants),
            "a second mark from a constant legal move"
        );
    }
}
