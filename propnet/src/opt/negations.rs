//! Pulling negations out (De Morgan): in an `and` or `or`, the negated operands
//! that nothing else reads are gathered under one negation of the dual gate:
//! `¬a ∧ ¬b ∧ c` becomes `¬(a ∨ b) ∧ c`. "A cell is empty", grounded as
//! `¬red ∧ ¬black`, becomes `¬(red ∨ black)`, and a rule that reads "not
//! empty" then reads the `or` itself once double negations collapse. Exact:
//! every node keeps its value.

use crate::ir::{Circuit, NodeId, NodeKind};

/// Gathers the single-reader negated operands of each `and`/`or` under one
/// negation where that saves gates (at least three such operands, or two when
/// they are all its operands: the gate then collapses into the negation); returns
/// how many gates were rewritten.
pub fn pull_negations(circuit: &mut Circuit) -> usize {
    let mut readers = circuit.reader_counts();
    let mut rewritten = 0;
    for gate in 0..circuit.nodes.len() {
        let dual = match circuit.nodes[gate].kind {
            NodeKind::And => NodeKind::Or,
            NodeKind::Or => NodeKind::And,
            _ => continue,
        };
        let fanin = &circuit.nodes[gate].fanin;
        let (negated, kept): (Vec<NodeId>, Vec<NodeId>) = fanin
            .iter()
            .partition(|i| circuit.nodes[i.index()].kind == NodeKind::Not && readers[i.index()] == 1);
        let saved = negated.len() as i64 - 2 + i64::from(kept.is_empty());
        if negated.len() < 2 || saved <= 0 {
            continue;
        }
        let inner: Vec<NodeId> = negated
            .iter()
            .map(|n| circuit.nodes[n.index()].fanin[0])
            .collect();
        let joined = circuit.add(dual, inner);
        let negation = circuit.add(NodeKind::Not, vec![joined]);
        readers.extend([1, 1]);
        for n in negated {
            readers[n.index()] = 0;
        }
        let mut fanin = kept;
        fanin.push(negation);
        circuit.nodes[gate].fanin = fanin;
        rewritten += 1;
    }
    rewritten
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::opt::collapse::collapse;
    use crate::opt::dead::remove_dead;
    use crate::opt::tests::{eval_all, tiny};

    #[test]
    fn negated_inputs_are_gathered_under_one_negation() {
        let (mut c, [b, t, f]) = tiny();
        let (nb, nt, nf) = (
            c.add(NodeKind::Not, vec![b]),
            c.add(NodeKind::Not, vec![t]),
            c.add(NodeKind::Not, vec![f]),
        );
        // empty = ¬b ∧ ¬t; full = ¬empty; some = ¬b' ∨ ¬t' ∨ ¬f' ∨ b.
        let empty = c.add(NodeKind::And, vec![nb, nt]);
        let full = c.add(NodeKind::Not, vec![empty]);
        let (nb2, nt2) = (c.add(NodeKind::Not, vec![b]), c.add(NodeKind::Not, vec![t]));
        let some = c.add(NodeKind::Or, vec![nb2, nt2, nf, b]);
        // Two negations among other operands: left alone (it would save nothing).
        let (nb3, nf3) = (c.add(NodeKind::Not, vec![b]), c.add(NodeKind::Not, vec![f]));
        let mixed = c.add(NodeKind::And, vec![nb3, nf3, t]);
        let top = c.add(NodeKind::Or, vec![full, some, mixed]);
        c.terminal = top;
        let before = eval_all(&c);
        assert_eq!(pull_negations(&mut c), 2);
        assert_eq!(c.nodes[mixed.index()].fanin, vec![nb3, nf3, t]);
        let after = eval_all(&c);
        for node in [empty, full, some, mixed, top] {
            assert_eq!(after[node.index()], before[node.index()], "node {node:?}");
        }
        let gates_before = c.nodes.len();
        collapse(&mut c);
        remove_dead(&mut c);
        // `empty` collapsed into its negation and `full` into the `or`; the
        // five gathered negations are gone, two new ones take their place.
        assert!(c.nodes.len() < gates_before - 4, "{} nodes", c.nodes.len());
        assert_eq!(eval_all(&c)[c.terminal.index()], before[top.index()]);
    }
}
