//! Finite automata over letters, compiled from a movement expression for the
//! GDL translation.
//!
//! [`Automaton::compile`] builds the Glushkov automaton (one state per letter
//! occurrence once powers are written out, plus a start state; no ε-moves),
//! then the minimal DFA (subset construction up to [`MAX_DFA_STATES`] states,
//! then Moore's partition refinement), and keeps whichever has fewer
//! transitions. Either recognises the expression's language; in GDL each state
//! is a constant of the `reach` relation, so fewer transitions means fewer rules
//! and a smaller grounding. Dead states are never built: a missing transition
//! rejects.

use crate::rules::{Letter, Regex};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The most states the subset construction builds before giving up on the DFA.
pub const MAX_DFA_STATES: usize = 4096;

/// An automaton over letters: states `0..states`, start `0`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Automaton {
    accepting: Vec<bool>,
    /// `(from, letter, to)`, sorted.
    transitions: Vec<(usize, Letter, usize)>,
}

impl Automaton {
    /// The smaller of the Glushkov automaton and the minimal DFA of `regex`.
    pub fn compile(regex: &Regex) -> Automaton {
        let nfa = glushkov(regex);
        match determinize(&nfa) {
            Some(dfa) => {
                let dfa = minimize(&dfa);
                if dfa.transitions.len() <= nfa.transitions.len() {
                    dfa
                } else {
                    nfa
                }
            }
            None => nfa,
        }
    }

    /// The number of states.
    pub fn states(&self) -> usize {
        self.accepting.len()
    }

    /// Whether state `s` accepts.
    pub fn is_accepting(&self, s: usize) -> bool {
        self.accepting[s]
    }

    /// The transitions `(from, letter, to)`.
    pub fn transitions(&self) -> &[(usize, Letter, usize)] {
        &self.transitions
    }

    /// Whether the automaton accepts `word` (used by tests against the expression).
    pub fn accepts(&self, word: &[Letter]) -> bool {
        let mut current = BTreeSet::from([0]);
        for letter in word {
            current = self
                .transitions
                .iter()
                .filter(|(from, l, _)| l == letter && current.contains(from))
                .map(|(_, _, to)| *to)
                .collect();
        }
        current.iter().any(|&s| self.accepting[s])
    }
}

/// Nullable, first and last positions of a sub-expression, building `follow`.
struct Glushkov {
    letters: Vec<Letter>,
    follow: Vec<BTreeSet<usize>>,
}

/// `(nullable, first, last)` of a sub-expression.
type Summary = (bool, BTreeSet<usize>, BTreeSet<usize>);

impl Glushkov {
    /// Numbers the letters of `regex` as positions, adding their follow sets.
    fn visit(&mut self, regex: &Regex) -> Summary {
        match regex {
            Regex::Letter(l) => {
                let p = self.letters.len();
                self.letters.push(*l);
                self.follow.push(BTreeSet::new());
                (false, BTreeSet::from([p]), BTreeSet::from([p]))
            }
            Regex::Concat(parts) => {
                let mut acc: Summary = (true, BTreeSet::new(), BTreeSet::new());
                for part in parts {
                    let next = self.visit(part);
                    acc = self.concat(acc, next);
                }
                acc
            }
            Regex::Alt(parts) => {
                let mut acc: Summary = (false, BTreeSet::new(), BTreeSet::new());
                for part in parts {
                    let (n, f, l) = self.visit(part);
                    acc.0 |= n;
                    acc.1.extend(f);
                    acc.2.extend(l);
                }
                acc
            }
            Regex::Power(inner, n) => {
                let mut acc: Summary = (true, BTreeSet::new(), BTreeSet::new());
                for _ in 0..*n {
                    let next = self.visit(inner);
                    acc = self.concat(acc, next);
                }
                acc
            }
            Regex::Star(inner) => {
                let (_, first, last) = self.visit(inner);
                for &l in &last {
                    self.follow[l].extend(first.iter().copied());
                }
                (true, first, last)
            }
        }
    }

    /// The summary of `a` then `b`: `b`'s first positions follow `a`'s last.
    fn concat(&mut self, (na, fa, la): Summary, (nb, fb, lb): Summary) -> Summary {
        for &l in &la {
            self.follow[l].extend(fb.iter().copied());
        }
        let mut first = fa;
        if na {
            first.extend(fb.iter().copied());
        }
        let mut last = lb;
        if nb {
            last.extend(la);
        }
        (na && nb, first, last)
    }
}

/// The Glushkov automaton: state 0 is the start, state `p + 1` the position `p`.
fn glushkov(regex: &Regex) -> Automaton {
    let mut g = Glushkov {
        letters: Vec::new(),
        follow: Vec::new(),
    };
    let (nullable, first, last) = g.visit(regex);
    let mut accepting = vec![false; g.letters.len() + 1];
    accepting[0] = nullable;
    for &l in &last {
        accepting[l + 1] = true;
    }
    let mut transitions: Vec<(usize, Letter, usize)> =
        first.iter().map(|&q| (0, g.letters[q], q + 1)).collect();
    for (p, follow) in g.follow.iter().enumerate() {
        transitions.extend(follow.iter().map(|&q| (p + 1, g.letters[q], q + 1)));
    }
    transitions.sort();
    Automaton {
        accepting,
        transitions,
    }
}

/// The subset construction, or `None` past [`MAX_DFA_STATES`] states.
fn determinize(nfa: &Automaton) -> Option<Automaton> {
    let mut out: Vec<BTreeMap<Letter, BTreeSet<usize>>> = vec![BTreeMap::new(); nfa.states()];
    for &(from, letter, to) in &nfa.transitions {
        out[from].entry(letter).or_default().insert(to);
    }
    let start = BTreeSet::from([0]);
    let mut index: HashMap<BTreeSet<usize>, usize> = HashMap::from([(start.clone(), 0)]);
    let mut sets = vec![start];
    let mut transitions = Vec::new();
    let mut next = 0;
    while next < sets.len() {
        let mut moves: BTreeMap<Letter, BTreeSet<usize>> = BTreeMap::new();
        for &s in &sets[next] {
            for (letter, targets) in &out[s] {
                moves.entry(*letter).or_default().extend(targets.iter().copied());
            }
        }
        for (letter, target) in moves {
            let id = match index.get(&target) {
                Some(&id) => id,
                None => {
                    if sets.len() == MAX_DFA_STATES {
                        return None;
                    }
                    index.insert(target.clone(), sets.len());
                    sets.push(target);
                    sets.len() - 1
                }
            };
            transitions.push((next, letter, id));
        }
        next += 1;
    }
    let accepting = sets
        .iter()
        .map(|set| set.iter().any(|&s| nfa.accepting[s]))
        .collect();
    Some(Automaton {
        accepting,
        transitions,
    })
}

/// Moore's partition refinement of a DFA. States that cannot reach acceptance
/// are dropped first (their transitions reject, as missing ones do).
fn minimize(dfa: &Automaton) -> Automaton {
    let n = dfa.states();
    let live = co_reachable(dfa);
    let mut out: Vec<Vec<(Letter, usize)>> = vec![Vec::new(); n];
    for &(from, letter, to) in &dfa.transitions {
        if live[from] && live[to] {
            out[from].push((letter, to));
        }
    }
    // Class of each state: start from accepting or not, refine by successors' classes.
    let mut class: Vec<usize> = (0..n).map(|s| usize::from(dfa.accepting[s])).collect();
    loop {
        let mut ids: HashMap<(usize, Vec<(Letter, usize)>), usize> = HashMap::new();
        let refined: Vec<usize> = (0..n)
            .map(|s| {
                let signature = (
                    class[s],
                    out[s].iter().map(|&(l, t)| (l, class[t])).collect::<Vec<_>>(),
                );
                let fresh = ids.len();
                *ids.entry(signature).or_insert(fresh)
            })
            .collect();
        let stable = ids.len() == count_distinct(&class);
        class = refined;
        if stable {
            break;
        }
    }
    // Renumber classes from the start state's, in order of first appearance.
    let mut renumber: HashMap<usize, usize> = HashMap::from([(class[0], 0)]);
    for s in 0..n {
        if live[s] || s == 0 {
            let fresh = renumber.len();
            renumber.entry(class[s]).or_insert(fresh);
        }
    }
    let mut accepting = vec![false; renumber.len()];
    let mut transitions = BTreeSet::new();
    for s in 0..n {
        if let Some(&c) = renumber.get(&class[s]) {
            accepting[c] |= dfa.accepting[s];
            for &(letter, to) in &out[s] {
                transitions.insert((c, letter, renumber[&class[to]]));
            }
        }
    }
    Automaton {
        accepting,
        transitions: transitions.into_iter().collect(),
    }
}

/// The number of classes of a partition.
fn count_distinct(class: &[usize]) -> usize {
    class.iter().collect::<BTreeSet<_>>().len()
}

/// Which states can reach an accepting state.
fn co_reachable(dfa: &Automaton) -> Vec<bool> {
    let mut live = dfa.accepting.clone();
    loop {
        let mut changed = false;
        for &(from, _, to) in &dfa.transitions {
            if live[to] && !live[from] {
                live[from] = true;
                changed = true;
            }
        }
        if !changed {
            return live;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::{expression, Rng};

    /// The positions of `word` at which a match of `regex` starting at `i` can end.
    fn ends(regex: &Regex, word: &[Letter], i: usize) -> BTreeSet<usize> {
        match regex {
            Regex::Letter(l) => (word.get(i) == Some(l)).then_some(i + 1).into_iter().collect(),
            Regex::Concat(parts) => parts.iter().fold(BTreeSet::from([i]), |at, p| {
                at.iter().flat_map(|&j| ends(p, word, j)).collect()
            }),
            Regex::Alt(parts) => parts.iter().flat_map(|p| ends(p, word, i)).collect(),
            Regex::Power(inner, n) => (0..*n).fold(BTreeSet::from([i]), |at, _| {
                at.iter().flat_map(|&j| ends(inner, word, j)).collect()
            }),
            Regex::Star(inner) => {
                let mut all = BTreeSet::from([i]);
                loop {
                    let more: BTreeSet<usize> = all.iter().flat_map(|&j| ends(inner, word, j)).collect();
                    let before = all.len();
                    all.extend(more);
                    if all.len() == before {
                        return all;
                    }
                }
            }
        }
    }

    #[test]
    fn automata_recognise_the_expression() {
        let mut rng = Rng::new(3);
        let mut accepted = 0;
        for _ in 0..500 {
            let regex = expression(&mut rng, 3, 3, 4);
            let mut letters = Vec::new();
            regex.letters(&mut letters);
            let nfa = glushkov(&regex);
            let compiled = Automaton::compile(&regex);
            let dfa = determinize(&nfa).map(|d| minimize(&d));
            for _ in 0..50 {
                let word: Vec<Letter> = (0..rng.below(7))
                    .map(|_| letters[rng.below(letters.len())])
                    .collect();
                let expected = ends(&regex, &word, 0).contains(&word.len());
                accepted += usize::from(expected);
                assert_eq!(nfa.accepts(&word), expected, "{regex} on {word:?}");
                assert_eq!(compiled.accepts(&word), expected, "{regex} on {word:?}");
                if let Some(dfa) = &dfa {
                    assert_eq!(dfa.accepts(&word), expected, "{regex} on {word:?}");
                }
            }
        }
        assert!(accepted > 1000, "{accepted}");
    }

    #[test]
    fn a_rider_is_a_few_states() {
        // (0,1,e)(0,1,e)^* + (0,1,e)^*(0,1,p): start, riding, captured.
        let e = Regex::Letter(Letter {
            dx: 0,
            dy: 1,
            on: crate::On::Empty,
        });
        let p = Regex::Letter(Letter {
            dx: 0,
            dy: 1,
            on: crate::On::Opponent,
        });
        let star = Regex::Star(Box::new(e.clone()));
        let rider = Regex::Alt(vec![
            Regex::Concat(vec![e, star.clone()]),
            Regex::Concat(vec![star, p]),
        ]);
        let a = Automaton::compile(&rider);
        assert_eq!((a.states(), a.transitions().len()), (3, 4));
    }
}
