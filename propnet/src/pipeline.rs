//! The whole compilation, phase by phase, with a report of what each phase took
//! and produced: parse, check, ground, build, optimize, layer.

use crate::driver::choose;
use crate::evaluator::EvaluatorKind;
use crate::game::Game;
use crate::ir::{build, BuildError, Circuit, VerifyError};
use crate::layout::{layer, CycleError, Layering};
use crate::machine::StateMachine;
use crate::opt::{optimize, OptimizeConfig, PastDeadline};
use ggpnet_grounder::{ErrorKind, GdlError};
use ggpnet_kif::ParseError;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::Instant;

/// Settings of every stage: grounding limits, optimizer passes, and a
/// progress callback.
///
/// ```
/// use ggpnet_propnet::opt::{OptimizeConfig, Pass};
/// use ggpnet_propnet::LoadConfig;
/// let config = LoadConfig::new()
///     .ground(ggpnet_grounder::Config::new().max_ground_rules(100_000))
///     .optimize(OptimizeConfig::default().disable(Pass::Merge));
/// assert_eq!(config.get_ground().get_max_ground_rules(), 100_000);
/// let loaded = ggpnet_propnet::load("(role r) (init a) (legal r go) (<= terminal a) (goal r 100)", &config);
/// assert!(loaded.is_ok());
/// ```
#[derive(Clone, Debug, Default)]
pub struct LoadConfig {
    ground: ggpnet_grounder::Config,
    optimize: OptimizeConfig,
    progress: Option<Progress>,
}

impl LoadConfig {
    /// The default limits and passes, without a progress callback.
    pub fn new() -> LoadConfig {
        LoadConfig::default()
    }

    /// Grounding limits.
    pub fn ground(mut self, ground: ggpnet_grounder::Config) -> LoadConfig {
        self.ground = ground;
        self
    }

    /// Optimizer passes.
    pub fn optimize(mut self, optimize: OptimizeConfig) -> LoadConfig {
        self.optimize = optimize;
        self
    }

    /// A callback told the name of each phase as it starts (for a progress display).
    pub fn progress(mut self, progress: Option<Progress>) -> LoadConfig {
        self.progress = progress;
        self
    }

    /// See [`LoadConfig::ground`].
    pub fn get_ground(&self) -> &ggpnet_grounder::Config {
        &self.ground
    }

    /// See [`LoadConfig::optimize`].
    pub fn get_optimize(&self) -> OptimizeConfig {
        self.optimize
    }

    /// See [`LoadConfig::progress`].
    pub fn get_progress(&self) -> Option<&Progress> {
        self.progress.as_ref()
    }
}

/// A callback told the name of each loading phase as it starts (`parse`,
/// `check`, `ground`, ...).
///
/// ```
/// use ggpnet_propnet::pipeline::Progress;
/// let progress = Progress::new(|phase| eprintln!("{phase}"));
/// progress.tell("ground");
/// ```
#[derive(Clone)]
pub struct Progress(Arc<dyn Fn(&'static str) + Send + Sync>);

impl Progress {
    /// A progress told through `tell`.
    pub fn new(tell: impl Fn(&'static str) + Send + Sync + 'static) -> Progress {
        Progress(Arc::new(tell))
    }

    /// Tells it that `phase` starts.
    pub fn tell(&self, phase: &'static str) {
        (self.0)(phase)
    }
}

impl fmt::Debug for Progress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Progress(..)")
    }
}

/// Why a game could not be loaded.
#[derive(Clone, Debug)]
pub enum LoadError {
    /// Malformed KIF.
    Parse(ParseError),
    /// Invalid GDL, or too large to ground.
    Gdl(GdlError),
    /// A ground program that makes no state machine.
    Build(BuildError),
    /// Negation on a cycle of the ground circuit.
    Cycle(CycleError),
    /// An optimized circuit that breaks an invariant of the evaluators (a
    /// bug of an optimizer pass: the built circuit was verified).
    Invalid(VerifyError),
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Parse(e) => e.fmt(f),
            LoadError::Gdl(e) => e.fmt(f),
            LoadError::Build(e) => e.fmt(f),
            LoadError::Cycle(e) => e.fmt(f),
            LoadError::Invalid(e) => e.fmt(f),
        }
    }
}

impl LoadError {
    /// Whether grounding stopped at one of its limits ([`ggpnet_grounder::Config`]),
    /// the optimizer at grounding's time limit, rather than finding the game invalid.
    pub fn is_limit(&self) -> bool {
        matches!(self, LoadError::Gdl(e) if matches!(e.kind, ErrorKind::TooLarge { .. }))
    }
}

impl std::error::Error for LoadError {}

/// What loading took and produced.
#[derive(Clone, Debug, Default)]
pub struct LoadReport {
    /// Seconds per phase, in order.
    pub phases: Vec<(&'static str, f64)>,
    /// Warnings from the parser and the checks.
    pub warnings: Vec<String>,
    /// Ground sentences that may hold.
    pub ground_atoms: usize,
    /// Ground rule instances.
    pub ground_rules: usize,
    /// Components by kind before optimization.
    pub components_raw: BTreeMap<&'static str, usize>,
    /// Components by kind after optimization.
    pub components: BTreeMap<&'static str, usize>,
    /// Number of layers.
    pub layers: usize,
    /// Number of cyclic strongly connected components.
    pub sccs: usize,
    /// Whether some rule defines `sees` (GDL-II percepts), even if none can hold.
    pub defines_sees: bool,
}

/// A loaded game: its circuit, layering, state machine and report.
pub struct Loaded {
    /// The optimized circuit.
    pub circuit: Circuit,
    /// Its layering.
    pub layering: Layering,
    /// The compiled game, shared by every machine.
    pub game: Arc<Game>,
    /// What loading took and produced.
    pub report: LoadReport,
}

impl Loaded {
    /// A new state machine over the loaded game.
    pub fn machine(&self) -> StateMachine {
        StateMachine::new(Arc::clone(&self.game))
    }
}

fn timed<T>(
    phases: &mut Vec<(&'static str, f64)>,
    progress: Option<&Progress>,
    name: &'static str,
    f: impl FnOnce() -> T,
) -> T {
    if let Some(progress) = progress {
        progress.tell(name);
    }
    let start = Instant::now();
    let out = f();
    phases.push((name, start.elapsed().as_secs_f64()));
    out
}

/// Compiles a game description into a state machine.
///
/// ```
/// let source = "(role robot) (init off)
///     (<= (legal robot press) (true off)) (<= (next on) (does robot press))
///     (<= terminal (true on)) (<= (goal robot 100) (true on)) (<= (goal robot 0) (true off))";
/// let loaded = ggpnet_propnet::load(source, &Default::default()).unwrap();
/// let mut machine = loaded.machine();
/// let start = machine.initial_state();
/// let press = machine.legal_moves(&start, 0);
/// let end = machine.next_state(&start, &press).unwrap();
/// assert!(machine.is_terminal(&end));
/// assert_eq!(machine.goals(&end), vec![vec![100]]);
/// ```
pub fn load(source: &str, config: &LoadConfig) -> Result<Loaded, LoadError> {
    let loaded = compile(source, config)?;
    check_initial_moves(&loaded.game).map_err(LoadError::Gdl)?;
    Ok(loaded)
}

/// [`load`] without its last check, that every role has a legal move in a
/// non-terminal initial state: real-time GDL compiles its games this way,
/// since there a role may wait for a move until an event.
pub fn compile(source: &str, config: &LoadConfig) -> Result<Loaded, LoadError> {
    let mut report = LoadReport::default();
    let phases = &mut report.phases;
    let progress = config.progress.as_ref();
    let mut description =
        timed(phases, progress, "parse", || ggpnet_kif::parse(source)).map_err(LoadError::Parse)?;
    report
        .warnings
        .extend(description.warnings.iter().map(|w| w.to_string()));
    report.defines_sees = description
        .rules
        .iter()
        .any(|r| r.head.functor() == Some(ggpnet_kif::SymbolId::SEES));
    let (rules, analysis, warnings) = timed(phases, progress, "check", || {
        let (rules, analysis) = ggpnet_grounder::prepare(&mut description)?;
        let warnings = ggpnet_grounder::check_playable(&description)?;
        Ok((rules, analysis, warnings))
    })
    .map_err(LoadError::Gdl)?;
    report.warnings.extend(warnings);
    // Grounding's time limit bounds the optimizer too, from the same start.
    let max_time = config.ground.get_max_time();
    let deadline = max_time.and_then(|t| Instant::now().checked_add(t));
    let program = timed(phases, progress, "ground", || {
        ggpnet_grounder::instantiate(&description, &rules, &analysis, &config.ground)
    })
    .map_err(LoadError::Gdl)?;
    drop(rules);
    report.warnings.extend(program.warnings.iter().cloned());
    report.ground_atoms = program.atoms.len();
    report.ground_rules = program.rules.len();
    let mut circuit = timed(phases, progress, "build", || build(program)).map_err(LoadError::Build)?;
    report.warnings.extend(goal_warnings(&circuit));
    report.components_raw = circuit.counts();
    timed(phases, progress, "optimize", || {
        optimize(&mut circuit, &config.optimize, deadline)
    })
    .map_err(|PastDeadline(pass)| {
        let max = max_time.unwrap_or_default();
        LoadError::Gdl(ggpnet_grounder::time_limit_passed(
            max,
            &format!("in optimizer pass {pass}"),
        ))
    })?;
    report.components = circuit.counts();
    let (layering, game) = timed(phases, progress, "layer", || {
        let layering = layer(&circuit).map_err(LoadError::Cycle)?;
        let game = Arc::new(Game::new(&circuit, &layering).map_err(LoadError::Invalid)?);
        Ok((layering, game))
    })?;
    // The plan of the evaluator every state machine starts with; the others'
    // (the sweep's, the lanes') are made by their first use, which a run
    // does before its clock starts.
    timed(phases, progress, "plan", || {
        choose::scalar(&game, EvaluatorKind::Differential, true);
    });
    report.layers = layering.layers;
    report.sccs = layering.cycles;
    Ok(Loaded {
        circuit,
        layering,
        game,
        report,
    })
}

/// A warning for each goal value outside 0..=100 (such values are kept as they are;
/// a value that is not an integer is an error of the build).
fn goal_warnings(circuit: &Circuit) -> Vec<String> {
    circuit
        .goals
        .iter()
        .filter(|g| !(0..=100).contains(&g.value))
        .map(|g| {
            let role = circuit.vocabulary.kif(circuit.roles[g.role]);
            format!(
                "warning: goal value {} of role {role} is outside 0..=100 (kept as is)",
                g.value
            )
        })
        .collect()
}

/// An error when some role has no legal move in the initial state (unless that
/// state is already terminal): such a game cannot be played at all.
fn check_initial_moves(game: &Arc<Game>) -> Result<(), GdlError> {
    let mut machine = StateMachine::new(Arc::clone(game));
    let start = machine.initial_state();
    if machine.is_terminal(&start) {
        return Ok(());
    }
    for (index, role) in game.roles().iter().enumerate() {
        if machine.legal_moves(&start, index).is_empty() {
            return Err(GdlError {
                kind: ErrorKind::Unplayable,
                span: None,
                rule: None,
                message: format!("role {role} has no legal move in the initial state"),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Loading plans the differential evaluator, which every state machine
    /// starts with, and leaves the sweep's plan to its first use.
    #[test]
    fn loading_plans_the_differential_evaluator_and_not_the_sweep() {
        let loaded = load(crate::evaluator::TURNS, &LoadConfig::default()).unwrap();
        let game = &loaded.game;
        assert!(game.differential_evaluator(true).get().is_some());
        assert!(game.sweep_evaluator(true).get().is_none());
        choose::scalar(game, EvaluatorKind::Sweep, true);
        assert!(game.sweep_evaluator(true).get().is_some());
    }

    /// Past its deadline the optimizer stops before its next pass, naming it,
    /// and leaves the circuit as it was; before it, it runs to the end.
    #[test]
    fn a_deadline_stops_the_optimizer_between_passes() {
        let source = "(role r) (init off) (<= (legal r press) (true off)) (<= (legal r wait) (true off))
            (<= (next on) (does r press)) (<= (next on) (true on)) (<= terminal (true on))
            (<= (goal r 100) (true on)) (<= (goal r 0) (not (true on)))";
        let unoptimized = LoadConfig {
            optimize: OptimizeConfig::none(),
            ..Default::default()
        };
        let mut c = load(source, &unoptimized).unwrap().circuit;
        let raw = c.nodes.len();
        let past = Some(Instant::now());
        assert_eq!(
            optimize(&mut c, &OptimizeConfig::default(), past),
            Err(PastDeadline("reachable"))
        );
        assert_eq!(c.nodes.len(), raw);
        let later = Instant::now().checked_add(Duration::from_secs(3600));
        assert_eq!(optimize(&mut c, &OptimizeConfig::default(), later), Ok(()));
        assert!(c.nodes.len() < raw);
    }
}
