//! Factoring: in an `or` of `and` gates, an input shared by several of the `and`s
//! is taken out once: `(a ∧ x) ∨ (a ∧ y) ∨ z` becomes `(a ∧ (x ∨ y)) ∨ z`. Frame
//! rules such as "a cell keeps its piece under every move that does not touch it"
//! ground to one `and` per cell and move; factored, they become one `and` per cell
//! over an `or` of moves. Exact: every node keeps its value.

use crate::circuit::{Circuit, NodeId, NodeKind};
use rustc_hash::FxHashMap;

/// Most factoring rounds per `or` gate (each takes out one shared input).
const MAX_ROUNDS: usize = 64;

/// Factors shared inputs out of `or`s of single-reader `and`s; returns how many
/// `and`s were rewritten.
pub fn factor(circuit: &mut Circuit) -> usize {
    let mut readers = vec![0u32; circuit.nodes.len()];
    for node in &circuit.nodes {
        for input in &node.inputs {
            readers[input.index()] += 1;
        }
    }
    for root in circuit.roots() {
        readers[root.index()] += 1;
    }
    let mut rewritten = 0;
    let mut work: Vec<NodeId> = (0..circuit.nodes.len())
        .map(NodeId::new)
        .filter(|id| circuit.nodes[id.index()].kind == NodeKind::Or)
        .collect();
    while let Some(or) = work.pop() {
        for _ in 0..MAX_ROUNDS {
            // The single-reader `and` inputs of this `or` may be rewritten freely.
            let terms: Vec<NodeId> = circuit.nodes[or.index()]
                .inputs
                .iter()
                .copied()
                .filter(|t| circuit.nodes[t.index()].kind == NodeKind::And && readers[t.index()] == 1)
                .collect();
            let Some(shared) = most_shared(circuit, &terms) else {
                break;
            };
            let group: Vec<NodeId> = terms
                .into_iter()
                .filter(|t| circuit.nodes[t.index()].inputs.contains(&shared))
                .collect();
            rewritten += group.len();
            // A term that was `shared` alone makes the whole group equal to `shared`.
            let factored = if group.iter().any(|t| circuit.nodes[t.index()].inputs == [shared]) {
                readers[shared.index()] += 1;
                shared
            } else {
                for t in &group {
                    circuit.nodes[t.index()].inputs.retain(|&i| i != shared);
                }
                let rest = circuit.add(NodeKind::Or, group.clone());
                readers.push(1);
                work.push(rest);
                let and = circuit.add(NodeKind::And, vec![shared, rest]);
                readers.push(1);
                readers[shared.index()] += 1;
                and
            };
            let inputs = &mut circuit.nodes[or.index()].inputs;
            inputs.retain(|i| !group.contains(i));
            inputs.push(factored);
            // Terms dropped from this `or` when `shared` alone absorbed them lose their reader.
            if factored == shared {
                for t in &group {
                    readers[t.index()] -= 1;
                }
            }
        }
    }
    rewritten
}

/// The input shared by the most of `terms` (at least two), lowest id on ties.
fn most_shared(circuit: &Circuit, terms: &[NodeId]) -> Option<NodeId> {
    let mut counts: FxHashMap<NodeId, usize> = FxHashMap::default();
    for t in terms {
        let mut inputs = circuit.nodes[t.index()].inputs.clone();
        inputs.sort_unstable();
        inputs.dedup();
        for i in inputs {
            *counts.entry(i).or_insert(0) += 1;
        }
    }
    counts
        .into_iter()
        .filter(|&(_, n)| n >= 2)
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
        .map(|(id, _)| id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::circuit::Base;
    use crate::optimize::tests::{eval_all, tiny};

    #[test]
    fn shared_input_is_taken_out_once() {
        let (mut c, [b, t, f]) = tiny();
        // A second base, so the terms differ: (b ∧ b2) ∨ (b ∧ ¬b2) ∨ (b2 ∧ t) ∨ f.
        let b2 = c.add(NodeKind::Base(1), vec![]);
        c.bases.push(Base {
            fact: c.bases[0].fact,
            next: b2,
            initial: false,
        });
        let not_b2 = c.add(NodeKind::Not, vec![b2]);
        let x = c.add(NodeKind::And, vec![b, b2]);
        let y = c.add(NodeKind::And, vec![not_b2, b]);
        let z = c.add(NodeKind::And, vec![b2, t]);
        let top = c.add(NodeKind::Or, vec![x, y, z, f]);
        c.terminal = top;
        let before = eval_all(&c);
        assert_eq!(factor(&mut c), 2);
        let after = eval_all(&c);
        assert_eq!(after[top.index()], before[top.index()]);
        // `b` now feeds one new `and` instead of two terms.
        let readers_of_b = c.nodes.iter().filter(|n| n.inputs.contains(&b)).count();
        assert_eq!(readers_of_b, 1);
        assert_eq!(c.nodes[top.index()].inputs.len(), 3);
    }

    #[test]
    fn terms_read_elsewhere_are_left_alone() {
        let (mut c, [b, t, _]) = tiny();
        let x = c.add(NodeKind::And, vec![b, t]);
        let y = c.add(NodeKind::And, vec![b, t, t]);
        let top = c.add(NodeKind::Or, vec![x, y]);
        c.terminal = top;
        c.bases[0].next = x; // x has a second reader
        assert_eq!(factor(&mut c), 0);
    }

    #[test]
    fn a_lone_shared_input_absorbs_its_group() {
        let (mut c, [b, t, _]) = tiny();
        let x = c.add(NodeKind::And, vec![b]);
        let y = c.add(NodeKind::And, vec![b, t]);
        let top = c.add(NodeKind::Or, vec![x, y]);
        c.terminal = top;
        let before = eval_all(&c);
        factor(&mut c);
        assert_eq!(c.nodes[top.index()].inputs, vec![b]);
        assert_eq!(eval_all(&c)[top.index()], before[top.index()]);
    }
}
