//! Reading real-time GDL (rtGDL, Kowalski and Kisielewicz): state facts carry
//! lifetimes, `(init T F)`, `(true T F)`, `(next T F)` with `T` a positive
//! real or `infinity`, and `(expired F)` holds in the update right after F's
//! lifetime ran out.
//!
//! This module reads the language: which descriptions are rtGDL
//! ([`is_rtgdl`]), the syntactic checks of the spec's section 2.1 that GDL's
//! own checks cannot make ([`check`]), rules that never apply ([`warnings`]),
//! and the embedding of an rtGDL description into GDL ([`embed`]) on which
//! the GDL checks and the interpreter run. It also names every symbol the
//! embeddings write (this one's and the circuit form's, [`crate::circuit`]),
//! which a description may not use.
//!
//! Lifetime constants written in rules are read as the times they denote
//! ([`crate::Time`]): the embedding writes them canonically, so `(true 1.0 F)`
//! sees the fact whose lifetime is one unit. Numbers inside facts (`(timer
//! white 120.0)`) are ordinary terms, as in GDL.
//!
//! The embedding: `(init T F)` becomes `(init (rt:lifetime T F))`, `(true T
//! F)` becomes `(true (rt:lifetime T F))`, `(next T F)` becomes `(next
//! (rt:lifetime T F))`, and `(expired F)` becomes `(true (rt:expired F))`. A
//! state S is given to the GDL program as the facts `(rt:lifetime t f)`, and
//! an update adds `(rt:expired f)` for the facts that expired: then what the
//! GDL program derives is exactly SM[G ∪ S^true] (or SM[G ∪ M^does ∪ μ(S, Δt)
//! ∪ S^exp]) of the spec's Definition 1, and the keyword restrictions of 2.1
//! (`expired` restricted like `true`) are GDL's restrictions on the embedding.

use crate::time::Lifetime;
use ggpnet_kif::{Description, Literal, Rule, Span, SymbolId, SymbolTable, Term, Warning};
use std::fmt;
/// The name of the function symbol that pairs a lifetime with a fact in the embedding.
pub const LIFETIME_SYMBOL: &str = "rt:lifetime";

/// The name of the function symbol that marks an expired fact in the embedding.
pub const EXPIRED_SYMBOL: &str = "rt:expired";

/// The name of the function naming a lifetime copied from a fact, in the circuit form.
pub const COPY_SYMBOL: &str = "rt:copy";

/// The name of the relation "the fact has a finite lifetime", in the circuit form.
pub const FINITE_SYMBOL: &str = "rt:finite";

/// The name of the function naming the time argument of the current fact
/// with a key, in the circuit form.
pub const HELD_SYMBOL: &str = "rt:held";

/// The name of the relation of the constants written at time arguments, in
/// the circuit form.
pub const CONSTANT_SYMBOL: &str = "rt:constant";

/// The name of the atom in place of the time argument in a fact's key, in the circuit form.
pub const SLOT_SYMBOL: &str = "rt:slot";

/// A description that is not valid rtGDL: the rule and why.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct RtgdlError {
    /// Where the offending rule starts.
    pub span: Span,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for RtgdlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "error at {}: {}", self.span, self.message)
    }
}

impl std::error::Error for RtgdlError {}

/// Whether `symbol` is `expired` (matched without case, like GDL's keywords).
pub(crate) fn is_expired(symbols: &SymbolTable, symbol: SymbolId) -> bool {
    symbols.name(symbol).eq_ignore_ascii_case("expired")
}

/// Whether `symbol` is a state keyword that carries a lifetime in rtGDL.
pub(crate) fn is_timed(symbol: SymbolId) -> bool {
    matches!(symbol, SymbolId::INIT | SymbolId::TRUE | SymbolId::NEXT)
}

/// Every sentence of `rule`: the head, then the atoms of the body (inside
/// `not` and `or` too), each with whether it is the head.
fn sentences(rule: &Rule) -> Vec<(&Term, bool)> {
    fn literal<'r>(l: &'r Literal, out: &mut Vec<(&'r Term, bool)>) {
        match l {
            Literal::Atom(t) => out.push((t, false)),
            Literal::Not(inner) => literal(inner, out),
            Literal::Distinct(..) => {}
            Literal::Or(options) => options.iter().for_each(|o| literal(o, out)),
        }
    }
    let mut out = vec![(&rule.head, true)];
    rule.body.iter().for_each(|l| literal(l, &mut out));
    out
}

/// The first rule that makes `description` rtGDL: one with `init`, `true` or
/// `next` of two arguments, or with `expired`.
fn first_rtgdl_rule(description: &Description) -> Option<&Rule> {
    let symbols = &description.symbols;
    description.rules.iter().find(|rule| {
        sentences(rule).iter().any(|(t, _)| match t.functor() {
            Some(f) if is_timed(f) => t.args().len() == 2,
            Some(f) => is_expired(symbols, f),
            None => false,
        })
    })
}

/// Whether `description` is rtGDL: some rule has `init`, `true` or `next`
/// with two arguments, or `expired`.
pub fn is_rtgdl(description: &Description) -> bool {
    first_rtgdl_rule(description).is_some()
}

/// The checks of rtGDL that the GDL checks of the embedding do not make, the
/// first failure naming its rule: every `init`, `true`, `next` has two
/// arguments and `expired` one; `expired` is not a head; a lifetime written in
/// a rule is `infinity`, a variable or a positive decimal number; no `random`
/// role or `sees` rule (rtGDL-II is not supported); none of the symbols of
/// the embeddings (`rt:lifetime`, `rt:expired`, and those of the circuit
/// form: `rt:copy`, `rt:finite`, `rt:held`, `rt:constant`, `rt:slot`).
pub fn check(description: &Description) -> Result<(), RtgdlError> {
    let symbols = &description.symbols;
    let because = match first_rtgdl_rule(description) {
        Some(rule) => rule.span,
        None => return Ok(()),
    };
    for rule in &description.rules {
        let refuse = |message: String| {
            Err(RtgdlError {
                span: rule.span,
                message,
            })
        };
        let head = rule.head.functor();
        if head == Some(SymbolId::SEES)
            || (head == Some(SymbolId::ROLE) && rule.head.args() == [Term::Atom(SymbolId::RANDOM)])
        {
            return refuse(format!(
                "'{}' is GDL-II: rtGDL-II (real time with randomness or imperfect information) is not supported",
                symbols.name(head.expect("a functor"))
            ));
        }
        for (sentence, is_head) in sentences(rule) {
            let Some(functor) = sentence.functor() else {
                continue;
            };
            let name = symbols.name(functor);
            let args = sentence.args();
            if is_timed(functor) {
                if args.len() != 2 {
                    return refuse(format!(
                        "'{name}' has {} argument(s); in an rtGDL game (rtGDL because of the rule at {because}) it has two: a lifetime and a fact",
                        args.len()
                    ));
                }
                lifetime_term(&args[0], symbols).map_err(|reason| RtgdlError {
                    span: rule.span,
                    message: format!("the lifetime of '{name}' {reason}"),
                })?;
            } else if is_expired(symbols, functor) {
                if is_head {
                    return refuse("'expired' may only appear in the body of a rule".into());
                }
                if args.len() != 1 {
                    return refuse(format!(
                        "'expired' has {} argument(s), not one: a fact",
                        args.len()
                    ));
                }
            }
        }
    }
    for name in [
        LIFETIME_SYMBOL,
        EXPIRED_SYMBOL,
        COPY_SYMBOL,
        FINITE_SYMBOL,
        HELD_SYMBOL,
        CONSTANT_SYMBOL,
        SLOT_SYMBOL,
    ] {
        if symbols.get(name).is_some() {
            let rule = description
                .rules
                .iter()
                .find(|r| uses(r, symbols.get(name).expect("present")))
                .map_or(because, |r| r.span);
            return Err(RtgdlError {
                span: rule,
                message: format!("'{name}' is reserved for rtGDL's embedding into GDL"),
            });
        }
    }
    Ok(())
}

/// Warnings about rules that are valid but never apply: a `legal`, `goal` or
/// `terminal` rule whose body reads `expired` directly. By the spec's
/// Definition 1 these are computed from the state's pairs alone, where no
/// `expired` holds (the spec's Example 1 writes `terminal <= expired(...)`);
/// record the expiry in a `next` fact instead.
pub fn warnings(description: &Description) -> Vec<Warning> {
    let symbols = &description.symbols;
    let outputs = [SymbolId::LEGAL, SymbolId::GOAL, SymbolId::TERMINAL];
    description
        .rules
        .iter()
        .filter(|rule| rule.head.functor().is_some_and(|f| outputs.contains(&f)))
        .filter(|rule| {
            sentences(rule)
                .iter()
                .any(|(t, is_head)| !is_head && t.functor().is_some_and(|f| is_expired(symbols, f)))
        })
        .map(|rule| Warning {
            span: rule.span,
            message: format!(
                "'{}' reads 'expired', which holds only during an update: this rule never applies (record the expiry in a 'next' fact)",
                symbols.name(rule.head.functor().expect("filtered"))
            ),
        })
        .collect()
}

/// Whether `symbol` occurs anywhere in `rule`.
fn uses(rule: &Rule, symbol: SymbolId) -> bool {
    fn term(t: &Term, s: SymbolId) -> bool {
        match t {
            Term::Atom(a) | Term::Var(a) => *a == s,
            Term::Compound(f, args) => *f == s || args.iter().any(|a| term(a, s)),
        }
    }
    fn literal(l: &Literal, s: SymbolId) -> bool {
        match l {
            Literal::Atom(t) => term(t, s),
            Literal::Not(inner) => literal(inner, s),
            Literal::Distinct(a, b) => term(a, s) || term(b, s),
            Literal::Or(options) => options.iter().any(|o| literal(o, s)),
        }
    }
    term(&rule.head, symbol) || rule.body.iter().any(|l| literal(l, symbol))
}

/// A lifetime written in a rule: `Some` lifetime for a constant, `None` for a
/// variable, an error (completing "the lifetime of 'true' ...") otherwise.
fn lifetime_term(term: &Term, symbols: &SymbolTable) -> Result<Option<Lifetime>, String> {
    match term {
        Term::Var(_) => Ok(None),
        Term::Atom(a) => Lifetime::parse(symbols.name(*a))
            .map(Some)
            .map_err(|e| format!("is not infinity, a variable or a positive number: {e}")),
        Term::Compound(..) => Err("is a compound term, not infinity, a variable or a positive number".into()),
    }
}

/// An rtGDL description as GDL (see the module doc), with the symbols of the embedding.
#[derive(Clone, Debug)]
pub struct Embedded {
    /// The GDL description; its rules are the rtGDL rules in the same order,
    /// with the same spans.
    pub description: Description,
    /// The function pairing a lifetime with a fact, `rt:lifetime`.
    pub lifetime: SymbolId,
    /// The function marking an expired fact, `rt:expired`.
    pub expired: SymbolId,
}

/// Checks `description` ([`check`]) and embeds it into GDL (see the module
/// doc); lifetime constants are written canonically. A description that is not
/// rtGDL is refused.
pub fn embed(description: &Description) -> Result<Embedded, RtgdlError> {
    if !is_rtgdl(description) {
        return Err(RtgdlError {
            span: Span { line: 1, column: 1 },
            message: "not an rtGDL description (no 'init', 'true' or 'next' with a lifetime, no 'expired')"
                .into(),
        });
    }
    check(description)?;
    Ok(wrap(description.clone()))
}

/// The embedding of `embedded`'s rules, in place, without checks.
pub(crate) fn wrap(mut embedded: Description) -> Embedded {
    let lifetime = embedded.symbols.intern(LIFETIME_SYMBOL);
    let expired = embedded.symbols.intern(EXPIRED_SYMBOL);
    let symbols = &mut embedded.symbols;
    let sentence = |t: &Term, symbols: &mut SymbolTable| -> Term {
        match t {
            Term::Compound(f, args) if is_timed(*f) => {
                let time = match lifetime_term(&args[0], symbols) {
                    Ok(Some(l)) => Term::Atom(symbols.intern(&l.to_string())),
                    _ => args[0].clone(),
                };
                Term::Compound(*f, vec![Term::Compound(lifetime, vec![time, args[1].clone()])])
            }
            Term::Compound(f, args) if is_expired(symbols, *f) => {
                Term::Compound(SymbolId::TRUE, vec![Term::Compound(expired, args.clone())])
            }
            _ => t.clone(),
        }
    };
    fn literal(l: &mut Literal, rewrite: &mut impl FnMut(&Term) -> Term) {
        match l {
            Literal::Atom(t) => *t = rewrite(t),
            Literal::Not(inner) => literal(inner, rewrite),
            Literal::Distinct(..) => {}
            Literal::Or(options) => options.iter_mut().for_each(|o| literal(o, rewrite)),
        }
    }
    for rule in &mut embedded.rules {
        rule.head = sentence(&rule.head, symbols);
        let mut rewrite = |t: &Term| sentence(t, symbols);
        rule.body.iter_mut().for_each(|l| literal(l, &mut rewrite));
    }
    Embedded {
        description: embedded,
        lifetime,
        expired,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedding_wraps_lifetimes_and_expired() {
        let d = ggpnet_kif::parse(
            "(role r) (init 1.0 (appear cat))
             (<= (next 3.0 (gone ?c)) (expired (appear ?c)))
             (<= (next ?t (gone ?c)) (true ?t (gone ?c)) (not (expired (gone ?c))))",
        )
        .unwrap();
        let e = embed(&d).unwrap();
        let printed: Vec<String> = e
            .description
            .rules
            .iter()
            .map(|r| ggpnet_kif::rule_to_string(r, &e.description.symbols))
            .collect();
        assert_eq!(printed[1], "(init (rt:lifetime 1 (appear cat)))");
        assert_eq!(
            printed[2],
            "(<= (next (rt:lifetime 3 (gone ?c))) (true (rt:expired (appear ?c))))"
        );
        assert_eq!(
            printed[3],
            "(<= (next (rt:lifetime ?t (gone ?c))) (true (rt:lifetime ?t (gone ?c))) (not (true (rt:expired (gone ?c)))))"
        );
    }
}
