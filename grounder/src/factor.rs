//! Factoring of independent subqueries: body literals that share no variable
//! outside the head are independent conjuncts, each existentially quantified on
//! its own. `(<= (next (conn ?k ?m)) (transfer ?e) (true (conn ?e ?m)) (true (step ?k)))`
//! has the independent parts `{transfer(e), conn(e,m)}` and `{step(k)}`; it becomes
//! `(<= (aux ?m) (transfer ?e) (true (conn ?e ?m)))` and
//! `(<= (next (conn ?k ?m)) (aux ?m) (true (step ?k)))`. Grounded as written, the rule
//! has one instance per `(e, m, k)`; factored, one per `(e, m)` plus one per `(m, k)`.
//!
//! Literals are grouped by the variables they share that are not head variables
//! (union-find over literals). A group with such variables becomes an auxiliary
//! relation over the head variables its positive literals mention; literals with
//! only head variables stay in the rule. A rule is factored only when it has at
//! least two parts (two groups, or a group and a positive head-only literal), when
//! its head is not recursive, and when every head variable a group's negation or
//! `distinct` needs is bound by a positive literal of that group (so every new
//! rule is safe).

use crate::check::Analysis;
use crate::decompose::literal_vars;
use crate::normalize::fresh;
use crate::normalize::{NormalLiteral, NormalRule};
use ggpnet_kif::{SymbolId, SymbolTable, Term};

fn find(parent: &mut [usize], mut i: usize) -> usize {
    while parent[i] != i {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    i
}

/// The parts of `rule`: groups of literal indexes linked by non-head variables
/// (in order of their first literal), and the indexes of head-only literals.
fn parts(rule: &NormalRule, head_vars: &[SymbolId]) -> (Vec<Vec<usize>>, Vec<usize>) {
    let n = rule.body.len();
    let mut parent: Vec<usize> = (0..n).collect();
    let mut owner: Vec<(SymbolId, usize)> = Vec::new();
    let mut local = vec![false; n];
    for (i, literal) in rule.body.iter().enumerate() {
        let mut vars = Vec::new();
        literal_vars(literal, &mut vars);
        for v in vars.into_iter().filter(|v| !head_vars.contains(v)) {
            local[i] = true;
            match owner.iter().find(|(w, _)| *w == v) {
                Some(&(_, j)) => {
                    let (a, b) = (find(&mut parent, i), find(&mut parent, j));
                    parent[a.max(b)] = a.min(b);
                }
                None => owner.push((v, i)),
            }
        }
    }
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut roots: Vec<usize> = Vec::new();
    let mut head_only = Vec::new();
    for (i, &is_local) in local.iter().enumerate() {
        if !is_local {
            head_only.push(i);
            continue;
        }
        let root = find(&mut parent, i);
        match roots.iter().position(|&r| r == root) {
            Some(g) => groups[g].push(i),
            None => {
                roots.push(root);
                groups.push(vec![i]);
            }
        }
    }
    (groups, head_only)
}

/// The head variables a group must export (those its positive literals bind), or
/// `None` when one of its filters needs a head variable it does not bind.
fn interface(rule: &NormalRule, group: &[usize], head_vars: &[SymbolId]) -> Option<Vec<SymbolId>> {
    let mut bound = Vec::new();
    let mut needed = Vec::new();
    for &i in group {
        let literal = &rule.body[i];
        if matches!(literal, NormalLiteral::Pos(_)) {
            literal_vars(literal, &mut bound);
        } else {
            literal_vars(literal, &mut needed);
        }
    }
    if needed.iter().any(|v| head_vars.contains(v) && !bound.contains(v)) {
        return None;
    }
    Some(head_vars.iter().copied().filter(|v| bound.contains(v)).collect())
}

/// Splits every non-recursive rule into its independent parts.
pub fn factor(rules: Vec<NormalRule>, analysis: &Analysis, symbols: &mut SymbolTable) -> Vec<NormalRule> {
    let mut counter = 0;
    let mut out = Vec::with_capacity(rules.len());
    for rule in rules {
        let head = rule.head.functor().expect("checked");
        let mut head_vars = Vec::new();
        rule.head.for_each_var(&mut |v| {
            if !head_vars.contains(&v) {
                head_vars.push(v)
            }
        });
        let (groups, head_only) = parts(&rule, &head_vars);
        let positive_head_only = head_only
            .iter()
            .any(|&i| matches!(rule.body[i], NormalLiteral::Pos(_)));
        let count = groups.len() + usize::from(positive_head_only);
        let interfaces: Option<Vec<Vec<SymbolId>>> =
            groups.iter().map(|g| interface(&rule, g, &head_vars)).collect();
        let (true, Some(interfaces)) = (count >= 2 && !analysis.recursive.contains(&head), interfaces) else {
            out.push(rule);
            continue;
        };
        let mut body: Vec<NormalLiteral> = head_only.iter().map(|&i| rule.body[i].clone()).collect();
        for (group, vars) in groups.iter().zip(interfaces) {
            let aux = fresh(symbols, &mut counter, "ggpnet_part");
            let aux_head = if vars.is_empty() {
                Term::Atom(aux)
            } else {
                Term::Compound(aux, vars.into_iter().map(Term::Var).collect())
            };
            out.push(NormalRule {
                head: aux_head.clone(),
                body: group.iter().map(|&i| rule.body[i].clone()).collect(),
                origin: rule.origin,
            });
            body.push(NormalLiteral::Pos(aux_head));
        }
        // Positive literals first, then the filters over head variables.
        body.sort_by_key(|l| !matches!(l, NormalLiteral::Pos(_)));
        out.push(NormalRule {
            head: rule.head,
            body,
            origin: rule.origin,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decompose::tests::{analysis_with, texts};

    #[test]
    fn independent_parts_become_auxiliary_relations() {
        let mut d = ggpnet_kif::parse(
            "(<= (next (conn ?k ?m)) (transfer ?e) (true (conn ?e ?m)) (true (step ?k)) (distinct ?k ?m))",
        )
        .unwrap();
        let rules = crate::normalize(&d).unwrap();
        let split = factor(rules, &analysis_with(&d, &[]), &mut d.symbols);
        assert_eq!(
            texts(&split, &d.symbols),
            vec![
                "(<= (ggpnet_part1 ?m) (transfer ?e) (true (conn ?e ?m)))",
                "(<= (next (conn ?k ?m)) (true (step ?k)) (ggpnet_part1 ?m) (distinct ?k ?m))",
            ]
        );
    }

    #[test]
    fn two_groups_without_head_literals_split() {
        let mut d =
            ggpnet_kif::parse("(<= (p ?x) (q ?x ?a) (r ?a) (s ?b) (not (t ?b ?x)) (u ?x ?b))").unwrap();
        let rules = crate::normalize(&d).unwrap();
        let split = factor(rules, &analysis_with(&d, &[]), &mut d.symbols);
        assert_eq!(
            texts(&split, &d.symbols),
            vec![
                "(<= (ggpnet_part1 ?x) (q ?x ?a) (r ?a))",
                "(<= (ggpnet_part2 ?x) (s ?b) (not (t ?b ?x)) (u ?x ?b))",
                "(<= (p ?x) (ggpnet_part1 ?x) (ggpnet_part2 ?x))",
            ]
        );
    }

    #[test]
    fn connected_recursive_and_unsafe_rules_stay() {
        // One part only.
        let mut d = ggpnet_kif::parse("(<= (p ?x) (q ?x ?a) (r ?a ?b) (s ?b))").unwrap();
        let rules = crate::normalize(&d).unwrap();
        assert_eq!(
            factor(rules.clone(), &analysis_with(&d, &[]), &mut d.symbols),
            rules
        );
        // Recursive head.
        let mut d = ggpnet_kif::parse("(<= (p ?x) (p ?x) (q ?a))").unwrap();
        let rules = crate::normalize(&d).unwrap();
        let mut analysis = analysis_with(&d, &[]);
        analysis.recursive.insert(d.symbols.get("p").unwrap());
        assert_eq!(factor(rules.clone(), &analysis, &mut d.symbols), rules);
        // The group's negation needs ?x, which only the other part binds.
        let mut d = ggpnet_kif::parse("(<= (p ?x) (q ?x) (r ?a) (not (t ?a ?x)))").unwrap();
        let rules = crate::normalize(&d).unwrap();
        assert_eq!(
            factor(rules.clone(), &analysis_with(&d, &[]), &mut d.symbols),
            rules
        );
    }
}
