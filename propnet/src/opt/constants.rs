//! Constant folding: gates whose value is fixed by constant operands become
//! constants, and constant operands that cannot change a gate are dropped.

use crate::ir::{Circuit, NodeKind, Readers};

/// Folds constants to a fixpoint; returns how many nodes became constants.
pub fn fold_constants(circuit: &mut Circuit) -> usize {
    let readers = Readers::of(circuit);
    let mut queue: Vec<usize> = (0..circuit.nodes.len())
        .filter(|&n| {
            matches!(
                circuit.nodes[n].kind,
                NodeKind::And | NodeKind::Or | NodeKind::Not
            )
        })
        .collect();
    let mut folded = 0;
    while let Some(n) = queue.pop() {
        let Some(value) = simplify(circuit, n) else {
            continue;
        };
        circuit.nodes[n].kind = NodeKind::Constant(value);
        circuit.nodes[n].fanin.clear();
        folded += 1;
        queue.extend(readers.of_node(n).iter().map(|&r| r as usize));
    }
    folded
}

fn constant(circuit: &Circuit, n: usize) -> Option<bool> {
    match circuit.nodes[n].kind {
        NodeKind::Constant(b) => Some(b),
        _ => None,
    }
}

/// Drops irrelevant constant operands of node `n`; returns its value if now fixed.
fn simplify(circuit: &mut Circuit, n: usize) -> Option<bool> {
    let kind = circuit.nodes[n].kind;
    let (absorbing, neutral) = match kind {
        NodeKind::And => (false, true),
        NodeKind::Or => (true, false),
        NodeKind::Not => return constant(circuit, circuit.nodes[n].fanin[0].index()).map(|b| !b),
        _ => return None,
    };
    let fanin = std::mem::take(&mut circuit.nodes[n].fanin);
    if fanin
        .iter()
        .any(|i| constant(circuit, i.index()) == Some(absorbing))
    {
        return Some(absorbing);
    }
    let kept: Vec<_> = fanin
        .into_iter()
        .filter(|i| constant(circuit, i.index()) != Some(neutral))
        .collect();
    if kept.is_empty() {
        return Some(neutral);
    }
    circuit.nodes[n].fanin = kept;
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::opt::tests::{eval_all, tiny};

    #[test]
    fn folds_through_and_or_not() {
        let (mut c, [b, t, f]) = tiny();
        let and = c.add(NodeKind::And, vec![b, t]); // = b
        let or = c.add(NodeKind::Or, vec![f, and]); // = b
        let dead_and = c.add(NodeKind::And, vec![b, f]); // = false
        let not = c.add(NodeKind::Not, vec![dead_and]); // = true
        let before = eval_all(&c);
        assert_eq!(fold_constants(&mut c), 2);
        assert_eq!(c.nodes[dead_and.index()].kind, NodeKind::Constant(false));
        assert_eq!(c.nodes[not.index()].kind, NodeKind::Constant(true));
        assert_eq!(c.nodes[and.index()].fanin, vec![b]);
        assert_eq!(c.nodes[or.index()].fanin, vec![and]);
        assert_eq!(eval_all(&c), before);
    }

    #[test]
    fn empty_gates_take_their_neutral_value() {
        let (mut c, _) = tiny();
        let or = c.add(NodeKind::Or, vec![]);
        let and = c.add(NodeKind::And, vec![]);
        fold_constants(&mut c);
        assert_eq!(c.nodes[or.index()].kind, NodeKind::Constant(false));
        assert_eq!(c.nodes[and.index()].kind, NodeKind::Constant(true));
    }
}
