//! The canonical printer: single spaces, `(cell 1 1 b)`, atoms bare, keywords in
//! lower case, every other symbol as written.

use crate::ast::{Literal, Rule, Term};
use crate::symbol::SymbolTable;
use std::fmt::{self, Write};

/// Writes `term` in canonical form to `out`.
pub fn write_term(out: &mut impl Write, term: &Term, symbols: &SymbolTable) -> fmt::Result {
    match term {
        Term::Atom(s) | Term::Var(s) => out.write_str(symbols.name(*s)),
        Term::Compound(f, args) => {
            out.write_char('(')?;
            out.write_str(symbols.name(*f))?;
            for arg in args {
                out.write_char(' ')?;
                write_term(out, arg, symbols)?;
            }
            out.write_char(')')
        }
    }
}

/// The canonical text of a term.
///
/// ```
/// let mut symbols = ggpnet_kif::SymbolTable::new();
/// let t = ggpnet_kif::parse_term("( cell  1 (f)   b )", &mut symbols).unwrap();
/// assert_eq!(ggpnet_kif::term_to_string(&t, &symbols), "(cell 1 (f) b)");
/// ```
pub fn term_to_string(term: &Term, symbols: &SymbolTable) -> String {
    let mut s = String::new();
    write_term(&mut s, term, symbols).expect("writing to a String cannot fail");
    s
}

fn write_literal(out: &mut impl Write, literal: &Literal, symbols: &SymbolTable) -> fmt::Result {
    match literal {
        Literal::Atom(t) => write_term(out, t, symbols),
        Literal::Not(l) => {
            out.write_str("(not ")?;
            write_literal(out, l, symbols)?;
            out.write_char(')')
        }
        Literal::Distinct(a, b) => {
            out.write_str("(distinct ")?;
            write_term(out, a, symbols)?;
            out.write_char(' ')?;
            write_term(out, b, symbols)?;
            out.write_char(')')
        }
        Literal::Or(ls) => {
            out.write_str("(or")?;
            for l in ls {
                out.write_char(' ')?;
                write_literal(out, l, symbols)?;
            }
            out.write_char(')')
        }
    }
}

/// The canonical text of a rule: `(<= head body...)`, or the bare head for a fact.
pub fn rule_to_string(rule: &Rule, symbols: &SymbolTable) -> String {
    let mut s = String::new();
    if rule.body.is_empty() {
        write_term(&mut s, &rule.head, symbols).expect("String write");
        return s;
    }
    s.push_str("(<= ");
    write_term(&mut s, &rule.head, symbols).expect("String write");
    for l in &rule.body {
        s.push(' ');
        write_literal(&mut s, l, symbols).expect("String write");
    }
    s.push(')');
    s
}

#[cfg(test)]
mod tests {
    use crate::parse;

    #[test]
    fn rules_print_canonically() {
        let d = parse("(<=  (Next (cell ?x))\n (NOT (distinct ?x 1)) (OR p (q ?x)))").unwrap();
        assert_eq!(
            super::rule_to_string(&d.rules[0], &d.symbols),
            "(<= (next (cell ?x)) (not (distinct ?x 1)) (or p (q ?x)))"
        );
    }
}
