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
use crate::propnet::{LoadConfig, Loaded};
use ggpnet_reference::{Reference, ReferenceError};
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Instant;

/// Which engine runs a game.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Engine {
    /// The compiled propositional network.
    Propnet,
    /// The reference interpreter, evaluating the rules on each state.
    Interpreter,
}

impl Engine {
    /// Its name in reports (`propnet`, `interpreter`).
    pub fn name(self) -> &'static str {
        match self {
            Engine::Propnet => "propnet",
            Engine::Interpreter => "interpreter",
        }
    }
}

impl fmt::Display for Engine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Which engine [`Game::load`] may use.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub enum EngineChoice {
    /// The propnet, or the interpreter when grounding passes one of its limits.
    #[default]
    Auto,
    /// The propnet only: a game too large to ground is an error.
    Propnet,
    /// The interpreter only (for games known to be too large, and for tests).
    Interpreter,
}

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
/// use, and how deep a playout may go.
#[derive(Clone, Debug)]
pub struct Config {
    /// Grounding limits and optimizer passes of the propnet.
    pub load: LoadConfig,
    /// Which engine may run the game.
    pub engine: EngineChoice,
    /// Which evaluator runs playouts on the propnet (queries of a
    /// [`Machine`](crate::Machine) use the differential evaluator unless this
    /// fixes the sweep).
    pub evaluator: EvaluatorChoice,
    /// Moves after which a random playout that has not ended is abandoned (at least 1).
    pub max_playout_depth: u64,
    /// Whether the propnet's playouts and [`Machine`](crate::Machine) queries
    /// run native code where the platform allows (off: the interpreters of the
    /// evaluators, to measure them).
    pub native: bool,
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

/// Why a game could not be loaded.
#[derive(Clone, Debug)]
pub enum LoadError {
    /// The propnet could not be built, and no fallback was allowed or needed.
    Propnet(crate::propnet::LoadError),
    /// The interpreter refused the game; `propnet` says why the propnet was not
    /// used, if it was tried.
    Interpreter {
        /// Why the propnet could not be built (`None` when it was not tried).
        propnet: Option<crate::propnet::LoadError>,
        /// Why the interpreter refused the game.
        reason: String,
    },
}

impl LoadError {
    /// Whether loading stopped at a configured limit rather than finding the game invalid.
    pub fn is_limit(&self) -> bool {
        match self {
            LoadError::Propnet(e) => e.is_limit(),
            LoadError::Interpreter { .. } => false,
        }
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LoadError::Propnet(e) => e.fmt(f),
            LoadError::Interpreter {
                propnet: None,
                reason,
            } => write!(f, "error: {reason}"),
            LoadError::Interpreter {
                propnet: Some(e),
                reason,
            } => write!(f, "{e}; the interpreter refused it too: {reason}"),
        }
    }
}

impl std::error::Error for LoadError {
    /// The propnet's error: why it failed, or why the interpreter was tried.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LoadError::Propnet(e) => Some(e),
            LoadError::Interpreter { propnet, .. } => propnet.as_ref().map(|e| e as _),
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
            if !ggpnet_kif::parse(text).is_ok_and(|d| ggpnet_kif::rtgdl::is_rtgdl(&d)) {
                return e;
            }
            LoadError::Interpreter {
                propnet: None,
                reason: format!(
                    "this is a real-time GDL (rtGDL) game: load it with ggpnet::realtime::RtGame ({e})"
                ),
            }
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
                    if let Some(crate::propnet::pipeline::Progress(tell)) = &config.load.progress {
                        tell("interpreter (the propnet passed a grounding limit)");
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
    /// let config = Config {
    ///     evaluator: EvaluatorChoice::Fixed(EvaluatorKind::Sweep),
    ///     ..Config::default()
    /// };
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
            let auto = EvaluatorConfig::new(Choice::Auto).with_native(self.inner.config.native);
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
    let refuse = |reason: String, propnet: Option<crate::propnet::LoadError>| LoadError::Interpreter {
        propnet,
        reason,
    };
    let checked = (|| {
        let mut description = ggpnet_kif::parse(text).map_err(|e| e.to_string())?;
        ggpnet_grounder::prepare(&mut description).map_err(|e| e.to_string())?;
        ggpnet_grounder::check_playable(&description).map_err(|e| e.to_string())?;
        let description = ggpnet_kif::parse(text).map_err(|e| e.to_string())?;
        let reference = Reference::new(&description).map_err(|e: ReferenceError| e.to_string())?;
        playable_start(&reference)?;
        Ok(reference)
    })();
    match checked {
        Ok(reference) => Ok(Arc::new(reference)),
        Err(reason) => Err(refuse(reason, propnet)),
    }
}

/// An error when some role has no legal move in a non-terminal initial state.
fn playable_start(reference: &Reference) -> Result<(), String> {
    let start = reference.initial_state();
    if reference.is_terminal(&start) {
        return Ok(());
    }
    for (index, role) in reference.roles().iter().enumerate() {
        if reference.legal_moves(&start, index).is_empty() {
            return Err(format!("role {role} has no legal move in the initial state"));
        }
    }
    Ok(())
}
