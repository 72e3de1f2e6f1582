//! Names overloaded by arity, as GDL-II games write them (`(set 1 ?c)` beside
//! `(set ?c1 ?c2 ?c3 ?c4)`, relation `add` with 3 and with 4 arguments): the
//! GameController's prover tells relations and functions apart by name and
//! arity. In a GDL-II description each use of a name with another number of
//! arguments than its first gets a symbol of its own, printed the same
//! ([`ggpnet_kif::SymbolTable::overload`]); the arity check then has nothing to
//! refuse. In GDL the check still refuses them (GDL-EDGE-CASES.md item 13).

use ggpnet_kif::{Description, Literal, SymbolId, SymbolTable, Term};
use rustc_hash::FxHashMap;

pub use ggpnet_kif::is_gdl2;

/// The first arity of each name, as a relation and as a function.
#[derive(Default)]
struct Arities {
    relations: FxHashMap<SymbolId, usize>,
    functions: FxHashMap<SymbolId, usize>,
}

impl Arities {
    /// The symbol for `symbol` used with `arity` arguments, as a relation if `relation`.
    fn symbol(
        &mut self,
        symbols: &mut SymbolTable,
        symbol: SymbolId,
        arity: usize,
        relation: bool,
    ) -> SymbolId {
        let first = if relation {
            &mut self.relations
        } else {
            &mut self.functions
        };
        let first = *first.entry(symbol).or_insert(arity);
        if first == arity || symbol.is_keyword() {
            symbol
        } else {
            symbols.overload(symbol, arity)
        }
    }

    fn term(&mut self, symbols: &mut SymbolTable, term: &mut Term) {
        if let Term::Compound(f, args) = term {
            *f = self.symbol(symbols, *f, args.len(), false);
            args.iter_mut().for_each(|a| self.term(symbols, a));
        }
    }

    fn sentence(&mut self, symbols: &mut SymbolTable, sentence: &mut Term) {
        match sentence {
            Term::Atom(r) => *r = self.symbol(symbols, *r, 0, true),
            Term::Compound(r, args) => {
                *r = self.symbol(symbols, *r, args.len(), true);
                args.iter_mut().for_each(|a| self.term(symbols, a));
            }
            Term::Var(_) => {}
        }
    }

    fn literal(&mut self, symbols: &mut SymbolTable, literal: &mut Literal) {
        match literal {
            Literal::Atom(s) => self.sentence(symbols, s),
            Literal::Not(inner) => self.literal(symbols, inner),
            Literal::Distinct(a, b) => {
                self.term(symbols, a);
                self.term(symbols, b);
            }
            Literal::Or(options) => options.iter_mut().for_each(|l| self.literal(symbols, l)),
        }
    }
}

/// In a GDL-II description, gives each name used with several arities a
/// symbol per arity after its first (in file order); a GDL description is left
/// as it is.
pub fn split_arities(description: &mut Description) {
    if !is_gdl2(description) {
        return;
    }
    let mut arities = Arities::default();
    let symbols = &mut description.symbols;
    for rule in &mut description.rules {
        arities.sentence(symbols, &mut rule.head);
        rule.body.iter_mut().for_each(|l| arities.literal(symbols, l));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gdl2_names_get_a_symbol_per_arity_and_print_the_same() {
        let text = "(role random) (p (f a)) (<= (q ?x) (p (f ?x ?x))) (p a b)";
        let mut description = ggpnet_kif::parse(text).unwrap();
        split_arities(&mut description);
        let rules = &description.rules;
        let (f1, f2) = (
            rules[1].head.args()[0].functor(),
            rules[2].body_sentence_functor(),
        );
        assert_ne!(f1, f2);
        assert_ne!(rules[1].head.functor(), rules[3].head.functor());
        let printed: Vec<String> = rules
            .iter()
            .map(|r| ggpnet_kif::rule_to_string(r, &description.symbols))
            .collect();
        assert_eq!(printed[2], "(<= (q ?x) (p (f ?x ?x)))");
        assert_eq!(printed[3], "(p a b)");
    }

    #[test]
    fn gdl_is_left_alone() {
        let text = "(role r) (p a) (p a b)";
        let mut description = ggpnet_kif::parse(text).unwrap();
        split_arities(&mut description);
        assert_eq!(
            description.rules[1].head.functor(),
            description.rules[2].head.functor()
        );
    }

    trait BodySentence {
        fn body_sentence_functor(&self) -> Option<SymbolId>;
    }

    impl BodySentence for ggpnet_kif::Rule {
        /// The functor of the first argument of the first body sentence.
        fn body_sentence_functor(&self) -> Option<SymbolId> {
            match &self.body[0] {
                Literal::Atom(s) => s.args()[0].functor(),
                _ => None,
            }
        }
    }
}
