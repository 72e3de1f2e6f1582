//! The agent API: a [`Game`] loaded once and shared by every thread, a
//! per-thread [`Machine`](crate::Machine) for queries, and playouts from any
//! state.
//!
//! A game runs on one of two engines behind the same interface. The propnet
//! (the compiled circuit) is the fast one; when it cannot be built within the
//! configured grounding limits (rule instances, memory, time), loading falls
//! back to the reference interpreter, which evaluates the rules directly on
//! each state: orders of magnitude slower, but every valid game loads.
//! [`Config::engine`] can forbid the fallback or ask for the interpreter.
//!
//! States and moves carry the identity of the game that made them, so a state
//! or move of another game is refused with an error instead of being read as
//! bits of this one.

use crate::propnet::driver::{choose, DEFAULT_MAX_DEPTH};
use crate::propnet::evaluator::{Choice, EvaluatorConfig, EvaluatorKind};
use crate::propnet::opt::OptimizeConfig;
use crate::propnet::pipeline::Progress;
use crate::propnet::{LoadConfig, Loaded};
use ggpnet_grounder::{Config as GroundConfig, SettingError};
use ggpnet_reference::{Reference, ReferenceError};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

pub use ggpnet_rtgdl::{Engine, EngineChoice};

/// Which propnet evaluator runs playouts: one named, or `Auto`, the fastest on
/// the game, measured by a short calibration (about 0.2 s per evaluator) when
/// [`Game::calibrate`] is called, or else the first time playouts run or
/// [`Game::evaluator`] is asked. The evaluators' own [`Choice`], under the name
/// the agent API gives it.
pub use crate::propnet::evaluator::Choice as EvaluatorChoice;

/// What [`Game::calibrate`] chose.
#[derive(Clone, Copy, PartialEq, Debug)]
pub struct Calibration {
    /// The evaluator playouts use.
    pub evaluator: EvaluatorKind,
    /// Seconds this call spent choosing it (0 when it was fixed by the
    /// [`Config`] or chosen before).
    pub seconds: f64,
}

/// Settings of [`Game::load`]: how to compile, which engine and evaluator to
/// use, and how deep a playout may go. Built from [`Config::new`] by builder
/// methods; a setting that can be out of range is refused by its method with
/// a [`SettingError`], so a `Config` holds only valid settings.
///
/// ```
/// use ggpnet::{Config, EngineChoice, Game};
/// let config = Config::new()
///     .max_ground_rules(1_000_000)
///     .engine(EngineChoice::Propnet)
///     .max_playout_depth(200)?;
/// assert_eq!(config.get_load().get_ground().get_max_ground_rules(), 1_000_000);
/// let game = Game::load(ggpnet::DEFAULT_GAME, &config)?;
/// assert_eq!(game.config().get_max_playout_depth(), 200);
/// assert!(Config::new().max_playout_depth(0).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct Config {
    load: LoadConfig,
    engine: EngineChoice,
    evaluator: EvaluatorChoice,
    max_playout_depth: u64,
    native: bool,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            load: LoadConfig::default(),
            engine: EngineChoice::Auto,
            evaluator: EvaluatorChoice::Auto,
            max_playout_depth: DEFAULT_MAX_DEPTH,
            native: true,
        }
    }
}

impl Config {
    /// The defaults: the propnet with the interpreter as fallback, the
    /// evaluator chosen by calibration, native code, the default limits.
    pub fn new() -> Config {
        Config::default()
    }

    /// Grounding limits and optimizer passes of the propnet, all at once (the
    /// methods below set one each).
    pub fn load(mut self, load: LoadConfig) -> Config {
        self.load = load;
        self
    }

    /// Which engine may run the game.
    pub fn engine(mut self, engine: EngineChoice) -> Config {
        self.engine = engine;
        self
    }

    /// Which evaluator runs playouts on the propnet (queries of a
    /// [`Machine`](crate::Machine) use the differential evaluator unless this
    /// fixes the sweep).
    pub fn evaluator(mut self, evaluator: EvaluatorChoice) -> Config {
        self.evaluator = evaluator;
        self
    }

    /// Moves after which a random playout that has not ended is abandoned (at
    /// least 1; 10,000 by default).
    pub fn max_playout_depth(mut self, depth: u64) -> Result<Config, SettingError> {
        if depth == 0 {
            return Err(SettingError::MaxDepth(depth));
        }
        self.max_playout_depth = depth;
        Ok(self)
    }

    /// Whether the propnet's playouts and [`Machine`](crate::Machine) queries
    /// run native code where the platform allows (off: the interpreters of the
    /// evaluators, to measure them).
    pub fn native(mut self, native: bool) -> Config {
        self.native = native;
        self
    }

    /// Most rule instances grounding may find ([`grounder::Config::max_ground_rules`](crate::grounder::Config::max_ground_rules)).
    pub fn max_ground_rules(self, rules: usize) -> Config {
        self.ground(|g| g.max_ground_rules(rules))
    }

    /// Most distinct ground sentences ([`grounder::Config::max_ground_atoms`](crate::grounder::Config::max_ground_atoms)).
    pub fn max_ground_atoms(self, atoms: usize) -> Config {
        self.ground(|g| g.max_ground_atoms(atoms))
    }

    /// Deepest nesting of a ground term ([`grounder::Config::max_term_depth`](crate::grounder::Config::max_term_depth)).
    pub fn max_term_depth(self, depth: usize) -> Config {
        self.ground(|g| g.max_term_depth(depth))
    }

    /// Most bytes grounding may take, estimated ([`grounder::Config::max_bytes`](crate::grounder::Config::max_bytes)).
    pub fn max_ground_bytes(self, bytes: usize) -> Config {
        self.ground(|g| g.max_bytes(bytes))
    }

    /// Most candidate facts the joins may try ([`grounder::Config::max_join_steps`](crate::grounder::Config::max_join_steps)).
    pub fn max_join_steps(self, steps: usize) -> Config {
        self.ground(|g| g.max_join_steps(steps))
    }

    /// Longest wall time grounding and optimizing may take ([`grounder::Config::max_time`](crate::grounder::Config::max_time)).
    pub fn max_ground_time(self, time: Option<Duration>) -> Config {
        self.ground(|g| g.max_time(time))
    }

    /// Threads grounding runs on, 1 to [`MAX_THREADS`](crate::MAX_THREADS) ([`grounder::Config::threads`](crate::grounder::Config::threads)).
    pub fn ground_threads(self, threads: usize) -> Result<Config, SettingError> {
        let ground = self.load.get_ground().clone().threads(threads)?;
        Ok(self.ground(|_| ground))
    }

    /// Which optimizer passes run.
    pub fn optimize(mut self, optimize: OptimizeConfig) -> Config {
        self.load = self.load.optimize(optimize);
        self
    }

    /// A callback told the name of each loading phase as it starts.
    pub fn progress(mut self, progress: Option<Progress>) -> Config {
        self.load = self.load.progress(progress);
        self
    }

    /// See [`Config::load`] and the grounding and optimizer settings.
    pub fn get_load(&self) -> &LoadConfig {
        &self.load
    }

    /// See [`Config::engine`].
    pub fn get_engine(&self) -> EngineChoice {
        self.engine
    }

    /// See [`Config::evaluator`].
    pub fn get_evaluator(&self) -> EvaluatorChoice {
        self.evaluator
    }

    /// See [`Config::max_playout_depth`].
    pub fn get_max_playout_depth(&self) -> u64 {
        self.max_playout_depth
    }

    /// See [`Config::native`].
    pub fn get_native(&self) -> bool {
        self.native
    }

    /// The same with the grounding limits changed by `change`.
    fn ground(mut self, change: impl FnOnce(GroundConfig) -> GroundConfig) -> Config {
        let ground = change(self.load.get_ground().clone());
        self.load = self.load.ground(ground);
        self
    }
}

/// Why a game could not be loaded.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum LoadError {
    /// The propnet could not be built, and no fallback was allowed or needed.
    Propnet(crate::propnet::LoadError),
    /// The interpreter refused the game; `propnet` says why the propnet was not
    /// used, if it was tried.
    Interpreter {
        /// Why the propnet could not be built (`None` when it was not tried).
        propnet: Option<Box<crate::propnet::LoadError>>,
        /// Why the interpreter refused the game.
        refusal: Refusal,
    },
    /// A real-time GDL game, which loads as a
    /// [`RtGame`](crate::realtime::RtGame); the error is what loading it as
    /// GDL gave.
    RealTime(Box<LoadError>),
}

/// Why the interpreter refused a game.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Refusal {
    /// Malformed KIF, with its line and column.
    Parse(ggpnet_kif::ParseError),
    /// Invalid GDL, or a game that cannot be played, with the rule to blame.
    Invalid(ggpnet_grounder::GdlError),
    /// A rule the interpreter cannot evaluate.
    Rules(ReferenceError),
    /// A role without a legal move in the initial state, which is not terminal.
    NoLegalMove {
        /// The role.
        role: String,
    },
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::Parse(e) => e.fmt(f),
            Refusal::Invalid(e) => e.fmt(f),
            Refusal::Rules(e) => e.fmt(f),
            Refusal::NoLegalMove { role } => write!(f, "role {role} has no legal move in the initial state"),
        }
    }
}

impl std::error::Error for Refusal {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Refusal::Parse(e) => Some(e),
            Refusal::Invalid(e) => Some(e),
            Refusal::Rules(e) => Some(e),
            Refusal::NoLegalMove { .. } => None,
        }
    }
}

impl LoadError {
    /// Whether loading stopped at a configured limit rather than finding the game invalid.
    pub fn is_limit(&self) -> bool {
        match self {
            LoadError::Propnet(e) => e.is_limit(),
            LoadError::Interpreter { .. } => false,
            LoadError::RealTime(e) => e.is_limit(),
        }
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Propnet(e) => e.fmt(f),
            LoadError::Interpreter {
                propnet: None,
                refusal,
            } => write!(f, "error: {refusal}"),
            LoadError::Interpreter {
                propnet: Some(e),
                refusal,
            } => write!(f, "{e}; the interpreter refused it too: {refusal}"),
            LoadError::RealTime(e) => write!(
                f,
                "error: this is a real-time GDL (rtGDL) game: load it with ggpnet::realtime::RtGame ({e})"
            ),
        }
    }
}

impl std::error::Error for LoadError {
    /// The propnet's error (why it failed, or why the interpreter was tried),
    /// else the interpreter's.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LoadError::Propnet(e) => Some(e),
            LoadError::Interpreter { propnet: Some(e), .. } => Some(e.as_ref()),
            LoadError::Interpreter { refusal, .. } => Some(refusal),
            LoadError::RealTime(e) => Some(e.as_ref()),
        }
    }
}

/// A game ready to play: cheap to clone and shareable across threads (clones
/// share one compiled engine). Each thread queries it through its own
/// [`Machine`](crate::Machine).
///
/// ```
/// use ggpnet::{Config, Game};
/// let game = Game::load(ggpnet::DEFAULT_GAME, &Config::default()).unwrap();
/// assert_eq!(game.roles(), ["red", "yellow"]);
/// assert_eq!(game.engine(), ggpnet::Engine::Propnet);
/// ```
#[derive(Clone, Debug)]
pub struct Game {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    /// Tells this game's states and moves from other games'.
    id: u64,
    roles: Vec<String>,
    backend: Backend,
    config: Config,
    /// The evaluator playouts use, once chosen.
    evaluator: OnceLock<EvaluatorKind>,
}

/// The engine behind a game.
pub(crate) enum Backend {
    /// The compiled circuit and what loading it took.
    Propnet(Box<Loaded>),
    /// The interpreter, and why the propnet was not used.
    Interpreter(Arc<Reference>, Option<String>),
}

impl fmt::Debug for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Backend::Propnet(loaded) => write!(f, "Propnet({} bases)", loaded.game.facts().len()),
            Backend::Interpreter(_, why) => write!(f, "Interpreter({why:?})"),
        }
    }
}

/// Numbers games in the order they are made.
static NEXT_GAME: AtomicU64 = AtomicU64::new(1);

impl Game {
    /// Parses, checks and compiles a game description (KIF) as `config` says.
    /// Falls back to the interpreter when the propnet passes a grounding limit,
    /// unless [`Config::engine`] forbids it. A real-time GDL game is refused
    /// with a note to load it with [`RtGame`](crate::realtime::RtGame).
    pub fn load(text: &str, config: &Config) -> Result<Game, LoadError> {
        Game::load_gdl(text, config).map_err(|e| {
            if !crate::realtime::is_rtgdl(text) {
                return e;
            }
            LoadError::RealTime(Box::new(e))
        })
    }

    /// [`Game::load`] without the note on rtGDL games.
    fn load_gdl(text: &str, config: &Config) -> Result<Game, LoadError> {
        let backend = match config.engine {
            EngineChoice::Interpreter => Backend::Interpreter(interpret(text, None)?, None),
            EngineChoice::Propnet => Backend::Propnet(Box::new(propnet(text, config)?)),
            EngineChoice::Auto => match crate::propnet::load(text, &config.load) {
                Ok(loaded) => Backend::Propnet(Box::new(loaded)),
                Err(e) if e.is_limit() => {
                    if let Some(progress) = config.load.get_progress() {
                        progress.tell("interpreter (the propnet passed a grounding limit)");
                    }
                    let shown = e.to_string();
                    let reason = shown.strip_prefix("error: ").unwrap_or(&shown).to_owned();
                    Backend::Interpreter(interpret(text, Some(e))?, Some(reason))
                }
                Err(e) => return Err(LoadError::Propnet(e)),
            },
        };
        Ok(Game::from_backend(backend, config.clone()))
    }

    /// A game on an already compiled propnet (for instance a circuit read from JSON).
    pub fn from_loaded(loaded: Loaded, config: &Config) -> Game {
        Game::from_backend(Backend::Propnet(Box::new(loaded)), config.clone())
    }

    fn from_backend(backend: Backend, config: Config) -> Game {
        let roles = match &backend {
            Backend::Propnet(loaded) => loaded.game.roles().to_vec(),
            Backend::Interpreter(reference, _) => reference.roles(),
        };
        let evaluator = OnceLock::new();
        if let EvaluatorChoice::Fixed(kind) = config.evaluator {
            evaluator.set(kind).expect("a new cell is empty");
        }
        Game {
            inner: Arc::new(Inner {
                id: NEXT_GAME.fetch_add(1, Ordering::Relaxed),
                roles,
                backend,
                config,
                evaluator,
            }),
        }
    }

    /// The roles, in the order of the `role` facts (role numbers index this).
    pub fn roles(&self) -> &[String] {
        &self.inner.roles
    }

    /// The number of the role named `name`.
    pub fn role_index(&self, name: &str) -> Option<usize> {
        self.inner.roles.iter().position(|r| r == name)
    }

    /// Whether the game is GDL-II: it has the role `random` or rules for
    /// `sees` (percepts, [`Machine::percepts`](crate::Machine::percepts)).
    pub fn is_gdl2(&self) -> bool {
        self.random_role().is_some()
            || match &self.inner.backend {
                Backend::Propnet(loaded) => loaded.report.defines_sees || !loaded.game.percepts().is_empty(),
                Backend::Interpreter(reference, _) => reference.defines_sees(),
            }
    }

    /// The number of the role `random` of GDL-II (whose moves are drawn
    /// uniformly at random among its legal ones), if the game has it.
    pub fn random_role(&self) -> Option<usize> {
        self.role_index("random")
    }

    /// The engine that runs this game.
    pub fn engine(&self) -> Engine {
        match self.inner.backend {
            Backend::Propnet(_) => Engine::Propnet,
            Backend::Interpreter(..) => Engine::Interpreter,
        }
    }

    /// Why the interpreter runs this game instead of the propnet, such as
    /// `grounding too large: ...` (`None` when the propnet runs it, or the
    /// interpreter was asked for).
    pub fn fallback_reason(&self) -> Option<&str> {
        match &self.inner.backend {
            Backend::Propnet(_) => None,
            Backend::Interpreter(_, why) => why.as_deref(),
        }
    }

    /// The compiled propnet, its circuit and load report (`None` on the interpreter).
    pub fn propnet(&self) -> Option<&Loaded> {
        match &self.inner.backend {
            Backend::Propnet(loaded) => Some(loaded),
            Backend::Interpreter(..) => None,
        }
    }

    /// The settings the game was loaded with.
    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// The evaluator playouts use on the propnet (chosen by calibration the
    /// first time if [`Config::evaluator`] is `Auto`, see [`Game::calibrate`]);
    /// `None` on the interpreter.
    pub fn evaluator(&self) -> Option<EvaluatorKind> {
        self.calibrate().map(|c| c.evaluator)
    }

    /// Chooses the evaluator playouts use now, and says which it is and how
    /// long choosing took (`None` on the interpreter). With
    /// [`EvaluatorChoice::Auto`], the first call of this,
    /// [`Game::evaluator`] or [`Game::playouts`] calibrates: about 0.2 s of
    /// flat Monte-Carlo per evaluator, on one thread. An agent that wants
    /// that cost paid during its start clock calls this; one that does not
    /// pays it on its first playouts. Once chosen, the evaluator stays, and
    /// later calls report it with no time spent.
    ///
    /// ```
    /// use ggpnet::{Config, EvaluatorChoice, EvaluatorKind, Game};
    /// let config = Config::new().evaluator(EvaluatorChoice::Fixed(EvaluatorKind::Sweep));
    /// let game = Game::load(ggpnet::DEFAULT_GAME, &config)?;
    /// let chosen = game.calibrate().unwrap();
    /// assert_eq!(chosen.evaluator, EvaluatorKind::Sweep);
    /// assert_eq!(chosen.seconds, 0.0); // fixed: nothing measured
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn calibrate(&self) -> Option<Calibration> {
        let loaded = self.propnet()?;
        let mut seconds = 0.0;
        let evaluator = *self.inner.evaluator.get_or_init(|| {
            let start = Instant::now();
            let auto = EvaluatorConfig::new(Choice::Auto).native(self.inner.config.native);
            let kind = choose::evaluator(&loaded.game, auto, &EvaluatorKind::ALL);
            seconds = start.elapsed().as_secs_f64();
            kind
        });
        Some(Calibration { evaluator, seconds })
    }

    pub(crate) fn id(&self) -> u64 {
        self.inner.id
    }

    pub(crate) fn backend(&self) -> &Backend {
        &self.inner.backend
    }
}

fn propnet(text: &str, config: &Config) -> Result<Loaded, LoadError> {
    crate::propnet::load(text, &config.load).map_err(LoadError::Propnet)
}

/// The interpreter for `text`, after the checks the propnet path makes (valid
/// GDL, playable, every role with a legal move in a non-terminal initial state).
fn interpret(text: &str, propnet: Option<crate::propnet::LoadError>) -> Result<Arc<Reference>, LoadError> {
    let checked = (|| {
        let mut description = ggpnet_kif::parse(text).map_err(Refusal::Parse)?;
        ggpnet_grounder::prepare(&mut description).map_err(Refusal::Invalid)?;
        ggpnet_grounder::check_playable(&description).map_err(Refusal::Invalid)?;
        let description = ggpnet_kif::parse(text).map_err(Refusal::Parse)?;
        let reference = Reference::new(&description).map_err(Refusal::Rules)?;
        playable_start(&reference)?;
        Ok(reference)
    })();
    match checked {
        Ok(reference) => Ok(Arc::new(reference)),
        Err(refusal) => Err(LoadError::Interpreter {
            propnet: propnet.map(Box::new),
            refusal,
        }),
    }
}

/// An error when some role has no legal move in a non-terminal initial state.
fn playable_start(reference: &Reference) -> Result<(), Refusal> {
    let start = reference.initial_state();
    if reference.is_terminal(&start).map_err(Refusal::Rules)? {
        return Ok(());
    }
    for (index, role) in reference.roles().iter().enumerate() {
        if reference
            .legal_moves(&start, index)
            .map_err(Refusal::Rules)?
            .is_empty()
        {
            return Err(Refusal::NoLegalMove { role: role.clone() });
        }
    }
    Ok(())
}
