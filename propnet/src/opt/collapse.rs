//! Collapsing: a single-operand `and`/`or` is its operand, and `not (not x)` is `x`.

use crate::ir::{Circuit, NodeId, NodeKind};

/// Redirects every reader of a collapsible gate to what the gate computes;
/// returns how many gates were bypassed.
pub fn collapse(circuit: &mut Circuit) -> usize {
    let n = circuit.nodes.len();
    let mut map: Vec<NodeId> = (0..n).map(NodeId::new).collect();
    let mut bypassed = 0;
    for (i, node) in circuit.nodes.iter().enumerate() {
        let target = match node.kind {
            NodeKind::And | NodeKind::Or if node.fanin.len() == 1 => node.fanin[0],
            NodeKind::Not => {
                let inner = &circuit.nodes[node.fanin[0].index()];
                if inner.kind == NodeKind::Not {
                    inner.fanin[0]
                } else {
                    continue;
                }
            }
            _ => continue,
        };
        map[i] = target;
        bypassed += 1;
    }
    // Follow chains to their end. A chain that returns to itself is a cycle of
    // single-operand gates with nothing feeding it: its least fixpoint is false.
    const NEW: u8 = 0;
    const ON_PATH: u8 = 1;
    const DONE: u8 = 2;
    let mut state = vec![NEW; n];
    let mut resolved = map.clone();
    for start in 0..n {
        let mut path = Vec::new();
        let mut at = start;
        while state[at] == NEW && map[at].index() != at {
            state[at] = ON_PATH;
            path.push(at);
            at = map[at].index();
        }
        let end = match state[at] {
            ON_PATH => {
                circuit.nodes[at].kind = NodeKind::Constant(false);
                circuit.nodes[at].fanin.clear();
                at
            }
            DONE => resolved[at].index(),
            _ => at,
        };
        state[at] = DONE;
        resolved[at] = NodeId::new(end);
        for p in path {
            state[p] = DONE;
            resolved[p] = NodeId::new(end);
        }
    }
    circuit.substitute(&resolved);
    bypassed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::opt::tests::{eval_all, tiny};

    #[test]
    fn single_inputs_and_double_negations_disappear() {
        let (mut c, [b, ..]) = tiny();
        let or1 = c.add(NodeKind::Or, vec![b]);
        let and1 = c.add(NodeKind::And, vec![or1]);
        let not1 = c.add(NodeKind::Not, vec![and1]);
        let not2 = c.add(NodeKind::Not, vec![not1]);
        let top = c.add(NodeKind::Or, vec![not2, not1]);
        c.terminal = top;
        let before = eval_all(&c);
        assert_eq!(collapse(&mut c), 3);
        assert_eq!(c.nodes[top.index()].fanin, vec![b, not1]);
        assert_eq!(c.nodes[not1.index()].fanin, vec![b]);
        assert_eq!(eval_all(&c)[top.index()], before[top.index()]);
    }

    #[test]
    fn self_supporting_cycle_becomes_false() {
        let (mut c, _) = tiny();
        let a = c.add(NodeKind::Or, vec![]);
        let b2 = c.add(NodeKind::Or, vec![a]);
        c.nodes[a.index()].fanin.push(b2);
        c.terminal = b2;
        collapse(&mut c);
        assert_eq!(c.nodes[c.terminal.index()].kind, NodeKind::Constant(false));
    }
}
