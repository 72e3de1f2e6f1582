//! Projection of local variables: a positive literal whose variables occur
//! nowhere else in its rule (not in the head, not in another literal) is
//! replaced by an auxiliary relation over its other variables.
//! `(<= (moved ?x ?y) (does ?p (play ?x1 ?y1 ?x2 ?y2)) (other ?x ?y ?x1 ?y1))` needs
//! only the start square of the move: it becomes
//! `(<= (aux ?x1 ?y1) (does ?p (play ?x1 ?y1 ?x2 ?y2)))` and
//! `(<= (moved ?x ?y) (aux ?x1 ?y1) (other ?x ?y ?x1 ?y1))`. The rest of the rule then
//! joins with one instance per start square instead of one per move: the ground
//! program grows with the sum of the two rules instead of their product.
//!
//! Only rules with at least two positive literals and a non-recursive head are
//! touched; the literal keeps its place in the body.

use crate::check::Analysis;
use crate::decompose::literal_vars;
use crate::normalize::fresh;
use crate::normalize::{NormalLiteral, NormalRule};
use ggpnet_kif::{SymbolId, SymbolTable, Term};

/// The variables of `rule` that occur in the head or in a literal other than `skip`.
fn vars_outside(rule: &NormalRule, skip: usize) -> Vec<SymbolId> {
    let mut vars = Vec::new();
    rule.head.for_each_var(&mut |v| {
        if !vars.contains(&v) {
            vars.push(v)
        }
    });
    for (i, literal) in rule.body.iter().enumerate() {
        if i != skip {
            literal_vars(literal, &mut vars);
        }
    }
    vars
}

/// Replaces every positive literal with local variables by its projection.
pub fn project(rules: Vec<NormalRule>, analysis: &Analysis, symbols: &mut SymbolTable) -> Vec<NormalRule> {
    let mut counter = 0;
    let mut out = Vec::with_capacity(rules.len());
    for mut rule in rules {
        let head = rule.head.functor().expect("checked");
        let positives = rule
            .body
            .iter()
            .filter(|l| matches!(l, NormalLiteral::Pos(_)))
            .count();
        if positives < 2 || analysis.recursive.contains(&head) {
            out.push(rule);
            continue;
        }
        for i in 0..rule.body.len() {
            if !matches!(rule.body[i], NormalLiteral::Pos(_)) {
                continue;
            }
            let outside = vars_outside(&rule, i);
            let mut own = Vec::new();
            literal_vars(&rule.body[i], &mut own);
            if own.iter().all(|v| outside.contains(v)) {
                continue;
            }
            let kept: Vec<SymbolId> = own.into_iter().filter(|v| outside.contains(v)).collect();
            let aux = fresh(symbols, &mut counter, "ggpnet_proj");
            let aux_head = if kept.is_empty() {
                Term::Atom(aux)
            } else {
                Term::Compound(aux, kept.into_iter().map(Term::Var).collect())
            };
            let literal = std::mem::replace(&mut rule.body[i], NormalLiteral::Pos(aux_head.clone()));
            out.push(NormalRule {
                head: aux_head,
                body: vec![literal],
                origin: rule.origin,
            });
        }
        out.push(rule);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decompose::tests::{analysis_with, texts};

    #[test]
    fn local_variables_are_projected_away() {
        let mut d = ggpnet_kif::parse(
            "(<= (moved ?x ?y) (does ?p (play ?x1 ?y1 ?x2 ?y2)) (other ?x ?y ?x1 ?y1) (not (gone ?x)))",
        )
        .unwrap();
        let rules = crate::normalize(&d).unwrap();
        let split = project(rules, &analysis_with(&d, &[]), &mut d.symbols);
        assert_eq!(
            texts(&split, &d.symbols),
            vec![
                "(<= (ggpnet_proj1 ?x1 ?y1) (does ?p (play ?x1 ?y1 ?x2 ?y2)))",
                "(<= (moved ?x ?y) (ggpnet_proj1 ?x1 ?y1) (other ?x ?y ?x1 ?y1) (not (gone ?x)))",
            ]
        );
    }

    #[test]
    fn single_literals_shared_variables_and_recursion_stay() {
        let mut d = ggpnet_kif::parse(
            "(<= (p ?x) (q ?x ?a)) (<= (r ?x) (q ?x ?a) (s ?a)) (<= (t ?x) (t ?x) (q ?x ?a))",
        )
        .unwrap();
        let rules = crate::normalize(&d).unwrap();
        let mut analysis = analysis_with(&d, &[]);
        analysis.recursive.insert(d.symbols.get("t").unwrap());
        assert_eq!(project(rules.clone(), &analysis, &mut d.symbols), rules);
    }

    #[test]
    fn variables_of_negations_are_not_local() {
        let mut d = ggpnet_kif::parse("(<= (p ?x) (q ?x) (r ?x ?a) (not (s ?a)))").unwrap();
        let rules = crate::normalize(&d).unwrap();
        assert_eq!(
            project(rules.clone(), &analysis_with(&d, &[]), &mut d.symbols),
            rules
        );
    }
}
