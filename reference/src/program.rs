//! The analysed program: relations numbered, clauses compiled to patterns, ground
//! facts set apart, the dependency graph of the rules split into strongly connected
//! components in evaluation order, stratification checked, and every relation and
//! component classified as static or dynamic.
//!
//! A relation is identified by its name and arity. The dependency graph links a
//! rule to every rule whose head may unify with one of its body literals, which is
//! finer than the specification's graph over relation names: `(<= (goal r 100) (not
//! (goal r 0)))` is stratified here as long as no rule for `(goal r 0)` depends on
//! `(goal r 100)`, and its meaning is still the unique stratified model. Ground facts
//! depend on nothing and are not part of the graph. Components come out of Tarjan's
//! algorithm — run with an explicit stack, so long chains of rules cannot overflow the
//! call stack — each after all the components it depends on. A negative literal that
//! may unify with the head of a rule of its own component is unstratified negation.
//!
//! `true` and `does` are the inputs of every state. A relation is *dynamic* when one
//! of its rules reads a dynamic relation (directly), and `true` and `does` are
//! dynamic; everything else is *static*: the same in every state.

use crate::error::ReferenceError;
use crate::hash::FastMap;
use crate::normalize::{relation_name, Clause, Lit};
use crate::pattern::Pat;
use crate::terms::{Node, TermId, Terms};
use ggpnet_kif::{rule_to_string, Description, SymbolId, Term};
use std::collections::HashMap;

/// The number of a relation (name and arity) of the program.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub(crate) struct PredId(u32);

impl PredId {
    /// The id of the relation at `index` in per-relation tables.
    pub(crate) fn from_index(index: usize) -> PredId {
        PredId(u32::try_from(index).expect("fewer than 2^32 relations"))
    }

    /// The id as an index into per-relation tables.
    pub(crate) fn index(self) -> usize {
        self.0 as usize
    }
}

/// A body literal over patterns.
#[derive(Clone, Debug)]
pub(crate) enum CLit {
    /// The sentence must hold.
    Pos(PredId, Pat),
    /// The sentence must not hold.
    Neg(PredId, Pat),
    /// The two terms must differ.
    Distinct(Pat, Pat),
    /// The two terms must be equal.
    Equal(Pat, Pat),
}

/// A rule compiled to patterns; variables are numbered `0..vars`.
#[derive(Clone, Debug)]
pub(crate) struct CClause {
    /// The relation of the head.
    pub(crate) head_pred: PredId,
    /// The head sentence.
    pub(crate) head: Pat,
    /// The body, in source order; never empty.
    pub(crate) body: Vec<CLit>,
    /// Number of distinct variables.
    pub(crate) vars: usize,
    /// Index of the source rule in `Description::rules`.
    pub(crate) rule: usize,
}

/// The relations of a program, numbered.
#[derive(Clone, Debug, Default)]
pub(crate) struct Preds {
    keys: Vec<(SymbolId, usize)>,
    ids: FastMap<(SymbolId, usize), PredId>,
}

impl Preds {
    /// The id of relation `name/arity`, registering it if new.
    pub(crate) fn id(&mut self, name: SymbolId, arity: usize) -> PredId {
        if let Some(&id) = self.ids.get(&(name, arity)) {
            return id;
        }
        let id = PredId::from_index(self.keys.len());
        self.keys.push((name, arity));
        self.ids.insert((name, arity), id);
        id
    }

    /// The id of relation `name/arity`, if registered.
    pub(crate) fn find(&self, name: SymbolId, arity: usize) -> Option<PredId> {
        self.ids.get(&(name, arity)).copied()
    }

    /// The name and arity of a relation.
    pub(crate) fn key(&self, pred: PredId) -> (SymbolId, usize) {
        self.keys[pred.index()]
    }

    /// Number of relations.
    pub(crate) fn len(&self) -> usize {
        self.keys.len()
    }

    /// The relation of a sentence (normalization rejects variables as sentences).
    fn of(&mut self, sentence: &Term) -> PredId {
        let name = sentence.functor().unwrap_or(SymbolId::TRUE);
        self.id(name, sentence.args().len())
    }
}

/// A program before analysis: relations, rules with bodies, and ground facts.
#[derive(Clone, Debug)]
pub(crate) struct Rules {
    /// The relations.
    pub(crate) preds: Preds,
    /// Rules with a non-empty body.
    pub(crate) clauses: Vec<CClause>,
    /// Ground facts: their relation and sentence.
    pub(crate) facts: Vec<(PredId, TermId)>,
}

impl Rules {
    /// Compiles normalized clauses; ground subterms are interned into `terms`.
    pub(crate) fn compile(clauses: &[Clause], terms: &mut Terms) -> Rules {
        let mut rules = Rules {
            preds: Preds::default(),
            clauses: Vec::new(),
            facts: Vec::new(),
        };
        // The inputs and outputs exist even when no rule mentions them.
        for (name, arity) in [
            (SymbolId::TRUE, 1),
            (SymbolId::DOES, 2),
            (SymbolId::ROLE, 1),
            (SymbolId::INIT, 1),
            (SymbolId::LEGAL, 2),
            (SymbolId::GOAL, 2),
            (SymbolId::TERMINAL, 0),
            (SymbolId::NEXT, 1),
            (SymbolId::SEES, 2),
        ] {
            rules.preds.id(name, arity);
        }
        for clause in clauses {
            let compiled = rules.compile_clause(clause, terms);
            rules.add(compiled);
        }
        rules
    }

    /// Adds a clause: a ground fact to the facts, anything else to the rules.
    pub(crate) fn add(&mut self, clause: CClause) {
        match (&clause.head, clause.body.is_empty()) {
            (Pat::Ground(fact), true) => self.facts.push((clause.head_pred, *fact)),
            _ => self.clauses.push(clause),
        }
    }

    fn compile_clause(&mut self, clause: &Clause, terms: &mut Terms) -> CClause {
        let mut vars = HashMap::new();
        let head_pred = self.preds.of(&clause.head);
        let head = pattern(&clause.head, &mut vars, terms);
        let body = clause
            .body
            .iter()
            .map(|lit| match lit {
                Lit::Pos(t) => CLit::Pos(self.preds.of(t), pattern(t, &mut vars, terms)),
                Lit::Neg(t) => CLit::Neg(self.preds.of(t), pattern(t, &mut vars, terms)),
                Lit::Distinct(a, b) => {
                    CLit::Distinct(pattern(a, &mut vars, terms), pattern(b, &mut vars, terms))
                }
                Lit::Equal(a, b) => CLit::Equal(pattern(a, &mut vars, terms), pattern(b, &mut vars, terms)),
            })
            .collect();
        CClause {
            head_pred,
            head,
            body,
            vars: vars.len(),
            rule: clause.rule,
        }
    }
}

/// Negation inside recursion: rule number `rule` of the description negates `pred`
/// inside its own component.
#[derive(Clone, Debug)]
pub(crate) struct Unstratified {
    /// Index of the source rule in `Description::rules`.
    pub(crate) rule: usize,
    /// The relation negated.
    pub(crate) pred: PredId,
    /// The relations of the component (the cycle).
    pub(crate) cycle: Vec<PredId>,
}

impl Unstratified {
    /// The user-facing error.
    pub(crate) fn to_error(&self, description: &Description, preds: &Preds) -> ReferenceError {
        let (name, arity) = preds.key(self.pred);
        ReferenceError::Unstratified {
            rule: rule_to_string(&description.rules[self.rule], &description.symbols),
            relation: relation_name(&description.symbols, name, arity),
        }
    }
}

/// A strongly connected component of the dependency graph of the rules.
#[derive(Clone, Debug)]
pub(crate) struct Component {
    /// Its rules (indexes into [`Program::clauses`]).
    pub(crate) clauses: Vec<usize>,
    /// The relations of their heads.
    pub(crate) preds: Vec<PredId>,
    /// True when its rules depend on themselves (the component needs a fixpoint).
    pub(crate) recursive: bool,
    /// True when its relations are dynamic.
    pub(crate) dynamic: bool,
}

/// A program analysed for evaluation.
#[derive(Debug)]
pub(crate) struct Program {
    /// The relations.
    pub(crate) preds: Preds,
    /// The ground facts of each relation, as interned sentences.
    pub(crate) facts: Vec<Vec<TermId>>,
    /// Every rule with a body.
    pub(crate) clauses: Vec<CClause>,
    /// For each rule, `(literal position, rule)` for every rule whose head may
    /// unify with that body literal.
    edges: Vec<Vec<(usize, usize)>>,
    /// The rules of each relation.
    defined_by: Vec<Vec<usize>>,
    /// Components, each after every component it depends on.
    pub(crate) components: Vec<Component>,
    /// The component of each rule.
    pub(crate) component_of: Vec<usize>,
    /// Per relation: true when it is dynamic.
    pub(crate) dynamic: Vec<bool>,
}

impl Program {
    /// Analyses `rules`; `terms` holds their ground subterms.
    pub(crate) fn new(rules: Rules, terms: &Terms) -> Result<Program, Unstratified> {
        let Rules {
            preds,
            clauses,
            facts,
        } = rules;
        let mut facts_of = vec![Vec::new(); preds.len()];
        for (pred, fact) in facts {
            facts_of[pred.index()].push(fact);
        }
        let mut defined_by = vec![Vec::new(); preds.len()];
        for (i, clause) in clauses.iter().enumerate() {
            defined_by[clause.head_pred.index()].push(i);
        }
        let mut program = Program {
            preds,
            facts: facts_of,
            clauses,
            edges: Vec::new(),
            defined_by,
            components: Vec::new(),
            component_of: Vec::new(),
            dynamic: Vec::new(),
        };
        program.link(terms);
        program.build_components();
        program.check_stratified()?;
        program.classify();
        Ok(program)
    }

    /// The id of relation `name/arity`, if the program has it.
    pub(crate) fn find_pred(&self, name: SymbolId, arity: usize) -> Option<PredId> {
        self.preds.find(name, arity)
    }

    /// The rules of relation `pred`.
    pub(crate) fn rules_of(&self, pred: PredId) -> &[usize] {
        &self.defined_by[pred.index()]
    }

    /// Links every body literal to the rules whose head may unify with it.
    fn link(&mut self, terms: &Terms) {
        self.edges = self
            .clauses
            .iter()
            .map(|clause| {
                let mut edges = Vec::new();
                for (position, lit) in clause.body.iter().enumerate() {
                    if let CLit::Pos(pred, pattern) | CLit::Neg(pred, pattern) = lit {
                        for &other in &self.defined_by[pred.index()] {
                            if may_unify(pattern, &self.clauses[other].head, terms) {
                                edges.push((position, other));
                            }
                        }
                    }
                }
                edges
            })
            .collect();
    }

    fn build_components(&mut self) {
        let successors: Vec<Vec<usize>> = self
            .edges
            .iter()
            .map(|edges| edges.iter().map(|&(_, other)| other).collect())
            .collect();
        let sccs = strongly_connected(&successors);
        self.component_of = vec![0; self.clauses.len()];
        for (c, members) in sccs.iter().enumerate() {
            for &clause in members {
                self.component_of[clause] = c;
            }
        }
        self.components = sccs
            .into_iter()
            .map(|clauses| {
                let recursive = clauses.len() > 1 || successors[clauses[0]].contains(&clauses[0]);
                let mut preds: Vec<PredId> = clauses.iter().map(|&i| self.clauses[i].head_pred).collect();
                preds.sort_unstable();
                preds.dedup();
                Component {
                    clauses,
                    preds,
                    recursive,
                    dynamic: false,
                }
            })
            .collect();
    }

    fn check_stratified(&self) -> Result<(), Unstratified> {
        for (i, clause) in self.clauses.iter().enumerate() {
            for &(position, other) in &self.edges[i] {
                if let CLit::Neg(pred, _) = clause.body[position] {
                    if self.component_of[other] == self.component_of[i] {
                        return Err(Unstratified {
                            rule: clause.rule,
                            pred,
                            cycle: self.components[self.component_of[i]].preds.clone(),
                        });
                    }
                }
            }
        }
        Ok(())
    }

    /// Marks the dynamic relations and components: a worklist spreads dynamism from
    /// `true` and `does` to every relation with a rule that reads a dynamic one.
    fn classify(&mut self) {
        let mut readers = vec![Vec::new(); self.preds.len()];
        for (i, clause) in self.clauses.iter().enumerate() {
            for lit in &clause.body {
                if let CLit::Pos(pred, _) | CLit::Neg(pred, _) = lit {
                    readers[pred.index()].push(i);
                }
            }
        }
        self.dynamic = vec![false; self.preds.len()];
        let mut work = Vec::new();
        for input in [(SymbolId::TRUE, 1), (SymbolId::DOES, 2)] {
            if let Some(pred) = self.find_pred(input.0, input.1) {
                self.dynamic[pred.index()] = true;
                work.push(pred);
            }
        }
        while let Some(pred) = work.pop() {
            for &reader in &readers[pred.index()] {
                let head = self.clauses[reader].head_pred;
                if !std::mem::replace(&mut self.dynamic[head.index()], true) {
                    work.push(head);
                }
            }
        }
        for component in &mut self.components {
            component.dynamic = component.preds.iter().any(|p| self.dynamic[p.index()]);
        }
    }

    /// Every component needed to compute the relations `targets`, in evaluation order.
    pub(crate) fn cone(&self, targets: &[PredId]) -> Vec<usize> {
        let mut needed = vec![false; self.components.len()];
        let mut work: Vec<usize> = targets
            .iter()
            .flat_map(|p| self.defined_by[p.index()].iter().copied())
            .collect();
        while let Some(clause) = work.pop() {
            if !std::mem::replace(&mut needed[self.component_of[clause]], true) {
                let component = &self.components[self.component_of[clause]];
                for &member in &component.clauses {
                    work.extend(self.edges[member].iter().map(|&(_, other)| other));
                }
            }
        }
        (0..self.components.len()).filter(|&c| needed[c]).collect()
    }

    /// True when body literal `position` of rule `clause` may read facts derived by
    /// a rule of the same component (it needs a delta plan).
    pub(crate) fn is_recursive_literal(&self, clause: usize, position: usize) -> bool {
        let own = self.component_of[clause];
        self.edges[clause]
            .iter()
            .any(|&(p, other)| p == position && self.component_of[other] == own)
    }
}

/// Compiles an AST term, numbering its variables in `vars`.
fn pattern(term: &Term, vars: &mut HashMap<SymbolId, u32>, terms: &mut Terms) -> Pat {
    match term {
        Term::Var(v) => {
            let next = vars.len() as u32;
            Pat::Var(*vars.entry(*v).or_insert(next))
        }
        Term::Atom(s) => Pat::Ground(terms.atom(*s)),
        Term::Compound(f, args) => {
            let args: Box<[Pat]> = args.iter().map(|a| pattern(a, vars, terms)).collect();
            Pat::compound(*f, args, terms)
        }
    }
}

/// False only when the two patterns (with variables of separate rules) certainly
/// have no common instance. Repeated variables are not tracked, so this may say
/// true for patterns that do not unify: an extra edge in the graph, never a missing one.
fn may_unify(a: &Pat, b: &Pat, terms: &Terms) -> bool {
    match (a, b) {
        (Pat::Var(_), _) | (_, Pat::Var(_)) => true,
        (Pat::Ground(x), Pat::Ground(y)) => x == y,
        (Pat::Ground(g), Pat::Compound(f, pats)) | (Pat::Compound(f, pats), Pat::Ground(g)) => {
            match terms.node(*g) {
                Node::Compound(h, args) if h == f && args.len() == pats.len() => pats
                    .iter()
                    .zip(args.iter())
                    .all(|(p, &arg)| may_unify(p, &Pat::Ground(arg), terms)),
                _ => false,
            }
        }
        (Pat::Compound(f, xs), Pat::Compound(g, ys)) => {
            f == g && xs.len() == ys.len() && xs.iter().zip(ys.iter()).all(|(x, y)| may_unify(x, y, terms))
        }
    }
}

/// Tarjan's strongly connected components of the graph with `edges[v]` the
/// successors of `v`. Each component comes after every component reachable from it.
fn strongly_connected(edges: &[Vec<usize>]) -> Vec<Vec<usize>> {
    const UNSEEN: usize = usize::MAX;
    let n = edges.len();
    let mut order = vec![UNSEEN; n];
    let mut low = vec![0; n];
    let mut on_stack = vec![false; n];
    let mut stack = Vec::new();
    let mut components = Vec::new();
    let mut counter = 0;
    // The explicit call stack: a vertex and the position of its next edge.
    let mut calls: Vec<(usize, usize)> = Vec::new();
    for root in 0..n {
        if order[root] != UNSEEN {
            continue;
        }
        order[root] = counter;
        low[root] = counter;
        counter += 1;
        stack.push(root);
        on_stack[root] = true;
        calls.push((root, 0));
        while let Some((v, next_edge)) = calls.last_mut() {
            let v = *v;
            if let Some(&w) = edges[v].get(*next_edge) {
                *next_edge += 1;
                if order[w] == UNSEEN {
                    order[w] = counter;
                    low[w] = counter;
                    counter += 1;
                    stack.push(w);
                    on_stack[w] = true;
                    calls.push((w, 0));
                } else if on_stack[w] {
                    low[v] = low[v].min(order[w]);
                }
                continue;
            }
            calls.pop();
            if let Some(&(parent, _)) = calls.last() {
                low[parent] = low[parent].min(low[v]);
            }
            if low[v] == order[v] {
                let mut component = Vec::new();
                while let Some(w) = stack.pop() {
                    on_stack[w] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                component.sort_unstable();
                components.push(component);
            }
        }
    }
    components
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::normalize::normalize;
    use crate::terms::TermStore;

    #[test]
    fn components_come_after_their_dependencies() {
        // 0 -> 1 -> 2 -> 1, 2 -> 3
        let edges = vec![vec![1], vec![2], vec![1, 3], vec![]];
        let sccs = strongly_connected(&edges);
        assert_eq!(sccs, vec![vec![3], vec![1, 2], vec![0]]);
    }

    #[test]
    fn long_chains_do_not_overflow() {
        let n = 200_000;
        let edges: Vec<Vec<usize>> = (0..n)
            .map(|i| if i + 1 < n { vec![i + 1] } else { vec![] })
            .collect();
        let sccs = strongly_connected(&edges);
        assert_eq!(sccs.len(), n);
        assert_eq!(sccs[0], vec![n - 1]);
    }

    fn analyse(source: &str) -> Result<Program, ReferenceError> {
        let description = ggpnet_kif::parse(source).unwrap();
        let clauses = normalize(&description).unwrap();
        let empty = TermStore::default();
        let mut terms = Terms::over(&empty);
        let rules = Rules::compile(&clauses, &mut terms);
        let preds = rules.preds.clone();
        Program::new(rules, &terms).map_err(|e| e.to_error(&description, &preds))
    }

    #[test]
    fn rules_depend_on_the_rules_they_may_unify_with() {
        let program = analyse(
            "(p 1) (<= (goal r 0) (true x)) (<= (goal r 100) (not (goal r 0))) \
             (<= (q ?x) (p ?x)) (<= (q ?y) (q ?x) (p ?y))",
        )
        .unwrap();
        assert_eq!(program.clauses.len(), 4, "the fact is not a rule");
        assert_eq!(program.facts.iter().map(Vec::len).sum::<usize>(), 1);
        // goal 100 comes after goal 0 and both are dynamic; q is static and recursive.
        assert!(program.component_of[1] > program.component_of[0]);
        assert!(program.components[program.component_of[1]].dynamic);
        let q = &program.components[program.component_of[3]];
        assert!(q.recursive && !q.dynamic);
        assert!(program.is_recursive_literal(3, 0));
        assert!(!program.is_recursive_literal(3, 1));
        assert_eq!(program.cone(&[program.clauses[1].head_pred]).len(), 2);
    }

    #[test]
    fn negation_through_recursion_is_rejected() {
        let e = analyse("(<= (p ?x) (q ?x) (not (r ?x))) (<= (r ?x) (q ?x) (p ?x)) (q 1)").unwrap_err();
        assert!(matches!(e, ReferenceError::Unstratified { ref relation, .. } if relation == "r/1"));
    }
}
