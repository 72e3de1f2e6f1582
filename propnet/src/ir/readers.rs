//! Who reads each node: the fan-out the optimizer's propagating passes walk,
//! built in one list by two passes over the operand lists (a vector per node
//! made a large net's passes spend their time in the allocator).

use super::Circuit;

/// Per node, the nodes reading it, in increasing order, once per operand
/// position (a gate reading a node twice is listed twice).
pub(crate) struct Readers {
    /// Where each node's readers start in `readers`; one more entry than nodes.
    starts: Vec<u32>,
    readers: Vec<u32>,
}

impl Readers {
    /// The readers of every node of `circuit`.
    pub(crate) fn of(circuit: &Circuit) -> Readers {
        let n = circuit.nodes.len();
        let mut starts = vec![0u32; n + 1];
        for node in &circuit.nodes {
            for operand in &node.fanin {
                starts[operand.index() + 1] += 1;
            }
        }
        for i in 0..n {
            starts[i + 1] += starts[i];
        }
        let mut next = starts.clone();
        let mut readers = vec![0u32; starts[n] as usize];
        for (r, node) in circuit.nodes.iter().enumerate() {
            for operand in &node.fanin {
                let at = &mut next[operand.index()];
                readers[*at as usize] = r as u32;
                *at += 1;
            }
        }
        Readers { starts, readers }
    }

    /// The nodes reading node `n`.
    pub(crate) fn of_node(&self, n: usize) -> &[u32] {
        &self.readers[self.starts[n] as usize..self.starts[n + 1] as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::NodeKind;

    #[test]
    fn every_operand_position_is_listed_at_its_node_in_reader_order() {
        let mut c = Circuit::empty(Vec::new());
        let a = c.add(NodeKind::Constant(true), vec![]);
        let b = c.add(NodeKind::Constant(false), vec![]);
        let x = c.add(NodeKind::And, vec![a, b, a]);
        let y = c.add(NodeKind::Not, vec![b]);
        let z = c.add(NodeKind::Or, vec![x, a]);
        let readers = Readers::of(&c);
        let ids = |s: &[u32]| s.iter().map(|&r| r as usize).collect::<Vec<_>>();
        assert_eq!(ids(readers.of_node(a.index())), [x.index(), x.index(), z.index()]);
        assert_eq!(ids(readers.of_node(b.index())), [x.index(), y.index()]);
        assert_eq!(ids(readers.of_node(x.index())), [z.index()]);
        assert!(readers.of_node(y.index()).is_empty() && readers.of_node(z.index()).is_empty());
    }
}
