//! Independent branches: a part of a rule body that meets the rest through a
//! single variable (besides head variables) is a subquery of its own. In
//! `(<= (score ?p ?t) (w ?p ?a) (c ?p ?b) (add ?a ?b ?s) (v ?p ?d) (e ?p ?f)
//! (add ?d ?f ?u) (add ?s ?u ?t))` the literals over `?a ?b` meet the rest only
//! through `?s` (and the head variable `?p`): they become
//! `(<= (aux ?p ?s) (w ?p ?a) (c ?p ?b) (add ?a ?b ?s))`, and the rule reads
//! `(aux ?p ?s)` instead. The meaning is the same (the branch's own variables are
//! existentially quantified and occur nowhere else), but the branches of a sum
//! tree are instantiated one beside the other instead of one inside the other:
//! a chain of parts (`decompose`) must carry the partial sum of one branch through
//! the whole of the next, a tree of branches carries none.
//!
//! The branch of a separator `?x` is a connected part of the body when literals
//! are linked by their variables other than `?x` and the head's. It is split off
//! when both it and the rest hold two or more positive literals, when every
//! negation or `distinct` of it is bound by its own positive literals, and when it
//! folds: its dynamic literals fix all its variables through static literals, and
//! `?x` is fixed from two or more of its own dynamic variables (see
//! `aggregates`), so the new relation has fewer instances than the branch.
//! Among the branches of a rule the one with the fewest interface variables goes
//! first; the rule and the new one are then split again. Recursive rules are left
//! alone.
//!
//! Where a body has no branch, static relations defined by one non-recursive
//! rule of positive static literals are unfolded into it and the search is made
//! again: `(add3 ?a ?b ?c ?s)` defined as `(add ?a ?b ?p) (add ?p ?c ?s)` shows
//! the partial sum `?p`, where a branch can end. A body is unfolded only where
//! that finds a branch; static literals leave no trace in the circuit.
//!
//! Equal branches (the same literals up to the names of variables) share one
//! relation: rules that `or` or unfolding made from one source rule often repeat
//! a branch, and its instances are then found once.

use crate::check::Analysis;
use crate::decompose::literal_vars;
use crate::normalize::{fresh, NormalLiteral, NormalRule};
use ggpnet_kif::{SymbolId, SymbolTable, Term};
use rustc_hash::FxHashMap;

/// A token of a rule written with variables numbered by first occurrence: the
/// key under which equal branches are found.
#[derive(Clone, PartialEq, Eq, Hash)]
enum Token {
    Symbol(SymbolId),
    Var(usize),
    Compound(SymbolId, usize),
    Literal(u8),
}

/// Appends the tokens of `term` to `out`, numbering variables through `vars`.
fn term_tokens(term: &Term, vars: &mut Vec<SymbolId>, out: &mut Vec<Token>) {
    match term {
        Term::Atom(s) => out.push(Token::Symbol(*s)),
        Term::Var(v) => {
            let at = vars.iter().position(|w| w == v).unwrap_or_else(|| {
                vars.push(*v);
                vars.len() - 1
            });
            out.push(Token::Var(at));
        }
        Term::Compound(f, args) => {
            out.push(Token::Compound(*f, args.len()));
            args.iter().for_each(|a| term_tokens(a, vars, out));
        }
    }
}

/// The key of a branch: its body, then its interface, up to variable names.
fn branch_key(body: &[NormalLiteral], interface: &[SymbolId]) -> Vec<Token> {
    let mut vars = Vec::new();
    let mut out = Vec::new();
    for literal in body {
        match literal {
            NormalLiteral::Pos(t) | NormalLiteral::Neg(t) => {
                out.push(Token::Literal(u8::from(matches!(literal, NormalLiteral::Neg(_)))));
                term_tokens(t, &mut vars, &mut out);
            }
            NormalLiteral::Distinct(a, b) | NormalLiteral::Equal(a, b) => {
                out.push(Token::Literal(
                    2 + u8::from(matches!(literal, NormalLiteral::Equal(..))),
                ));
                term_tokens(a, &mut vars, &mut out);
                term_tokens(b, &mut vars, &mut out);
            }
        }
    }
    out.push(Token::Literal(4));
    interface
        .iter()
        .for_each(|&v| term_tokens(&Term::Var(v), &mut vars, &mut out));
    out
}

fn find(parent: &mut [usize], mut i: usize) -> usize {
    while parent[i] != i {
        parent[i] = parent[parent[i]];
        i = parent[i];
    }
    i
}

/// The parts of `body` when literals are linked by variables outside `cut`:
/// for each literal, the root of its part.
fn parts(body: &[NormalLiteral], cut: &[SymbolId]) -> Vec<usize> {
    let mut parent: Vec<usize> = (0..body.len()).collect();
    let mut owner: FxHashMap<SymbolId, usize> = FxHashMap::default();
    for (i, literal) in body.iter().enumerate() {
        let mut vars = Vec::new();
        literal_vars(literal, &mut vars);
        for v in vars.into_iter().filter(|v| !cut.contains(v)) {
            let first = *owner.entry(v).or_insert(i);
            let (a, b) = (find(&mut parent, first), find(&mut parent, i));
            parent[a] = b;
        }
    }
    (0..body.len()).map(|i| find(&mut parent, i)).collect()
}

/// A branch to split off: the indexes of its literals and its interface.
struct Branch {
    members: Vec<usize>,
    interface: Vec<SymbolId>,
}

/// The variables of the literals at `members` of `body`, in order.
fn vars_of(body: &[NormalLiteral], members: impl Iterator<Item = usize>) -> Vec<SymbolId> {
    let mut vars = Vec::new();
    members.for_each(|i| literal_vars(&body[i], &mut vars));
    vars
}

/// Whether the literals at `members` make a branch worth its own relation at
/// the separator `x` (the last of `cut`).
fn worth_it(
    body: &[NormalLiteral],
    members: &[usize],
    cut: &[SymbolId],
    dynamic: &impl Fn(&NormalLiteral) -> bool,
) -> bool {
    let positive = |i: &&usize| matches!(body[**i], NormalLiteral::Pos(_));
    let own_positives = members.iter().filter(positive).count();
    let rest_positives = (0..body.len())
        .filter(|i| !members.contains(i))
        .filter(|i| positive(&i))
        .count();
    if own_positives < 2 || rest_positives < 2 {
        return false;
    }
    let bound = vars_of(body, members.iter().copied().filter(|i| positive(&i)));
    let filters = vars_of(body, members.iter().copied().filter(|i| !positive(&i)));
    if filters.iter().any(|v| !bound.contains(v)) {
        return false;
    }
    aggregates(body, members, cut, bound, dynamic)
}

/// Whether the branch at `members` folds two or more of its own dynamic
/// variables into its separator (the last of `cut`), and fixes all its variables
/// `bound` from its dynamic literals through static literals that each leave one
/// variable unknown (`(add ?a ?b ?s)` with `?a` and `?b` known).
///
/// Each variable fixed that way depends on the own dynamic variables of those it
/// is fixed from; a separator that depends on two (`?s` of `(w ?p ?a) (c ?p ?b)
/// (add ?a ?b ?s)`) takes fewer values than the branch has instances, which is
/// what the split saves. A separator that follows one variable (`?b` of `(succ ?b
/// ?c) (true (cell ?c))`) saves nothing, and a variable left open (`(add ?a ?b ?c
/// ?s)` with only `?a` and `?b` known) would range over everything the rest of
/// the rule narrows down.
fn aggregates(
    body: &[NormalLiteral],
    members: &[usize],
    cut: &[SymbolId],
    bound: Vec<SymbolId>,
    dynamic: &impl Fn(&NormalLiteral) -> bool,
) -> bool {
    let separator = *cut.last().expect("the separator ends the cut");
    // Each known variable and the own dynamic variables it depends on.
    let mut known: Vec<(SymbolId, Vec<SymbolId>)> = Vec::new();
    for v in vars_of(body, members.iter().copied().filter(|&i| dynamic(&body[i]))) {
        known.push((v, if cut.contains(&v) { Vec::new() } else { vec![v] }));
    }
    let statics: Vec<Vec<SymbolId>> = members
        .iter()
        .filter(|&&i| matches!(body[i], NormalLiteral::Pos(_)) && !dynamic(&body[i]))
        .map(|&i| vars_of(body, std::iter::once(i)))
        .collect();
    loop {
        let mut grew = false;
        for vars in &statics {
            let unknown: Vec<SymbolId> = vars
                .iter()
                .copied()
                .filter(|v| !known.iter().any(|(k, _)| k == v))
                .collect();
            if let [u] = unknown[..] {
                let mut deps: Vec<SymbolId> = Vec::new();
                // An interface variable is an output of the branch: nothing folds into it.
                let inputs = known
                    .iter()
                    .filter(|(k, _)| vars.contains(k) && !cut[..cut.len() - 1].contains(&u));
                for (_, d) in inputs {
                    for v in d {
                        if !deps.contains(v) {
                            deps.push(*v);
                        }
                    }
                }
                known.push((u, deps));
                grew = true;
            }
        }
        if !grew {
            break;
        }
    }
    let depends = |v: &SymbolId| known.iter().find(|(k, _)| k == v).map(|(_, d)| d.len());
    bound.iter().all(|v| depends(v).is_some()) && depends(&separator).is_some_and(|n| n >= 2)
}

/// The branch of `body` with the fewest interface variables, if any is worth it.
fn best_branch(
    body: &[NormalLiteral],
    head_vars: &[SymbolId],
    dynamic: &impl Fn(&NormalLiteral) -> bool,
) -> Option<Branch> {
    let all = vars_of(body, 0..body.len());
    let mut best: Option<Branch> = None;
    for &x in all.iter().filter(|v| !head_vars.contains(v)) {
        let mut cut = head_vars.to_vec();
        cut.push(x);
        let roots = parts(body, &cut);
        let mut seen = Vec::new();
        for (i, &root) in roots.iter().enumerate() {
            if seen.contains(&root) {
                continue;
            }
            seen.push(root);
            let members: Vec<usize> = (i..body.len()).filter(|&j| roots[j] == root).collect();
            let vars = vars_of(body, members.iter().copied());
            if !vars.contains(&x) || !worth_it(body, &members, &cut, dynamic) {
                continue;
            }
            let interface: Vec<SymbolId> = vars.into_iter().filter(|v| cut.contains(v)).collect();
            if best.as_ref().is_none_or(|b| interface.len() < b.interface.len()) {
                best = Some(Branch { members, interface });
            }
        }
    }
    best
}

/// The state of the pass: fresh names, the branches made so far, and which of
/// the new relations are dynamic.
struct Splitter<'a> {
    symbols: &'a mut SymbolTable,
    counter: usize,
    made: FxHashMap<Vec<Token>, SymbolId>,
    analysis: &'a mut Analysis,
    /// Static relations defined by one rule that [`definitions`] accepts.
    definitions: FxHashMap<SymbolId, NormalRule>,
    /// Variables made so far by unfolding.
    renamed: usize,
}

impl Splitter<'_> {
    fn dynamic(&self, literal: &NormalLiteral) -> bool {
        match literal {
            NormalLiteral::Pos(t) => t.functor().is_some_and(|f| self.analysis.dynamic.contains(&f)),
            _ => false,
        }
    }

    /// Splits `rule` until no branch is left, pushing the rules to `out`.
    fn split(&mut self, rule: NormalRule, out: &mut Vec<NormalRule>) {
        let mut head_vars = Vec::new();
        rule.head.for_each_var(&mut |v| {
            if !head_vars.contains(&v) {
                head_vars.push(v)
            }
        });
        let mut rule = rule;
        let mut found = best_branch(&rule.body, &head_vars, &|l| self.dynamic(l));
        if found.is_none() {
            let unfolded = self.unfold(&rule.body);
            found = best_branch(&unfolded, &head_vars, &|l| self.dynamic(l));
            if found.is_some() {
                rule.body = unfolded;
            }
        }
        let Some(branch) = found else {
            out.push(rule);
            return;
        };
        let (mut own, mut rest) = (Vec::new(), Vec::new());
        for (i, literal) in rule.body.into_iter().enumerate() {
            if branch.members.contains(&i) {
                own.push(literal);
            } else {
                rest.push(literal);
            }
        }
        let key = branch_key(&own, &branch.interface);
        let args = branch.interface.iter().map(|&v| Term::Var(v)).collect();
        let literal = match self.made.get(&key) {
            Some(&aux) => NormalLiteral::Pos(Term::Compound(aux, args)),
            None => {
                let aux = fresh(self.symbols, &mut self.counter, "ggpnet_branch");
                self.made.insert(key, aux);
                if own.iter().any(|l| self.dynamic(l)) {
                    self.analysis.dynamic.insert(aux);
                }
                let head = Term::Compound(aux, args);
                self.split(
                    NormalRule {
                        head: head.clone(),
                        body: own,
                        origin: rule.origin,
                    },
                    out,
                );
                NormalLiteral::Pos(head)
            }
        };
        rest.insert(branch.members[0].min(rest.len()), literal);
        self.split(
            NormalRule {
                head: rule.head,
                body: rest,
                origin: rule.origin,
            },
            out,
        );
    }
}

impl Splitter<'_> {
    /// `body` with each literal of a relation in `definitions` replaced by the
    /// body of its rule (its own variables renamed apart).
    fn unfold(&mut self, body: &[NormalLiteral]) -> Vec<NormalLiteral> {
        let mut out = Vec::with_capacity(body.len());
        for literal in body {
            let call = match literal {
                NormalLiteral::Pos(t) => t,
                _ => {
                    out.push(literal.clone());
                    continue;
                }
            };
            let Some(definition) = call.functor().and_then(|f| self.definitions.get(&f)).cloned() else {
                out.push(literal.clone());
                continue;
            };
            let mut map: Vec<(SymbolId, Term)> = definition
                .head
                .args()
                .iter()
                .zip(call.args())
                .filter_map(|(h, a)| match h {
                    Term::Var(v) => Some((*v, a.clone())),
                    _ => None,
                })
                .collect();
            for part in &definition.body {
                if let NormalLiteral::Pos(t) = part {
                    out.push(NormalLiteral::Pos(self.rename(t, &mut map)));
                }
            }
        }
        out
    }

    /// `term` with the variables of `map` replaced, and the others by fresh ones.
    fn rename(&mut self, term: &Term, map: &mut Vec<(SymbolId, Term)>) -> Term {
        match term {
            Term::Atom(_) => term.clone(),
            Term::Var(v) => match map.iter().find(|(w, _)| w == v) {
                Some((_, t)) => t.clone(),
                None => {
                    let name = loop {
                        let name = format!("{}~{}", self.symbols.name(*v), self.renamed);
                        self.renamed += 1;
                        if self.symbols.get(&name).is_none() {
                            break name;
                        }
                    };
                    let fresh = Term::Var(self.symbols.intern(&name));
                    map.push((*v, fresh.clone()));
                    fresh
                }
            },
            Term::Compound(f, args) => Term::Compound(*f, args.iter().map(|a| self.rename(a, map)).collect()),
        }
    }
}

/// The static relations that may be unfolded into a body to find a branch: each
/// defined by exactly one rule, not recursive, whose head arguments are distinct
/// variables and whose body holds only positive literals of static relations
/// (`(<= (add ?x ?y ?z ?s) (add ?x ?y ?p) (add ?p ?z ?s))`). Unfolded, a sum of
/// three terms shows its partial sum, a variable a branch can end at.
fn definitions(rules: &[NormalRule], analysis: &Analysis) -> FxHashMap<SymbolId, NormalRule> {
    let mut count: FxHashMap<SymbolId, usize> = FxHashMap::default();
    for rule in rules {
        *count.entry(rule.head.functor().expect("checked")).or_default() += 1;
    }
    let is_static = |f: SymbolId| !analysis.dynamic.contains(&f);
    rules
        .iter()
        .filter(|rule| {
            let head = rule.head.functor().expect("checked");
            let mut vars = Vec::new();
            let distinct_vars = rule.head.args().iter().all(|a| match a {
                Term::Var(v) if !vars.contains(v) => {
                    vars.push(*v);
                    true
                }
                _ => false,
            });
            count[&head] == 1
                && is_static(head)
                && !analysis.recursive.contains(&head)
                && distinct_vars
                && !rule.body.is_empty()
                && rule.body.iter().all(|l| match l {
                    NormalLiteral::Pos(t) => t.functor().is_some_and(|f| is_static(f) && !f.is_keyword()),
                    _ => false,
                })
        })
        .map(|rule| (rule.head.functor().expect("checked"), rule.clone()))
        .collect()
}

/// Splits the independent branches off every non-recursive rule; the new
/// relations that depend on the state are added to `analysis.dynamic`.
pub(crate) fn branch(
    rules: Vec<NormalRule>,
    analysis: &mut Analysis,
    symbols: &mut SymbolTable,
) -> Vec<NormalRule> {
    let definitions = definitions(&rules, analysis);
    let mut splitter = Splitter {
        symbols,
        counter: 0,
        made: FxHashMap::default(),
        analysis,
        definitions,
        renamed: 0,
    };
    let mut out = Vec::with_capacity(rules.len());
    for rule in rules {
        let head = rule.head.functor().expect("checked");
        if splitter.analysis.recursive.contains(&head) {
            out.push(rule);
        } else {
            splitter.split(rule, &mut out);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decompose::tests::{analysis_with, texts};

    /// The rules of `src` after the pass, in KIF, with `dynamic` the dynamic relations.
    fn branched(src: &str, dynamic: &[&str]) -> Vec<String> {
        let mut d = ggpnet_kif::parse(src).unwrap();
        let rules = crate::normalize(&d).unwrap();
        let mut analysis = analysis_with(&d, dynamic);
        let out = branch(rules, &mut analysis, &mut d.symbols);
        texts(&out, &d.symbols)
    }

    const SUM_TREE: &str = "(<= (score ?p ?t) (w ?p ?a) (c ?p ?b) (add ?a ?b ?s) (v ?p ?d) (e ?p ?f) \
                            (add ?d ?f ?u) (add ?s ?u ?t))";

    #[test]
    fn the_branches_of_a_sum_tree_become_relations() {
        assert_eq!(
            branched(SUM_TREE, &["w", "c", "v", "e"]),
            vec![
                "(<= (ggpnet_branch1 ?p ?s) (w ?p ?a) (c ?p ?b) (add ?a ?b ?s))",
                "(<= (ggpnet_branch2 ?p ?u) (v ?p ?d) (e ?p ?f) (add ?d ?f ?u))",
                "(<= (score ?p ?t) (ggpnet_branch1 ?p ?s) (ggpnet_branch2 ?p ?u) (add ?s ?u ?t))",
            ]
        );
    }

    #[test]
    fn equal_branches_share_a_relation() {
        let text = branched(
            "(<= (score ?p ?t) (w ?p ?a) (c ?p ?b) (add ?a ?b ?s) (v ?p ?d) (add ?s ?d ?t)) \
             (<= (worst ?p ?t) (w ?p ?x) (c ?p ?y) (add ?x ?y ?z) (e ?p ?d) (add ?z ?d ?t))",
            &["w", "c", "v", "e"],
        );
        assert_eq!(
            text,
            vec![
                "(<= (ggpnet_branch1 ?p ?s) (w ?p ?a) (c ?p ?b) (add ?a ?b ?s))",
                "(<= (score ?p ?t) (ggpnet_branch1 ?p ?s) (v ?p ?d) (add ?s ?d ?t))",
                "(<= (worst ?p ?t) (ggpnet_branch1 ?p ?z) (e ?p ?d) (add ?z ?d ?t))",
            ]
        );
    }

    #[test]
    fn a_sum_of_three_is_unfolded_to_show_its_partial_sum() {
        let text = branched(
            "(<= (add3 ?x ?y ?z ?s) (add ?x ?y ?p) (add ?p ?z ?s)) \
             (<= (score ?p ?t) (w ?p ?a) (c ?p ?b) (add3 ?a ?b ?g ?t) (g ?p ?g))",
            &["w", "c", "g"],
        );
        assert_eq!(
            text,
            vec![
                "(<= (add3 ?x ?y ?z ?s) (add ?x ?y ?p) (add ?p ?z ?s))",
                "(<= (ggpnet_branch1 ?p ?p~0) (w ?p ?a) (c ?p ?b) (add ?a ?b ?p~0))",
                "(<= (score ?p ?t) (ggpnet_branch1 ?p ?p~0) (add ?p~0 ?g ?t) (g ?p ?g))",
            ]
        );
    }

    /// `src` is left as it is with `dynamic` the dynamic relations (and `recursive`).
    fn stays(src: &str, dynamic: &[&str], recursive: Option<&str>) {
        let mut d = ggpnet_kif::parse(src).unwrap();
        let rules = crate::normalize(&d).unwrap();
        let mut analysis = analysis_with(&d, dynamic);
        analysis
            .recursive
            .extend(recursive.and_then(|r| d.symbols.get(r)));
        assert_eq!(
            branch(rules.clone(), &mut analysis, &mut d.symbols),
            rules,
            "{src}"
        );
    }

    #[test]
    fn open_static_and_recursive_branches_stay() {
        // `w, c, add4` leave `?g` open: only the rest narrows it down.
        let open = "(<= (score ?p ?s) (w ?p ?a) (c ?p ?b) (add4 ?a ?b ?g ?s) (low ?g) (even ?g))";
        stays(open, &["w", "c"], None);
        // `?b` follows `?c` alone: the branch would have as many values as instances.
        let line = "(<= (row ?m ?x) (true (cell ?m ?a ?x)) (true (cell ?m ?b ?x)) (true (cell ?m ?c ?x)) \
                    (true (cell ?m ?d ?x)) (succ ?a ?b) (succ ?b ?c) (succ ?c ?d))";
        stays(line, &["true"], None);
        // Static branches are evaluated exactly whatever their shape.
        stays(SUM_TREE, &[], None);
        stays(SUM_TREE, &["w", "c", "v", "e"], Some("score"));
    }
}
