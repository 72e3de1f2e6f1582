//! Dead-node removal: drop every gate that reaches no output (next values included),
//! then renumber the rest densely. Bases and inputs always stay: they are the
//! interface of the state machine.

use crate::ir::{Circuit, NodeId, NodeKind};

/// Removes unreachable gates; returns how many were removed.
pub fn remove_dead(circuit: &mut Circuit) -> usize {
    let n = circuit.nodes.len();
    let mut live = vec![false; n];
    let mut stack: Vec<NodeId> = circuit.roots();
    stack.extend(
        (0..n)
            .filter(|&i| matches!(circuit.nodes[i].kind, NodeKind::Base(_) | NodeKind::Input(_)))
            .map(NodeId::new),
    );
    while let Some(id) = stack.pop() {
        if !std::mem::replace(&mut live[id.index()], true) {
            stack.extend(circuit.nodes[id.index()].fanin.iter().copied());
        }
    }
    let mut map = vec![NodeId::new(0); n];
    let mut kept = 0;
    for i in 0..n {
        if live[i] {
            map[i] = NodeId::new(kept);
            kept += 1;
        }
    }
    // Renumbering is no replacement: the labels move with their nodes below,
    // not as `substitute` passes a replaced node's label on.
    let labels = std::mem::take(&mut circuit.labels);
    circuit.substitute(&map);
    let mut index = 0;
    circuit.nodes.retain(|_| {
        index += 1;
        live[index - 1]
    });
    circuit.labels = labels
        .into_iter()
        .filter(|(id, _)| live[id.index()])
        .map(|(id, term)| (map[id.index()], term))
        .collect();
    n - kept
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::opt::tests::tiny;

    #[test]
    fn unreachable_gates_go_interface_stays() {
        let (mut c, [b, ..]) = tiny();
        let unused = c.add(NodeKind::Not, vec![b]);
        let used = c.add(NodeKind::Not, vec![b]);
        c.terminal = used;
        let before = c.nodes.len();
        // the two constants and the unused gate go; the base stays
        assert_eq!(remove_dead(&mut c), 3);
        assert_eq!(c.nodes.len(), before - 3);
        assert_eq!(c.nodes[c.terminal.index()].kind, NodeKind::Not);
        assert!(matches!(c.nodes[0].kind, NodeKind::Base(0)));
        let _ = unused;
    }

    #[test]
    fn labels_stay_with_their_nodes() {
        let (mut c, [b, ..]) = tiny();
        let label = c.bases[0].fact;
        let _unused = c.add(NodeKind::Not, vec![b]);
        let used = c.add(NodeKind::Not, vec![b]);
        c.labels.insert(used, label);
        c.terminal = used;
        remove_dead(&mut c);
        assert_eq!(c.labels.len(), 1, "one label: {:?}", c.labels);
        assert_eq!(
            c.labels.get(&c.terminal),
            Some(&label),
            "the label moved with its node"
        );
    }
}
