//! Layering: strongly connected components (petgraph), a topological order of
//! them, and level numbers. Cycles are legal in a propnet (recursion inside one
//! state) as long as no negation lies on one; each cycle is evaluated to its
//! least fixpoint.

use crate::circuit::{Circuit, NodeId, NodeKind};
use petgraph::graph::{DiGraph, NodeIndex};
use std::fmt;

/// A cycle through a negation: the game is not stratified once ground.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct CycleError {
    /// Sentences on the cycle, in canonical KIF.
    pub sentences: Vec<String>,
}

impl fmt::Display for CycleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "error: unstratified negation: a cycle through 'not' links {}",
            self.sentences.join(", ")
        )
    }
}

impl std::error::Error for CycleError {}

/// The strongly connected components of the circuit (edges from a node to the
/// nodes reading it; transitions are not edges), dependencies first.
pub fn components(circuit: &Circuit) -> Vec<Vec<NodeId>> {
    let mut graph: DiGraph<(), ()> = DiGraph::with_capacity(circuit.nodes.len(), 0);
    for _ in &circuit.nodes {
        graph.add_node(());
    }
    for (n, node) in circuit.nodes.iter().enumerate() {
        for input in &node.inputs {
            graph.add_edge(NodeIndex::new(input.index()), NodeIndex::new(n), ());
        }
    }
    let mut sccs = petgraph::algo::kosaraju_scc(&graph);
    sccs.reverse();
    sccs.into_iter()
        .map(|scc| scc.into_iter().map(|n| NodeId::new(n.index())).collect())
        .collect()
}

/// Nodes in evaluation order, with the cyclic components marked.
#[derive(Clone, Debug)]
pub struct Layering {
    /// Components in topological order; a component of one node without a self-loop is acyclic.
    pub components: Vec<Vec<NodeId>>,
    /// Level of each node: 0 for bases, inputs and constants, else one more than its deepest input
    /// outside its own component.
    pub level: Vec<u32>,
    /// Number of cyclic components.
    pub cycles: usize,
    /// Number of distinct levels.
    pub layers: usize,
}

fn is_cyclic(circuit: &Circuit, component: &[NodeId]) -> bool {
    component.len() > 1 || circuit.nodes[component[0].index()].inputs.contains(&component[0])
}

/// Layers `circuit`, refusing cycles through negation.
pub fn layer(circuit: &Circuit) -> Result<Layering, CycleError> {
    let components = components(circuit);
    let mut level = vec![0u32; circuit.nodes.len()];
    let mut cycles = 0;
    let mut component_of = vec![0usize; circuit.nodes.len()];
    for (c, component) in components.iter().enumerate() {
        for n in component {
            component_of[n.index()] = c;
        }
    }
    for (c, component) in components.iter().enumerate() {
        if is_cyclic(circuit, component) {
            cycles += 1;
            if component
                .iter()
                .any(|n| circuit.nodes[n.index()].kind == NodeKind::Not)
            {
                let vocabulary = &circuit.vocabulary;
                let mut sentences: Vec<String> = component
                    .iter()
                    .filter_map(|n| circuit.labels.get(n).map(|&t| vocabulary.kif(t)))
                    .collect();
                sentences.sort();
                sentences.truncate(8);
                return Err(CycleError { sentences });
            }
        }
        let depth = component
            .iter()
            .flat_map(|n| circuit.nodes[n.index()].inputs.iter())
            .filter(|i| component_of[i.index()] != c)
            .map(|i| level[i.index()] + 1)
            .max()
            .unwrap_or(0);
        for n in component {
            level[n.index()] = depth;
        }
    }
    let layers = level.iter().max().map_or(0, |&m| m as usize + 1);
    Ok(Layering {
        components,
        level,
        cycles,
        layers,
    })
}
