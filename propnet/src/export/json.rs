//! The circuit as JSON, and back. The schema (documented in `docs/EXPORT.md`)
//! lists the nodes in id order with their kind, fan-in (`inputs`), layer and sentence, and
//! maps bases, inputs and outputs to KIF; [`load`] rebuilds from it a circuit,
//! its layering and a state machine that behave like the original.

use super::ExportError;
use crate::game::Game;
use crate::ir::{Base, Circuit, Goal, Input, Node, NodeId, NodeKind, Percept, VerifyError, Vocabulary};
use crate::layout::{layer, Layering};
use crate::pipeline::{LoadReport, Loaded};
use ggpnet_grounder::{TermId, TermStore};
use ggpnet_kif::SymbolTable;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Instant;

/// The value of the `format` field.
pub const FORMAT: &str = "ggpnet-circuit";
/// The schema version written and read.
pub const VERSION: u32 = 1;

/// A whole circuit file.
#[derive(Serialize, Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct CircuitFile {
    /// Always [`FORMAT`].
    pub format: String,
    /// Always [`VERSION`].
    pub version: u32,
    /// Role names in KIF, in the order of the `role` facts.
    pub roles: Vec<String>,
    /// Nodes; a node's id is its index. Bases come first, then inputs, in the order of `bases` and `inputs`.
    pub nodes: Vec<NodeEntry>,
    /// State facts.
    pub bases: Vec<BaseEntry>,
    /// Moves.
    pub inputs: Vec<InputEntry>,
    /// Goal outputs.
    pub goals: Vec<GoalEntry>,
    /// Node of the terminal output.
    pub terminal: u32,
    /// Percept outputs (GDL-II `sees`); absent when there are none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub percepts: Vec<PerceptEntry>,
}

/// A percept output (GDL-II).
#[derive(Serialize, Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct PerceptEntry {
    /// Index of the role in `roles`.
    pub role: usize,
    /// The percept `p` of `(sees r p)`.
    pub percept: String,
    /// The node giving `(sees r p)`.
    pub node: u32,
}

/// One node.
#[derive(Serialize, Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct NodeEntry {
    /// `base`, `input`, `true`, `false`, `and`, `or` or `not`.
    pub kind: String,
    /// Its fan-in: ids of the nodes it reads (`inputs` in the file, the
    /// format's name, kept for the files and readers that use it).
    #[serde(rename = "inputs")]
    pub fanin: Vec<u32>,
    /// Layer number (ignored when reading: it is recomputed).
    pub layer: u32,
    /// The sentence it stands for in canonical KIF, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sentence: Option<String>,
}

/// A base proposition.
#[derive(Serialize, Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct BaseEntry {
    /// Its node.
    pub node: u32,
    /// The fact `f` of `(true f)`.
    pub fact: String,
    /// The node giving `(next f)`.
    pub next: u32,
    /// Whether `f` holds initially.
    pub initial: bool,
}

/// An input proposition.
#[derive(Serialize, Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct InputEntry {
    /// Its node.
    pub node: u32,
    /// Index of the role in `roles`.
    pub role: usize,
    /// The move `m` of `(does r m)`.
    #[serde(rename = "move")]
    pub action: String,
    /// The node giving `(legal r m)`.
    pub legal: u32,
}

/// A goal output.
#[derive(Serialize, Deserialize, Debug)]
#[serde(deny_unknown_fields)]
pub struct GoalEntry {
    /// Index of the role in `roles`.
    pub role: usize,
    /// The goal value.
    pub value: i64,
    /// The node giving `(goal r value)`.
    pub node: u32,
}

fn kind_name(kind: NodeKind) -> &'static str {
    match kind {
        NodeKind::Constant(true) => "true",
        NodeKind::Constant(false) => "false",
        other => other.name(),
    }
}

/// The JSON text of a circuit and its layering.
pub fn write(circuit: &Circuit, layering: &Layering) -> String {
    let v = &circuit.vocabulary;
    let id = |n: NodeId| n.index() as u32;
    let mut base_node = vec![0u32; circuit.bases.len()];
    let mut input_node = vec![0u32; circuit.inputs.len()];
    for (n, node) in circuit.nodes.iter().enumerate() {
        match node.kind {
            NodeKind::Base(b) => base_node[b as usize] = n as u32,
            NodeKind::Input(i) => input_node[i as usize] = n as u32,
            _ => {}
        }
    }
    let file = CircuitFile {
        format: FORMAT.to_owned(),
        version: VERSION,
        roles: circuit.roles.iter().map(|&r| v.kif(r)).collect(),
        nodes: circuit
            .nodes
            .iter()
            .enumerate()
            .map(|(n, node)| NodeEntry {
                kind: kind_name(node.kind).to_owned(),
                fanin: node.fanin.iter().map(|&i| id(i)).collect(),
                layer: layering.level[n],
                sentence: circuit.labels.get(&NodeId::new(n)).map(|&t| v.kif(t)),
            })
            .collect(),
        bases: circuit
            .bases
            .iter()
            .zip(base_node)
            .map(|(b, node)| BaseEntry {
                node,
                fact: v.kif(b.fact),
                next: id(b.next),
                initial: b.initial,
            })
            .collect(),
        inputs: circuit
            .inputs
            .iter()
            .zip(input_node)
            .map(|(i, node)| InputEntry {
                node,
                role: i.role,
                action: v.kif(i.action),
                legal: id(i.legal),
            })
            .collect(),
        goals: circuit
            .goals
            .iter()
            .map(|g| GoalEntry {
                role: g.role,
                value: g.value,
                node: id(g.node),
            })
            .collect(),
        terminal: id(circuit.terminal),
        percepts: circuit
            .percepts
            .iter()
            .map(|p| PerceptEntry {
                role: p.role,
                percept: v.kif(p.percept),
                node: id(p.node),
            })
            .collect(),
    };
    serde_json::to_string(&file).expect("a circuit file always serializes")
}

/// Terms parsed from the file, interned into one vocabulary.
struct Terms {
    symbols: SymbolTable,
    terms: TermStore,
}

impl Terms {
    fn intern(&mut self, text: &str, what: &str) -> Result<TermId, ExportError> {
        let term = ggpnet_kif::parse_term(text, &mut self.symbols)
            .map_err(|e| ExportError::new(format!("{what}: cannot read '{text}': {e}")))?;
        self.terms
            .intern_term(&term)
            .ok_or_else(|| ExportError::new(format!("{what}: '{text}' is not ground")))
    }
}

/// Checks a node reference.
fn node_ref(n: u32, count: usize, what: impl FnOnce() -> String) -> Result<NodeId, ExportError> {
    if (n as usize) < count {
        Ok(NodeId::new(n as usize))
    } else {
        Err(ExportError::new(format!(
            "{}: node {n} does not exist ({count} nodes)",
            what()
        )))
    }
}

/// Checks a role reference of `what` against the game's `roles`.
fn role_ref(role: usize, roles: usize, what: impl FnOnce() -> String) -> Result<usize, ExportError> {
    if role < roles {
        Ok(role)
    } else {
        Err(ExportError::new(format!(
            "{}: role {role} does not exist ({roles} roles)",
            what()
        )))
    }
}

/// Rebuilds a circuit from JSON text, refusing anything inconsistent with a
/// clear message: malformed JSON, another format or version, unknown kinds,
/// references to missing nodes, misplaced bases or inputs, non-ground sentences,
/// and whatever else [`Circuit::verify`] refuses (it runs before the circuit
/// is returned).
pub fn read(text: &str) -> Result<Circuit, ExportError> {
    let file = parse_file(text)?;
    let count = file.nodes.len();
    let mut t = Terms {
        symbols: SymbolTable::new(),
        terms: TermStore::new(),
    };
    let roles = file
        .roles
        .iter()
        .map(|r| t.intern(r, "role"))
        .collect::<Result<Vec<_>, _>>()?;
    let (nodes, labels) = read_nodes(&file, &mut t)?;
    let bases = read_bases(&file.bases, &mut t, count)?;
    let inputs = read_inputs(&file.inputs, &mut t, file.bases.len(), count, roles.len())?;
    let goals = read_goals(&file.goals, count, roles.len())?;
    let percepts = read_percepts(&file.percepts, &mut t, count, roles.len())?;
    let circuit = Circuit {
        nodes,
        roles,
        bases,
        inputs,
        goals,
        terminal: node_ref(file.terminal, count, || "terminal".to_owned())?,
        percepts,
        labels,
        vocabulary: Arc::new(Vocabulary {
            symbols: t.symbols,
            terms: t.terms,
        }),
    };
    circuit.verify().map_err(invalid)?;
    Ok(circuit)
}

/// Parses JSON text into a [`CircuitFile`], refusing malformed JSON and any
/// other format or version.
fn parse_file(text: &str) -> Result<CircuitFile, ExportError> {
    let file: CircuitFile =
        serde_json::from_str(text).map_err(|e| ExportError::new(format!("not a circuit file: {e}")))?;
    if file.format != FORMAT || file.version != VERSION {
        return Err(ExportError::new(format!(
            "not a circuit file: format '{}' version {} (expected '{FORMAT}' version {VERSION})",
            file.format, file.version
        )));
    }
    Ok(file)
}

/// Rebuilds the file's nodes in order, with the sentences that label them.
fn read_nodes(
    file: &CircuitFile,
    t: &mut Terms,
) -> Result<(Vec<Node>, rustc_hash::FxHashMap<NodeId, TermId>), ExportError> {
    let count = file.nodes.len();
    let (bases, inputs) = (file.bases.len(), file.inputs.len());
    let mut nodes = Vec::with_capacity(count);
    let mut labels = rustc_hash::FxHashMap::default();
    for (n, entry) in file.nodes.iter().enumerate() {
        let kind = node_kind(n, entry, bases, inputs)?;
        let fanin = node_fanin(n, entry, kind, count)?;
        if let Some(sentence) = &entry.sentence {
            labels.insert(NodeId::new(n), t.intern(sentence, &format!("node {n}"))?);
        }
        nodes.push(Node { kind, fanin });
    }
    Ok((nodes, labels))
}

/// The kind of node `n`, checking that the first `bases` nodes are bases and
/// the next `inputs` ones inputs, in order, and nothing else is.
fn node_kind(n: usize, entry: &NodeEntry, bases: usize, inputs: usize) -> Result<NodeKind, ExportError> {
    let kind = match entry.kind.as_str() {
        "base" if n < bases => NodeKind::Base(n as u32),
        "input" if (bases..bases + inputs).contains(&n) => NodeKind::Input((n - bases) as u32),
        "base" | "input" => {
            return Err(ExportError::new(format!(
                "node {n}: {} nodes must be listed in the order of '{}s' (bases first, then inputs)",
                entry.kind, entry.kind
            )))
        }
        "true" => NodeKind::Constant(true),
        "false" => NodeKind::Constant(false),
        "and" => NodeKind::And,
        "or" => NodeKind::Or,
        "not" => NodeKind::Not,
        other => return Err(ExportError::new(format!("node {n}: unknown kind '{other}'"))),
    };
    if n < bases + inputs && !matches!(kind, NodeKind::Base(_) | NodeKind::Input(_)) {
        return Err(ExportError::new(format!(
            "node {n}: expected a {} node, found '{}'",
            if n < bases { "base" } else { "input" },
            entry.kind
        )));
    }
    Ok(kind)
}

/// The fan-in of node `n` of `kind`, checking its size against the kind and
/// each reference against the `count` nodes.
fn node_fanin(n: usize, entry: &NodeEntry, kind: NodeKind, count: usize) -> Result<Vec<NodeId>, ExportError> {
    let arity_ok = match kind {
        NodeKind::Not => entry.fanin.len() == 1,
        NodeKind::And | NodeKind::Or => true,
        _ => entry.fanin.is_empty(),
    };
    if !arity_ok {
        return Err(ExportError::new(format!(
            "node {n}: a '{}' node cannot read {} node(s)",
            entry.kind,
            entry.fanin.len()
        )));
    }
    entry
        .fanin
        .iter()
        .map(|&i| node_ref(i, count, || format!("node {n}")))
        .collect()
}

/// Rebuilds the bases, each of which must sit at the node of its own index.
fn read_bases(entries: &[BaseEntry], t: &mut Terms, count: usize) -> Result<Vec<Base>, ExportError> {
    let mut bases = Vec::with_capacity(entries.len());
    for (b, entry) in entries.iter().enumerate() {
        if entry.node as usize != b {
            return Err(ExportError::new(format!(
                "base {b}: its node must be {b}, not {}",
                entry.node
            )));
        }
        bases.push(Base {
            fact: t.intern(&entry.fact, &format!("base {b}"))?,
            next: node_ref(entry.next, count, || format!("base {b}"))?,
            initial: entry.initial,
        });
    }
    Ok(bases)
}

/// Rebuilds the inputs, each of which must sit at the node of its own index
/// after the `bases`.
fn read_inputs(
    entries: &[InputEntry],
    t: &mut Terms,
    bases: usize,
    count: usize,
    roles: usize,
) -> Result<Vec<Input>, ExportError> {
    let mut inputs = Vec::with_capacity(entries.len());
    for (i, entry) in entries.iter().enumerate() {
        if entry.node as usize != bases + i {
            return Err(ExportError::new(format!(
                "input {i}: its node must be {}, not {}",
                bases + i,
                entry.node
            )));
        }
        inputs.push(Input {
            role: role_ref(entry.role, roles, || format!("input {i}"))?,
            action: t.intern(&entry.action, &format!("input {i}"))?,
            legal: node_ref(entry.legal, count, || format!("input {i}"))?,
        });
    }
    Ok(inputs)
}

/// Rebuilds the goals, checking their role and node references.
fn read_goals(entries: &[GoalEntry], count: usize, roles: usize) -> Result<Vec<Goal>, ExportError> {
    entries
        .iter()
        .enumerate()
        .map(|(g, entry)| {
            Ok(Goal {
                role: role_ref(entry.role, roles, || format!("goal {g}"))?,
                value: entry.value,
                node: node_ref(entry.node, count, || format!("goal {g}"))?,
            })
        })
        .collect()
}

/// Rebuilds the percepts, checking their role and node references and
/// interning their sentences.
fn read_percepts(
    entries: &[PerceptEntry],
    t: &mut Terms,
    count: usize,
    roles: usize,
) -> Result<Vec<Percept>, ExportError> {
    let mut percepts = Vec::with_capacity(entries.len());
    for (p, entry) in entries.iter().enumerate() {
        percepts.push(Percept {
            role: role_ref(entry.role, roles, || format!("percept {p}"))?,
            percept: t.intern(&entry.percept, &format!("percept {p}"))?,
            node: node_ref(entry.node, count, || format!("percept {p}"))?,
        });
    }
    Ok(percepts)
}

/// A circuit file refused by [`Circuit::verify`]: the place and the reason.
fn invalid(e: VerifyError) -> ExportError {
    ExportError::new(format!("{}: {}", e.place, e.reason))
}

/// Reads a circuit file and makes it ready to play, like [`crate::load`] does
/// for a game description (the report has the phases `read` and `layer`).
pub fn load(text: &str) -> Result<Loaded, ExportError> {
    let start = Instant::now();
    let circuit = read(text)?;
    let read_seconds = start.elapsed().as_secs_f64();
    let start = Instant::now();
    let layering = layer(&circuit).map_err(|e| ExportError::new(format!("{e}").replace("error: ", "")))?;
    let game = Arc::new(Game::new(&circuit, &layering).map_err(invalid)?);
    let report = LoadReport {
        phases: vec![("read", read_seconds), ("layer", start.elapsed().as_secs_f64())],
        components_raw: circuit.counts(),
        components: circuit.counts(),
        layers: layering.layers,
        sccs: layering.cycles,
        ..LoadReport::default()
    };
    Ok(Loaded {
        circuit,
        layering,
        game,
        report,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::load as load_game;

    use crate::test_games::SWITCH as GAME;

    #[test]
    fn round_trip_keeps_everything() {
        let loaded = load_game(GAME, &Default::default()).unwrap();
        let text = write(&loaded.circuit, &loaded.layering);
        let back = load(&text).unwrap();
        assert_eq!(back.circuit.nodes, loaded.circuit.nodes);
        assert_eq!(back.game.facts(), loaded.game.facts());
        assert_eq!(back.game.moves(), loaded.game.moves());
        assert_eq!(back.game.roles(), loaded.game.roles());
        assert_eq!(back.game.initial(), loaded.game.initial());
        assert_eq!(write(&back.circuit, &back.layering), text);
    }

    fn broken(edit: impl Fn(&mut serde_json::Value)) -> String {
        let loaded = load_game(GAME, &Default::default()).unwrap();
        let mut value: serde_json::Value =
            serde_json::from_str(&write(&loaded.circuit, &loaded.layering)).unwrap();
        edit(&mut value);
        match load(&value.to_string()) {
            Err(e) => e.message,
            Ok(_) => panic!("accepted a broken file"),
        }
    }

    #[test]
    fn broken_files_are_refused_with_reasons() {
        assert!(read("{").unwrap_err().message.starts_with("not a circuit file"));
        assert!(broken(|v| v["format"] = "dot".into()).contains("format 'dot'"));
        let last = |v: &serde_json::Value| v["nodes"].as_array().unwrap().len() - 1;
        let m = broken(|v| {
            let n = last(v);
            v["nodes"][n]["kind"] = "xor".into()
        });
        assert!(m.contains("unknown kind 'xor'"), "{m}");
        let m = broken(|v| v["terminal"] = 999.into());
        assert!(m.contains("terminal: node 999 does not exist"), "{m}");
        let m = broken(|v| v["inputs"][0]["role"] = 7.into());
        assert!(m.contains("role 7 does not exist"), "{m}");
        let m = broken(|v| v["bases"][0]["fact"] = "(cell ?x)".into());
        assert!(m.contains("not ground"), "{m}");
        let m = broken(|v| v["nodes"][0]["kind"] = "and".into());
        assert!(m.contains("expected a base node"), "{m}");
        let m = broken(|v| {
            let n = last(v);
            v["nodes"][n]["inputs"] = serde_json::json!([n]);
            v["nodes"][n]["kind"] = "not".into();
        });
        assert!(m.contains("unstratified negation"), "{m}");
    }
}
