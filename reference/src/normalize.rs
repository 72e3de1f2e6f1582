//! From rules to clauses: `not` is pushed down to sentences and `distinct`
//! (negation normal form), every `or` is multiplied out (disjunctive normal form),
//! and each resulting clause is checked for safety.
//!
//! After this step a body is a plain conjunction of four kinds of literal. The
//! rewriting is the textbook one: `not (or a b)` is `not a` and `not b`, `not (not a)`
//! is `a`, and `(not (distinct a b))` — not GDL, but accepted by the parser with a
//! warning — is the equality `a = b`.

use crate::error::ReferenceError;
use ggpnet_kif::{rule_to_string, Description, Literal, SymbolId, SymbolTable, Term};
use std::collections::HashSet;

/// Most clauses one rule may expand to; beyond it the rule is rejected rather than
/// exhausting memory.
pub(crate) const MAX_CLAUSES_PER_RULE: usize = 4096;

/// A literal of a normalized body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Lit {
    /// A sentence that must hold.
    Pos(Term),
    /// A sentence that must not hold.
    Neg(Term),
    /// Two terms that must differ.
    Distinct(Term, Term),
    /// Two terms that must be equal (from `(not (distinct a b))`).
    Equal(Term, Term),
}

impl Lit {
    fn for_each_var(&self, visit: &mut impl FnMut(SymbolId)) {
        match self {
            Lit::Pos(t) | Lit::Neg(t) => t.for_each_var(visit),
            Lit::Distinct(a, b) | Lit::Equal(a, b) => {
                a.for_each_var(visit);
                b.for_each_var(visit);
            }
        }
    }
}

/// One conjunctive clause `head :- body`, from rule number `rule` of the description.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Clause {
    /// The derived sentence.
    pub(crate) head: Term,
    /// The conjunction of conditions.
    pub(crate) body: Vec<Lit>,
    /// Index of the rule in `Description::rules`.
    pub(crate) rule: usize,
}

/// Alternatives, each a conjunction of literals.
type Dnf = Vec<Vec<Lit>>;

/// Normalizes every rule of `description` and checks the clauses.
pub(crate) fn normalize(
    description: &Description,
    symbols: &mut SymbolTable,
) -> Result<Vec<Clause>, ReferenceError> {
    let mut clauses = Vec::new();
    let unread = unread_declarations(description);
    let gdl2 = ggpnet_kif::is_gdl2(description);
    let defined: HashSet<(SymbolId, usize)> = description
        .rules
        .iter()
        .filter_map(|r| Some((r.head.functor()?, r.head.args().len())))
        .collect();
    let never = |lit: &Lit| {
        matches!(lit, Lit::Pos(t) if t.functor().is_some_and(|f| {
            !f.is_keyword() && !defined.contains(&(f, t.args().len()))
        }))
    };
    let mut fresh = 0;
    for (index, rule) in description.rules.iter().enumerate() {
        if rule.head.functor().is_some_and(|f| unread.contains(&f)) {
            continue;
        }
        let text = || rule_to_string(rule, &description.symbols);
        if let Some(keyword) = rule.head.functor().filter(|f| !definable(*f)) {
            return Err(ReferenceError::InvalidRule {
                rule: text(),
                reason: format!(
                    "it defines {}, which rules cannot define",
                    description.symbols.name(keyword)
                ),
            });
        }
        let bodies = conjunction(rule.body.iter().map(|l| alternatives(l, false)))
            .map_err(|reason| ReferenceError::InvalidRule { rule: text(), reason })?;
        for mut body in bodies {
            let mut extra = Vec::new();
            if gdl2 {
                if body.iter().any(never) {
                    continue;
                }
                bind_role_argument(&rule.head, &mut body);
                extra = existential_negations(&rule.head, &mut body, symbols, &mut fresh);
            }
            let sentences = body.iter().filter_map(|lit| match lit {
                Lit::Pos(t) | Lit::Neg(t) => Some(t),
                _ => None,
            });
            if std::iter::once(&rule.head)
                .chain(sentences)
                .any(|t| matches!(t, Term::Var(_)))
            {
                return Err(ReferenceError::InvalidRule {
                    rule: text(),
                    reason: "a variable stands where a sentence is expected".into(),
                });
            }
            if let Err((variable, place)) = check_safety(&rule.head, &body) {
                return Err(ReferenceError::UnsafeRule {
                    rule: text(),
                    variable: description.symbols.name(variable).to_string(),
                    place,
                });
            }
            clauses.push(Clause {
                head: rule.head.clone(),
                body,
                rule: index,
            });
            clauses.extend(extra.into_iter().map(|(head, body)| Clause {
                head,
                body: vec![body],
                rule: index,
            }));
        }
    }
    Ok(clauses)
}

/// GDL-II only: in a rule for `legal`, `goal` or `sees` whose role argument
/// is a variable no positive literal binds, binds it to every role (adds
/// `(role ?r)`): the GameController's prover asks these with the role given.
fn bind_role_argument(head: &Term, body: &mut Vec<Lit>) {
    if !matches!(
        head.functor(),
        Some(SymbolId::LEGAL | SymbolId::GOAL | SymbolId::SEES)
    ) {
        return;
    }
    let Some(role @ Term::Var(var)) = head.args().first() else {
        return;
    };
    let mut bound = false;
    for lit in body.iter() {
        if let Lit::Pos(t) = lit {
            t.for_each_var(&mut |v| bound |= v == *var);
        }
    }
    if !bound {
        body.push(Lit::Pos(Term::Compound(SymbolId::ROLE, vec![role.clone()])));
    }
}

/// GDL-II only: a negative literal whose variables include some that neither
/// the head nor any literal but the negative ones has reads them as
/// existential (negation as failure, as the GameController's prover reads it):
/// the literal becomes the negation of a new relation over its other
/// variables, defined by the literal. Returns the new relations' clauses.
fn existential_negations(
    head: &Term,
    body: &mut [Lit],
    symbols: &mut SymbolTable,
    fresh: &mut usize,
) -> Vec<(Term, Lit)> {
    let mut elsewhere = HashSet::new();
    head.for_each_var(&mut |v| {
        elsewhere.insert(v);
    });
    for lit in body.iter() {
        if !matches!(lit, Lit::Neg(_)) {
            lit.for_each_var(&mut |v| {
                elsewhere.insert(v);
            });
        }
    }
    let mut extra = Vec::new();
    for lit in body.iter_mut() {
        let Lit::Neg(sentence) = lit else { continue };
        let mut kept: Vec<Term> = Vec::new();
        let mut local = false;
        sentence.for_each_var(&mut |v| {
            if !elsewhere.contains(&v) {
                local = true;
            } else if !kept.contains(&Term::Var(v)) {
                kept.push(Term::Var(v));
            }
        });
        if !local {
            continue;
        }
        let name = loop {
            *fresh += 1;
            let name = format!("ggpnet_exists{fresh}");
            if symbols.get(&name).is_none() {
                break symbols.intern(&name);
            }
        };
        let aux = if kept.is_empty() {
            Term::Atom(name)
        } else {
            Term::Compound(name, kept)
        };
        extra.push((aux.clone(), Lit::Pos(sentence.clone())));
        *lit = Lit::Neg(aux);
    }
    extra
}

/// The declarations `base` and `input` that no rule body reads: their rules
/// change no query, and GDL-II games write them carelessly (unsafe
/// `(base (closed ?d))`), so they are left out.
fn unread_declarations(description: &Description) -> Vec<SymbolId> {
    fn reads(literal: &Literal, relation: SymbolId) -> bool {
        match literal {
            Literal::Atom(t) => t.functor() == Some(relation),
            Literal::Not(inner) => reads(inner, relation),
            Literal::Or(options) => options.iter().any(|o| reads(o, relation)),
            Literal::Distinct(..) => false,
        }
    }
    [SymbolId::BASE, SymbolId::INPUT]
        .into_iter()
        .filter(|&d| {
            !description
                .rules
                .iter()
                .any(|r| r.body.iter().any(|l| reads(l, d)))
        })
        .collect()
}

/// False for the keywords that are inputs or connectives rather than relations.
fn definable(functor: SymbolId) -> bool {
    ![
        SymbolId::TRUE,
        SymbolId::DOES,
        SymbolId::DISTINCT,
        SymbolId::NOT,
        SymbolId::OR,
    ]
    .contains(&functor)
}

/// The disjunctive normal form of `literal`, or of its negation when `negated`.
fn alternatives(literal: &Literal, negated: bool) -> Result<Dnf, String> {
    Ok(match (literal, negated) {
        (Literal::Atom(t), false) => vec![vec![Lit::Pos(t.clone())]],
        (Literal::Atom(t), true) => vec![vec![Lit::Neg(t.clone())]],
        (Literal::Distinct(a, b), false) => vec![vec![Lit::Distinct(a.clone(), b.clone())]],
        (Literal::Distinct(a, b), true) => vec![vec![Lit::Equal(a.clone(), b.clone())]],
        (Literal::Not(inner), _) => alternatives(inner, !negated)?,
        (Literal::Or(options), false) => {
            let mut all = Vec::new();
            for option in options {
                all.extend(alternatives(option, false)?);
                if all.len() > MAX_CLAUSES_PER_RULE {
                    return Err(too_many());
                }
            }
            all
        }
        (Literal::Or(options), true) => conjunction(options.iter().map(|o| alternatives(o, true)))?,
    })
}

/// The disjunctive normal form of the conjunction of `parts`.
fn conjunction(parts: impl Iterator<Item = Result<Dnf, String>>) -> Result<Dnf, String> {
    let mut product: Dnf = vec![Vec::new()];
    for part in parts {
        let part = part?;
        if product.len().saturating_mul(part.len()) > MAX_CLAUSES_PER_RULE {
            return Err(too_many());
        }
        product = product
            .iter()
            .flat_map(|left| {
                part.iter().map(move |right| {
                    let mut both = left.clone();
                    both.extend(right.iter().cloned());
                    both
                })
            })
            .collect();
    }
    Ok(product)
}

fn too_many() -> String {
    format!("its `or`s expand to more than {MAX_CLAUSES_PER_RULE} alternatives")
}

/// Checks that every variable of the head, of a negative literal and of a
/// `distinct` or equality occurs in a positive literal; returns the first that does not.
fn check_safety(head: &Term, body: &[Lit]) -> Result<(), (SymbolId, &'static str)> {
    let mut bound = HashSet::new();
    for lit in body {
        if let Lit::Pos(t) = lit {
            t.for_each_var(&mut |v| {
                bound.insert(v);
            });
        }
    }
    let unbound = |vars: Vec<SymbolId>| vars.into_iter().find(|v| !bound.contains(v));
    let mut head_vars = Vec::new();
    head.for_each_var(&mut |v| head_vars.push(v));
    if let Some(v) = unbound(head_vars) {
        return Err((v, "the head"));
    }
    for lit in body {
        let place = match lit {
            Lit::Pos(_) => continue,
            Lit::Neg(_) => "a negative literal",
            Lit::Distinct(..) => "a distinct",
            Lit::Equal(..) => "a negated distinct",
        };
        let mut vars = Vec::new();
        lit.for_each_var(&mut |v| vars.push(v));
        if let Some(v) = unbound(vars) {
            return Err((v, place));
        }
    }
    Ok(())
}

/// The text of a relation `name/arity`, for messages.
pub(crate) fn relation_name(symbols: &SymbolTable, functor: SymbolId, arity: usize) -> String {
    format!("{}/{}", symbols.name(functor), arity)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clauses(source: &str) -> Result<Vec<Clause>, ReferenceError> {
        {
            let d = ggpnet_kif::parse(source).unwrap();
            normalize(&d, &mut d.symbols.clone())
        }
    }

    #[test]
    fn or_multiplies_out_and_not_moves_inward() {
        let c = clauses("(<= (p ?x) (q ?x) (or (r ?x) (not (or (s ?x) (t ?x)))) (or a b))").unwrap();
        // (r | (!s & !t)) & (a | b): 2 x 2 clauses.
        assert_eq!(c.len(), 4);
        assert_eq!(c[0].body.len(), 3);
        assert_eq!(c[2].body.len(), 4);
        assert!(matches!(c[2].body[1], Lit::Neg(_)) && matches!(c[2].body[2], Lit::Neg(_)));
        assert!(c.iter().all(|clause| clause.rule == 0));
    }

    #[test]
    fn negated_distinct_is_equality_and_double_negation_cancels() {
        let c = clauses("(<= (p ?x ?y) (q ?x) (q ?y) (not (distinct ?x ?y)) (not (not (r ?x))))").unwrap();
        assert!(matches!(c[0].body[2], Lit::Equal(..)));
        assert!(matches!(c[0].body[3], Lit::Pos(_)));
    }

    #[test]
    fn unsafe_variables_are_reported_with_their_place() {
        let e = clauses("(<= (p ?x) (not (q ?x)))").unwrap_err();
        let ReferenceError::UnsafeRule { variable, place, .. } = &e else {
            panic!("{e}");
        };
        assert_eq!((variable.as_str(), *place), ("?x", "the head"));
        let e = clauses("(<= p (q ?x) (distinct ?x ?y))").unwrap_err();
        assert!(e.to_string().contains("?y occurs in a distinct"), "{e}");
        // A variable bound in only one branch of an `or` leaves the other clause unsafe.
        assert!(clauses("(<= (p ?x) (or (q ?x) r))").is_err());
    }

    #[test]
    fn keywords_cannot_be_defined_and_sentences_are_not_variables() {
        let e = clauses("(<= (true p) q)").unwrap_err();
        assert!(e.to_string().contains("defines true"), "{e}");
        // The parser never makes a variable a sentence; an AST built by hand might.
        let mut description = ggpnet_kif::parse("(<= p (q ?x))").unwrap();
        let x = description.rules[0].body[0].clone();
        let ggpnet_kif::Literal::Atom(Term::Compound(_, args)) = x else {
            panic!()
        };
        description.rules[0].body[0] = ggpnet_kif::Literal::Atom(args[0].clone());
        let e = normalize(&description, &mut description.symbols.clone()).unwrap_err();
        assert!(
            e.to_string().contains("a variable stands where a sentence"),
            "{e}"
        );
    }
}
