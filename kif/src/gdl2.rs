//! What a description written for GDL-II's prover means. GDL-II games are
//! written for the GameController, whose prover reads two things otherwise
//! than GDL does, and [`read_as_gdl2`] reads a GDL-II description as it does
//! (a GDL description is left as it is):
//!
//! - it upper-cases every symbol as it parses, so two spellings of a variable
//!   that differ only in case (`?hPos`, `?hpos`, in `bigMoney`) are one
//!   variable. Constants keep their spelling (they are printed; no GDL-II
//!   game of the corpus has two that differ only in case);
//! - it reads `(and L ...)` in a body as the conjunction of the `L`s
//!   (`mastermind448` writes it inside an `or`), unless a rule defines `and`.
//!   It becomes `(not (or (not L) ...))`, which means the same in GDL;
//! - it reads a list whose first element is a variable, `(?n1 ?c1 ?n2 ?c2)`
//!   in `7wonders`, as a term: a tuple ([`TUPLE`](crate::TUPLE)), which unifies only with a
//!   tuple of as many elements. The parser accepts one in GDL-II only;
//! - it is queried top-down, so a rule may leave variables for its callers to
//!   bind (`(<= (sort ?x ?y ?y ?x) (not (gteq ?x ?y)))` in `ii_meier`). Such
//!   relations are unfolded into their callers (`unfold.rs` says when);
//! - for the same reason, a rule whose positive literal no rule head can match
//!   is never asked past that literal, whatever else it says. It is dropped
//!   (`impossible.rs`).

use crate::ast::Description;
use crate::ast::{Literal, Term};
use crate::symbol::{SymbolId, SymbolTable};

pub use crate::ast::is_gdl2;

/// Reads a GDL-II description as the GameController's prover does (see the
/// module doc); a GDL description is left as it is.
pub fn read_as_gdl2(description: &mut Description) {
    if is_gdl2(description) {
        fold_variable_case(description);
        read_conjunctions(description);
        crate::impossible::drop_impossible_rules(description);
        crate::unfold::unfold_caller_bound(description);
    }
}

/// Makes variables that differ only in case one variable (the lower-case spelling).
fn fold_variable_case(description: &mut Description) {
    fn term(symbols: &mut SymbolTable, t: &mut Term) {
        match t {
            Term::Var(v) => {
                let name = symbols.name(*v);
                if name.chars().any(|c| c.is_ascii_uppercase()) {
                    *v = symbols.intern(&name.to_ascii_lowercase());
                }
            }
            Term::Atom(_) => {}
            Term::Compound(_, args) => args.iter_mut().for_each(|a| term(symbols, a)),
        }
    }
    fn literal(symbols: &mut SymbolTable, l: &mut Literal) {
        match l {
            Literal::Atom(t) => term(symbols, t),
            Literal::Not(inner) => literal(symbols, inner),
            Literal::Distinct(a, b) => {
                term(symbols, a);
                term(symbols, b);
            }
            Literal::Or(options) => options.iter_mut().for_each(|o| literal(symbols, o)),
        }
    }
    let symbols = &mut description.symbols;
    for rule in &mut description.rules {
        term(symbols, &mut rule.head);
        rule.body.iter_mut().for_each(|l| literal(symbols, l));
    }
}

/// Reads each body literal `(and L ...)` as `(not (or (not L) ...))`, unless a
/// rule defines `and`.
fn read_conjunctions(description: &mut Description) {
    let is_and = |symbols: &SymbolTable, f: SymbolId| symbols.name(f).eq_ignore_ascii_case("and");
    let symbols = &description.symbols;
    if description
        .rules
        .iter()
        .any(|r| r.head.functor().is_some_and(|f| is_and(symbols, f)))
    {
        return;
    }
    /// The literal a term written in a body stands for.
    fn literal_of(symbols: &SymbolTable, t: &Term) -> Literal {
        match t {
            Term::Compound(SymbolId::NOT, args) if args.len() == 1 => {
                Literal::Not(Box::new(literal_of(symbols, &args[0])))
            }
            Term::Compound(SymbolId::OR, args) => {
                Literal::Or(args.iter().map(|a| literal_of(symbols, a)).collect())
            }
            Term::Compound(SymbolId::DISTINCT, args) if args.len() == 2 => {
                Literal::Distinct(args[0].clone(), args[1].clone())
            }
            Term::Compound(f, args) if symbols.name(*f).eq_ignore_ascii_case("and") => {
                Literal::Not(Box::new(Literal::Or(
                    args.iter()
                        .map(|a| Literal::Not(Box::new(literal_of(symbols, a))))
                        .collect(),
                )))
            }
            _ => Literal::Atom(t.clone()),
        }
    }
    fn rewrite(symbols: &SymbolTable, l: &mut Literal) {
        match l {
            Literal::Atom(t)
                if t.functor()
                    .is_some_and(|f| symbols.name(f).eq_ignore_ascii_case("and")) =>
            {
                *l = literal_of(symbols, t);
            }
            Literal::Not(inner) => rewrite(symbols, inner),
            Literal::Or(options) => options.iter_mut().for_each(|o| rewrite(symbols, o)),
            _ => {}
        }
    }
    for rule in &mut description.rules {
        rule.body.iter_mut().for_each(|l| rewrite(symbols, l));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gdl2_variables_fold_case_gdl_ones_do_not() {
        for (text, same) in [
            ("(role random) (<= (p ?hPos) (q ?hpos)) (q 1)", true),
            ("(role r) (<= (p ?hPos) (q ?hpos)) (q 1)", false),
        ] {
            let mut description = crate::parse(text).unwrap();
            read_as_gdl2(&mut description);
            let rule = &description.rules[1];
            let Literal::Atom(body) = &rule.body[0] else {
                panic!()
            };
            assert_eq!(rule.head.args() == body.args(), same, "{text}");
        }
    }

    #[test]
    fn gdl2_and_is_a_conjunction_unless_defined() {
        let text = "(role random) (<= p (or (and (q ?x) (not (r ?x))) (s)))";
        let mut description = crate::parse(text).unwrap();
        read_as_gdl2(&mut description);
        let printed = crate::rule_to_string(&description.rules[1], &description.symbols);
        assert_eq!(
            printed,
            "(<= p (or (not (or (not (q ?x)) (not (not (r ?x))))) (s)))"
        );
        let text = "(role random) (<= (and a) (s)) (<= p (and a)) (s)";
        let mut description = crate::parse(text).unwrap();
        read_as_gdl2(&mut description);
        let printed = crate::rule_to_string(&description.rules[2], &description.symbols);
        assert_eq!(printed, "(<= p (and a))");
    }
}
