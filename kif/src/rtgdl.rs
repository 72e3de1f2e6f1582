//! Real-time GDL (rtGDL, Kowalski and Kisielewicz): state facts carry
//! lifetimes, `(init T F)`, `(true T F)`, `(next T F)` with `T` a positive
//! real or `infinity`, and `(expired F)` holds in the update right after F's
//! lifetime ran out.
//!
//! This module reads the language: which descriptions are rtGDL
//! ([`is_rtgdl`]), the syntactic checks of the spec's section 2.1 that GDL's
//! own checks cannot make ([`check`]), exact lifetimes ([`Time`],
//! [`Lifetime`]), and the embedding of an rtGDL description into GDL
//! ([`embed`]) on which the GDL checks and the reference interpreter run.
//!
//! Time is exact: a fixed-point count of millionths of a lifetime unit in a
//! `u64` ([`Time`]), never floating point, so every engine computes the same
//! lifetimes bit for bit. A lifetime written with more than six fraction
//! digits is refused. Lifetimes print canonically (`1.5`, `0.25`, `3`), and
//! lifetime constants written in rules are read as the times they denote: the
//! embedding writes them canonically, so `(true 1.0 F)` sees the fact whose
//! lifetime is one unit. Numbers inside facts (`(timer white 120.0)`) are
//! ordinary terms, as in GDL.
//!
//! The embedding: `(init T F)` becomes `(init (rt:lifetime T F))`, `(true T
//! F)` becomes `(true (rt:lifetime T F))`, `(next T F)` becomes `(next
//! (rt:lifetime T F))`, and `(expired F)` becomes `(true (rt:expired F))`. A
//! state S is given to the GDL program as the facts `(rt:lifetime t f)`, and
//! an update adds `(rt:expired f)` for the facts that expired: then what the
//! GDL program derives is exactly SM[G ∪ S^true] (or SM[G ∪ M^does ∪ μ(S, Δt)
//! ∪ S^exp]) of the spec's Definition 1, and the keyword restrictions of 2.1
//! (`expired` restricted like `true`) are GDL's restrictions on the embedding.

use crate::ast::Description;
use crate::ast::{Literal, Rule, Span, Term, Warning};
use crate::symbol::{SymbolId, SymbolTable};
use std::fmt;

/// Millionths of a lifetime unit in one unit: the precision of [`Time`].
pub const TICKS_PER_UNIT: u64 = 1_000_000;

/// Fraction digits a written lifetime may have.
pub const FRACTION_DIGITS: usize = 6;

/// The largest time, in units: beyond it a lifetime is refused (it would not
/// fit the fixed-point count with room to add two of them).
pub const MAX_UNITS: u64 = 1_000_000_000_000;

/// The name of the function symbol that pairs a lifetime with a fact in the embedding.
pub const LIFETIME_SYMBOL: &str = "rt:lifetime";

/// The name of the function symbol that marks an expired fact in the embedding.
pub const EXPIRED_SYMBOL: &str = "rt:expired";

/// An exact, non-negative amount of time: a count of millionths of a
/// lifetime unit, at most [`MAX_UNITS`] units.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug, Default)]
pub struct Time(u64);

impl Time {
    /// No time at all.
    pub const ZERO: Time = Time(0);

    /// The smallest positive time, one millionth of a unit.
    pub const TICK: Time = Time(1);

    /// The time of `ticks` millionths of a unit, if it is at most [`MAX_UNITS`] units.
    pub fn from_ticks(ticks: u64) -> Option<Time> {
        (ticks <= MAX_UNITS * TICKS_PER_UNIT).then_some(Time(ticks))
    }

    /// The number of millionths of a unit.
    pub fn ticks(self) -> u64 {
        self.0
    }

    /// Whether this is no time at all.
    pub fn is_zero(self) -> bool {
        self.0 == 0
    }

    /// `self - other`, or `None` when `other` is the larger.
    pub fn checked_sub(self, other: Time) -> Option<Time> {
        self.0.checked_sub(other.0).map(Time)
    }

    /// `self + other`, or `None` past [`MAX_UNITS`] units.
    pub fn checked_add(self, other: Time) -> Option<Time> {
        Time::from_ticks(self.0 + other.0)
    }

    /// Reads a decimal number such as `1`, `1.0`, `5.5` or `0.000001`
    /// (digits, optionally a point and up to [`FRACTION_DIGITS`] digits).
    pub fn parse(text: &str) -> Result<Time, String> {
        let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
        let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        if !digits(whole) || (text.contains('.') && !digits(fraction)) {
            return Err(format!("'{text}' is not a decimal number"));
        }
        if fraction.len() > FRACTION_DIGITS {
            return Err(format!(
                "'{text}' has more than {FRACTION_DIGITS} fraction digits (lifetimes are exact to a millionth of a unit)"
            ));
        }
        let whole = whole.trim_start_matches('0');
        let units = match whole.len() {
            0 => 0,
            n if n <= 13 => whole.parse::<u64>().expect("at most 13 digits"),
            _ => u64::MAX,
        };
        if units > MAX_UNITS {
            return Err(format!(
                "'{text}' is larger than the largest lifetime, {MAX_UNITS}"
            ));
        }
        let mut micros = 0;
        for (i, digit) in fraction.bytes().enumerate() {
            micros += u64::from(digit - b'0') * 10u64.pow((FRACTION_DIGITS - 1 - i) as u32);
        }
        Time::from_ticks(units * TICKS_PER_UNIT + micros)
            .ok_or_else(|| format!("'{text}' is larger than the largest lifetime, {MAX_UNITS}"))
    }
}

/// Canonical: the whole units, then the fraction without trailing zeros
/// (`1.5`, `0.25`, `3`).
impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (units, micros) = (self.0 / TICKS_PER_UNIT, self.0 % TICKS_PER_UNIT);
        if micros == 0 {
            return write!(f, "{units}");
        }
        let fraction = format!("{micros:06}");
        write!(f, "{units}.{}", fraction.trim_end_matches('0'))
    }
}

/// The lifetime of a fact: a positive [`Time`] or infinity.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub enum Lifetime {
    /// A positive time (the invariant of [`Lifetime::finite`]).
    Finite(Time),
    /// The fact holds until the rules drop it.
    Infinity,
}

impl Lifetime {
    /// A finite lifetime; `None` for zero, which no fact may have.
    pub fn finite(time: Time) -> Option<Lifetime> {
        (!time.is_zero()).then_some(Lifetime::Finite(time))
    }

    /// Reads `infinity` or a positive decimal number (see [`Time::parse`]).
    pub fn parse(text: &str) -> Result<Lifetime, String> {
        if text.eq_ignore_ascii_case("infinity") {
            return Ok(Lifetime::Infinity);
        }
        let time = Time::parse(text)?;
        Lifetime::finite(time)
            .ok_or_else(|| format!("'{text}' is zero: a fact with no time left has expired (use 'expired')"))
    }

    /// The finite time, if any.
    pub fn time(self) -> Option<Time> {
        match self {
            Lifetime::Finite(t) => Some(t),
            Lifetime::Infinity => None,
        }
    }

    /// The spec's μ for one fact: the lifetime left after `elapsed`, or `None`
    /// when the fact expired (its lifetime was at most `elapsed`).
    pub fn after(self, elapsed: Time) -> Option<Lifetime> {
        match self {
            Lifetime::Infinity => Some(Lifetime::Infinity),
            Lifetime::Finite(t) => t.checked_sub(elapsed).and_then(Lifetime::finite),
        }
    }
}

/// Canonical: `infinity` or the time (see [`Time`]'s `Display`).
impl fmt::Display for Lifetime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Lifetime::Finite(t) => t.fmt(f),
            Lifetime::Infinity => f.write_str("infinity"),
        }
    }
}

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
fn is_expired(symbols: &SymbolTable, symbol: SymbolId) -> bool {
    symbols.name(symbol).eq_ignore_ascii_case("expired")
}

/// Whether `symbol` is a state keyword that carries a lifetime in rtGDL.
fn is_timed(symbol: SymbolId) -> bool {
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
fn wrap(mut embedded: Description) -> Embedded {
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

mod circuit;

pub use circuit::{
    circuit_form, CircuitForm, CONSTANT_SYMBOL, COPY_SYMBOL, FINITE_SYMBOL, HELD_SYMBOL, SLOT_SYMBOL,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_and_print_exactly() {
        for (text, ticks, printed) in [
            ("1", 1_000_000, "1"),
            ("1.0", 1_000_000, "1"),
            ("5.5", 5_500_000, "5.5"),
            ("0.25", 250_000, "0.25"),
            ("120.000", 120_000_000, "120"),
            ("0.000001", 1, "0.000001"),
            ("007.50", 7_500_000, "7.5"),
        ] {
            let t = Time::parse(text).unwrap();
            assert_eq!((t.ticks(), t.to_string().as_str()), (ticks, printed), "{text}");
        }
        for bad in [
            "",
            ".5",
            "5.",
            "-1",
            "1e5",
            "0x10",
            "1.0000001",
            "1.5.2",
            "99999999999999",
            "+1",
        ] {
            assert!(Time::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(Lifetime::parse("Infinity"), Ok(Lifetime::Infinity));
        assert!(Lifetime::parse("0.0").unwrap_err().contains("zero"));
        assert!(Lifetime::Finite(Time::parse("9").unwrap()) < Lifetime::Infinity);
    }

    #[test]
    fn after_is_mu_for_one_fact() {
        let t = |s: &str| Time::parse(s).unwrap();
        let l = Lifetime::finite(t("1.5")).unwrap();
        assert_eq!(l.after(t("0.25")), Lifetime::finite(t("1.25")));
        assert_eq!(l.after(t("1.5")), None);
        assert_eq!(l.after(t("2")), None);
        assert_eq!(Lifetime::Infinity.after(t("2")), Some(Lifetime::Infinity));
    }

    #[test]
    fn embedding_wraps_lifetimes_and_expired() {
        let d = crate::parse(
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
            .map(|r| crate::rule_to_string(r, &e.description.symbols))
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
