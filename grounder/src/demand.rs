//! Demand: a recursive dynamic relation whose callers bind some of its
//! arguments is instantiated only for the bindings they can pass (the
//! magic-sets transformation, restricted to where it shrinks the instantiation).
//!
//! Bottom-up instantiation derives a recursive relation for every binding of
//! its arguments, also for those no caller asks about. A count that walks a
//! list with an accumulator, `(count_loop ?pit ?w1 ?b1 ?w ?b)` called as
//! `(count_loop first 0 0 ?w ?b)`, is then instantiated for every start value
//! `(?w1, ?b1)` at every pit, though only the partial counts of the pits before
//! can reach a pit: merrills passes 2x10^7 ground rules that way.
//!
//! The stage picks the restricted relations: the dynamic relations on a cycle
//! of the dependency graph, and then every dynamic relation read only by rules
//! of restricted relations (the helpers of the recursion). Each restricted `q`
//! gets the argument positions that every caller binds (its adornment) and a
//! demand relation `d_q` over them:
//!
//! - every rule for `q` gets the literal `(d_q bound-head-args)`, so it is
//!   instantiated only where its head is demanded;
//! - every call of `q` (positive or negated) in a rule `h :- ...` gives a demand
//!   rule `(d_q bound-args) :- [d_h], safe literals, restricted literals before it`.
//!
//! A position counts as bound at a call when its variables occur in that demand
//! body. The body reads, besides the caller's own demand literal, the positive
//! literals of relations that do not depend on any restricted relation (static
//! relations, `true`, `does`, ...; computed as without the stage) and the
//! positive restricted literals written before the call (a sideways order that
//! has no cycle). Literals of other relations that depend on restricted ones are
//! left out: a demand that read them could wait on itself.
//!
//! Why it is exact: grounding over-approximates what can hold. By induction on
//! derivations, every sentence of a relation that is not restricted, and every
//! demanded sentence of a restricted one, is derived as before: the caller's
//! instance holds, so the demand body holds for each of its restricted literals
//! in turn. A sentence nobody demands is read by no instance, in no state.
//! Leaving literals out of a demand body only demands more.
//!
//! Demand relations are never part of the ground program: the instantiation
//! drops their rules, facts and literals ([`Analysis::demand`]). One whose
//! rules read only static relations is itself static and is evaluated after
//! every other static relation; the others are dynamic.
//!
//! When it is used: the demand rules add rounds of their own (a demand walks
//! the recursion one step a round), which cost more start-up than they save
//! where the plain instantiation is small (a count over ten columns of ten
//! rows: about twice the grounding time for 14% fewer rules). So
//! [`instantiate`](crate::instantiate) first grounds the rules without demand,
//! under at most [`DEMAND_AFTER`](crate::DEMAND_AFTER) rule instances, and
//! grounds on demand only past that: games that ground today get the same
//! ground program as before, at the cost of the attempt where they do not.
//!
//! Where it is not applied: relations that are not recursive and are read by
//! an unrestricted rule (the instantiation already follows their callers'
//! joins), relations some caller binds nothing of, and the keywords.

use crate::check::Analysis;
use crate::normalize::{fresh, NormalLiteral, NormalRule};
use ggpnet_kif::{SymbolId, SymbolTable, Term};
use rustc_hash::{FxHashMap, FxHashSet};

/// Relations never restricted: the roots of the game and what the circuit reads.
const KEYWORDS: [SymbolId; 11] = [
    SymbolId::ROLE,
    SymbolId::INIT,
    SymbolId::TRUE,
    SymbolId::NEXT,
    SymbolId::BASE,
    SymbolId::DOES,
    SymbolId::LEGAL,
    SymbolId::GOAL,
    SymbolId::INPUT,
    SymbolId::SEES,
    SymbolId::TERMINAL,
];

/// The relation of a body literal that reads one.
fn relation_of(literal: &NormalLiteral) -> Option<SymbolId> {
    match literal {
        NormalLiteral::Pos(s) | NormalLiteral::Neg(s) => s.functor(),
        _ => None,
    }
}

/// Argument positions of each restricted relation that every caller binds.
type Adornments = FxHashMap<SymbolId, Vec<usize>>;

/// The dynamic recursive relations, then the dynamic relations read only in
/// rules for restricted ones, less `excluded`.
fn candidates(
    rules: &[NormalRule],
    analysis: &Analysis,
    excluded: &FxHashSet<SymbolId>,
) -> FxHashSet<SymbolId> {
    let defined: FxHashSet<SymbolId> = rules.iter().filter_map(|r| r.head.functor()).collect();
    let eligible = |f: &SymbolId| {
        analysis.dynamic.contains(f) && defined.contains(f) && !KEYWORDS.contains(f) && !excluded.contains(f)
    };
    let mut chosen: FxHashSet<SymbolId> = analysis.recursive.iter().copied().filter(eligible).collect();
    loop {
        let mut readers: FxHashMap<SymbolId, bool> = FxHashMap::default();
        for rule in rules {
            let restricted_head = rule.head.functor().is_some_and(|h| chosen.contains(&h));
            for f in rule.body.iter().filter_map(relation_of) {
                *readers.entry(f).or_insert(true) &= restricted_head;
            }
        }
        let before = chosen.len();
        chosen.extend(
            readers
                .into_iter()
                .filter(|(f, only)| *only && eligible(f))
                .map(|(f, _)| f),
        );
        if chosen.len() == before {
            return chosen;
        }
    }
}

/// The restricted relations and every relation whose rules read one, directly or not.
fn depending_on(rules: &[NormalRule], restricted: &FxHashSet<SymbolId>) -> FxHashSet<SymbolId> {
    let mut out = restricted.clone();
    loop {
        let before = out.len();
        for rule in rules {
            if rule.body.iter().filter_map(relation_of).any(|f| out.contains(&f)) {
                out.extend(rule.head.functor());
            }
        }
        if out.len() == before {
            return out;
        }
    }
}

/// The body of the demand rule for the call `rule.body[call]`: the caller's
/// demand literal (when its head is restricted), the positive literals of
/// relations outside `tainted`, and the restricted positive literals before the call.
fn demand_body(
    rule: &NormalRule,
    call: usize,
    adornments: &Adornments,
    tainted: &FxHashSet<SymbolId>,
    demand_of: &FxHashMap<SymbolId, SymbolId>,
) -> Vec<NormalLiteral> {
    let mut body = Vec::new();
    let head = rule.head.functor().expect("checked");
    if let (Some(positions), Some(&d)) = (adornments.get(&head), demand_of.get(&head)) {
        body.push(NormalLiteral::Pos(projected(&rule.head, positions, d)));
    }
    for (i, literal) in rule.body.iter().enumerate() {
        let NormalLiteral::Pos(s) = literal else {
            continue;
        };
        let f = s.functor().expect("checked");
        let restricted_before = i < call && adornments.contains_key(&f);
        if i != call && (!tainted.contains(&f) || restricted_before) {
            body.push(literal.clone());
        }
    }
    body
}

/// The arguments of `sentence` at `positions`, as a sentence of `relation`.
fn projected(sentence: &Term, positions: &[usize], relation: SymbolId) -> Term {
    let args = sentence.args();
    if positions.is_empty() {
        return Term::Atom(relation);
    }
    Term::Compound(relation, positions.iter().map(|&p| args[p].clone()).collect())
}

/// The positions of `sentence` whose variables all occur in `body`.
fn bound_positions(sentence: &Term, body: &[NormalLiteral]) -> Vec<usize> {
    let mut known = Vec::new();
    for literal in body {
        crate::decompose::literal_vars(literal, &mut known);
    }
    let covered = |t: &Term| {
        let mut all = true;
        t.for_each_var(&mut |v| all &= known.contains(&v));
        all
    };
    (0..sentence.args().len())
        .filter(|&p| covered(&sentence.args()[p]))
        .collect()
}

/// Shrinks each restricted relation's adornment to what every call binds, to a fixpoint.
fn adornments(rules: &[NormalRule], restricted: &FxHashSet<SymbolId>) -> Adornments {
    let tainted = depending_on(rules, restricted);
    let mut adornments: Adornments = FxHashMap::default();
    for rule in rules {
        for sentence in std::iter::once(&rule.head).chain(rule.body.iter().filter_map(|l| match l {
            NormalLiteral::Pos(s) | NormalLiteral::Neg(s) => Some(s),
            _ => None,
        })) {
            if let Some(f) = sentence.functor().filter(|f| restricted.contains(f)) {
                adornments.insert(f, (0..sentence.args().len()).collect());
            }
        }
    }
    // Before the demand relations exist, each restricted head stands for its own.
    let placeholders: FxHashMap<SymbolId, SymbolId> = restricted.iter().map(|&f| (f, f)).collect();
    loop {
        let mut changed = false;
        for rule in rules {
            for (i, literal) in rule.body.iter().enumerate() {
                let (NormalLiteral::Pos(s) | NormalLiteral::Neg(s)) = literal else {
                    continue;
                };
                let Some(f) = s.functor().filter(|f| restricted.contains(f)) else {
                    continue;
                };
                let body = demand_body(rule, i, &adornments, &tainted, &placeholders);
                let bound = bound_positions(s, &body);
                let current = adornments.get_mut(&f).expect("every restricted relation");
                let before = current.len();
                current.retain(|p| bound.contains(p));
                changed |= current.len() != before;
            }
        }
        if !changed {
            return adornments;
        }
    }
}

/// The restricted relations with the positions their callers bind: candidates
/// that some caller binds nothing of are dropped, and the choice made again.
fn choose(rules: &[NormalRule], analysis: &Analysis) -> Adornments {
    let mut excluded = FxHashSet::default();
    loop {
        let restricted = candidates(rules, analysis, &excluded);
        let adornments = adornments(rules, &restricted);
        let unbound: Vec<SymbolId> = adornments
            .iter()
            .filter(|(_, positions)| positions.is_empty())
            .map(|(&f, _)| f)
            .collect();
        if unbound.is_empty() {
            return adornments;
        }
        excluded.extend(unbound);
    }
}

/// Restricts recursive dynamic relations (and their helpers) to what their
/// callers demand; records the demand relations in `analysis` (see the module docs).
pub fn demand(rules: Vec<NormalRule>, analysis: &mut Analysis, symbols: &mut SymbolTable) -> Vec<NormalRule> {
    let adornments = choose(&rules, analysis);
    if adornments.is_empty() {
        return rules;
    }
    let restricted: FxHashSet<SymbolId> = adornments.keys().copied().collect();
    let tainted = depending_on(&rules, &restricted);
    let mut counter = 0;
    let mut names: Vec<SymbolId> = restricted.iter().copied().collect();
    names.sort();
    let demand_of: FxHashMap<SymbolId, SymbolId> = names
        .iter()
        .map(|&q| (q, fresh(symbols, &mut counter, "ggpnet_demand")))
        .collect();
    let mut out = Vec::with_capacity(rules.len() * 2);
    for rule in &rules {
        for (i, literal) in rule.body.iter().enumerate() {
            let Some(q) = relation_of(literal).filter(|q| restricted.contains(q)) else {
                continue;
            };
            let (NormalLiteral::Pos(s) | NormalLiteral::Neg(s)) = literal else {
                continue;
            };
            out.push(NormalRule {
                head: projected(s, &adornments[&q], demand_of[&q]),
                body: demand_body(rule, i, &adornments, &tainted, &demand_of),
                origin: rule.origin,
            });
        }
    }
    for mut rule in rules {
        if let Some(&d) = rule.head.functor().and_then(|f| demand_of.get(&f)) {
            let literal = projected(&rule.head, &adornments[&rule.head.functor().expect("checked")], d);
            rule.body.insert(0, NormalLiteral::Pos(literal));
        }
        out.push(rule);
    }
    classify(&out, analysis, demand_of.into_values().collect());
    out
}

/// The rules and analysis as they were before [`demand`]: no demand rules, no
/// demand literals, no demand relations.
pub(crate) fn without_demand(rules: &[NormalRule], analysis: &Analysis) -> (Vec<NormalRule>, Analysis) {
    let is_demand = |s: &Term| s.functor().is_some_and(|f| analysis.demand.contains(&f));
    let rules = rules
        .iter()
        .filter(|r| !is_demand(&r.head))
        .map(|r| NormalRule {
            head: r.head.clone(),
            body: r
                .body
                .iter()
                .filter(|l| !matches!(l, NormalLiteral::Pos(s) if is_demand(s)))
                .cloned()
                .collect(),
            origin: r.origin,
        })
        .collect();
    let mut plain = analysis.clone();
    plain
        .static_strata
        .retain(|stratum| !stratum.iter().any(|f| analysis.demand.contains(f)));
    plain.demand.clear();
    (rules, plain)
}

/// Records the demand relations in `analysis.demand`. One is dynamic when a rule
/// for it reads a dynamic relation positively (a fixpoint: demand relations read
/// each other), else static, in a last stratum of its own. `analysis.dynamic` is
/// left as it is, so the plain instantiation meets the same set (its order
/// steers the joins); [`with_demand`] adds the dynamic demand relations.
fn classify(rules: &[NormalRule], analysis: &mut Analysis, demands: FxHashSet<SymbolId>) {
    let mut dynamic: FxHashSet<SymbolId> = FxHashSet::default();
    loop {
        let mut grew = false;
        for rule in rules {
            let head = rule.head.functor().expect("checked");
            if !demands.contains(&head) || dynamic.contains(&head) {
                continue;
            }
            let reads_dynamic = rule.body.iter().any(|l| {
                matches!(l, NormalLiteral::Pos(s) if s.functor().is_some_and(|f| analysis.dynamic.contains(&f) || dynamic.contains(&f)))
            });
            if reads_dynamic {
                dynamic.insert(head);
                grew = true;
            }
        }
        if !grew {
            break;
        }
    }
    let mut statics: Vec<SymbolId> = demands.iter().copied().filter(|d| !dynamic.contains(d)).collect();
    if !statics.is_empty() {
        statics.sort();
        analysis.static_strata.push(statics);
    }
    analysis.demand = demands;
}

/// `analysis` with its dynamic demand relations among the dynamic relations:
/// the analysis the instantiation on demand reads.
pub(crate) fn with_demand(analysis: &Analysis) -> Analysis {
    let mut out = analysis.clone();
    let statics: FxHashSet<SymbolId> = analysis.static_strata.iter().flatten().copied().collect();
    out.dynamic
        .extend(analysis.demand.iter().filter(|d| !statics.contains(d)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decompose::tests::{analysis_with, texts};

    /// The rules after the stage, with `dynamic` and `recursive` the named relations.
    fn run(src: &str, dynamic: &[&str], recursive: &[&str]) -> (Vec<String>, Analysis, SymbolTable) {
        let mut d = ggpnet_kif::parse(src).unwrap();
        let rules = crate::normalize(&d).unwrap();
        let mut analysis = analysis_with(&d, dynamic);
        analysis.recursive = recursive.iter().filter_map(|n| d.symbols.get(n)).collect();
        let rules = demand(rules, &mut analysis, &mut d.symbols);
        (texts(&rules, &d.symbols), analysis, d.symbols)
    }

    const WALK: &str = "(<= (goal r ?n) (walk 1 0 ?n)) \
         (<= (walk ?c ?a ?n) (step ?c ?a ?b) (after ?c ?d) (walk ?d ?b ?n)) \
         (<= (walk 3 ?a ?a) (num ?a)) \
         (<= (step ?c ?a ?b) (true (on ?c)) (succ ?a ?b))";

    #[test]
    fn a_recursive_walk_is_instantiated_on_demand() {
        let (rules, analysis, symbols) = run(WALK, &["true", "goal", "walk", "step"], &["walk"]);
        assert_eq!(
            rules,
            vec![
                "(ggpnet_demand1 1 0)",
                "(<= (ggpnet_demand2 ?c ?a) (ggpnet_demand1 ?c ?a) (after ?c ?d))",
                "(<= (ggpnet_demand1 ?d ?b) (ggpnet_demand1 ?c ?a) (step ?c ?a ?b) (after ?c ?d))",
                "(<= (goal r ?n) (walk 1 0 ?n))",
                "(<= (walk ?c ?a ?n) (ggpnet_demand1 ?c ?a) (step ?c ?a ?b) (after ?c ?d) (walk ?d ?b ?n))",
                "(<= (walk 3 ?a ?a) (ggpnet_demand1 3 ?a) (num ?a))",
                "(<= (step ?c ?a ?b) (ggpnet_demand2 ?c ?a) (true (on ?c)) (succ ?a ?b))",
            ]
        );
        // Both are dynamic: the walk's demand reads `step`, which reads `true`; the step's reads the walk's.
        let [d1, d2] = ["ggpnet_demand1", "ggpnet_demand2"].map(|n| symbols.get(n).unwrap());
        let dynamic = with_demand(&analysis).dynamic;
        assert!(analysis.demand.contains(&d1) && dynamic.contains(&d1) && !analysis.dynamic.contains(&d1));
        assert!(analysis.demand.contains(&d2) && dynamic.contains(&d2));
    }

    #[test]
    fn without_demand_gives_the_rules_back() {
        let mut d = ggpnet_kif::parse(WALK).unwrap();
        let rules = crate::normalize(&d).unwrap();
        let mut analysis = analysis_with(&d, &["true", "goal", "walk", "step"]);
        analysis.recursive.extend(d.symbols.get("walk"));
        let before = analysis.clone();
        let restricted = demand(rules.clone(), &mut analysis, &mut d.symbols);
        assert!(restricted.len() > rules.len());
        let (plain, plain_analysis) = without_demand(&restricted, &analysis);
        assert_eq!(plain, rules);
        assert_eq!(plain_analysis.dynamic, before.dynamic);
        assert_eq!(plain_analysis.static_strata, before.static_strata);
        assert!(plain_analysis.demand.is_empty());
    }

    #[test]
    fn a_caller_that_binds_nothing_leaves_the_relation_whole() {
        let src = format!("{WALK} (<= terminal (walk ?c ?a 2))");
        let (rules, analysis, _) = run(&src, &["true", "goal", "terminal", "walk", "step"], &["walk"]);
        assert!(analysis.demand.is_empty());
        assert!(rules.iter().all(|r| !r.contains("ggpnet_demand")));
    }

    #[test]
    fn relations_that_are_not_recursive_stay() {
        let src = "(<= (legal r (go ?y)) (true (at ?x)) (succ ?x ?y) (not (blocked ?x ?y))) \
                   (<= (blocked ?x ?y) (true (wall ?x)) (true (wall ?y)))";
        let (_, analysis, _) = run(src, &["true", "legal", "blocked"], &[]);
        assert!(analysis.demand.is_empty());
    }

    #[test]
    fn demand_never_reads_what_depends_on_a_restricted_relation() {
        // `total` reads `walk`: a demand body that read it could wait on itself, so
        // the accumulator `?n` of the second call is not bound, and only the cell is.
        let src = format!("{WALK} (<= (total ?n) (walk 1 0 ?n)) (<= (check ?n) (total ?n) (walk 2 ?n ?m))");
        let (rules, ..) = run(
            &src,
            &["true", "goal", "walk", "step", "total", "check"],
            &["walk"],
        );
        assert!(rules.contains(&"(ggpnet_demand1 2)".to_string()), "{rules:#?}");
        let walk = "(<= (walk ?c ?a ?n) (ggpnet_demand1 ?c) (step ?c ?a ?b) (after ?c ?d) (walk ?d ?b ?n))";
        assert!(rules.contains(&walk.to_string()), "{rules:#?}");
    }
}
