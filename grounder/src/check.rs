//! The checks of the GDL spec, each reported with the rule it concerns:
//! arity consistency, safety, keyword restrictions, stratification and the
//! recursion restriction. The analysis also classifies relations as static
//! (evaluated completely at ground time) or dynamic (kept in the circuit).
//!
//! GDL-II (`random`, `sees`) adds its restrictions here too: `random` is a
//! role name, never a relation; `sees` is derived like any relation that may
//! depend on `does` (so `legal`, `goal` and `terminal` may read it only where
//! it does not); and `next`, which GDL allows in heads only, may appear in a
//! GDL-II body on the way to `sees` (percepts are computed with the joint
//! move, like `next` itself): no `init`, `legal`, `goal`, `terminal` or `next`
//! may depend on it.

use crate::error::{ErrorKind, GdlError};
use crate::normalize::{NormalLiteral, NormalRule};
use ggpnet_kif::{rule_to_string, Description, SymbolId, Term};
use petgraph::graph::{DiGraph, NodeIndex};
use rustc_hash::{FxHashMap, FxHashSet};

/// What the checks learned about the relations of a valid description.
#[derive(Clone, Debug, Default)]
pub struct Analysis {
    /// Relations that depend neither on `true` nor on `does`, grouped in strata
    /// (strongly connected components), each stratum after everything it uses.
    pub static_strata: Vec<Vec<SymbolId>>,
    /// Relations whose value depends on the state or the moves, and the outputs.
    pub dynamic: FxHashSet<SymbolId>,
    /// Relations on a cycle of the dependency graph.
    pub recursive: FxHashSet<SymbolId>,
    /// Demand relations: they only choose which instances of other relations are
    /// made, and are never part of the ground program (empty until `prepare` adds
    /// them). The static ones are in the last stratum; the others are not in `dynamic`.
    pub demand: FxHashSet<SymbolId>,
    /// The rules with bodies split on values the state fixes, prepared, for
    /// `instantiate` to ground where the rules as written pass a size limit
    /// (`None` when `prepare` split no rule).
    pub(crate) functional: Option<Box<Variant>>,
}

/// A claim about every reachable state (made and proved by module
/// `functional`, defined here so that the analysis can carry it): for each choice of the other
/// arguments, at most one sentence `(relation a1 .. an)` is true (argument
/// `value` is a function of the others, its key).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) struct Invariant {
    pub(crate) relation: SymbolId,
    pub(crate) arity: usize,
    pub(crate) value: usize,
}

/// The rules with their splits (prepared like the rules as written), and the
/// invariants the splits assume.
#[derive(Clone, Debug)]
pub(crate) struct Variant {
    /// The prepared rules.
    pub(crate) rules: Vec<NormalRule>,
    /// Their analysis.
    pub(crate) analysis: Analysis,
    /// What must hold in every reachable state for the rules to mean what the
    /// description does.
    pub(crate) invariants: Vec<Invariant>,
}

fn keyword_arity(relation: SymbolId) -> Option<usize> {
    match relation {
        SymbolId::ROLE | SymbolId::INIT | SymbolId::TRUE | SymbolId::NEXT | SymbolId::BASE => Some(1),
        SymbolId::DOES | SymbolId::LEGAL | SymbolId::GOAL | SymbolId::INPUT | SymbolId::SEES => Some(2),
        SymbolId::TERMINAL => Some(0),
        _ => None,
    }
}

struct Checker<'a> {
    description: &'a Description,
    rules: &'a [NormalRule],
    /// Whether the description is GDL-II (`next` may then be read on the way to `sees`).
    gdl2: bool,
}

impl Checker<'_> {
    fn error(&self, kind: ErrorKind, origin: usize, message: String) -> GdlError {
        let rule = &self.description.rules[origin];
        GdlError {
            kind,
            span: Some(rule.span),
            rule: Some(rule_to_string(rule, &self.description.symbols)),
            message,
        }
    }

    fn name(&self, symbol: SymbolId) -> &str {
        self.description.symbols.name(symbol)
    }

    fn arities(&self) -> Result<(), GdlError> {
        let mut relations: FxHashMap<SymbolId, (usize, usize)> = FxHashMap::default();
        let mut functions: FxHashMap<SymbolId, (usize, usize)> = FxHashMap::default();
        let mut check_relation = |sentence: &Term, origin: usize| -> Result<(), GdlError> {
            let Some(relation) = sentence.functor() else {
                return Err(self.error(
                    ErrorKind::Keyword,
                    origin,
                    "a sentence cannot be a variable".into(),
                ));
            };
            let arity = sentence.args().len();
            if let Some(expected) = keyword_arity(relation) {
                if expected != arity {
                    return Err(self.error(
                        ErrorKind::Arity,
                        origin,
                        format!(
                            "'{}' takes {expected} argument(s), found {arity}",
                            self.name(relation)
                        ),
                    ));
                }
            }
            let &mut (first, first_origin) = relations.entry(relation).or_insert((arity, origin));
            if first != arity {
                return Err(self.error(
                    ErrorKind::Arity,
                    origin,
                    format!(
                        "relation '{}' used with {arity} argument(s) here and with {first} at {}",
                        self.name(relation),
                        self.description.rules[first_origin].span
                    ),
                ));
            }
            Ok(())
        };
        for rule in self.rules {
            check_relation(&rule.head, rule.origin)?;
            for literal in &rule.body {
                if let NormalLiteral::Pos(s) | NormalLiteral::Neg(s) = literal {
                    check_relation(s, rule.origin)?;
                }
            }
        }
        for rule in self.rules {
            let mut terms: Vec<&Term> = rule.head.args().iter().collect();
            for literal in &rule.body {
                match literal {
                    NormalLiteral::Pos(s) | NormalLiteral::Neg(s) => terms.extend(s.args()),
                    NormalLiteral::Distinct(a, b) | NormalLiteral::Equal(a, b) => terms.extend([a, b]),
                }
            }
            while let Some(term) = terms.pop() {
                if let Term::Compound(f, args) = term {
                    let &mut (first, first_origin) = functions.entry(*f).or_insert((args.len(), rule.origin));
                    if first != args.len() {
                        return Err(self.error(
                            ErrorKind::Arity,
                            rule.origin,
                            format!(
                                "function '{}' used with {} argument(s) here and with {first} at {}",
                                self.name(*f),
                                args.len(),
                                self.description.rules[first_origin].span
                            ),
                        ));
                    }
                    terms.extend(args);
                }
            }
        }
        Ok(())
    }

    fn safety(&self) -> Result<(), GdlError> {
        for rule in self.rules {
            let mut bound = FxHashSet::default();
            for literal in &rule.body {
                if let NormalLiteral::Pos(s) = literal {
                    s.for_each_var(&mut |v| {
                        bound.insert(v);
                    });
                }
            }
            let mut unsafe_var = None;
            let mut first_unbound = |term: &Term, place: &'static str| {
                let mut found = None;
                term.for_each_var(&mut |v| {
                    if found.is_none() && !bound.contains(&v) {
                        found = Some(v);
                    }
                });
                if unsafe_var.is_none() {
                    unsafe_var = found.map(|v| (v, place));
                }
            };
            first_unbound(&rule.head, "the head");
            for literal in &rule.body {
                match literal {
                    NormalLiteral::Pos(_) => {}
                    NormalLiteral::Neg(s) => first_unbound(s, "a negative literal"),
                    NormalLiteral::Distinct(a, b) => {
                        first_unbound(a, "a distinct");
                        first_unbound(b, "a distinct");
                    }
                    NormalLiteral::Equal(a, b) => {
                        first_unbound(a, "a (not (distinct ...))");
                        first_unbound(b, "a (not (distinct ...))");
                    }
                }
            }
            if let Some((var, place)) = unsafe_var {
                return Err(self.error(
                    ErrorKind::Unsafe,
                    rule.origin,
                    format!(
                        "unsafe rule: variable {} in {place} is not bound by any positive literal",
                        self.name(var)
                    ),
                ));
            }
        }
        Ok(())
    }

    fn keywords(&self) -> Result<(), GdlError> {
        for rule in self.rules {
            let head = rule.head.functor().expect("checked by arities");
            match head {
                SymbolId::TRUE | SymbolId::DOES | SymbolId::DISTINCT | SymbolId::NOT | SymbolId::OR => {
                    return Err(self.error(
                        ErrorKind::Keyword,
                        rule.origin,
                        format!("'{}' may not be the head of a rule", self.name(head)),
                    ))
                }
                SymbolId::RANDOM => {
                    return Err(self.error(
                        ErrorKind::Keyword,
                        rule.origin,
                        "'random' is the name of the random role (GDL-II), not a relation: it may not be \
                         the head of a rule"
                            .into(),
                    ))
                }
                SymbolId::ROLE if !rule.body.is_empty() || !rule.head.is_ground() => {
                    return Err(self.error(
                        ErrorKind::Keyword,
                        rule.origin,
                        "'role' may only appear in ground facts".into(),
                    ))
                }
                _ => {}
            }
            for literal in &rule.body {
                if let NormalLiteral::Pos(s) | NormalLiteral::Neg(s) = literal {
                    let relation = s.functor().expect("checked by arities");
                    if relation == SymbolId::INIT || (relation == SymbolId::NEXT && !self.gdl2) {
                        return Err(self.error(
                            ErrorKind::Keyword,
                            rule.origin,
                            format!("'{}' may only appear in the head of a rule", self.name(relation)),
                        ));
                    }
                    if relation == SymbolId::RANDOM {
                        return Err(self.error(
                            ErrorKind::Keyword,
                            rule.origin,
                            "'random' is the name of the random role (GDL-II), not a relation".into(),
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// The keyword restrictions on dependencies: only `sees` may depend on
    /// `next`, `legal`, `goal` and `terminal` not on `does`, `init` on neither
    /// `true` nor `does`.
    fn keyword_dependencies(&self, deps: &Dependencies) -> Result<(), GdlError> {
        // `next` in a body (GDL-II games write percepts so): only `sees` may depend on it.
        let next_readers: Vec<SymbolId> = deps
            .nodes
            .get(&SymbolId::NEXT)
            .map(|&n| deps.graph.neighbors(n).map(|m| deps.graph[m]).collect())
            .unwrap_or_default();
        let from_next = deps.reachable(&next_readers);
        let heads = [
            SymbolId::INIT,
            SymbolId::LEGAL,
            SymbolId::GOAL,
            SymbolId::TERMINAL,
            SymbolId::NEXT,
        ];
        if let Some((rule, head)) = dependent_rule(self.rules, &heads, &from_next, SymbolId::NEXT) {
            return Err(self.error(
                ErrorKind::Keyword,
                rule.origin,
                format!(
                    "'{}' depends on 'next' (only 'sees' may: percepts are computed with the joint move)",
                    self.name(head)
                ),
            ));
        }
        let from_does = deps.reachable(&[SymbolId::DOES]);
        let heads = [SymbolId::LEGAL, SymbolId::GOAL, SymbolId::TERMINAL];
        if let Some((rule, head)) = dependent_rule(self.rules, &heads, &from_does, SymbolId::DOES) {
            return Err(self.error(
                ErrorKind::Keyword,
                rule.origin,
                format!("'{}' depends on 'does'", self.name(head)),
            ));
        }
        let from_state = deps.reachable(&[SymbolId::TRUE, SymbolId::DOES]);
        // Named: an `init` rule whose body reads the state, not merely the first `init` rule.
        if let Some((rule, _)) = dependent_rule(self.rules, &[SymbolId::INIT], &from_state, SymbolId::TRUE) {
            return Err(self.error(
                ErrorKind::Keyword,
                rule.origin,
                "'init' depends on 'true' or 'does'".into(),
            ));
        }
        Ok(())
    }

    /// Refuses negation inside a static recursive cycle and checks the
    /// recursion restriction on every recursive literal.
    fn stratification(
        &self,
        deps: &Dependencies,
        components: &Components,
        dynamic: &FxHashSet<SymbolId>,
    ) -> Result<(), GdlError> {
        let component_of =
            |relation: SymbolId| deps.nodes.get(&relation).map(|n| components.component[n.index()]);
        for rule in self.rules {
            let head_scc = component_of(rule.head.functor().expect("checked")).expect("head is a node");
            if !components.is_recursive(&deps.graph, head_scc) {
                continue;
            }
            for literal in &rule.body {
                match literal {
                    // A dynamic cycle through negation may still be stratified once
                    // ground (`(goal r 100)` from `(not (goal r 0))`): the circuit
                    // builder checks it atom by atom.
                    NormalLiteral::Neg(s)
                        if component_of(s.functor().expect("checked")) == Some(head_scc)
                            && !dynamic.contains(&s.functor().expect("checked")) =>
                    {
                        return Err(self.error(
                            ErrorKind::Unstratified,
                            rule.origin,
                            format!(
                                "unstratified negation: '{}' is negated inside its own recursive cycle",
                                self.name(s.functor().expect("checked"))
                            ),
                        ));
                    }
                    NormalLiteral::Pos(s)
                        if component_of(s.functor().expect("checked")) == Some(head_scc) =>
                    {
                        check_recursion_restriction(self, rule, s, head_scc, &component_of)?;
                    }
                    _ => {}
                }
            }
        }
        Ok(())
    }
}

/// Relation dependency graph: an edge from each body relation to the head relation.
struct Dependencies {
    graph: DiGraph<SymbolId, ()>,
    nodes: FxHashMap<SymbolId, NodeIndex>,
}

impl Dependencies {
    fn new(rules: &[NormalRule]) -> Self {
        let mut deps = Dependencies {
            graph: DiGraph::new(),
            nodes: FxHashMap::default(),
        };
        for rule in rules {
            let head = deps.node(rule.head.functor().expect("checked"));
            for literal in &rule.body {
                if let NormalLiteral::Pos(s) | NormalLiteral::Neg(s) = literal {
                    let body = deps.node(s.functor().expect("checked"));
                    deps.graph.update_edge(body, head, ());
                }
            }
        }
        deps
    }

    fn node(&mut self, relation: SymbolId) -> NodeIndex {
        *self
            .nodes
            .entry(relation)
            .or_insert_with(|| self.graph.add_node(relation))
    }

    /// Every relation reachable from `seeds` (the seeds included).
    fn reachable(&self, seeds: &[SymbolId]) -> FxHashSet<SymbolId> {
        let mut seen = FxHashSet::default();
        let mut stack: Vec<NodeIndex> = seeds.iter().filter_map(|s| self.nodes.get(s).copied()).collect();
        while let Some(n) = stack.pop() {
            if seen.insert(self.graph[n]) {
                stack.extend(self.graph.neighbors(n));
            }
        }
        seen
    }
}

/// Runs every check on the normalized `rules` of `description`.
pub fn check(description: &Description, rules: &[NormalRule]) -> Result<Analysis, GdlError> {
    let checker = Checker {
        description,
        rules,
        gdl2: ggpnet_kif::is_gdl2(description),
    };
    checker.arities()?;
    checker.keywords()?;
    checker.safety()?;

    let deps = Dependencies::new(rules);
    checker.keyword_dependencies(&deps)?;
    let dynamic = dynamic_relations(&deps);
    let components = Components::new(&deps.graph);
    checker.stratification(&deps, &components, &dynamic)?;

    let static_strata = components
        .sccs
        .iter()
        .map(|scc| scc.iter().map(|&n| deps.graph[n]).collect::<Vec<_>>())
        .filter(|relations| !relations.iter().any(|r| dynamic.contains(r)))
        .collect();
    let recursive = (0..components.sccs.len())
        .filter(|&c| components.is_recursive(&deps.graph, c))
        .flat_map(|c| components.sccs[c].iter().map(|&n| deps.graph[n]))
        .collect();
    Ok(Analysis {
        static_strata,
        dynamic,
        recursive,
        demand: FxHashSet::default(),
        functional: None,
    })
}

/// The relations kept in the circuit: the outputs and every relation that
/// depends on the state, the moves or an output.
fn dynamic_relations(deps: &Dependencies) -> FxHashSet<SymbolId> {
    let mut dynamic = deps.reachable(&[
        SymbolId::TRUE,
        SymbolId::DOES,
        SymbolId::LEGAL,
        SymbolId::GOAL,
        SymbolId::TERMINAL,
        SymbolId::NEXT,
        SymbolId::SEES,
    ]);
    for keyword in [
        SymbolId::LEGAL,
        SymbolId::GOAL,
        SymbolId::TERMINAL,
        SymbolId::NEXT,
        SymbolId::SEES,
    ] {
        dynamic.insert(keyword);
    }
    dynamic
}

/// The strongly connected components of the dependency graph in topological
/// order (dependencies first), and the component of each node.
struct Components {
    sccs: Vec<Vec<NodeIndex>>,
    /// The index in `sccs` of each node's component, by node index.
    component: Vec<usize>,
}

impl Components {
    /// The components of `graph`.
    fn new(graph: &DiGraph<SymbolId, ()>) -> Self {
        let mut sccs = petgraph::algo::kosaraju_scc(graph);
        sccs.reverse();
        let mut component = vec![0usize; graph.node_count()];
        for (i, scc) in sccs.iter().enumerate() {
            for n in scc {
                component[n.index()] = i;
            }
        }
        Components { sccs, component }
    }

    /// Whether component `scc` is a cycle: more than one relation, or one that reads itself.
    fn is_recursive(&self, graph: &DiGraph<SymbolId, ()>, scc: usize) -> bool {
        self.sccs[scc].len() > 1 || {
            let n = self.sccs[scc][0];
            graph.contains_edge(n, n)
        }
    }
}

/// A rule for one of `heads` that depends on `source` (`reach`: every relation
/// that does), preferably one whose own body reads `source` or a relation of
/// `reach`, and its head: the rule to name when such a head may not depend on
/// `source`.
fn dependent_rule<'r>(
    rules: &'r [NormalRule],
    heads: &[SymbolId],
    reach: &FxHashSet<SymbolId>,
    source: SymbolId,
) -> Option<(&'r NormalRule, SymbolId)> {
    let mut reaching = None;
    for rule in rules {
        let head = rule.head.functor().expect("checked");
        if !heads.contains(&head) || !reach.contains(&head) {
            continue;
        }
        reaching.get_or_insert((rule, head));
        let reads = rule.body.iter().any(|l| {
            matches!(l, NormalLiteral::Pos(s) | NormalLiteral::Neg(s)
                if s.functor() == Some(source) || reach.contains(&s.functor().expect("checked")))
        });
        if reads {
            return Some((rule, head));
        }
    }
    reaching
}

/// The GDL recursion restriction: an argument of a recursive literal is ground,
/// is an argument of the head, or has all its variables bound by a positive
/// literal outside the cycle. It guarantees that grounding terminates.
fn check_recursion_restriction(
    checker: &Checker<'_>,
    rule: &NormalRule,
    literal: &Term,
    head_scc: usize,
    component_of: &impl Fn(SymbolId) -> Option<usize>,
) -> Result<(), GdlError> {
    let mut outside = FxHashSet::default();
    for other in &rule.body {
        if let NormalLiteral::Pos(s) = other {
            if component_of(s.functor().expect("checked")) != Some(head_scc) {
                s.for_each_var(&mut |v| {
                    outside.insert(v);
                });
            }
        }
    }
    for arg in literal.args() {
        if arg.is_ground() || rule.head.args().contains(arg) {
            continue;
        }
        let mut free = None;
        arg.for_each_var(&mut |v| {
            if free.is_none() && !outside.contains(&v) {
                free = Some(v);
            }
        });
        if let Some(var) = free {
            return Err(checker.error(
                ErrorKind::RecursionRestriction,
                rule.origin,
                format!(
                    "recursion restriction: variable {} of the recursive literal '{}' is neither a head \
                     argument nor bound outside the cycle",
                    checker.name(var),
                    checker.name(literal.functor().expect("checked"))
                ),
            ));
        }
    }
    Ok(())
}
