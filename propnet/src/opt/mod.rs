//! Optimizer passes, one per module, each preserving the value of every output
//! (next values included). [`optimize`] runs the enabled ones until the circuit stops shrinking.

mod collapse;
mod constants;
pub(crate) mod dead;
mod exclusive;
mod factor;
mod groups;
mod merge;
mod negations;
mod reachable;

use crate::ir::{Circuit, NodeId};
use std::time::Instant;

/// Which passes run: every pass of [`Pass`] but `exclusive-bases` by default.
///
/// ```
/// use ggpnet_propnet::opt::{OptimizeConfig, Pass};
/// let config = OptimizeConfig::default().disable(Pass::Merge);
/// assert!(!config.is_enabled(Pass::Merge));
/// assert!(config.is_enabled(Pass::Dead));
/// assert!(!OptimizeConfig::exact().is_enabled(Pass::Reachable));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OptimizeConfig {
    /// One bit per pass, at its index in [`Pass::ALL`].
    enabled: u16,
}

impl Default for OptimizeConfig {
    fn default() -> Self {
        Pass::ALL
            .into_iter()
            .fold(OptimizeConfig::none(), OptimizeConfig::enable)
            .disable(Pass::ExclusiveBases)
    }
}

impl OptimizeConfig {
    /// No pass at all: the raw circuit.
    pub fn none() -> Self {
        OptimizeConfig { enabled: 0 }
    }

    /// Every pass that keeps each output's value for arbitrary states and inputs:
    /// all but those that rely on legal play from the initial state
    /// (`exclusive-inputs`, `reachable`, `exclusive-bases`). A circuit optimized
    /// this way is combinationally equivalent to the raw one.
    pub fn exact() -> Self {
        OptimizeConfig::default()
            .disable(Pass::ExclusiveInputs)
            .disable(Pass::Reachable)
    }

    /// The same with `pass` turned on.
    pub fn enable(self, pass: Pass) -> Self {
        OptimizeConfig {
            enabled: self.enabled | pass.bit(),
        }
    }

    /// The same with `pass` turned off.
    pub fn disable(self, pass: Pass) -> Self {
        OptimizeConfig {
            enabled: self.enabled & !pass.bit(),
        }
    }

    /// Whether `pass` runs.
    pub fn is_enabled(&self, pass: Pass) -> bool {
        self.enabled & pass.bit() != 0
    }
}

/// An optimizer pass that [`OptimizeConfig`] turns on or off, named on the
/// command line by [`Pass::name`].
///
/// ```
/// use ggpnet_propnet::opt::Pass;
/// assert_eq!("exclusive-inputs".parse::<Pass>(), Ok(Pass::ExclusiveInputs));
/// assert_eq!(Pass::Merge.to_string(), "merge");
/// assert!("fold".parse::<Pass>().is_err());
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Pass {
    /// Constant folding.
    Constants,
    /// Single-operand and double-negation collapse.
    Collapse,
    /// Merging of structurally equal gates.
    Merge,
    /// Single-reader negated operands of a gate gathered under one negation (De Morgan).
    Negations,
    /// Removal of nodes that reach no output (next values included).
    Dead,
    /// Factoring of operands shared by the `and`s of an `or`.
    Factor,
    /// An `or` over most of a role's moves becomes the negated `or` of the rest
    /// (relies on one move per role; see `opt/exclusive.rs`).
    ExclusiveInputs,
    /// Nodes fixed in every reachable state (bases that never change, moves that are
    /// never legal) become constants (relies on legal play; see `opt/reachable.rs`).
    Reachable,
    /// Exactly-one groups of bases (one piece per cell) are proved, and an `or` over
    /// most of a group becomes the negated `or` of the rest (see `opt/groups.rs`). Off by
    /// default: on the anchor games it shrinks nothing and the proof costs start-up time.
    ExclusiveBases,
}

impl Pass {
    /// Every pass, in the order of their names in help texts.
    pub const ALL: [Pass; 9] = [
        Pass::Constants,
        Pass::Collapse,
        Pass::Merge,
        Pass::Negations,
        Pass::Dead,
        Pass::Factor,
        Pass::ExclusiveInputs,
        Pass::Reachable,
        Pass::ExclusiveBases,
    ];

    /// Its bit in [`OptimizeConfig`].
    fn bit(self) -> u16 {
        1 << self as u16
    }

    /// Its name (`constants`, `exclusive-inputs`, ...).
    pub fn name(self) -> &'static str {
        match self {
            Pass::Constants => "constants",
            Pass::Collapse => "collapse",
            Pass::Merge => "merge",
            Pass::Negations => "negations",
            Pass::Dead => "dead",
            Pass::Factor => "factor",
            Pass::ExclusiveInputs => "exclusive-inputs",
            Pass::Reachable => "reachable",
            Pass::ExclusiveBases => "exclusive-bases",
        }
    }
}

impl std::fmt::Display for Pass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Pass {
    type Err = UnknownPass;

    fn from_str(name: &str) -> Result<Pass, UnknownPass> {
        Pass::ALL
            .into_iter()
            .find(|pass| pass.name() == name)
            .ok_or_else(|| UnknownPass(name.to_owned()))
    }
}

/// A name that is no [`Pass`]'s.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownPass(pub String);

impl std::fmt::Display for UnknownPass {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<_> = Pass::ALL.iter().map(|p| p.name()).collect();
        write!(
            f,
            "unknown optimizer pass '{}' (passes: {})",
            self.0,
            names.join(", ")
        )
    }
}

impl std::error::Error for UnknownPass {}

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
/// on that first circuit and used in every later round. (The combination of
/// neither is that first circuit itself, when its rounds settled.)
///
/// Each pass is near-linear in the circuit, but the rounds and candidates run
/// dozens of them: past `deadline`, the optimizer stops before its next pass.
pub fn optimize(
    circuit: &mut Circuit,
    config: &OptimizeConfig,
    deadline: Option<Instant>,
) -> Result<(), PastDeadline> {
    let plain = config.disable(Pass::Factor).disable(Pass::ExclusiveInputs);
    let mut settled = run_rounds(circuit, &plain, &[], deadline)?;
    let base_groups = if config.is_enabled(Pass::ExclusiveBases) {
        before(deadline, "exclusive-bases")?;
        groups::exactly_one_groups(circuit, GROUP_PROOF_BUDGET)
    } else {
        Vec::new()
    };
    if !base_groups.is_empty() {
        settled = run_rounds(circuit, &plain, &base_groups, deadline)?;
    }
    // The first candidate is rewritten in place; the others start from this copy.
    let start = circuit.clone();
    let mut first = true;
    for (exclusive_inputs, factor) in [(true, false), (true, true), (false, false), (false, true)] {
        if (exclusive_inputs && !config.is_enabled(Pass::ExclusiveInputs))
            || (factor && !config.is_enabled(Pass::Factor))
        {
            continue;
        }
        let variant = with(
            with(*config, Pass::ExclusiveInputs, exclusive_inputs),
            Pass::Factor,
            factor,
        );
        if first {
            run_rounds(circuit, &variant, &base_groups, deadline)?;
            first = false;
            continue;
        }
        // Without either, the passes are those that made `start`: if they
        // settled there, another run would change nothing.
        if settled && !exclusive_inputs && !factor {
            if start.nodes.len() < circuit.nodes.len() {
                circuit.clone_from(&start);
            }
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

/// `config` with `pass` on or off.
fn with(config: OptimizeConfig, pass: Pass, on: bool) -> OptimizeConfig {
    if on {
        config.enable(pass)
    } else {
        config.disable(pass)
    }
}

/// A pass: rewrites a circuit and says how much it changed.
type PassFn = fn(&mut Circuit) -> usize;

/// Runs the enabled passes until a round changes nothing (at most 8 rounds);
/// `base_groups` are exactly-one groups of base indices. Whether a round
/// changed nothing (else the rounds ran out).
fn run_rounds(
    circuit: &mut Circuit,
    config: &OptimizeConfig,
    base_groups: &[Vec<usize>],
    deadline: Option<Instant>,
) -> Result<bool, PastDeadline> {
    for _ in 0..8 {
        let mut changed = 0;
        if config.is_enabled(Pass::Factor) {
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
        let passes: [(bool, &'static str, PassFn); 6] = [
            (
                config.is_enabled(Pass::Reachable),
                "reachable",
                reachable::fix_reachable_constants,
            ),
            (
                config.is_enabled(Pass::Constants),
                "constants",
                constants::fold_constants,
            ),
            (
                config.is_enabled(Pass::Negations),
                "negations",
                negations::pull_negations,
            ),
            (config.is_enabled(Pass::Collapse), "collapse", collapse::collapse),
            (config.is_enabled(Pass::Merge), "merge", merge::merge),
            (config.is_enabled(Pass::Dead), "dead", dead::remove_dead),
        ];
        for (enabled, name, run) in passes {
            if enabled {
                changed += pass(circuit, name, deadline, run)?;
            }
        }
        if changed == 0 {
            return Ok(true);
        }
    }
    Ok(false)
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
    if config.is_enabled(Pass::ExclusiveInputs) {
        groups = exclusive::role_groups(circuit);
    }
    if config.is_enabled(Pass::ExclusiveBases) && !base_groups.is_empty() {
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
    use crate::ir::{Base, Circuit, NodeId, NodeKind};

    /// A circuit with one base and the two constants: `[base, true, false]`.
    pub fn tiny() -> (Circuit, [NodeId; 3]) {
        let mut c = Circuit::empty(Vec::new());
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
        let order: Vec<NodeId> = crate::ir::components(c).nodes().to_vec();
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
