//! Circuit nodes: typed ids and kinds.

use std::fmt;

/// A node of a [`Circuit`](super::Circuit).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug)]
pub struct NodeId(u32);

impl NodeId {
    /// The node with the given index.
    pub fn new(index: usize) -> NodeId {
        NodeId(u32::try_from(index).expect("fewer than 2^32 nodes"))
    }

    /// The id as an index into dense tables.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "n{}", self.0)
    }
}

/// What a node computes.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum NodeKind {
    /// The value of base proposition `n` in the current state (`(true f)`).
    Base(u32),
    /// Whether move `n` is being played (`(does r m)`).
    Input(u32),
    /// A fixed value.
    Constant(bool),
    /// True when all its operands are (true when it has none).
    And,
    /// True when any operand is (false when it has none).
    Or,
    /// The negation of its single operand.
    Not,
}

impl NodeKind {
    /// A short lower-case name, for reports.
    pub fn name(self) -> &'static str {
        match self {
            NodeKind::Base(_) => "base",
            NodeKind::Input(_) => "input",
            NodeKind::Constant(_) => "constant",
            NodeKind::And => "and",
            NodeKind::Or => "or",
            NodeKind::Not => "not",
        }
    }
}

/// A node: its kind and its fan-in, the nodes it reads.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Node {
    /// What the node computes.
    pub kind: NodeKind,
    /// Its fan-in: the nodes it reads, its operands (empty for bases, inputs and
    /// constants; one for `Not`).
    pub fanin: Vec<NodeId>,
}
