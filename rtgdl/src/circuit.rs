//! The circuit form of an rtGDL description: GDL whose lifetimes and time
//! arguments are abstract, so that the propnet grounds it to a finite circuit
//! and a simulator keeps the values beside the base bits ([`circuit_form`]).
//!
//! **Lifetimes.** A state pair is the base `(rt:lifetime SRC F)`, where SRC
//! says where its lifetime came from: `infinity`, a constant (`3`), `(rt:copy
//! G)` (the lowered lifetime of fact G in this update), or `(rt:held K)` (the
//! time argument of the current fact whose key is K, see below). Only
//! `infinity` decides a rule: `(true infinity F)` reads F's infinite base,
//! `(true ?t F)` every base of F (grounded over every source). A rule whose
//! head takes the lifetime `?t` of a body `(true ?t F)` becomes two rules: one
//! reading `(true (rt:lifetime infinity F))` with `infinity` in the head, one
//! reading `(rt:finite F)` (some base of F has a finite source) with `(rt:copy
//! F)` in the head. `(expired F)` reads the base `(rt:expired F)`, which the
//! simulator sets (a rule makes it reachable wherever F may have a finite
//! lifetime; its value is the simulator's).
//!
//! **Time arguments.** A fact argument is a time argument when a head puts a
//! lifetime there, or a time argument read from the state: the chess clock's
//! `(timer ?r ?t)`. The positions are a fixpoint over the heads; a relation
//! has one at most. Its value is abstract too: a constant written in a head
//! (kept as written), `(rt:copy G)`, or `(rt:held K)`, where the key K is the
//! fact with its time argument replaced by `rt:slot`: the value of the current
//! fact with that key. So `(timer white (rt:held (timer white rt:slot)))`
//! carries itself and the forms stay finite. A rule whose head takes the time
//! argument `?v` of a body fact F becomes two rules: one for the constants,
//! with `(rt:constant ?v)` (the relation of the constants written at time
//! arguments, and `infinity`) and `?v` in the head; one for the rest, with
//! `(not (rt:constant ?v))` and `(rt:held K)` in the head. Time-argument splits
//! come before lifetime splits, so the copy sources keep the body's facts.
//!
//! **The fragment.** A time (a lifetime variable, or a variable at a time
//! argument) is read once, in a positive `true` outside `not` and `or`, and
//! used at most once more: as the lifetime or the time argument of the head.
//! A time argument of a head is a constant lifetime or such a time. Outside
//! this, refused with the rule's line:col: a finite lifetime constant or any
//! term at a time argument in a body `true` (they compare times), a `true`
//! inside `not` or `or` with a lifetime other than infinity or a time
//! argument, and a time compared or copied anywhere else.

use crate::syntax::{
    check, is_expired, is_timed, wrap, Embedded, RtgdlError, CONSTANT_SYMBOL, COPY_SYMBOL, FINITE_SYMBOL,
    HELD_SYMBOL, SLOT_SYMBOL,
};
use crate::time::Lifetime;
use ggpnet_kif::{term_to_string, Description, Literal, Rule, Span, SymbolId, SymbolTable, Term};
use std::collections::HashMap;

/// An rtGDL description in the form the propnet compiles (see
/// [`circuit_form`]), with the rule of the rtGDL description each of its
/// rules comes from.
#[derive(Clone, Debug)]
pub struct CircuitForm {
    /// The GDL description.
    pub description: Description,
    /// For each rule of `description`, the index of the rtGDL rule it comes
    /// from (`None` for the rules the form adds).
    pub origins: Vec<Option<usize>>,
}

/// The relations (functor, arity) with a time argument, and its position.
type TimeArguments = HashMap<(SymbolId, usize), usize>;

/// The symbols the circuit form writes.
struct Marks {
    copy: SymbolId,
    finite: SymbolId,
    held: SymbolId,
    constant: SymbolId,
    slot: SymbolId,
    infinity: SymbolId,
}

/// How a rule reads a time from a body `true`.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Read {
    /// Its lifetime, `(true ?t F)`.
    Lifetime,
    /// The time argument of its fact, `(true infinity (timer ?r ?t))`.
    Argument,
}

/// A time variable a rule reads, in the positive `true` at `literal`.
#[derive(Clone, Copy, Debug)]
struct TimeRead {
    variable: SymbolId,
    literal: usize,
    read: Read,
}

/// The rtGDL description as GDL whose lifetimes and time arguments are
/// abstract, for the propnet (see the module doc); outside the fragment the
/// module doc describes, an error with the rule's line:col.
pub fn circuit_form(description: &Description) -> Result<CircuitForm, RtgdlError> {
    check(description)?;
    let arguments = time_arguments(description)?;
    let mut form = description.clone();
    let marks = Marks {
        copy: form.symbols.intern(COPY_SYMBOL),
        finite: form.symbols.intern(FINITE_SYMBOL),
        held: form.symbols.intern(HELD_SYMBOL),
        constant: form.symbols.intern(CONSTANT_SYMBOL),
        slot: form.symbols.intern(SLOT_SYMBOL),
        infinity: form.symbols.intern("infinity"),
    };
    let mut rules = Vec::new();
    let mut origins = Vec::new();
    let mut constants = vec![marks.infinity];
    for (index, rule) in description.rules.iter().enumerate() {
        let refuse = |message: String| RtgdlError {
            span: rule.span,
            message: format!("{message}: outside the fragment of rtGDL the propnet compiles"),
        };
        let reads = time_reads(rule, &arguments, &form.symbols).map_err(refuse)?;
        head_times(rule, &arguments, &reads, &form.symbols, &mut constants).map_err(refuse)?;
        for variant in variants(rule, &reads, &arguments, &marks) {
            rules.push(variant);
            origins.push(Some(index));
        }
    }
    if !arguments.is_empty() {
        constants.sort_unstable();
        constants.dedup();
        for c in constants {
            rules.push(Rule {
                head: Term::Compound(marks.constant, vec![Term::Atom(c)]),
                body: Vec::new(),
                span: Span::default(),
            });
            origins.push(None);
        }
    }
    form.rules = rules;
    let mut embedded = wrap(form);
    let added = finite_and_expired(&mut embedded, &marks);
    embedded.description.rules.extend(added);
    origins.extend([None, None]);
    Ok(CircuitForm {
        description: embedded.description,
        origins,
    })
}

/// The two rules every circuit form ends with: `(rt:finite F)` when some base
/// of F has a finite source, and `(rt:expired F)` reachable for such F.
fn finite_and_expired(embedded: &mut Embedded, marks: &Marks) -> [Rule; 2] {
    let symbols = &mut embedded.description.symbols;
    let (s, f) = (
        Term::Var(symbols.intern("?rt:s")),
        Term::Var(symbols.intern("?rt:f")),
    );
    let base = Term::Compound(
        SymbolId::TRUE,
        vec![Term::Compound(embedded.lifetime, vec![s.clone(), f.clone()])],
    );
    let is_finite = Term::Compound(marks.finite, vec![f.clone()]);
    [
        Rule {
            head: is_finite.clone(),
            body: vec![
                Literal::Atom(base),
                Literal::Distinct(s, Term::Atom(marks.infinity)),
            ],
            span: Span::default(),
        },
        Rule {
            head: Term::Compound(SymbolId::NEXT, vec![Term::Compound(embedded.expired, vec![f])]),
            body: vec![Literal::Atom(is_finite)],
            span: Span::default(),
        },
    ]
}

/// The lifetime and fact of an `init`, `true` or `next` of two arguments.
fn timed(sentence: &Term) -> Option<(&Term, &Term)> {
    match sentence {
        Term::Compound(f, args) if is_timed(*f) && args.len() == 2 => Some((&args[0], &args[1])),
        _ => None,
    }
}

/// The time argument of `fact`, if its relation has one.
fn time_argument<'f>(fact: &'f Term, arguments: &TimeArguments) -> Option<&'f Term> {
    match fact {
        Term::Compound(f, args) => arguments.get(&(*f, args.len())).map(|&p| &args[p]),
        _ => None,
    }
}

/// Whether `term` is the atom `infinity` (matched without case).
fn is_infinity(term: &Term, symbols: &SymbolTable) -> bool {
    matches!(term, Term::Atom(a) if symbols.name(*a).eq_ignore_ascii_case("infinity"))
}

/// The time-argument positions: a head argument is one when it is a
/// variable the body reads as a time (the lifetime or the time argument of a
/// positive `true`), until nothing changes. Two positions in one relation are
/// refused.
fn time_arguments(description: &Description) -> Result<TimeArguments, RtgdlError> {
    let mut arguments = TimeArguments::new();
    loop {
        let mut grew = false;
        for rule in &description.rules {
            let Some((_, Term::Compound(f, args))) = timed(&rule.head) else {
                continue;
            };
            for (position, arg) in args.iter().enumerate() {
                let Term::Var(v) = arg else { continue };
                if !reads_time(rule, *v, &arguments) {
                    continue;
                }
                match arguments.insert((*f, args.len()), position) {
                    None => grew = true,
                    Some(p) if p == position => {}
                    Some(p) => {
                        return Err(RtgdlError {
                            span: rule.span,
                            message: format!(
                                "'{}' would have two time arguments ({} and {}): outside the fragment of rtGDL the propnet compiles",
                                description.symbols.name(*f),
                                p + 1,
                                position + 1
                            ),
                        })
                    }
                }
            }
        }
        if !grew {
            return Ok(arguments);
        }
    }
}

/// Whether a positive `true` of `rule`'s body reads `variable` as a time.
fn reads_time(rule: &Rule, variable: SymbolId, arguments: &TimeArguments) -> bool {
    let is = |t: &Term| *t == Term::Var(variable);
    rule.body.iter().any(|l| match l {
        Literal::Atom(t) if t.functor() == Some(SymbolId::TRUE) => {
            timed(t).is_some_and(|(life, fact)| is(life) || time_argument(fact, arguments).is_some_and(is))
        }
        _ => false,
    })
}

/// The times `rule` reads, each checked to occur once in the body and at
/// most once in the head; an error for a body that compares times.
fn time_reads(
    rule: &Rule,
    arguments: &TimeArguments,
    symbols: &SymbolTable,
) -> Result<Vec<TimeRead>, String> {
    let mut reads = Vec::new();
    // Variables at the time argument of an `expired` fact: each occurs once.
    let mut wildcards = Vec::new();
    let mut nested = Vec::new();
    for (literal, l) in rule.body.iter().enumerate() {
        match l {
            Literal::Atom(t) if t.functor() == Some(SymbolId::TRUE) => {
                let (life, fact) = timed(t).expect("checked: two arguments");
                match life {
                    Term::Var(variable) => reads.push(TimeRead {
                        variable: *variable,
                        literal,
                        read: Read::Lifetime,
                    }),
                    _ if is_infinity(life, symbols) => {}
                    _ => return Err("a finite lifetime constant in 'true' compares lifetimes".into()),
                }
                match time_argument(fact, arguments) {
                    Some(Term::Var(variable)) => reads.push(TimeRead {
                        variable: *variable,
                        literal,
                        read: Read::Argument,
                    }),
                    Some(other) => {
                        return Err(format!(
                            "the time argument {} in 'true' compares times",
                            term_to_string(other, symbols)
                        ))
                    }
                    None => {}
                }
            }
            Literal::Atom(t) => expired_argument(t, arguments, symbols, &mut wildcards)?,
            Literal::Distinct(..) => {}
            Literal::Not(inner) => nested.push(&**inner),
            Literal::Or(options) => nested.extend(options),
        }
    }
    while let Some(l) = nested.pop() {
        match l {
            Literal::Atom(t) if t.functor() == Some(SymbolId::TRUE) => {
                let (life, fact) = timed(t).expect("checked: two arguments");
                if !is_infinity(life, symbols) || time_argument(fact, arguments).is_some() {
                    return Err(
                        "a 'true' inside 'not' or 'or' with a lifetime other than infinity or a time argument"
                            .into(),
                    );
                }
            }
            Literal::Atom(t) => expired_argument(t, arguments, symbols, &mut wildcards)?,
            Literal::Not(inner) => nested.push(inner),
            Literal::Or(options) => nested.extend(options),
            Literal::Distinct(..) => {}
        }
    }
    for read in &reads {
        let (head, body) = occurrences(rule, read.variable);
        let at_head_time = timed(&rule.head).is_some_and(|(life, fact)| {
            let is = |t: &Term| *t == Term::Var(read.variable);
            is(life) || time_argument(fact, arguments).is_some_and(is)
        });
        if body != 1 || head > 1 || (head == 1 && !at_head_time) {
            return Err(format!(
                "the time {} is compared, or copied elsewhere than into the head's lifetime or time argument",
                symbols.name(read.variable)
            ));
        }
    }
    if let Some(&v) = wildcards.iter().find(|&&v| occurrences(rule, v) != (0, 1)) {
        return Err(format!(
            "the time argument {} of an expired fact is used: an expired fact's time is not kept",
            symbols.name(v)
        ));
    }
    Ok(reads)
}

/// Collects the variable at the time argument of an `expired` fact; any other term there is an error.
fn expired_argument(
    sentence: &Term,
    arguments: &TimeArguments,
    symbols: &SymbolTable,
    wildcards: &mut Vec<SymbolId>,
) -> Result<(), String> {
    let Term::Compound(f, args) = sentence else {
        return Ok(());
    };
    if !is_expired(symbols, *f) {
        return Ok(());
    }
    match time_argument(&args[0], arguments) {
        Some(Term::Var(v)) => wildcards.push(*v),
        Some(other) => {
            return Err(format!(
                "the time argument {} in 'expired' compares times",
                term_to_string(other, symbols)
            ))
        }
        None => {}
    }
    Ok(())
}

/// How often `variable` occurs in `rule`: in the head, in the body.
fn occurrences(rule: &Rule, variable: SymbolId) -> (usize, usize) {
    let (mut head, mut body) = (0, 0);
    rule.head
        .for_each_var(&mut |v| head += usize::from(v == variable));
    rule.body
        .iter()
        .for_each(|l| l.for_each_var(&mut |v| body += usize::from(v == variable)));
    (head, body)
}

/// Checks the time argument of `rule`'s head: a constant lifetime (added to
/// `constants`) or a time the body reads.
fn head_times(
    rule: &Rule,
    arguments: &TimeArguments,
    reads: &[TimeRead],
    symbols: &SymbolTable,
    constants: &mut Vec<SymbolId>,
) -> Result<(), String> {
    let Some(argument) = timed(&rule.head).and_then(|(_, fact)| time_argument(fact, arguments)) else {
        return Ok(());
    };
    match argument {
        Term::Var(v) if reads.iter().any(|r| r.variable == *v) => Ok(()),
        Term::Atom(a) => match Lifetime::parse(symbols.name(*a)) {
            Ok(_) => {
                constants.push(*a);
                Ok(())
            }
            Err(e) => Err(format!(
                "the time argument {} is not a lifetime: {e}",
                symbols.name(*a)
            )),
        },
        other => Err(format!(
            "the time argument {} is neither a constant lifetime nor a time read from the state",
            term_to_string(other, symbols)
        )),
    }
}

/// The rules `rule` becomes: split on each time the head takes, time
/// arguments first (see the module doc).
fn variants(rule: &Rule, reads: &[TimeRead], arguments: &TimeArguments, marks: &Marks) -> Vec<Rule> {
    let mut variants = vec![(rule.head.clone(), rule.body.clone())];
    let copied = |read: Read| {
        reads
            .iter()
            .filter(move |r| r.read == read && occurrences(rule, r.variable).0 == 1)
    };
    for read in copied(Read::Argument) {
        let fact = body_fact(&rule.body[read.literal]);
        let constant = Literal::Atom(Term::Compound(marks.constant, vec![Term::Var(read.variable)]));
        let held = Term::Compound(marks.held, vec![key(fact, arguments, marks.slot)]);
        variants = variants
            .into_iter()
            .flat_map(|(head, body)| {
                let mut constant_body = body.clone();
                constant_body.push(constant.clone());
                let mut held_body = body;
                held_body.push(Literal::Not(Box::new(constant.clone())));
                let held_head = replace(&head, read.variable, &held);
                [(head, constant_body), (held_head, held_body)]
            })
            .collect();
    }
    for read in copied(Read::Lifetime) {
        let fact = body_fact(&rule.body[read.literal]).clone();
        let infinity = Term::Atom(marks.infinity);
        let readings = [
            (
                Term::Compound(SymbolId::TRUE, vec![infinity.clone(), fact.clone()]),
                infinity,
            ),
            (
                Term::Compound(marks.finite, vec![fact.clone()]),
                Term::Compound(marks.copy, vec![fact]),
            ),
        ];
        variants = variants
            .into_iter()
            .flat_map(|(head, body)| {
                readings.iter().map(move |(literal, source)| {
                    let mut body = body.clone();
                    body[read.literal] = Literal::Atom(literal.clone());
                    (replace(&head, read.variable, source), body)
                })
            })
            .collect();
    }
    variants
        .into_iter()
        .map(|(head, body)| Rule {
            head,
            body,
            span: rule.span,
        })
        .collect()
}

/// The fact of a body `(true T F)`.
fn body_fact(literal: &Literal) -> &Term {
    match literal {
        Literal::Atom(t) => timed(t).expect("a time is read from a true").1,
        _ => unreachable!("a time is read from a positive literal"),
    }
}

/// The key of a fact with a time argument: the fact with `slot` in its place.
fn key(fact: &Term, arguments: &TimeArguments, slot: SymbolId) -> Term {
    let Term::Compound(f, args) = fact else {
        unreachable!("a fact with a time argument is compound")
    };
    let mut args = args.clone();
    let position = arguments[&(*f, args.len())];
    args[position] = Term::Atom(slot);
    Term::Compound(*f, args)
}

/// `term` with `variable` replaced by `with`.
fn replace(term: &Term, variable: SymbolId, with: &Term) -> Term {
    match term {
        Term::Var(v) if *v == variable => with.clone(),
        Term::Compound(f, args) => {
            Term::Compound(*f, args.iter().map(|a| replace(a, variable, with)).collect())
        }
        _ => term.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rules of a circuit form as KIF.
    fn printed(form: &CircuitForm) -> Vec<String> {
        let symbols = &form.description.symbols;
        form.description
            .rules
            .iter()
            .map(|r| ggpnet_kif::rule_to_string(r, symbols))
            .collect()
    }

    #[test]
    fn circuit_form_abstracts_lifetimes_to_sources() {
        let d = ggpnet_kif::parse(
            "(role r) (init 1.0 (appear cat))
             (<= (next ?t (gone ?c)) (true ?t (gone ?c)) (not (expired (gone ?c))))
             (<= (legal r (catch ?c)) (true ?t (appear ?c)))",
        )
        .unwrap();
        let form = circuit_form(&d).unwrap();
        let printed = printed(&form);
        assert_eq!(
            printed,
            [
                "(role r)",
                "(init (rt:lifetime 1 (appear cat)))",
                "(<= (next (rt:lifetime infinity (gone ?c))) (true (rt:lifetime infinity (gone ?c))) (not (true (rt:expired (gone ?c)))))",
                "(<= (next (rt:lifetime (rt:copy (gone ?c)) (gone ?c))) (rt:finite (gone ?c)) (not (true (rt:expired (gone ?c)))))",
                "(<= (legal r (catch ?c)) (true (rt:lifetime ?t (appear ?c))))",
                "(<= (rt:finite ?rt:f) (true (rt:lifetime ?rt:s ?rt:f)) (distinct ?rt:s infinity))",
                "(<= (next (rt:expired ?rt:f)) (rt:finite ?rt:f))",
            ]
        );
        assert_eq!(
            form.origins,
            [Some(0), Some(1), Some(2), Some(2), Some(3), None, None]
        );
        assert_eq!(crate::syntax::warnings(&d), []);
    }

    #[test]
    fn circuit_form_splits_time_arguments_into_constants_and_held_values() {
        let d = ggpnet_kif::parse(
            "(role r) (init 3 clock) (init infinity (timer r 3.0))
             (<= (next infinity (timer ?r ?t)) (does ?r go) (true ?t clock))
             (<= (next ?t clock) (does ?r go) (true infinity (timer ?r ?t)))",
        )
        .unwrap();
        let form = circuit_form(&d).unwrap();
        let printed = printed(&form);
        assert_eq!(
            printed,
            [
                "(role r)",
                "(init (rt:lifetime 3 clock))",
                "(init (rt:lifetime infinity (timer r 3.0)))",
                "(<= (next (rt:lifetime infinity (timer ?r infinity))) (does ?r go) (true (rt:lifetime infinity clock)))",
                "(<= (next (rt:lifetime infinity (timer ?r (rt:copy clock)))) (does ?r go) (rt:finite clock))",
                "(<= (next (rt:lifetime ?t clock)) (does ?r go) (true (rt:lifetime infinity (timer ?r ?t))) (rt:constant ?t))",
                "(<= (next (rt:lifetime (rt:held (timer ?r rt:slot)) clock)) (does ?r go) (true (rt:lifetime infinity (timer ?r ?t))) (not (rt:constant ?t)))",
                "(rt:constant infinity)",
                "(rt:constant 3.0)",
                "(<= (rt:finite ?rt:f) (true (rt:lifetime ?rt:s ?rt:f)) (distinct ?rt:s infinity))",
                "(<= (next (rt:expired ?rt:f)) (rt:finite ?rt:f))",
            ]
        );
        assert_eq!(
            form.origins,
            [
                Some(0),
                Some(1),
                Some(2),
                Some(3),
                Some(3),
                Some(4),
                Some(4),
                None,
                None,
                None,
                None
            ]
        );
    }
}
