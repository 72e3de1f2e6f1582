//! Rules that can never fire, dropped from GDL-II descriptions: a rule with a
//! positive literal that no rule head can match. A sentence holds only as an
//! instance of some rule's head; `(true F)` only for an `F` of some `init` or
//! `next` head, `(does R M)` only for a move of some `legal` head. `7wonders`
//! asks `(does ?p (buy ?card (?n1 ?c1 ?n2 ?c2)))` where every legal `buy` move
//! ends in `0`; the GameController's prover never finds such a move, and the
//! rule's other literals (unsafe ones among them) are never asked.
//!
//! Matching treats every variable as a wildcard, so a rule is dropped only when
//! no instance of the literal could be derived whatever the bindings.

use crate::ast::Description;
use crate::ast::{Literal, Rule, Term};
use crate::symbol::SymbolId;
use std::collections::HashMap;

/// Drops, until none is left, every rule with a positive literal no head matches.
pub(crate) fn drop_impossible_rules(description: &mut Description) {
    loop {
        let heads = Heads::of(&description.rules);
        let keep: Vec<bool> = description
            .rules
            .iter()
            .map(|rule| {
                rule.body.iter().all(|l| match l {
                    Literal::Atom(sentence) => heads.can_give(sentence),
                    _ => true,
                })
            })
            .collect();
        if keep.iter().all(|&k| k) {
            return;
        }
        let mut keep = keep.into_iter();
        description.rules.retain(|_| keep.next().unwrap_or(true));
    }
}

/// What the rule heads can give, by the name and arity of the sentence asked:
/// `(true F)` is asked as `F` of `init` and `next` heads, `(does R M)` as the
/// `legal` heads.
struct Heads<'r> {
    by_relation: HashMap<(Asked, SymbolId, usize), Vec<&'r Term>>,
    /// How the heads that are a variable (`(next ?f)`) can be asked: anything.
    anything: Vec<Asked>,
}

/// How a sentence is asked.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Asked {
    Derived,
    True,
    Does,
}

impl<'r> Heads<'r> {
    fn of(rules: &'r [Rule]) -> Heads<'r> {
        let mut heads = Heads {
            by_relation: HashMap::new(),
            anything: Vec::new(),
        };
        for rule in rules {
            let head = &rule.head;
            let (asked, pattern) = match (head.functor(), head.args()) {
                (Some(SymbolId::INIT | SymbolId::NEXT), [fact]) => (Asked::True, fact),
                (Some(SymbolId::LEGAL), _) => (Asked::Does, head),
                _ => (Asked::Derived, head),
            };
            match pattern.functor() {
                Some(f) => heads
                    .by_relation
                    .entry((asked, f, pattern.args().len()))
                    .or_default()
                    .push(pattern),
                None => heads.anything.push(asked),
            }
        }
        heads
    }

    /// Whether some head can give an instance of the body literal `sentence`.
    fn can_give(&self, sentence: &Term) -> bool {
        let (asked, pattern, functor) = match (sentence.functor(), sentence.args()) {
            (Some(SymbolId::TRUE), [fact]) => (Asked::True, fact, fact.functor()),
            (Some(SymbolId::DOES), _) => (Asked::Does, sentence, Some(SymbolId::LEGAL)),
            (Some(f), _) if f.is_keyword() && f != SymbolId::ROLE => return true,
            (f, _) => (Asked::Derived, sentence, f),
        };
        let Some(functor) = functor else {
            return true; // `(true ?f)`: anything.
        };
        self.anything.contains(&asked)
            || self
                .by_relation
                .get(&(asked, functor, pattern.args().len()))
                .is_some_and(|heads| heads.iter().any(|h| args_may_match(pattern, h)))
    }
}

/// Whether the arguments of `a` and `b` could be equal, pairwise.
fn args_may_match(a: &Term, b: &Term) -> bool {
    a.args().len() == b.args().len() && a.args().iter().zip(b.args()).all(|(x, y)| may_match(x, y))
}

/// Whether `a` and `b` could be equal, every variable matching any term.
fn may_match(a: &Term, b: &Term) -> bool {
    match (a, b) {
        (Term::Var(_), _) | (_, Term::Var(_)) => true,
        (Term::Atom(x), Term::Atom(y)) => x == y,
        (Term::Compound(f, xs), Term::Compound(g, ys)) => {
            f == g && xs.len() == ys.len() && xs.iter().zip(ys).all(|(x, y)| may_match(x, y))
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kept(text: &str) -> usize {
        let mut description = crate::parse(text).expect("parses");
        drop_impossible_rules(&mut description);
        description.rules.len()
    }

    #[test]
    fn rules_no_head_can_feed_are_dropped_until_none_is_left() {
        let moves = "(<= (legal ?p (buy ?c 0)) (hand ?p ?c)) (hand a b)";
        assert_eq!(kept(&format!("{moves} (<= (got ?p) (does ?p (buy ?c 0)))")), 3);
        assert_eq!(
            kept(&format!("{moves} (<= (got ?p) (does ?p (buy ?c (pair ?x ?y))))")),
            2
        );
        // `got` loses its only rule, so `rich` goes too.
        assert_eq!(
            kept(&format!(
                "{moves} (<= (got ?p) (does ?p (buy ?c (pair ?x ?y)))) (<= (rich ?p) (got ?p))"
            )),
            2
        );
        assert_eq!(
            kept("(init (cell 1)) (<= (next (cell 2)) (true (cell 1))) (<= (x) (true (cell 3)))"),
            2
        );
        assert_eq!(kept("(init (cell ?x)) (<= (y) (true (cell 3)))"), 2);
        assert_eq!(
            kept("(keep (cell 3)) (<= (next ?f) (true ?f) (keep ?f)) (<= y (true (cell 3)))"),
            3
        );
        // A negative literal of an impossible sentence holds: the rule stays.
        assert_eq!(kept("(init (cell 1)) (<= z (not (true (cell 3))))"), 2);
    }
}
