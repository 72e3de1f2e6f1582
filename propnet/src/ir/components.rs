//! The strongly connected components of a circuit: what layering orders, and
//! what the optimizer passes that must not break a cycle look at.
//!
//! Tarjan's algorithm, iterative, straight over the nodes' operand lists: no
//! graph is built and the components are cut out of one list, not allocated
//! one by one. The optimizer asks for them every round, and a large net is
//! more than a million components of one node each (the full amazons: a
//! graph library's copy of the edges and a vector per component were a sixth
//! of its load).

use super::{Circuit, NodeId};

/// The strongly connected components of a circuit, dependencies first: a
/// component comes after every component holding an operand of one of its
/// nodes (transitions are not edges). The order of the nodes within a
/// component is unspecified.
///
/// ```
/// use ggpnet_propnet::ir::components;
/// use ggpnet_propnet::load;
///
/// // `lit` reads itself through `next`, which is no edge: every node is a
/// // component of its own, and a gate comes after its operands.
/// let rules = "(role r) (init off) (<= (legal r toggle) (true off)) (<= (legal r stay) (true on))
///     (<= (next on) (does r toggle)) (<= (next on) (true on)) (<= terminal (true on))
///     (<= (goal r 100) (true on)) (<= (goal r 0) (true off))";
/// let circuit = load(rules, &Default::default())?.circuit;
/// let found = components(&circuit);
/// assert_eq!(found.len(), circuit.nodes.len());
/// let mut position = vec![0; circuit.nodes.len()];
/// for (k, component) in found.iter().enumerate() {
///     position[component[0].index()] = k;
/// }
/// for (n, node) in circuit.nodes.iter().enumerate() {
///     assert!(node.fanin.iter().all(|operand| position[operand.index()] < position[n]));
/// }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default)]
pub struct Components {
    /// Every node once, component after component.
    nodes: Vec<NodeId>,
    /// Where each component ends in `nodes`.
    ends: Vec<u32>,
}

impl Components {
    /// How many components there are.
    pub fn len(&self) -> usize {
        self.ends.len()
    }

    /// Whether there are none (the circuit has no node).
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The components in order, each as its nodes.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[NodeId]> + '_ {
        (0..self.ends.len()).map(|k| {
            let start = k.checked_sub(1).map_or(0, |before| self.ends[before]);
            &self.nodes[start as usize..self.ends[k] as usize]
        })
    }

    /// Every node, components in order.
    pub fn nodes(&self) -> &[NodeId] {
        &self.nodes
    }

    /// Components given as lists of nodes, as they are: nothing is checked
    /// (a layering's `verify` checks them against its circuit).
    #[cfg(test)]
    pub(crate) fn from_lists(lists: impl IntoIterator<Item = Vec<NodeId>>) -> Components {
        let mut found = Components::default();
        for list in lists {
            found.nodes.extend(list);
            found
                .ends
                .push(u32::try_from(found.nodes.len()).expect("node ids fit in u32"));
        }
        found
    }
}

/// Not yet reached by the search.
const UNSEEN: u32 = u32::MAX;

/// The strongly connected components of `circuit`, dependencies first.
pub fn components(circuit: &Circuit) -> Components {
    let n = circuit.nodes.len();
    let mut search = Search {
        circuit,
        index: vec![UNSEEN; n],
        low: vec![0; n],
        on_stack: vec![false; n],
        stack: Vec::new(),
        calls: Vec::new(),
        next_index: 0,
        found: Components {
            nodes: Vec::with_capacity(n),
            ends: Vec::new(),
        },
    };
    for root in 0..n {
        if search.index[root] == UNSEEN {
            search.from(root);
        }
    }
    search.found
}

/// Tarjan's search, its recursion kept on `calls`.
struct Search<'c> {
    circuit: &'c Circuit,
    /// Per node, when the search reached it.
    index: Vec<u32>,
    /// Per node, the earliest node on the stack it reaches.
    low: Vec<u32>,
    on_stack: Vec<bool>,
    /// Nodes reached whose component is not closed yet.
    stack: Vec<u32>,
    /// The nodes being searched and the position of the next operand to follow.
    calls: Vec<(u32, u32)>,
    next_index: u32,
    found: Components,
}

impl Search<'_> {
    /// Searches from `root`, closing every component it reaches.
    fn from(&mut self, root: usize) {
        self.enter(root as u32);
        while let Some(&(v, at)) = self.calls.last() {
            let fanin = &self.circuit.nodes[v as usize].fanin;
            if let Some(operand) = fanin.get(at as usize) {
                self.calls.last_mut().expect("a call").1 += 1;
                let w = operand.index();
                if self.index[w] == UNSEEN {
                    self.enter(w as u32);
                } else if self.on_stack[w] {
                    self.low[v as usize] = self.low[v as usize].min(self.index[w]);
                }
                continue;
            }
            self.calls.pop();
            if let Some(&(caller, _)) = self.calls.last() {
                let (c, v) = (caller as usize, v as usize);
                self.low[c] = self.low[c].min(self.low[v]);
            }
            if self.low[v as usize] == self.index[v as usize] {
                self.close(v);
            }
        }
    }

    fn enter(&mut self, v: u32) {
        let i = v as usize;
        self.index[i] = self.next_index;
        self.low[i] = self.next_index;
        self.next_index += 1;
        self.on_stack[i] = true;
        self.stack.push(v);
        self.calls.push((v, 0));
    }

    /// Pops the component whose first node reached is `v`.
    fn close(&mut self, v: u32) {
        loop {
            let w = self.stack.pop().expect("v is on the stack");
            self.on_stack[w as usize] = false;
            self.found.nodes.push(NodeId::new(w as usize));
            if w == v {
                break;
            }
        }
        let end = u32::try_from(self.found.nodes.len()).expect("node ids fit in u32");
        self.found.ends.push(end);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::NodeKind;
    use rand::{Rng, SeedableRng};
    use rand_xoshiro::Xoshiro256PlusPlus;

    /// Whether `from` reaches `to` through operand edges.
    fn reaches(c: &Circuit, from: NodeId, to: NodeId) -> bool {
        let mut seen = vec![false; c.nodes.len()];
        let mut todo = vec![from];
        while let Some(v) = todo.pop() {
            if v == to {
                return true;
            }
            if !std::mem::replace(&mut seen[v.index()], true) {
                todo.extend(&c.nodes[v.index()].fanin);
            }
        }
        false
    }

    #[test]
    fn random_circuits_cut_into_mutually_reaching_components_dependencies_first() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        for _ in 0..200 {
            let mut c = Circuit::empty(Vec::new());
            let n = rng.gen_range(1..40);
            for _ in 0..n {
                c.add(NodeKind::Or, vec![]);
            }
            for _ in 0..rng.gen_range(0..3 * n) {
                let (a, b) = (rng.gen_range(0..n), rng.gen_range(0..n));
                c.nodes[a].fanin.push(NodeId::new(b));
            }
            let found = components(&c);
            let mut position = vec![usize::MAX; n];
            for (k, component) in found.iter().enumerate() {
                for id in component {
                    assert_eq!(position[id.index()], usize::MAX, "every node once");
                    position[id.index()] = k;
                }
            }
            assert!(position.iter().all(|&p| p != usize::MAX), "every node");
            for a in 0..n {
                for b in 0..n {
                    let (x, y) = (NodeId::new(a), NodeId::new(b));
                    let same = reaches(&c, x, y) && reaches(&c, y, x);
                    assert_eq!(same, position[a] == position[b], "{a} and {b}");
                    if c.nodes[a].fanin.contains(&y) {
                        assert!(position[b] <= position[a], "operands first");
                    }
                }
            }
        }
    }
}
