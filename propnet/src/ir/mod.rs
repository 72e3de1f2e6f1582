//! The circuit IR: nodes plus the views that give them meaning (bases with
//! their transitions, inputs, legal/goal/terminal outputs).
//!
//! # Names
//!
//! Each of these words means one thing throughout this crate, in names and
//! in prose:
//!
//! - an *input* is an input proposition, `(does r m)`: [`Circuit::inputs`],
//!   [`NodeKind::Input`], the compiled net's move slots. Never a gate's operand.
//! - a node's *fan-in* ([`Node::fanin`], `CompiledNet::fanin`) is the nodes
//!   (slots) it reads, its *operands*; its *fan-out* (`CompiledNet::fanout`)
//!   is the nodes that read it, its *readers*. `fanins`/`fanouts` are every
//!   slot's, contiguous.
//! - an *output* is a node read from outside the circuit: a move's legality,
//!   a goal, terminal, a base's next value or a percept ([`Circuit::roots`],
//!   `export::cone::outputs`). The AIGER export keeps that format's own sense
//!   (next values are latch inputs there, not outputs). What a gate computes
//!   it writes to its own slot (`out` in native code), not to an output.

pub mod builder;
mod components;
pub mod node;
mod readers;
pub mod verify;

pub use builder::{build, BuildError};
pub use components::{components, Components};
pub use node::{Node, NodeId, NodeKind};
pub(crate) use readers::Readers;
pub use verify::{VerifyError, MAX_FANIN, MAX_NODES};

use ggpnet_grounder::{TermId, TermStore};
use ggpnet_kif::SymbolTable;
use rustc_hash::FxHashMap;
use std::sync::Arc;

/// A ground game term and the table to print it: shared by every stage.
#[derive(Clone, Debug)]
pub struct Vocabulary {
    /// Symbols of the game.
    pub symbols: SymbolTable,
    /// Ground terms of the game.
    pub terms: ggpnet_grounder::TermStore,
}

impl Vocabulary {
    /// The canonical KIF text of a term.
    pub fn kif(&self, term: TermId) -> String {
        self.terms.to_kif(term, &self.symbols)
    }
}

/// A base proposition: one fact of the state.
#[derive(Clone, Debug)]
pub struct Base {
    /// The fact `f` of `(true f)`.
    pub fact: TermId,
    /// The node giving the fact's value in the next state (`(next f)`).
    pub next: NodeId,
    /// Whether the fact holds initially.
    pub initial: bool,
}

/// An input proposition: one move of one role.
#[derive(Clone, Debug)]
pub struct Input {
    /// Index of the role in [`Circuit::roles`].
    pub role: usize,
    /// The move `m` of `(does r m)`.
    pub action: TermId,
    /// The node telling whether the move is legal (`(legal r m)`).
    pub legal: NodeId,
}

/// A goal output: `(goal r value)`.
#[derive(Clone, Debug)]
pub struct Goal {
    /// Index of the role.
    pub role: usize,
    /// The goal value.
    pub value: i64,
    /// The node telling whether the goal holds.
    pub node: NodeId,
}

/// A percept output of GDL-II: `(sees r p)`, a function of the state and the
/// joint move, like a next value.
#[derive(Clone, Debug)]
pub struct Percept {
    /// Index of the role that sees it.
    pub role: usize,
    /// The percept `p` of `(sees r p)`.
    pub percept: TermId,
    /// The node telling whether the role sees it.
    pub node: NodeId,
}

/// A propositional network.
#[derive(Clone, Debug)]
pub struct Circuit {
    /// The nodes; bases come first, then inputs, in the order of `bases` and `inputs`.
    pub nodes: Vec<Node>,
    /// Roles in the order of the `role` facts.
    pub roles: Vec<TermId>,
    /// State facts, with their transitions.
    pub bases: Vec<Base>,
    /// Moves, with their legality.
    pub inputs: Vec<Input>,
    /// Goal outputs.
    pub goals: Vec<Goal>,
    /// The terminal output.
    pub terminal: NodeId,
    /// Percept outputs (GDL-II), by role then percept text; empty in GDL.
    pub percepts: Vec<Percept>,
    /// The sentence each node stands for, where it stands for one (for reports and export).
    pub labels: FxHashMap<NodeId, TermId>,
    /// Symbols and terms, to print facts and moves.
    pub vocabulary: Arc<Vocabulary>,
}

impl Circuit {
    /// A circuit of `roles` with no nodes yet, and an empty vocabulary.
    pub(crate) fn empty(roles: Vec<TermId>) -> Circuit {
        Circuit {
            nodes: Vec::new(),
            roles,
            bases: Vec::new(),
            inputs: Vec::new(),
            goals: Vec::new(),
            terminal: NodeId::new(0),
            percepts: Vec::new(),
            labels: FxHashMap::default(),
            vocabulary: Arc::new(Vocabulary {
                symbols: SymbolTable::default(),
                terms: TermStore::new(),
            }),
        }
    }

    /// Every output: each base's next value, each move's legality, each goal,
    /// terminal and each percept (a node once per time it is one).
    pub fn roots(&self) -> Vec<NodeId> {
        let mut roots: Vec<NodeId> = self.bases.iter().map(|b| b.next).collect();
        roots.extend(self.inputs.iter().map(|i| i.legal));
        roots.extend(self.goals.iter().map(|g| g.node));
        roots.push(self.terminal);
        roots.extend(self.percepts.iter().map(|p| p.node));
        roots
    }

    /// Per node, how many times it is read: in a gate's fan-in (once per
    /// occurrence) or as an output ([`Circuit::roots`]).
    pub fn reader_counts(&self) -> Vec<u32> {
        let mut readers = vec![0u32; self.nodes.len()];
        for operand in self.nodes.iter().flat_map(|node| &node.fanin) {
            readers[operand.index()] += 1;
        }
        for root in self.roots() {
            readers[root.index()] += 1;
        }
        readers
    }

    /// Replaces every reference to a node by `map[node]`, in nodes and views.
    pub fn substitute(&mut self, map: &[NodeId]) {
        for node in &mut self.nodes {
            for operand in &mut node.fanin {
                *operand = map[operand.index()];
            }
        }
        for base in &mut self.bases {
            base.next = map[base.next.index()];
        }
        for input in &mut self.inputs {
            input.legal = map[input.legal.index()];
        }
        for goal in &mut self.goals {
            goal.node = map[goal.node.index()];
        }
        self.terminal = map[self.terminal.index()];
        for percept in &mut self.percepts {
            percept.node = map[percept.node.index()];
        }
        // A node that stood for a sentence passes its label to its replacement.
        let moved: Vec<(NodeId, TermId)> = self
            .labels
            .iter()
            .filter(|(node, _)| map[node.index()] != **node)
            .map(|(node, &term)| (map[node.index()], term))
            .collect();
        for (node, term) in moved {
            self.labels.entry(node).or_insert(term);
        }
    }

    /// Number of nodes of each kind, by [`NodeKind::name`].
    pub fn counts(&self) -> std::collections::BTreeMap<&'static str, usize> {
        let mut counts = std::collections::BTreeMap::new();
        for node in &self.nodes {
            *counts.entry(node.kind.name()).or_insert(0) += 1;
        }
        counts
    }

    /// The node of each base and of each input, in the order of `bases` and `inputs`.
    pub fn interface_nodes(&self) -> (Vec<NodeId>, Vec<NodeId>) {
        let mut bases = vec![NodeId::new(0); self.bases.len()];
        let mut inputs = vec![NodeId::new(0); self.inputs.len()];
        for (i, node) in self.nodes.iter().enumerate() {
            match node.kind {
                NodeKind::Base(b) => bases[b as usize] = NodeId::new(i),
                NodeKind::Input(m) => inputs[m as usize] = NodeId::new(i),
                _ => {}
            }
        }
        (bases, inputs)
    }

    /// Adds a node reading `fanin` and returns its id.
    pub fn add(&mut self, kind: NodeKind, fanin: Vec<NodeId>) -> NodeId {
        self.nodes.push(Node { kind, fanin });
        NodeId::new(self.nodes.len() - 1)
    }
}
