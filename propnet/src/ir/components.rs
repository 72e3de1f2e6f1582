//! The strongly connected components of a circuit (petgraph): what layering
//! orders, and what the optimizer passes that must not break a cycle look at.

use super::{Circuit, NodeId};
use petgraph::graph::{DiGraph, NodeIndex};

/// The strongly connected components of the circuit (edges from a node to the
/// nodes reading it; transitions are not edges), dependencies first.
pub fn components(circuit: &Circuit) -> Vec<Vec<NodeId>> {
    let mut graph: DiGraph<(), ()> = DiGraph::with_capacity(circuit.nodes.len(), 0);
    for _ in &circuit.nodes {
        graph.add_node(());
    }
    for (n, node) in circuit.nodes.iter().enumerate() {
        for operand in &node.fanin {
            graph.add_edge(NodeIndex::new(operand.index()), NodeIndex::new(n), ());
        }
    }
    let mut sccs = petgraph::algo::kosaraju_scc(&graph);
    sccs.reverse();
    sccs.into_iter()
        .map(|scc| scc.into_iter().map(|n| NodeId::new(n.index())).collect())
        .collect()
}
