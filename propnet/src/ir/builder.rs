//! From a ground program to a circuit: one node per sentence, an `or` over the
//! rule instances of each derived sentence, an `and` per rule instance.

use super::{Base, Circuit, Goal, Input, NodeId, NodeKind, Percept, Vocabulary};
use ggpnet_grounder::{GroundProgram, GroundRule, GroundTerm, TermId, TermStore};
use ggpnet_kif::SymbolId;
use rustc_hash::FxHashMap;
use std::fmt;
use std::sync::Arc;

/// A ground program that cannot become a state machine.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct BuildError {
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for BuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "error: {}", self.message)
    }
}

impl std::error::Error for BuildError {}

/// Builds the unoptimized circuit of `program`.
pub fn build(program: GroundProgram) -> Result<Circuit, BuildError> {
    let GroundProgram {
        symbols,
        terms,
        roles,
        initial_state,
        atoms,
        rules,
        ..
    } = program;
    let role_index: FxHashMap<TermId, usize> = roles.iter().enumerate().map(|(i, &r)| (r, i)).collect();
    let mut circuit = Circuit::empty(roles);
    let (node_of, does_atoms) = add_sentences(&mut circuit, &terms, &atoms, &role_index);
    let never = circuit.add(NodeKind::Constant(false), Vec::new());
    let always = circuit.add(NodeKind::Constant(true), Vec::new());
    add_rules(&mut circuit, rules, &node_of, never, always);
    connect_outputs(&mut circuit, &terms, &node_of, &does_atoms, never);
    for (atom, role, value) in role_sentences(&terms, &atoms, &role_index, SymbolId::GOAL) {
        let text = terms.to_kif(value, &symbols);
        let value = text.parse::<i64>().map_err(|_| BuildError {
            message: format!(
                "goal value '{text}' in {} is not an integer",
                terms.to_kif(atom, &symbols)
            ),
        })?;
        circuit.goals.push(Goal {
            role,
            value,
            node: node_of.expect(atom),
        });
    }
    circuit.goals.sort_by_key(|g| (g.role, g.value));
    for (atom, role, percept) in role_sentences(&terms, &atoms, &role_index, SymbolId::SEES) {
        circuit.percepts.push(Percept {
            role,
            percept,
            node: node_of.expect(atom),
        });
    }
    circuit
        .percepts
        .sort_by_cached_key(|p| (p.role, terms.to_kif(p.percept, &symbols)));
    mark_initial(&mut circuit, initial_state);
    circuit.vocabulary = Arc::new(Vocabulary { symbols, terms });
    circuit.verify().map_err(|e| BuildError {
        message: format!("the built circuit is inconsistent: {}: {}", e.place, e.reason),
    })?;
    Ok(circuit)
}

/// The node of each sentence that has one: a table indexed by term id (the
/// ids are dense, and a sentence is looked up once per rule literal; a hash
/// map of them took three times the memory at the build's peak).
struct NodeOf {
    nodes: Vec<u32>,
}

impl NodeOf {
    /// Where a term has no node.
    const NONE: u32 = u32::MAX;

    /// No node yet for any of `terms`' terms.
    fn new(terms: &TermStore) -> NodeOf {
        NodeOf {
            nodes: vec![NodeOf::NONE; terms.len()],
        }
    }

    /// The node of `atom`, if it has one.
    fn get(&self, atom: TermId) -> Option<NodeId> {
        match self.nodes.get(atom.index()) {
            Some(&n) if n != NodeOf::NONE => Some(NodeId::new(n as usize)),
            _ => None,
        }
    }

    /// The node of `atom`, which has one.
    fn expect(&self, atom: TermId) -> NodeId {
        self.get(atom).expect("every atom has a node")
    }

    /// Records `node` as the node of `atom`, a term of the store.
    fn insert(&mut self, atom: TermId, node: NodeId) {
        self.nodes[atom.index()] = node.index() as u32;
    }
}

/// Adds a node for each of the `atoms`: bases first, then inputs (the moves of
/// roles), then an `or` per derived sentence. Returns the node of each atom, and
/// the `does` atoms in the order of their inputs.
fn add_sentences(
    circuit: &mut Circuit,
    terms: &TermStore,
    atoms: &[TermId],
    role_index: &FxHashMap<TermId, usize>,
) -> (NodeOf, Vec<TermId>) {
    let mut node_of = NodeOf::new(terms);
    let mut does_atoms = Vec::new();
    for &atom in atoms {
        if terms.functor(atom) == SymbolId::TRUE {
            let index = circuit.bases.len() as u32;
            let node = circuit.add(NodeKind::Base(index), Vec::new());
            circuit.bases.push(Base {
                fact: terms.args(atom)[0],
                next: node,
                initial: false,
            });
            node_of.insert(atom, node);
            circuit.labels.insert(node, atom);
        }
    }
    for &atom in atoms {
        if terms.functor(atom) == SymbolId::DOES {
            let args = terms.args(atom);
            let Some(&role) = role_index.get(&args[0]) else {
                continue; // a move of something that is not a role can never be played
            };
            let index = circuit.inputs.len() as u32;
            let node = circuit.add(NodeKind::Input(index), Vec::new());
            circuit.inputs.push(Input {
                role,
                action: args[1],
                legal: node,
            });
            does_atoms.push(atom);
            node_of.insert(atom, node);
            circuit.labels.insert(node, atom);
        }
    }
    for &atom in atoms {
        if node_of.get(atom).is_none() && !matches!(terms.functor(atom), SymbolId::TRUE | SymbolId::DOES) {
            let node = circuit.add(NodeKind::Or, Vec::new());
            node_of.insert(atom, node);
            circuit.labels.insert(node, atom);
        }
    }
    (node_of, does_atoms)
}

/// How many rules [`add_rules`] turns into gates between two shrinkings of
/// their list (each may copy what is left of it: a few per build).
const FREE_EVERY: usize = 1 << 18;

/// Adds each rule instance to the fan-in of its head's `or`: an `and` of its body
/// (with a shared `not` per negated node), `always` for an empty body, and
/// `never` for an atom that has no node.
fn add_rules(
    circuit: &mut Circuit,
    mut rules: Vec<GroundRule>,
    node_of: &NodeOf,
    never: NodeId,
    always: NodeId,
) {
    let mut negation: FxHashMap<NodeId, NodeId> = FxHashMap::default();
    // Rules are consumed as they become gates, so their bodies free memory
    // for the nodes; the list itself (24 bytes a rule) shrinks every
    // `FREE_EVERY` rules. Reversed, it is taken from its end in its order.
    rules.reverse();
    let mut taken = 0usize;
    while let Some(rule) = rules.pop() {
        taken += 1;
        if taken.is_multiple_of(FREE_EVERY) {
            rules.shrink_to_fit();
        }
        let Some(head) = node_of.get(rule.head) else {
            continue;
        };
        let mut body = Vec::with_capacity(rule.body.len());
        for literal in rule.body.iter() {
            let node = node_of.get(literal.atom).unwrap_or(never);
            body.push(if literal.positive {
                node
            } else {
                *negation
                    .entry(node)
                    .or_insert_with(|| circuit.add(NodeKind::Not, vec![node]))
            });
        }
        let instance = match body.len() {
            0 => always,
            1 => body[0],
            _ => circuit.add(NodeKind::And, body),
        };
        circuit.nodes[head.index()].fanin.push(instance);
    }
}

/// Points each base at its `next` sentence, each input (of `does_atoms`) at its
/// `legal` sentence, and the terminal at `terminal`: `never` where there is none.
fn connect_outputs(
    circuit: &mut Circuit,
    terms: &TermStore,
    node_of: &NodeOf,
    does_atoms: &[TermId],
    never: NodeId,
) {
    let find = |relation: SymbolId, args: &[TermId]| -> NodeId {
        let sentence = if args.is_empty() {
            GroundTerm::Atom(relation)
        } else {
            GroundTerm::Compound(relation, args.into())
        };
        terms.get(&sentence).and_then(|t| node_of.get(t)).unwrap_or(never)
    };
    for base in &mut circuit.bases {
        base.next = find(SymbolId::NEXT, &[base.fact]);
    }
    for (input, &atom) in circuit.inputs.iter_mut().zip(does_atoms) {
        input.legal = find(SymbolId::LEGAL, terms.args(atom));
    }
    circuit.terminal = find(SymbolId::TERMINAL, &[]);
}

/// The `atoms` of `relation` whose first argument is a role: each with the
/// role's index and the second argument. The others concern nobody.
fn role_sentences<'a>(
    terms: &'a TermStore,
    atoms: &'a [TermId],
    role_index: &'a FxHashMap<TermId, usize>,
    relation: SymbolId,
) -> impl Iterator<Item = (TermId, usize, TermId)> + 'a {
    atoms
        .iter()
        .filter(move |&&atom| terms.functor(atom) == relation)
        .filter_map(|&atom| {
            let args = terms.args(atom);
            let &role = role_index.get(&args[0])?;
            Some((atom, role, args[1]))
        })
}

/// Marks the bases of the `initial_state`'s facts as initially true.
fn mark_initial(circuit: &mut Circuit, initial_state: Vec<TermId>) {
    let base_of: FxHashMap<TermId, usize> = circuit
        .bases
        .iter()
        .enumerate()
        .map(|(i, b)| (b.fact, i))
        .collect();
    for fact in initial_state {
        if let Some(&i) = base_of.get(&fact) {
            circuit.bases[i].initial = true;
        }
    }
}
