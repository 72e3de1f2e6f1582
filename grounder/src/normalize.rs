//! Normalization: `or` expanded into several rules (disjunctive normal form),
//! `not` pushed down to sentences, `(not (distinct a b))` read as equality.

use crate::error::{ErrorKind, GdlError};
use ggpnet_kif::{rule_to_string, Description, Literal, SymbolId, SymbolTable, Term};
use rustc_hash::FxHashSet;

/// Most rules one source rule may expand into through `or`.
pub const MAX_EXPANSION: usize = 4096;

/// A body literal after normalization.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum NormalLiteral {
    /// The sentence holds.
    Pos(Term),
    /// The sentence does not hold.
    Neg(Term),
    /// The two terms differ.
    Distinct(Term, Term),
    /// The two terms are equal (from `(not (distinct a b))`).
    Equal(Term, Term),
}

impl NormalLiteral {
    /// Calls `visit` on every variable of the literal.
    pub fn for_each_var(&self, visit: &mut impl FnMut(SymbolId)) {
        match self {
            NormalLiteral::Pos(s) | NormalLiteral::Neg(s) => s.for_each_var(visit),
            NormalLiteral::Distinct(a, b) | NormalLiteral::Equal(a, b) => {
                a.for_each_var(visit);
                b.for_each_var(visit);
            }
        }
    }
}

/// A rule with a conjunctive body.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct NormalRule {
    /// The derived sentence.
    pub head: Term,
    /// The conjunction of conditions.
    pub body: Vec<NormalLiteral>,
    /// Index of the source rule in [`Description::rules`].
    pub origin: usize,
}

type Dnf = Vec<Vec<NormalLiteral>>;

fn product(left: Dnf, right: &Dnf) -> Dnf {
    let mut out = Vec::with_capacity(left.len() * right.len());
    for l in &left {
        for r in right {
            let mut conj = l.clone();
            conj.extend(r.iter().cloned());
            out.push(conj);
        }
    }
    out
}

fn dnf(literal: &Literal, negated: bool) -> Dnf {
    match (literal, negated) {
        (Literal::Atom(t), false) => vec![vec![NormalLiteral::Pos(t.clone())]],
        (Literal::Atom(t), true) => vec![vec![NormalLiteral::Neg(t.clone())]],
        (Literal::Distinct(a, b), false) => vec![vec![NormalLiteral::Distinct(a.clone(), b.clone())]],
        (Literal::Distinct(a, b), true) => vec![vec![NormalLiteral::Equal(a.clone(), b.clone())]],
        (Literal::Not(inner), _) => dnf(inner, !negated),
        (Literal::Or(alternatives), false) => alternatives.iter().flat_map(|l| dnf(l, false)).collect(),
        // not (a or b) = (not a) and (not b)
        (Literal::Or(alternatives), true) => alternatives
            .iter()
            .fold(vec![Vec::new()], |acc, l| product(acc, &dnf(l, true))),
    }
}

/// Normalizes every rule of `description`.
pub fn normalize(description: &Description) -> Result<Vec<NormalRule>, GdlError> {
    let mut rules = Vec::with_capacity(description.rules.len());
    for (origin, rule) in description.rules.iter().enumerate() {
        let mut bodies: Dnf = vec![Vec::new()];
        for literal in &rule.body {
            bodies = product(bodies, &dnf(literal, false));
            if bodies.len() > MAX_EXPANSION {
                return Err(GdlError {
                    kind: ErrorKind::TooLarge {
                        limit: crate::Limit::Expansion,
                        max: MAX_EXPANSION,
                    },
                    span: Some(rule.span),
                    rule: Some(rule_to_string(rule, &description.symbols)),
                    message: format!("'or' expands this rule into more than {MAX_EXPANSION} rules"),
                });
            }
        }
        rules.extend(bodies.into_iter().map(|body| NormalRule {
            head: rule.head.clone(),
            body,
            origin,
        }));
    }
    Ok(rules)
}

/// The readings of GDL-II descriptions that strict GDL calls unsafe, as the
/// GameController's prover (queried top-down, with the role bound) gives them:
///
/// - a variable in the role argument of a `legal`, `goal` or `sees` head that
///   no positive literal binds ranges over the roles (`(role ?r)` is added):
///   `(<= (legal ?p noop) (not (true (control ?p))))`;
/// - the variables of a negative literal that neither the head nor a positive
///   literal, `distinct` or equality has are existential inside the negation
///   (each negative literal on its own): `(not (true (setup ?p ?x)))` holds
///   when no `setup` fact does (it reads a new relation, `ggpnet_exists` and a
///   number, over the literal's other variables);
/// - a rule with a positive literal of a relation that no rule defines (and
///   that is no keyword: the checks judge those) can never hold and is
///   dropped: `(<= (tried ?r ?m ?n) fail)`.
///
/// A GDL description (no role `random`, no rule for `sees`) is left as it is:
/// these stay errors there (GDL-EDGE-CASES.md item 13).
pub fn gdl2_readings(rules: Vec<NormalRule>, symbols: &mut SymbolTable, gdl2: bool) -> Vec<NormalRule> {
    if !gdl2 {
        return rules;
    }
    let defined: FxHashSet<SymbolId> = rules.iter().filter_map(|r| r.head.functor()).collect();
    let never = |l: &NormalLiteral| {
        matches!(l, NormalLiteral::Pos(s) if s.functor().is_some_and(|f| {
            !defined.contains(&f) && !f.is_keyword()
        }))
    };
    let mut counter = 0;
    let mut out = Vec::with_capacity(rules.len());
    for mut rule in rules {
        if rule.body.iter().any(never) {
            continue;
        }
        bind_role_argument(&mut rule);
        let mut extra = Vec::new();
        for i in 0..rule.body.len() {
            let NormalLiteral::Neg(sentence) = &rule.body[i] else {
                continue;
            };
            let mut elsewhere = FxHashSet::default();
            rule.head.for_each_var(&mut |v| {
                elsewhere.insert(v);
            });
            // Negative literals bind nothing: each is read on its own.
            for other in &rule.body {
                if !matches!(other, NormalLiteral::Neg(_)) {
                    other.for_each_var(&mut |v| {
                        elsewhere.insert(v);
                    });
                }
            }
            let mut kept = Vec::new();
            let mut local = false;
            sentence.for_each_var(&mut |v| {
                if elsewhere.contains(&v) {
                    if !kept.contains(&Term::Var(v)) {
                        kept.push(Term::Var(v));
                    }
                } else {
                    local = true;
                }
            });
            if !local {
                continue;
            }
            let aux = fresh(symbols, &mut counter, "ggpnet_exists");
            let head = if kept.is_empty() {
                Term::Atom(aux)
            } else {
                Term::Compound(aux, kept)
            };
            extra.push(NormalRule {
                head: head.clone(),
                body: vec![NormalLiteral::Pos(sentence.clone())],
                origin: rule.origin,
            });
            rule.body[i] = NormalLiteral::Neg(head);
        }
        out.push(rule);
        out.extend(extra);
    }
    out
}

/// Adds `(role ?r)` to a `legal`, `goal` or `sees` rule whose role argument is a
/// variable no positive literal binds.
fn bind_role_argument(rule: &mut NormalRule) {
    if !matches!(
        rule.head.functor(),
        Some(SymbolId::LEGAL | SymbolId::GOAL | SymbolId::SEES)
    ) {
        return;
    }
    let Some(role @ Term::Var(var)) = rule.head.args().first().cloned() else {
        return;
    };
    let bound = rule.body.iter().any(|l| {
        let mut found = false;
        if let NormalLiteral::Pos(s) = l {
            s.for_each_var(&mut |v| found |= v == var);
        }
        found
    });
    if !bound {
        rule.body
            .push(NormalLiteral::Pos(Term::Compound(SymbolId::ROLE, vec![role])));
    }
}

/// The rules left once the `base` and `input` declarations are dropped, where no
/// rule body reads them: nothing else depends on them (the grounder finds the
/// bases and inputs itself), and GDL-II games write them carelessly (unsafe
/// `(base (closed ?d))`, `input` facts of five arguments), which players ignore.
pub fn drop_unread_declarations(rules: Vec<NormalRule>) -> Vec<NormalRule> {
    let read = |relation: SymbolId| {
        rules.iter().any(|r| {
            r.body.iter().any(|l| {
                matches!(l, NormalLiteral::Pos(s) | NormalLiteral::Neg(s) if s.functor() == Some(relation))
            })
        })
    };
    let unread: Vec<SymbolId> = [SymbolId::BASE, SymbolId::INPUT]
        .into_iter()
        .filter(|&d| !read(d))
        .collect();
    rules
        .into_iter()
        .filter(|r| !r.head.functor().is_some_and(|f| unread.contains(&f)))
        .collect()
}

/// A fresh relation name, `prefix` and a number, that the game does not use.
pub(crate) fn fresh(symbols: &mut SymbolTable, counter: &mut usize, prefix: &str) -> SymbolId {
    loop {
        *counter += 1;
        let name = format!("{prefix}{counter}");
        if symbols.get(&name).is_none() {
            return symbols.intern(&name);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn normal(src: &str) -> Vec<NormalRule> {
        normalize(&ggpnet_kif::parse(src).unwrap()).unwrap()
    }

    #[test]
    fn or_expands_into_rules() {
        let rules = normal("(<= p (or a (or b c)) (or d e))");
        assert_eq!(rules.len(), 6);
        assert!(rules.iter().all(|r| r.body.len() == 2 && r.origin == 0));
    }

    #[test]
    fn negation_is_pushed_down() {
        let rules = normal("(<= p (not (or a (not b))) (not (distinct ?x 1)) (q ?x))");
        assert_eq!(rules.len(), 1);
        let body = &rules[0].body;
        assert!(matches!(body[0], NormalLiteral::Neg(_)));
        assert!(matches!(body[1], NormalLiteral::Pos(_)));
        assert!(matches!(body[2], NormalLiteral::Equal(..)));
    }

    #[test]
    fn explosive_or_is_refused() {
        let src = format!("(<= p {})", "(or a b c d) ".repeat(8));
        let err = normalize(&ggpnet_kif::parse(&src).unwrap()).unwrap_err();
        assert_eq!(
            err.kind,
            ErrorKind::TooLarge {
                limit: crate::Limit::Expansion,
                max: MAX_EXPANSION
            }
        );
    }
}
