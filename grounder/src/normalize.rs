//! Normalization: `or` expanded into several rules (disjunctive normal form),
//! `not` pushed down to sentences, `(not (distinct a b))` read as equality.

use crate::error::{ErrorKind, GdlError};
use ggpnet_kif::{rule_to_string, Description, Literal, SymbolId, Term};

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
                    kind: ErrorKind::TooLarge,
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

/// Binds the role of a `sees` head that no positive literal binds to every
/// role, by adding `(role ?r)` to the body: GDL-II games write
/// `(<= (sees ?p (control ?x)) (true (control ?x)))` for "every role sees it",
/// and the GameController asks `(sees R ?p)` for each role `R`.
pub fn bind_percept_roles(rules: &mut [NormalRule]) {
    for rule in rules {
        if rule.head.functor() != Some(SymbolId::SEES) {
            continue;
        }
        let Some(role @ Term::Var(var)) = rule.head.args().first().cloned() else {
            continue;
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
        assert_eq!(err.kind, ErrorKind::TooLarge);
    }
}
