//! What a description written for GDL-II's prover means: GDL-II games are
//! written for the GameController, whose prover upper-cases every symbol as it
//! parses, so two spellings of a variable that differ only in case (`?hPos`,
//! `?hpos`, in `bigMoney`) are one variable there. Constants keep their
//! spelling (they are printed; no GDL-II game of the corpus has two that
//! differ only in case), and GDL descriptions are read case-sensitively, as
//! ggp-base reads them.

use crate::ast::{Literal, Term};
use crate::parser::Description;
use crate::symbol::{SymbolId, SymbolTable};

/// Whether `description` is GDL-II: it has the role `random` or a rule for `sees`.
pub fn is_gdl2(description: &Description) -> bool {
    description.rules.iter().any(|r| {
        r.head.functor() == Some(SymbolId::SEES)
            || (r.head.functor() == Some(SymbolId::ROLE) && r.head.args() == [Term::Atom(SymbolId::RANDOM)])
    })
}

/// In a GDL-II description, makes variables that differ only in case one
/// variable (the lower-case spelling); a GDL description is left as it is.
pub fn fold_variable_case(description: &mut Description) {
    if !is_gdl2(description) {
        return;
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gdl2_variables_fold_case_gdl_ones_do_not() {
        for (text, same) in [
            ("(role random) (<= (p ?hPos) (q ?hpos))", true),
            ("(role r) (<= (p ?hPos) (q ?hpos))", false),
        ] {
            let mut description = crate::parse(text).unwrap();
            fold_variable_case(&mut description);
            let rule = &description.rules[1];
            let Literal::Atom(body) = &rule.body[0] else { panic!() };
            assert_eq!(rule.head.args() == body.args(), same, "{text}");
        }
    }
}
