//! The invariants every evaluator relies on, checked in one place:
//! [`Circuit::verify`] runs after the builder, after each optimizer pass in
//! debug builds and tests, on every circuit read from JSON, and before a
//! circuit is compiled ([`crate::layout::CompiledNet::new`]).

use super::{Circuit, NodeId, NodeKind, Readers};
use ggpnet_grounder::TermId;
use std::fmt;

/// The most nodes a circuit may have: the differential evaluator keeps slot
/// numbers in 30 bits of its fan-out records.
pub const MAX_NODES: usize = (1 << 30) - 1;

/// The most nodes a gate may read: the differential evaluator counts a gate's
/// true operands in 27 signed bits.
pub const MAX_FANIN: usize = (1 << 26) - 1;

/// A circuit that breaks an invariant the evaluators rely on: where, and why.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct VerifyError {
    /// The node, base, input, goal or output at fault (`node 12 (or, (p 3))`,
    /// `base 2`, `terminal (node 40)`, ...).
    pub place: String,
    /// What is wrong there.
    pub reason: String,
}

impl fmt::Display for VerifyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "error: {}: {}", self.place, self.reason)
    }
}

impl std::error::Error for VerifyError {}

fn refuse<T>(place: impl Into<String>, reason: impl Into<String>) -> Result<T, VerifyError> {
    Err(VerifyError {
        place: place.into(),
        reason: reason.into(),
    })
}

/// How a node is named in errors: its number, kind and sentence if it has one.
fn describe(circuit: &Circuit, id: NodeId) -> String {
    let kind = match circuit.nodes[id.index()].kind {
        NodeKind::Base(b) => format!("base {b}"),
        NodeKind::Input(m) => format!("input {m}"),
        NodeKind::Constant(value) => format!("constant {value}"),
        other => other.name().to_owned(),
    };
    match circuit.labels.get(&id) {
        Some(&term) => format!("node {} ({kind}, {})", id.index(), circuit.vocabulary.kif(term)),
        None => format!("node {} ({kind})", id.index()),
    }
}

/// What a node of kind `kind` must read: the exact number of nodes, or at
/// most [`MAX_FANIN`] (`None`).
fn fan_in(kind: NodeKind) -> Option<usize> {
    match kind {
        NodeKind::Base(_) | NodeKind::Input(_) | NodeKind::Constant(_) => Some(0),
        NodeKind::Not => Some(1),
        NodeKind::And | NodeKind::Or => None,
    }
}

/// The kind's name after its indefinite article: "a not", "an and".
fn with_article(kind: NodeKind) -> String {
    let name = kind.name();
    let article = if name.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {name}")
}

impl Circuit {
    /// Checks every invariant the evaluators rely on, and names the first
    /// node (or base, input, goal, output) that breaks one:
    ///
    /// - at most [`MAX_NODES`] nodes, every node read, every next value,
    ///   legality, goal, terminal and label a node that exists;
    /// - nodes `0..b` are the bases `0..b` in order, the next `m` the inputs
    ///   in order, and no other node is a base or an input;
    /// - bases, inputs and constants read nothing, a `not` reads one node, an
    ///   `and` or `or` at most [`MAX_FANIN`];
    /// - every input and goal belongs to a role; every role, fact, move and
    ///   sentence is a term of the vocabulary; no two roles, no two bases' facts
    ///   and no two moves of one role are the same;
    /// - no legality, goal or terminal depends on an input (only next values
    ///   may): the evaluators compute them before the moves are known.
    ///
    /// Cycles through a negation are left to [`crate::layout::layer()`], which
    /// refuses them with the sentences on the cycle.
    pub fn verify(&self) -> Result<(), VerifyError> {
        let n = self.nodes.len();
        if n > MAX_NODES {
            return refuse(
                "circuit",
                format!("{n} nodes, more than the {MAX_NODES} the evaluators address"),
            );
        }
        self.verify_terms()?;
        self.verify_nodes()?;
        self.verify_interface()?;
        self.verify_state_outputs()
    }

    /// Roles, facts, moves and sentences are terms of the vocabulary, and
    /// none is listed twice where names must be unique.
    fn verify_terms(&self) -> Result<(), VerifyError> {
        let terms = self.vocabulary.terms.len();
        let known = |term: TermId| term.index() < terms;
        if let Some(r) = self.roles.iter().position(|&t| !known(t)) {
            return refuse(
                format!("role {r}"),
                format!("its name is no term ({terms} terms)"),
            );
        }
        if let Some(b) = self.bases.iter().position(|base| !known(base.fact)) {
            return refuse(
                format!("base {b}"),
                format!("its fact is no term ({terms} terms)"),
            );
        }
        if let Some(m) = self.inputs.iter().position(|input| !known(input.action)) {
            return refuse(
                format!("input {m}"),
                format!("its move is no term ({terms} terms)"),
            );
        }
        if let Some((id, _)) = self.labels.iter().find(|(_, &term)| !known(term)) {
            return refuse(
                format!("node {}", id.index()),
                format!("its sentence is no term ({terms} terms)"),
            );
        }
        if let Some((id, _)) = self.labels.iter().find(|(id, _)| id.index() >= self.nodes.len()) {
            return refuse(
                format!("node {}", id.index()),
                format!("has a sentence but does not exist ({} nodes)", self.nodes.len()),
            );
        }
        let v = &self.vocabulary;
        let mut first = rustc_hash::FxHashMap::default();
        for (r, &role) in self.roles.iter().enumerate() {
            if let Some(other) = first.insert(role, r) {
                return refuse(
                    format!("role {r}"),
                    format!("{} is role {other} too", v.kif(role)),
                );
            }
        }
        first.clear();
        for (b, base) in self.bases.iter().enumerate() {
            if let Some(other) = first.insert(base.fact, b) {
                return refuse(
                    format!("base {b}"),
                    format!("its fact {} is base {other}'s too", v.kif(base.fact)),
                );
            }
        }
        let mut first_move = rustc_hash::FxHashMap::default();
        for (m, input) in self.inputs.iter().enumerate() {
            if let Some(other) = first_move.insert((input.role, input.action), m) {
                return refuse(
                    format!("input {m}"),
                    format!(
                        "its move {} of role {} is input {other} too",
                        v.kif(input.action),
                        input.role
                    ),
                );
            }
        }
        Ok(())
    }

    /// Node kinds, positions and fan-ins.
    fn verify_nodes(&self) -> Result<(), VerifyError> {
        let n = self.nodes.len();
        let (bases, inputs) = (self.bases.len(), self.inputs.len());
        if bases + inputs > n {
            return refuse(
                "circuit",
                format!(
                    "{bases} bases and {inputs} inputs take the first nodes, but there are only {n} nodes"
                ),
            );
        }
        for (i, node) in self.nodes.iter().enumerate() {
            let expected = if i < bases {
                Some(NodeKind::Base(i as u32))
            } else if i < bases + inputs {
                Some(NodeKind::Input((i - bases) as u32))
            } else {
                None
            };
            let misplaced = match (expected, node.kind) {
                (Some(kind), found) => kind != found,
                (None, NodeKind::Base(_) | NodeKind::Input(_)) => true,
                (None, _) => false,
            };
            if misplaced {
                let wanted = match expected {
                    Some(NodeKind::Base(b)) => format!("base {b}"),
                    Some(NodeKind::Input(m)) => format!("input {m}"),
                    _ => "a gate or constant".to_owned(),
                };
                return refuse(
                    describe(self, NodeId::new(i)),
                    format!(
                        "should be {wanted}: nodes 0 to {} are the {bases} bases then the {inputs} inputs, in order",
                        (bases + inputs).max(1) - 1
                    ),
                );
            }
            let count = node.fanin.len();
            let arity_ok = match fan_in(node.kind) {
                Some(exact) => count == exact,
                None => count <= MAX_FANIN,
            };
            if !arity_ok {
                let wanted = match fan_in(node.kind) {
                    Some(0) => "none".to_owned(),
                    Some(exact) => format!("exactly {exact}"),
                    None => format!("at most {MAX_FANIN}"),
                };
                return refuse(
                    describe(self, NodeId::new(i)),
                    format!(
                        "reads {count} node(s); {} reads {wanted}",
                        with_article(node.kind)
                    ),
                );
            }
            if let Some(missing) = node.fanin.iter().find(|id| id.index() >= n) {
                return refuse(
                    describe(self, NodeId::new(i)),
                    format!("reads node {}, which does not exist ({n} nodes)", missing.index()),
                );
            }
        }
        Ok(())
    }

    /// Next values, legality, goals and terminal are nodes; inputs and goals
    /// belong to roles.
    fn verify_interface(&self) -> Result<(), VerifyError> {
        let n = self.nodes.len();
        let roles = self.roles.len();
        let exists = |id: NodeId, place: String, what: &str| {
            if id.index() < n {
                Ok(())
            } else {
                refuse(
                    place,
                    format!(
                        "its {what} is node {}, which does not exist ({n} nodes)",
                        id.index()
                    ),
                )
            }
        };
        for (b, base) in self.bases.iter().enumerate() {
            exists(base.next, format!("base {b}"), "next value")?;
        }
        let role_exists = |role: usize, place: String| match role < roles {
            true => Ok(()),
            false => refuse(
                place,
                format!("belongs to role {role}, which does not exist ({roles} roles)"),
            ),
        };
        for (m, input) in self.inputs.iter().enumerate() {
            role_exists(input.role, format!("input {m}"))?;
            exists(input.legal, format!("input {m}"), "legality")?;
        }
        for (g, goal) in self.goals.iter().enumerate() {
            role_exists(goal.role, format!("goal {g}"))?;
            exists(goal.node, format!("goal {g}"), "node")?;
        }
        for (p, percept) in self.percepts.iter().enumerate() {
            role_exists(percept.role, format!("percept {p}"))?;
            exists(percept.node, format!("percept {p}"), "node")?;
        }
        exists(self.terminal, "terminal".to_owned(), "node")
    }

    /// No legality, goal or terminal depends on an input: the inputs' readers,
    /// and theirs, and so on, are found with a work list (no recursion), each
    /// marked with the first input that reaches it.
    fn verify_state_outputs(&self) -> Result<(), VerifyError> {
        let n = self.nodes.len();
        const NONE: u32 = u32::MAX;
        let readers = Readers::of(self);
        let first_input = self.bases.len();
        let mut moved_by = vec![NONE; n];
        let mut work: Vec<u32> = Vec::new();
        for m in 0..self.inputs.len() {
            moved_by[first_input + m] = m as u32;
            work.push((first_input + m) as u32);
        }
        while let Some(node) = work.pop() {
            let by = moved_by[node as usize];
            for &reader in readers.of_node(node as usize) {
                if moved_by[reader as usize] == NONE {
                    moved_by[reader as usize] = by;
                    work.push(reader);
                }
            }
        }
        let check = |id: NodeId, place: String| {
            let by = moved_by[id.index()];
            if by == NONE {
                return Ok(());
            }
            let input = &self.inputs[by as usize];
            let v = &self.vocabulary;
            let role = self.roles[input.role];
            let how = if id.index() == first_input + by as usize {
                "is".to_owned()
            } else {
                format!("{} depends on", describe(self, id))
            };
            refuse(
                place,
                format!(
                    "{how} the move input {by} (does {} {}); legality, goals and terminal may depend on the state only",
                    v.kif(role),
                    v.kif(input.action)
                ),
            )
        };
        for (m, input) in self.inputs.iter().enumerate() {
            check(input.legal, format!("legality of input {m}"))?;
        }
        for (g, goal) in self.goals.iter().enumerate() {
            check(goal.node, format!("goal {g}"))?;
        }
        check(self.terminal, "terminal".to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::{load, LoadConfig};

    use crate::test_games::SWITCH as GAME;

    fn circuit() -> Circuit {
        load(GAME, &LoadConfig::default())
            .expect("the game loads")
            .circuit
    }

    fn refused(edit: impl Fn(&mut Circuit)) -> String {
        let mut c = circuit();
        edit(&mut c);
        match c.verify() {
            Err(e) => format!("{}: {}", e.place, e.reason),
            Ok(()) => panic!("a broken circuit verified"),
        }
    }

    #[test]
    fn a_built_circuit_verifies() {
        assert_eq!(circuit().verify(), Ok(()));
        let raw = load(GAME, &LoadConfig::new().optimize(crate::OptimizeConfig::none()))
            .unwrap()
            .circuit;
        assert_eq!(raw.verify(), Ok(()));
    }

    #[test]
    fn each_broken_invariant_is_named() {
        let m = refused(|c| c.terminal = NodeId::new(c.nodes.len()));
        assert!(m.starts_with("terminal: its node is node"), "{m}");
        let m = refused(|c| c.bases[0].next = NodeId::new(999));
        assert!(
            m.starts_with("base 0: its next value is node 999, which does not exist"),
            "{m}"
        );
        let m = refused(|c| {
            let last = c.nodes.len() - 1;
            c.nodes[last].kind = NodeKind::Not;
            c.nodes[last].fanin = vec![NodeId::new(0), NodeId::new(1)];
        });
        assert!(m.contains("reads 2 node(s); a not reads exactly 1"), "{m}");
        let m = refused(|c| c.nodes[0].fanin = vec![NodeId::new(1)]);
        assert!(m.starts_with("node 0 (base 0"), "{m}");
        assert!(m.contains("a base reads none"), "{m}");
        let m = refused(|c| c.nodes[0].kind = NodeKind::Or);
        assert!(m.contains("should be base 0"), "{m}");
        let m = refused(|c| {
            let input = NodeId::new(c.bases.len());
            c.nodes[input.index()].fanin.push(NodeId::new(0));
        });
        assert!(
            m.contains("(input 0") && m.ends_with("reads 1 node(s); an input reads none"),
            "{m}"
        );
        let m = refused(|c| {
            c.vocabulary = std::sync::Arc::new(super::super::Vocabulary {
                symbols: Default::default(),
                terms: Default::default(),
            })
        });
        assert_eq!(m, "role 0: its name is no term (0 terms)");
        let m = refused(|c| {
            let term = c.roles[0];
            c.labels.insert(NodeId::new(9999), term);
        });
        assert!(
            m.starts_with("node 9999: has a sentence but does not exist ("),
            "{m}"
        );
        let n = circuit().nodes.len();
        let m = refused(|c| {
            c.add(NodeKind::Or, vec![NodeId::new(0), NodeId::new(n + 5)]);
        });
        assert_eq!(
            m,
            format!(
                "node {n} (or): reads node {}, which does not exist ({} nodes)",
                n + 5,
                n + 1
            )
        );
        let m = refused(|c| {
            c.add(NodeKind::Input(0), Vec::new());
        });
        assert!(m.contains("should be a gate or constant"), "{m}");
        let m = refused(|c| c.inputs[0].role = 3);
        assert_eq!(m, "input 0: belongs to role 3, which does not exist (1 roles)");
        let m = refused(|c| c.goals[0].role = 1);
        assert_eq!(m, "goal 0: belongs to role 1, which does not exist (1 roles)");
        let m = refused(|c| {
            let input = c.bases.len() as u32;
            c.terminal = c.add(NodeKind::Not, vec![NodeId::new(input as usize)]);
        });
        assert!(m.starts_with("terminal: node "), "{m}");
        assert!(m.contains("depends on the move input 0 (does r"), "{m}");
        let m = refused(|c| c.inputs[1].legal = NodeId::new(c.bases.len()));
        assert!(m.starts_with("legality of input 1: is the move input 0"), "{m}");
        let m = refused(|c| c.bases[1].fact = c.bases[0].fact);
        assert!(m.starts_with("base 1: its fact"), "{m}");
        let m = refused(|c| c.inputs[1].action = c.inputs[0].action);
        assert!(m.starts_with("input 1: its move"), "{m}");
        let m = refused(|c| c.roles.push(c.roles[0]));
        assert!(m.starts_with("role 1: r is role 0 too"), "{m}");
        let m = refused(|c| {
            let mut base = c.bases[0].clone();
            base.fact = c.roles[0];
            c.bases.push(base);
        });
        assert!(m.contains("should be base 2"), "{m}");
    }
}
