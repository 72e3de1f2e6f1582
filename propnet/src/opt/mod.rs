//! Optimizer passes, one per module, each preserving the value of every output
//! (next values included). [`optimize`] runs the enabled ones until the circuit stops shrinking.

pub mod collapse;
pub mod constants;
pub mod dead;
pub mod exclusive;
pub mod factor;
pub mod groups;
pub mod merge;
pub mod negations;
pub mod reachable;

use crate::ir::{Circuit, NodeId};
use std::time::Instant;

/// Which passes run.
#[derive(Clone, Debug)]
pub struct OptimizeConfig {
    /// Constant folding.
    pub constants: bool,
    /// Single-operand and double-negation collapse.
    pub collapse: bool,
    /// Merging of structurally equal gates.
    pub merge: bool,
    /// Single-reader negated operands of a gate gathered under one negation (De Morgan).
    pub negations: bool,
    /// Removal of nodes that reach no output (next values included).
    pub dead: bool,
    /// Factoring of operands shared by the `and`s of an `or`.
    pub factor: bool,
    /// An `or` over most of a role's moves becomes the negated `or` of the rest
    /// (relies on one move per role; see [`exclusive`]).
    pub exclusive_inputs: bool,
    /// Nodes fixed in every reachable state (bases that never change, moves that are
    /// never legal) become constants (relies on legal play; see [`reachable`]).
    pub reachable: bool,
    /// Exactly-one groups of bases (one piece per cell) are proved, and an `or` over
    /// most of a group becomes the negated `or` of the rest (see [`groups`]). Off by
    /// default: on the anchor games it shrinks nothing and the proof costs start-up time.
    pub exclusive_bases: bool,
}

impl Default for OptimizeConfig {
    fn default() -> Self {
        OptimizeConfig {
            constants: true,
            collapse: true,
            merge: true,
            negations: true,
            dead: true,
            factor: true,
            exclusive_inputs: true,
            reachable: true,
            exclusive_bases: false,
        }
    }
}

impl OptimizeConfig {
    /// No pass at all: the raw circuit.
    pub fn none() -> Self {
        OptimizeConfig {
            constants: false,
            collapse: false,
            merge: false,
            negations: false,
            dead: false,
            factor: false,
            exclusive_inputs: false,
            reachable: false,
            exclusive_bases: false,
        }
    }

    /// Every pass that keeps each output's value for arbitrary states and inputs:
    /// all but those that rely on legal play from the initial state
    /// (`exclusive-inputs`, `reachable`, `exclusive-bases`). A circuit optimized
    /// this way is combinationally equivalent to the raw one.
    pub fn exact() -> Self {
        OptimizeConfig {
            exclusive_inputs: false,
            reachable: false,
            exclusive_bases: false,
            ..OptimizeConfig::default()
        }
    }
}

impl OptimizeConfig {
    /// The names of the passes, as [`OptimizeConfig::disable`] takes them.
    pub const PASSES: [&'static str; 9] = [
        "constants",
        "collapse",
        "merge",
        "negations",
        "dead",
        "factor",
        "exclusive-inputs",
        "reachable",
        "exclusive-bases",
    ];

    /// Turns off the pass called `name` (one of [`OptimizeConfig::PASSES`]).
    pub fn disable(&mut self, name: &str) -> Result<(), String> {
        *self.flag(name)? = false;
        Ok(())
    }

    /// Turns on the pass called `name` (one of [`OptimizeConfig::PASSES`]).
    pub fn enable(&mut self, name: &str) -> Result<(), String> {
        *self.flag(name)? = true;
        Ok(())
    }

    fn flag(&mut self, name: &str) -> Result<&mut bool, String> {
        Ok(match name {
            "constants" => &mut self.constants,
            "collapse" => &mut self.collapse,
            "merge" => &mut self.merge,
            "negations" => &mut self.negations,
            "dead" => &mut self.dead,
            "factor" => &mut self.factor,
            "exclusive-inputs" => &mut self.exclusive_inputs,
            "reachable" => &mut self.reachable,
            "exclusive-bases" => &mut self.exclusive_bases,
            _ => {
                return Err(format!(
                    "unknown optimizer pass '{name}' (passes: {})",
                    Self::PASSES.join(", ")
                ))
            }
        })
    }
}

/// How long proving exactly-one groups of bases may take before it is given up.
const GROUP_PROOF_BUDGET: std::time::Duration = std::time::Duration::from_secs(2);

/// The optimizer stopped at its deadline, before the pass it names; the
/// circuit is left valid, and optimized by the passes that ran.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct PastDeadline(pub &'static str);

/// Optimizes `circuit` with the enabled passes. Two of them, factoring and the
/// exclusive-inputs rewrite, trade gates for edges and do not always shrink a
/// circuit (exclusive-inputs grows breakthrough's by a sixth), so the circuit is
/// first optimized without either, and then each enabled combination of the two is
/// tried on a copy of that (much smaller) circuit; the one with the fewest
/// components is kept, the earlier on a tie. Exactly-one groups of bases are proved
/// on that first circuit and used in every later round.
///
/// Each pass is near-linear in the circuit, but the rounds and candidates run
/// dozens of them: past `deadline`, the optimizer stops before its next pass.
pub fn optimize(
    circuit: &mut Circuit,
    config: &OptimizeConfig,
    deadline: Option<Instant>,
) -> Result<(), PastDeadline> {
    let plain = OptimizeConfig {
        factor: false,
        exclusive_inputs: false,
        ..config.clone()
    };
    run_rounds(circuit, &plain, &[], deadline)?;
    let base_groups = if config.exclusive_bases {
        before(deadline, "exclusive-bases")?;
        groups::exactly_one_groups(circuit, GROUP_PROOF_BUDGET)
    } else {
        Vec::new()
    };
    if !base_groups.is_empty() {
        run_rounds(circuit, &plain, &base_groups, deadline)?;
    }
    // The first candidate is rewritten in place; the others start from this copy.
    let start = circuit.clone();
    let mut first = true;
    for (exclusive_inputs, factor) in [(true, false), (true, true), (false, false), (false, true)] {
        if (exclusive_inputs && !config.exclusive_inputs) || (factor && !config.factor) {
            continue;
        }
        let variant = OptimizeConfig {
            exclusive_inputs,
            factor,
            ..config.clone()
        };
        if first {
            run_rounds(circuit, &variant, &base_groups, deadline)?;
            first = false;
            continue;
        }
        let mut candidate = start.clone();
        run_rounds(&mut candidate, &variant, &base_groups, deadline)?;
        if candidate.nodes.len() < circuit.nodes.len() {
            *circuit = candidate;
        }
    }
    Ok(())
}

/// A pass: rewrites a circuit and says how much it changed.
type Pass = fn(&mut Circuit) -> usize;

/// Runs the enabled passes until a round changes nothing (at most 8 rounds);
/// `base_groups` are exactly-one groups of base indices.
fn run_rounds(
    circuit: &mut Circuit,
    config: &OptimizeConfig,
    base_groups: &[Vec<usize>],
    deadline: Option<Instant>,
) -> Result<(), PastDeadline> {
    for _ in 0..8 {
        let mut changed = 0;
        if config.factor {
            changed += pass(circuit, "factor", deadline, factor::factor)?;
        }
        let groups = exclusive_groups(circuit, config, base_groups);
        if !groups.is_empty() {
            let complement = |c: &mut Circuit| exclusive::complement_exclusive(c, &groups);
            changed += pass(
                circuit,
                "exclusive-inputs or exclusive-bases",
                deadline,
                complement,
            )?;
        }
        let passes: [(bool, &'static str, Pass); 6] = [
            (config.reachable, "reachable", reachable::fix_reachable_constants),
            (config.constants, "constants", constants::fold_constants),
            (config.negations, "negations", negations::pull_negations),
            (config.collapse, "collapse", collapse::collapse),
            (config.merge, "merge", merge::merge),
            (config.dead, "dead", dead::remove_dead),
        ];
        for (enabled, name, run) in passes {
            if enabled {
                changed += pass(circuit, name, deadline, run)?;
            }
        }
        if changed == 0 {
            break;
        }
    }
    Ok(())
}

/// Runs the pass `name` on `circuit` unless `deadline` has passed; what it changed.
fn pass(
    circuit: &mut Circuit,
    name: &'static str,
    deadline: Option<Instant>,
    run: impl FnOnce(&mut Circuit) -> usize,
) -> Result<usize, PastDeadline> {
    before(deadline, name)?;
    let changed = run(circuit);
    checked(circuit, name);
    Ok(changed)
}

/// An error naming the pass `name` if `deadline` has passed.
fn before(deadline: Option<Instant>, name: &'static str) -> Result<(), PastDeadline> {
    match deadline {
        Some(deadline) if Instant::now() >= deadline => Err(PastDeadline(name)),
        _ => Ok(()),
    }
}

/// In debug builds and tests, panics if pass `pass` left `circuit` breaking
/// an invariant of [`Circuit::verify`]: passes take a verified circuit and
/// must keep it so (a release build verifies again when it compiles the net).
fn checked(circuit: &Circuit, pass: &str) {
    if cfg!(any(debug_assertions, test)) {
        if let Err(e) = circuit.verify() {
            panic!("the optimizer pass '{pass}' broke the circuit: {e}");
        }
    }
}

/// The exactly-one groups of nodes the enabled passes may use: each role's inputs,
/// and the proved groups of bases.
fn exclusive_groups(
    circuit: &Circuit,
    config: &OptimizeConfig,
    base_groups: &[Vec<usize>],
) -> Vec<Vec<NodeId>> {
    let mut groups = Vec::new();
    if config.exclusive_inputs {
        groups = exclusive::role_groups(circuit);
    }
    if config.exclusive_bases && !base_groups.is_empty() {
        let (base_nodes, _) = circuit.interface_nodes();
        for group in base_groups {
            let mut nodes: Vec<NodeId> = group.iter().map(|&b| base_nodes[b]).collect();
            nodes.sort_unstable();
            groups.push(nodes);
        }
    }
    groups
}

#[cfg(test)]
pub(crate) mod tests {
    use crate::ir::{Base, Circuit, NodeId, NodeKind, Vocabulary};
    use std::sync::Arc;

    /// A circuit with one base and the two constants: `[base, true, false]`.
    pub fn tiny() -> (Circuit, [NodeId; 3]) {
        let mut c = Circuit {
            nodes: Vec::new(),
            roles: Vec::new(),
            bases: Vec::new(),
            inputs: Vec::new(),
            goals: Vec::new(),
            terminal: NodeId::new(0),
            percepts: Vec::new(),
            labels: Default::default(),
            vocabulary: Arc::new(Vocabulary {
                symbols: Default::default(),
                terms: Default::default(),
            }),
        };
        let b = c.add(NodeKind::Base(0), vec![]);
        let t = c.add(NodeKind::Constant(true), vec![]);
        let f = c.add(NodeKind::Constant(false), vec![]);
        c.bases.push(Base {
            fact: ggpnet_grounder::TermStore::new()
                .intern(ggpnet_grounder::GroundTerm::Atom(ggpnet_kif::SymbolId::TRUE)),
            next: b,
            initial: false,
        });
        (c, [b, t, f])
    }

    /// Values of every node of an acyclic circuit for base 0 = false and = true.
    pub fn eval_all(c: &Circuit) -> Vec<(bool, bool)> {
        let order: Vec<NodeId> = crate::ir::components(c).into_iter().flatten().collect();
        let run = |base: bool| {
            let mut v = vec![false; c.nodes.len()];
            for id in &order {
                let node = &c.nodes[id.index()];
                v[id.index()] = match node.kind {
                    NodeKind::Base(_) => base,
                    NodeKind::Input(_) => false,
                    NodeKind::Constant(x) => x,
                    NodeKind::And => node.fanin.iter().all(|i| v[i.index()]),
                    NodeKind::Or => node.fanin.iter().any(|i| v[i.index()]),
                    NodeKind::Not => !v[node.fanin[0].index()],
                };
            }
            v
        };
        run(false).into_iter().zip(run(true)).collect()
    }
}
