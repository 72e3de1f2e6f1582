//! Rule decomposition: a long rule body is split into a chain of auxiliary
//! relations, each keeping only the variables still needed by the rest of the
//! rule. `total(t) :- g1(a), g2(b), sum(a,b,s), g3(c), sum(s,c,t)` becomes
//! `aux(s) :- g1(a), g2(b), sum(a,b,s)` and `total(t) :- aux(s), g3(c), sum(s,c,t)`:
//! the same meaning (the dropped variables are existentially quantified), but the
//! ground program grows with the sum of the parts instead of their product.
//!
//! A split is made only where it pays: where two or more variables bound by
//! dynamic literals (ones that depend on the state) go away and the rest of the body
//! binds a new variable through dynamic literals only, so the circuit would
//! otherwise multiply their combinations with what follows (dropping one variable
//! costs more nodes than it saves in the corpus, and a new variable that a static
//! literal fixes from known ones, like `?x2` in `(succ ?x1 ?x2)`, does not multiply). Variables bound
//! only by static literals cost nothing in the circuit: equal instances merge.
//! Positive literals are chained in a connected order (the first as written, then
//! the one sharing most variables with those before); a negation or `distinct` goes into
//! the first part where all its variables are bound. Recursive rules are left
//! alone, so cycles and the recursion restriction are unaffected.

use crate::check::Analysis;
use crate::normalize::{fresh, NormalLiteral, NormalRule};
use ggpnet_kif::{SymbolId, SymbolTable, Term};

/// Appends the variables of `literal` not yet in `out`.
pub(crate) fn literal_vars(literal: &NormalLiteral, out: &mut Vec<SymbolId>) {
    let mut push = |v| {
        if !out.contains(&v) {
            out.push(v)
        }
    };
    match literal {
        NormalLiteral::Pos(t) | NormalLiteral::Neg(t) => t.for_each_var(&mut push),
        NormalLiteral::Distinct(a, b) | NormalLiteral::Equal(a, b) => {
            a.for_each_var(&mut push);
            b.for_each_var(&mut push);
        }
    }
}

/// The positive literals in a join order that keeps them connected: the first as
/// written, then repeatedly the one sharing the most variables with those before it
/// (the earliest written on a tie), so variables used by few literals are dropped early.
fn connected_order(mut rest: Vec<&NormalLiteral>) -> Vec<&NormalLiteral> {
    let mut order = Vec::with_capacity(rest.len());
    let mut bound = Vec::new();
    while !rest.is_empty() {
        let shared = |literal: &NormalLiteral| {
            let mut vars = Vec::new();
            literal_vars(literal, &mut vars);
            vars.iter().filter(|v| bound.contains(*v)).count()
        };
        let mut best = 0;
        for i in 1..rest.len() {
            if shared(rest[i]) > shared(rest[best]) {
                best = i;
            }
        }
        let literal = rest.remove(best);
        literal_vars(literal, &mut bound);
        order.push(literal);
    }
    order
}

/// Whether the rest of a body binds a new variable through dynamic literals that
/// no static literal fixes: its values then multiply with those of the dropped
/// variables. A static literal fixes a variable when all its other variables are
/// known (`(succ ?x1 ?x2)` with `?x1` known), and a split before such a rest would
/// only add nodes.
fn multiplies(
    rest: &[&NormalLiteral],
    bound: &[SymbolId],
    dynamic: &impl Fn(&NormalLiteral) -> bool,
) -> bool {
    let mut dynamic_vars = Vec::new();
    let mut statics: Vec<Vec<SymbolId>> = Vec::new();
    for literal in rest {
        if dynamic(literal) {
            literal_vars(literal, &mut dynamic_vars);
        } else {
            let mut vars = Vec::new();
            literal_vars(literal, &mut vars);
            statics.push(vars);
        }
    }
    let mut known: Vec<SymbolId> = bound.to_vec();
    loop {
        let mut grew = false;
        for vars in &statics {
            let unknown: Vec<SymbolId> = vars.iter().copied().filter(|v| !known.contains(v)).collect();
            if unknown.len() == 1 {
                known.push(unknown[0]);
                grew = true;
            }
        }
        if !grew {
            break;
        }
    }
    dynamic_vars.iter().any(|v| !known.contains(v))
}

/// Splits every non-recursive rule whose body lets variables be dropped early.
pub fn decompose(rules: Vec<NormalRule>, analysis: &Analysis, symbols: &mut SymbolTable) -> Vec<NormalRule> {
    let dynamic = |literal: &NormalLiteral| match literal {
        NormalLiteral::Pos(t) => t.functor().is_some_and(|f| analysis.dynamic.contains(&f)),
        _ => false,
    };
    let mut counter = 0;
    let mut out = Vec::with_capacity(rules.len());
    for rule in rules {
        let head = rule.head.functor().expect("checked");
        let positives = connected_order(
            rule.body
                .iter()
                .filter(|l| matches!(l, NormalLiteral::Pos(_)))
                .collect(),
        );
        if analysis.recursive.contains(&head) || positives.len() < 3 {
            out.push(rule);
            continue;
        }
        let mut pending: Vec<&NormalLiteral> = rule
            .body
            .iter()
            .filter(|l| !matches!(l, NormalLiteral::Pos(_)))
            .collect();
        let mut head_vars = Vec::new();
        rule.head.for_each_var(&mut |v| {
            if !head_vars.contains(&v) {
                head_vars.push(v)
            }
        });
        let mut body: Vec<NormalLiteral> = Vec::new();
        let mut bound: Vec<SymbolId> = Vec::new();
        let mut dynamic_vars: Vec<SymbolId> = Vec::new();
        for (k, literal) in positives.iter().enumerate() {
            body.push((*literal).clone());
            literal_vars(literal, &mut bound);
            if dynamic(literal) {
                literal_vars(literal, &mut dynamic_vars);
            }
            pending.retain(|filter| {
                let mut vars = Vec::new();
                literal_vars(filter, &mut vars);
                let ready = vars.iter().all(|v| bound.contains(v));
                if ready {
                    body.push((*filter).clone());
                }
                !ready
            });
            if k + 1 == positives.len() {
                break;
            }
            let mut needed = head_vars.clone();
            for later in positives[k + 1..].iter().chain(pending.iter()) {
                literal_vars(later, &mut needed);
            }
            let interface: Vec<SymbolId> = bound.iter().copied().filter(|v| needed.contains(v)).collect();
            let dropped_dynamic = dynamic_vars.iter().filter(|v| !needed.contains(v)).count();
            if dropped_dynamic < 2 || !multiplies(&positives[k + 1..], &bound, &dynamic) {
                continue;
            }
            let aux = fresh(symbols, &mut counter, "ggpnet_aux");
            let aux_head = if interface.is_empty() {
                Term::Atom(aux)
            } else {
                Term::Compound(aux, interface.iter().map(|&v| Term::Var(v)).collect())
            };
            out.push(NormalRule {
                head: aux_head.clone(),
                body: std::mem::take(&mut body),
                origin: rule.origin,
            });
            body.push(NormalLiteral::Pos(aux_head));
            // The auxiliary relation is dynamic: all its variables are.
            dynamic_vars = interface.clone();
            bound = interface;
        }
        body.extend(pending.into_iter().cloned());
        out.push(NormalRule {
            head: rule.head,
            body,
            origin: rule.origin,
        });
    }
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// An analysis where the named relations are dynamic.
    pub fn analysis_with(d: &ggpnet_kif::Description, dynamic: &[&str]) -> Analysis {
        Analysis {
            dynamic: dynamic.iter().filter_map(|n| d.symbols.get(n)).collect(),
            ..Default::default()
        }
    }

    /// The rules in KIF, to compare with expected text.
    pub fn texts(rules: &[NormalRule], symbols: &SymbolTable) -> Vec<String> {
        let literal = |l: &NormalLiteral| match l {
            NormalLiteral::Pos(t) => ggpnet_kif::Literal::Atom(t.clone()),
            NormalLiteral::Neg(t) => ggpnet_kif::Literal::Not(Box::new(ggpnet_kif::Literal::Atom(t.clone()))),
            NormalLiteral::Distinct(a, b) => ggpnet_kif::Literal::Distinct(a.clone(), b.clone()),
            NormalLiteral::Equal(a, b) => {
                ggpnet_kif::Literal::Not(Box::new(ggpnet_kif::Literal::Distinct(a.clone(), b.clone())))
            }
        };
        rules
            .iter()
            .map(|r| {
                let rule = ggpnet_kif::Rule {
                    head: r.head.clone(),
                    body: r.body.iter().map(literal).collect(),
                    span: Default::default(),
                };
                ggpnet_kif::rule_to_string(&rule, symbols)
            })
            .collect()
    }

    #[test]
    fn chains_drop_variables_early() {
        let mut d =
            ggpnet_kif::parse("(<= (total ?t) (g1 ?a) (g2 ?b) (sum ?a ?b ?s) (not (bad ?a)) (g3 ?s ?t))")
                .unwrap();
        let rules = crate::normalize(&d).unwrap();
        let analysis = analysis_with(&d, &["g1", "g2", "g3"]);
        let split = decompose(rules, &analysis, &mut d.symbols);
        let text = texts(&split, &d.symbols);
        assert_eq!(
            text,
            vec![
                "(<= (ggpnet_aux1 ?s) (g1 ?a) (not (bad ?a)) (sum ?a ?b ?s) (g2 ?b))",
                "(<= (total ?t) (ggpnet_aux1 ?s) (g3 ?s ?t))",
            ]
        );
    }

    #[test]
    fn literals_are_joined_along_shared_variables() {
        let mut d = ggpnet_kif::parse(
            "(<= (transfer ?k) (does ?r (place ?x ?y)) (true (owner ?k ?r)) (true (conn ?k ?m ?n)) \
             (adjacent ?x ?y ?m ?n))",
        )
        .unwrap();
        let rules = crate::normalize(&d).unwrap();
        let split = decompose(rules, &analysis_with(&d, &["does", "true"]), &mut d.symbols);
        assert_eq!(
            texts(&split, &d.symbols),
            vec![
                "(<= (ggpnet_aux1 ?r ?m ?n) (does ?r (place ?x ?y)) (adjacent ?x ?y ?m ?n))",
                "(<= (transfer ?k) (ggpnet_aux1 ?r ?m ?n) (true (conn ?k ?m ?n)) (true (owner ?k ?r)))",
            ]
        );
    }

    #[test]
    fn no_split_where_static_literals_fix_the_rest() {
        // Each prefix of the line matches one rest: a split would only add nodes.
        let mut d = ggpnet_kif::parse(
            "(<= (line ?p) (true (cell ?x1 ?p)) (succ ?x1 ?x2) (true (cell ?x2 ?p)) (succ ?x2 ?x3) \
             (true (cell ?x3 ?p)) (succ ?x3 ?x4) (true (cell ?x4 ?p)))",
        )
        .unwrap();
        let rules = crate::normalize(&d).unwrap();
        let split = decompose(rules.clone(), &analysis_with(&d, &["true"]), &mut d.symbols);
        assert_eq!(split, rules);
    }

    #[test]
    fn recursive_and_short_rules_stay() {
        let mut d =
            ggpnet_kif::parse("(<= (p ?x) (q ?x ?y) (r ?y)) (<= (t ?x) (t ?y) (e ?y ?z) (e ?z ?x))").unwrap();
        let rules = crate::normalize(&d).unwrap();
        let mut analysis = analysis_with(&d, &["q", "r", "t", "e"]);
        analysis.recursive.insert(d.symbols.get("t").unwrap());
        let split = decompose(rules.clone(), &analysis, &mut d.symbols);
        assert_eq!(split, rules);
        // Variables bound only by static literals are not worth a split.
        let mut d = ggpnet_kif::parse("(<= (p ?x) (s1 ?x ?a) (s2 ?a ?b) (q ?x) (s3 ?b))").unwrap();
        let rules = crate::normalize(&d).unwrap();
        let split = decompose(rules.clone(), &analysis_with(&d, &["q"]), &mut d.symbols);
        assert_eq!(split, rules);
    }
}
