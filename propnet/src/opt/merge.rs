//! Merging: gates of the same kind over the same operands compute the same value;
//! keep one. Inputs of `and`/`or` are sorted and deduplicated first.

use crate::ir::components;
use crate::ir::{Circuit, Node, NodeId, NodeKind};
use hashbrown::HashTable;
use rustc_hash::FxHasher;
use std::hash::{Hash, Hasher};

/// Merges structurally equal gates; returns how many were merged away.
///
/// The gates seen are kept by id in a table hashed on their kind and
/// operands, compared in the circuit itself: no key is copied out of it.
pub fn merge(circuit: &mut Circuit) -> usize {
    let n = circuit.nodes.len();
    let mut map: Vec<NodeId> = (0..n).map(NodeId::new).collect();
    let mut seen: HashTable<NodeId> = HashTable::new();
    let mut merged = 0;
    // Dependencies first, so a gate sees its operands' representatives.
    for component in components(circuit).iter() {
        for &id in component {
            let node = &mut circuit.nodes[id.index()];
            for operand in &mut node.fanin {
                *operand = map[operand.index()];
            }
            if matches!(node.kind, NodeKind::And | NodeKind::Or) {
                node.fanin.sort_unstable();
                node.fanin.dedup();
            }
            if matches!(node.kind, NodeKind::Base(_) | NodeKind::Input(_)) {
                continue;
            }
            let nodes = &circuit.nodes;
            let node = &nodes[id.index()];
            let hash = structure_hash(node);
            let same = |other: &NodeId| {
                let other = &nodes[other.index()];
                other.kind == node.kind && other.fanin == node.fanin
            };
            match seen.find(hash, same) {
                Some(&representative) => {
                    map[id.index()] = representative;
                    merged += 1;
                }
                None => {
                    seen.insert_unique(hash, id, |other| structure_hash(&nodes[other.index()]));
                }
            }
        }
    }
    circuit.substitute(&map);
    merged
}

/// The hash of a gate's kind and operands.
fn structure_hash(node: &Node) -> u64 {
    let mut hasher = FxHasher::default();
    node.kind.hash(&mut hasher);
    node.fanin.hash(&mut hasher);
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::opt::tests::{eval_all, tiny};

    #[test]
    fn equal_gates_merge_transitively() {
        let (mut c, [b, t, _]) = tiny();
        let a1 = c.add(NodeKind::And, vec![b, t]);
        let a2 = c.add(NodeKind::And, vec![t, b, b]);
        let n1 = c.add(NodeKind::Not, vec![a1]);
        let n2 = c.add(NodeKind::Not, vec![a2]);
        let top = c.add(NodeKind::Or, vec![n1, n2]);
        c.terminal = top;
        let before = eval_all(&c);
        assert_eq!(merge(&mut c), 2);
        assert_eq!(c.nodes[top.index()].fanin, vec![n1]);
        assert_eq!(eval_all(&c)[top.index()], before[top.index()]);
    }
}
