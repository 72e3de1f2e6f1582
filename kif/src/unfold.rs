//! Rules whose variables only their callers bind, unfolded into the callers:
//! the reading a top-down prover gives them. `(<= (sort ?x ?y ?y ?x) (not
//! (gteq ?x ?y)))` is unsafe in GDL (nothing in its body binds `?x` or `?y`),
//! but the GameController's prover only ever asks it with both bound, so
//! `(sort ?a ?b ?c ?d)` in a caller means `(gteq ?a ?b)` with `?c = ?a, ?d = ?b`,
//! or `(not (gteq ?a ?b))` with `?c = ?b, ?d = ?a`.
//!
//! A relation is unfolded when one of its rules binds a variable of its head
//! by no positive literal, it is no keyword, it does not
//! depend on itself, and it is only ever called positively and outside `or`:
//! each call is replaced by the body of each of its rules, unified with the
//! call (a rule whose head does not unify with the call gives nothing). The
//! callers are then judged by the usual safety check, which names the caller
//! when it does not bind the variables either. Unfolding gives up on a
//! relation, which then stays unsafe, when it would make more than
//! [`MAX_RULES`] rules.

use crate::ast::Description;
use crate::ast::{Literal, Rule, Term};
use crate::symbol::{SymbolId, SymbolTable};
use std::collections::{HashMap, HashSet};

/// The most rules unfolding may make of a description.
pub const MAX_RULES: usize = 100_000;

/// A relation: its name and number of arguments.
type Relation = (SymbolId, usize);

/// Unfolds every relation with caller-bound rules into its callers (module doc).
pub(crate) fn unfold_caller_bound(description: &mut Description) {
    let mut tried = HashSet::new();
    while let Some(relation) = next_candidate(&description.rules, &tried) {
        tried.insert(relation);
        if let Some(rules) = unfold(&description.rules, relation, &mut description.symbols) {
            description.rules = rules;
        }
    }
}

/// The relation of a sentence.
fn relation(t: &Term) -> Option<Relation> {
    t.functor().map(|f| (f, t.args().len()))
}

/// A relation not yet tried that has a caller-bound rule and can be unfolded.
fn next_candidate(rules: &[Rule], tried: &HashSet<Relation>) -> Option<Relation> {
    let mut reads_otherwise = HashSet::new();
    let mut called = HashSet::new();
    for rule in rules {
        for literal in &rule.body {
            match literal {
                Literal::Atom(t) => called.extend(relation(t)),
                other => other_reads(other, &mut reads_otherwise),
            }
        }
    }
    rules
        .iter()
        .filter(|r| is_caller_bound(r))
        .filter_map(|r| relation(&r.head))
        .find(|rel| {
            !rel.0.is_keyword()
                && !tried.contains(rel)
                && called.contains(rel)
                && !reads_otherwise.contains(rel)
                && !depends_on_itself(rules, *rel)
        })
}

/// The relations a negative, `or` or `distinct` literal reads.
fn other_reads(literal: &Literal, into: &mut HashSet<Relation>) {
    match literal {
        Literal::Atom(t) => into.extend(relation(t)),
        Literal::Not(inner) => other_reads(inner, into),
        Literal::Or(options) => options.iter().for_each(|o| other_reads(o, into)),
        Literal::Distinct(..) => {}
    }
}

/// Whether a variable of the head is bound by no positive literal (only a
/// caller can bind it).
fn is_caller_bound(rule: &Rule) -> bool {
    let mut bound = HashSet::new();
    for literal in &rule.body {
        if let Literal::Atom(t) = literal {
            t.for_each_var(&mut |v| {
                bound.insert(v);
            });
        }
    }
    let mut unbound = false;
    rule.head.for_each_var(&mut |v| unbound |= !bound.contains(&v));
    unbound
}

/// Whether `relation` is reachable from the bodies of its own rules.
fn depends_on_itself(rules: &[Rule], relation: Relation) -> bool {
    let mut reads: HashMap<Relation, HashSet<Relation>> = HashMap::new();
    for rule in rules {
        if let Some(head) = self::relation(&rule.head) {
            let entry = reads.entry(head).or_default();
            rule.body.iter().for_each(|l| other_reads(l, entry));
        }
    }
    let mut seen = HashSet::new();
    let mut stack: Vec<Relation> = reads.get(&relation).into_iter().flatten().copied().collect();
    while let Some(r) = stack.pop() {
        if r == relation {
            return true;
        }
        if seen.insert(r) {
            stack.extend(reads.get(&r).into_iter().flatten().copied());
        }
    }
    false
}

/// The rules with every call of `relation` unfolded and its own rules gone;
/// `None` past [`MAX_RULES`].
fn unfold(rules: &[Rule], relation: Relation, symbols: &mut SymbolTable) -> Option<Vec<Rule>> {
    let (definitions, others): (Vec<&Rule>, Vec<&Rule>) = rules
        .iter()
        .partition(|r| self::relation(&r.head) == Some(relation));
    let mut fresh = Fresh::default();
    let mut done = Vec::with_capacity(others.len());
    let mut work: Vec<Rule> = others.into_iter().cloned().collect();
    while let Some(rule) = work.pop() {
        let call = rule
            .body
            .iter()
            .position(|l| matches!(l, Literal::Atom(t) if self::relation(t) == Some(relation)));
        let Some(at) = call else {
            done.push(rule);
            continue;
        };
        let Literal::Atom(called) = &rule.body[at] else {
            unreachable!("found as an atom")
        };
        for definition in &definitions {
            let definition = fresh.rename(definition, symbols);
            let mut unifier = Unifier::default();
            if !unifier.unify(&definition.head, called) {
                continue;
            }
            let mut body: Vec<Literal> = rule.body[..at].to_vec();
            body.extend(definition.body);
            body.extend_from_slice(&rule.body[at + 1..]);
            work.push(Rule {
                head: unifier.apply(&rule.head),
                body: body.iter().map(|l| unifier.apply_literal(l)).collect(),
                span: rule.span,
            });
        }
        if done.len() + work.len() > MAX_RULES {
            return None;
        }
    }
    done.reverse();
    Some(done)
}

/// Renames rules apart: each copy gets variables no other rule has.
#[derive(Default)]
struct Fresh {
    copies: usize,
}

impl Fresh {
    /// `rule` with every variable `?v` renamed `?v;N` (`;` never occurs in a symbol read).
    fn rename(&mut self, rule: &Rule, symbols: &mut SymbolTable) -> Rule {
        self.copies += 1;
        let mut names = HashMap::new();
        let mut rename = |t: &Term| -> Term {
            map_vars(t, &mut |v| {
                *names
                    .entry(v)
                    .or_insert_with(|| symbols.intern(&format!("{};{}", symbols.name(v), self.copies)))
            })
        };
        let head = rename(&rule.head);
        let body = rule.body.iter().map(|l| map_literal(l, &mut rename)).collect();
        Rule {
            head,
            body,
            span: rule.span,
        }
    }
}

/// `t` with each variable `v` replaced by the variable `f(v)`.
fn map_vars(t: &Term, f: &mut impl FnMut(SymbolId) -> SymbolId) -> Term {
    match t {
        Term::Var(v) => Term::Var(f(*v)),
        Term::Atom(_) => t.clone(),
        Term::Compound(g, args) => Term::Compound(*g, args.iter().map(|a| map_vars(a, f)).collect()),
    }
}

/// `l` with each of its terms replaced by `f(term)`.
fn map_literal(l: &Literal, f: &mut impl FnMut(&Term) -> Term) -> Literal {
    match l {
        Literal::Atom(t) => Literal::Atom(f(t)),
        Literal::Not(inner) => Literal::Not(Box::new(map_literal(inner, f))),
        Literal::Distinct(a, b) => Literal::Distinct(f(a), f(b)),
        Literal::Or(options) => Literal::Or(options.iter().map(|o| map_literal(o, f)).collect()),
    }
}

/// A most general unifier, built one equation at a time.
#[derive(Default)]
struct Unifier {
    bindings: HashMap<SymbolId, Term>,
}

impl Unifier {
    /// `t` with its bound variables followed at the top.
    fn walk<'t>(&'t self, mut t: &'t Term) -> &'t Term {
        while let Term::Var(v) = t {
            match self.bindings.get(v) {
                Some(bound) => t = bound,
                None => break,
            }
        }
        t
    }

    /// Adds `a = b`; false when they do not unify.
    fn unify(&mut self, a: &Term, b: &Term) -> bool {
        let (a, b) = (self.walk(a).clone(), self.walk(b).clone());
        match (&a, &b) {
            (Term::Var(x), Term::Var(y)) if x == y => true,
            (Term::Var(x), t) | (t, Term::Var(x)) => {
                let resolved = self.apply(t);
                let mut occurs = false;
                resolved.for_each_var(&mut |v| occurs |= v == *x);
                if occurs {
                    return false;
                }
                self.bindings.insert(*x, resolved);
                true
            }
            (Term::Atom(x), Term::Atom(y)) => x == y,
            (Term::Compound(f, xs), Term::Compound(g, ys)) => {
                f == g && xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| self.unify(x, y))
            }
            _ => false,
        }
    }

    /// `t` with every bound variable replaced by its value.
    fn apply(&self, t: &Term) -> Term {
        match self.walk(t) {
            Term::Compound(f, args) => Term::Compound(*f, args.iter().map(|a| self.apply(a)).collect()),
            other => other.clone(),
        }
    }

    fn apply_literal(&self, l: &Literal) -> Literal {
        map_literal(l, &mut |t| self.apply(t))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::print::rule_to_string;

    fn unfolded(text: &str) -> Vec<String> {
        let mut description = crate::parse(text).expect("parses");
        unfold_caller_bound(&mut description);
        description
            .rules
            .iter()
            .map(|r| rule_to_string(r, &description.symbols))
            .collect()
    }

    #[test]
    fn calls_of_caller_bound_rules_become_their_bodies() {
        let rules = unfolded(
            "(<= (next (d ?p ?x ?y)) (does random (roll ?p ?a ?b)) (sort ?a ?b ?x ?y))
             (<= (sort ?x ?y ?x ?y) (gteq ?x ?y))
             (<= (sort ?x ?y ?y ?x) (not (gteq ?x ?y)))",
        );
        assert_eq!(
            rules,
            [
                "(<= (next (d ?p ?x ?y)) (does random (roll ?p ?x ?y)) (gteq ?x ?y))",
                "(<= (next (d ?p ?x ?y)) (does random (roll ?p ?y ?x)) (not (gteq ?y ?x)))",
            ]
        );
    }

    #[test]
    fn safe_negated_recursive_and_keyword_rules_stay() {
        for text in [
            "(<= (p ?x) (q ?x)) (<= (r ?y) (p ?y) (q ?y))",
            "(<= (p ?x) (not (q ?x))) (<= (r ?y) (q ?y) (not (p ?y)))",
            "(<= (p ?x) (not (q ?x)) (p a)) (<= (r ?y) (q ?y) (p ?y))",
            "(<= (legal ?r noop) (not (q ?r))) (<= (r ?y) (legal ?y noop))",
        ] {
            let mut description = crate::parse(text).expect("parses");
            let count = description.rules.len();
            unfold_caller_bound(&mut description);
            assert_eq!(description.rules.len(), count, "{text}");
        }
    }

    #[test]
    fn heads_that_do_not_unify_give_nothing_and_chains_unfold() {
        let rules = unfolded(
            "(<= (goal ?r ?n) (role ?r) (points ?r ?n))
             (<= (points ?p 0) (not (most ?p)))
             (<= (points ?p 5) (most ?p))
             (<= (w ?q) (n ?q) (pick a ?q))
             (<= (pick b ?z) (not (n ?z)))",
        );
        assert!(
            rules.iter().all(|r| !r.contains("points") && !r.contains("pick")),
            "{rules:?}"
        );
        assert!(
            rules.contains(&"(<= (goal ?r 0) (role ?r) (not (most ?r)))".to_owned()),
            "{rules:?}"
        );
        assert!(!rules.iter().any(|r| r.starts_with("(<= (w")), "{rules:?}");
    }

    #[test]
    fn unfolding_that_would_pass_the_limit_leaves_the_relation_unsafe() {
        // p6 has 10 caller-bound rules; each level above multiplies by 10.
        let mut text = String::from("(<= (r ?y) (n ?y) (p1 ?y)) (n 1)");
        for level in 1..=6 {
            for j in 0..10 {
                if level < 6 {
                    text.push_str(&format!(
                        " (<= (p{level} ?x) (not (q{j} ?x)) (p{} ?x))",
                        level + 1
                    ));
                } else {
                    text.push_str(&format!(" (<= (p6 ?x) (not (q{j} ?x)))"));
                }
            }
        }
        let mut description = crate::parse(&text).expect("parses");
        unfold_caller_bound(&mut description);
        assert!(
            description.rules.len() <= MAX_RULES,
            "{}",
            description.rules.len()
        );
        let unsafe_left = description.rules.iter().any(is_caller_bound);
        assert!(unsafe_left, "the relation past the limit is left as it was");
    }
}
