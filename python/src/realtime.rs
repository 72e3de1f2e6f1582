//! `ggpnet.RtGame`: real-time GDL games, a thinner wrapper of
//! [`ggpnet::realtime::RtGame`] than `Game` is of the agent API: load,
//! roles, timed states and their pairs, legal moves, goals, the
//! event-driven update, and timed random playouts on every core with the
//! GIL released. Times are exact decimals, given and returned as text
//! (`"0.5"`; a Python number is accepted too).

use crate::errors;
use crate::settings::Settings;
use crate::source;
use ggpnet::realtime::{RtGame as Rt, Time, TimeModel, TimedState, DEFAULT_TIME_MODEL};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use std::sync::Mutex;

/// A real-time GDL game: facts with lifetimes, updated when moves arrive or
/// facts expire. Pickled as its rules and settings.
#[pyclass(frozen, module = "ggpnet")]
pub struct RtGame {
    /// The game (locked: its clone keeps one interpreter cache or machine).
    game: Mutex<Rt>,
    /// Its roles.
    roles: Vec<String>,
    /// The GDL text it was loaded from.
    rules: String,
    /// The settings it was loaded with (`engine` and the grounding limits count).
    settings: Settings,
}

/// A timed state of an [`RtGame`]: every (lifetime, fact) pair that holds.
/// Hashable and comparable for equality; printed as its pairs.
#[pyclass(frozen, module = "ggpnet")]
pub struct RtState {
    /// The state.
    state: TimedState,
    /// The game it belongs to.
    game: Py<RtGame>,
}

/// A time given as text or as a number (to the millionth of a unit).
fn time_arg(given: &Bound<'_, PyAny>) -> PyResult<Time> {
    let text = match given.extract::<String>() {
        Ok(text) => text,
        Err(_) => {
            let value: f64 = given
                .extract()
                .map_err(|_| PyTypeError::new_err("a time is a decimal text such as '0.5', or a number"))?;
            format!("{value:.6}")
        }
    };
    Time::parse(&text).map_err(|reason| errors::raise("RefusedError", reason, vec![("kind", "time".into())]))
}

impl RtGame {
    /// Runs `query` on the game.
    fn with<T>(&self, query: impl FnOnce(&Rt) -> Result<T, ggpnet::realtime::RtError>) -> PyResult<T> {
        let game = self.game.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        query(&game).map_err(|e| errors::rt_error(&e))
    }

    /// Loads `rules` with `settings`, with the GIL released.
    fn load_rules(py: Python<'_>, rules: String, settings: Settings) -> PyResult<RtGame> {
        let config = settings.config()?;
        let engine = config.get_engine();
        let ground = config.get_load().get_ground();
        let game = py
            .detach(|| Rt::load_limited(&rules, engine, ground))
            .map_err(|e| errors::rt_error(&e))?;
        Ok(RtGame {
            roles: game.roles().to_vec(),
            game: Mutex::new(game),
            rules,
            settings,
        })
    }

    /// The number of the role given by number or name.
    fn role(&self, role: &crate::game::RoleArg) -> PyResult<usize> {
        use crate::game::RoleArg;
        let index = match role {
            RoleArg::Index(i) => Some(*i).filter(|&i| i < self.roles.len()),
            RoleArg::Name(name) => self.roles.iter().position(|r| r == name),
        };
        index.ok_or_else(|| {
            let message = format!("no such role: the roles are {}", self.roles.join(", "));
            errors::raise("NoSuchRoleError", message, Vec::new())
        })
    }
}

/// `state` as a state of `game`.
fn wrap(game: &Bound<'_, RtGame>, state: TimedState) -> RtState {
    RtState {
        state,
        game: game.clone().unbind(),
    }
}

#[pymethods]
impl RtGame {
    /// Loads an rtGDL game from a path or its text (see `Game.load`); the
    /// settings are `engine` and the grounding limits of `Game.load`.
    #[staticmethod]
    #[pyo3(signature = (source, **settings))]
    fn load(
        py: Python<'_>,
        source: &Bound<'_, PyAny>,
        settings: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<RtGame> {
        let settings = Settings::from_kwargs(settings)?;
        let rules = source::read(py, source, Some("gdl"))?;
        RtGame::load_rules(py, rules, settings)
    }

    /// The roles' names.
    #[getter]
    fn roles(&self) -> Vec<String> {
        self.roles.clone()
    }

    /// The engine that runs the game: `"propnet"` or `"interpreter"`.
    #[getter]
    fn engine(&self) -> PyResult<&'static str> {
        self.with(|g| Ok(g.engine().name()))
    }

    /// Why the interpreter runs the game (`None` on the propnet, or when asked for).
    #[getter]
    fn fallback_reason(&self) -> PyResult<Option<String>> {
        self.with(|g| Ok(g.fallback_reason().map(str::to_owned)))
    }

    /// The rules' text.
    #[getter]
    fn rules(&self) -> &str {
        &self.rules
    }

    /// The initial state.
    fn initial_state(slf: &Bound<'_, Self>) -> PyResult<RtState> {
        let state = slf.get().with(|g| Ok(g.initial_state()))?;
        Ok(wrap(slf, state))
    }

    /// The (lifetime, fact) pairs of `state` (lifetimes as text: a decimal
    /// or `"infinity"`), sorted by fact then lifetime.
    fn pairs(&self, state: &RtState) -> PyResult<Vec<(String, String)>> {
        let pairs = self.with(|g| g.pairs(&state.state))?;
        Ok(pairs
            .into_iter()
            .map(|(life, fact)| (life.to_string(), fact))
            .collect())
    }

    /// The legal moves of `role` in `state` (KIF, sorted).
    fn legal_moves(&self, state: &RtState, role: crate::game::RoleArg) -> PyResult<Vec<String>> {
        let role = self.role(&role)?;
        self.with(|g| g.legal_moves(&state.state, role))
    }

    /// Whether `state` is terminal.
    fn is_terminal(&self, state: &RtState) -> PyResult<bool> {
        self.with(|g| g.is_terminal(&state.state))
    }

    /// Per role, its goal in `state` when exactly one value is derivable.
    fn goals(&self, state: &RtState) -> PyResult<Vec<Option<i64>>> {
        self.with(|g| g.goals(&state.state))
    }

    /// The time until `state`'s first fact expires (`None` when every
    /// lifetime is infinite), as text.
    fn next_expiry(&self, state: &RtState) -> PyResult<Option<String>> {
        Ok(self.with(|g| g.next_expiry(&state.state))?.map(|t| t.to_string()))
    }

    /// The state after `elapsed` time (text or number) with `moves` (one
    /// per role: KIF text, or `None` for a role that does not move).
    fn update(
        slf: &Bound<'_, Self>,
        state: &RtState,
        elapsed: &Bound<'_, PyAny>,
        moves: Vec<Option<String>>,
    ) -> PyResult<RtState> {
        let elapsed = time_arg(elapsed)?;
        let next = slf.get().with(|g| g.update(&state.state, elapsed, &moves))?;
        Ok(wrap(slf, next))
    }

    /// Random timed playouts from `state` (the initial state when `None`):
    /// `playouts` or `seconds` (exactly one), on `threads` threads (every
    /// core by default), with players' delays drawn from `time_model`
    /// (`"uniform:MAX"`, `"exp:MEAN"` or `"immediate"`) and at most
    /// `max_events` updates a playout; a dict of the totals.
    #[pyo3(signature = (state = None, *, playouts = None, seconds = None, threads = None, seed = 0, time_model = DEFAULT_TIME_MODEL, max_events = 10_000))]
    #[allow(clippy::too_many_arguments)]
    fn playouts<'py>(
        &self,
        py: Python<'py>,
        state: Option<&RtState>,
        playouts: Option<u64>,
        seconds: Option<f64>,
        threads: Option<usize>,
        seed: u64,
        time_model: &str,
        max_events: u64,
    ) -> PyResult<Bound<'py, PyDict>> {
        let budget = crate::playouts::budget(playouts, seconds)?;
        let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
        let threads = threads.unwrap_or(cores.min(ggpnet::MAX_THREADS));
        let model: TimeModel = time_model
            .parse()
            .map_err(|reason: String| crate::settings::bad_name("time_model", time_model, &reason))?;
        let game = self.with(|g| Ok(g.clone()))?;
        let from = match state {
            Some(s) => s.state.clone(),
            None => game.initial_state(),
        };
        let report = py
            .detach(|| game.playouts(&from, model, max_events, budget, threads, seed))
            .map_err(|e| errors::rt_error(&e))?;
        report_dict(py, &report)
    }

    /// Pickled as its rules and settings: unpickling loads it again.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let rebuild = py.import("ggpnet._ggpnet")?.getattr("_rebuild_rt_game")?;
        (rebuild, (self.rules.as_str(), self.settings.to_dict(py)?)).into_pyobject(py)
    }

    /// A summary for the interpreter's prompt.
    fn __repr__(&self) -> PyResult<String> {
        Ok(format!(
            "<ggpnet.RtGame roles={:?} engine={}>",
            self.roles,
            self.engine()?
        ))
    }
}

/// The totals of timed playouts, by name.
fn report_dict<'py>(py: Python<'py>, report: &ggpnet::realtime::TimedReport) -> PyResult<Bound<'py, PyDict>> {
    let t = &report.totals;
    let dict = PyDict::new(py);
    dict.set_item("threads", report.threads)?;
    dict.set_item("seconds", report.seconds)?;
    dict.set_item("playouts", t.playouts)?;
    dict.set_item("terminal", t.terminal)?;
    dict.set_item("at_event_limit", t.at_event_limit)?;
    dict.set_item("stalled", t.stalled)?;
    dict.set_item("events", t.events)?;
    dict.set_item("moves", t.moves)?;
    dict.set_item("ignored_moves", t.ignored_moves)?;
    dict.set_item("game_time", t.game_time)?;
    dict.set_item("avg_goals", report.avg_goals())?;
    dict.set_item("events_per_sec", report.events_per_sec())?;
    Ok(dict)
}

#[pymethods]
impl RtState {
    /// The game this state belongs to.
    #[getter]
    fn game(&self, py: Python<'_>) -> Py<RtGame> {
        self.game.clone_ref(py)
    }

    /// The pairs, `(lifetime fact)`, separated by spaces.
    fn __str__(&self) -> PyResult<String> {
        let pairs = self.game.get().pairs(self)?;
        let shown: Vec<String> = pairs
            .iter()
            .map(|(life, fact)| format!("({life} {fact})"))
            .collect();
        Ok(shown.join(" "))
    }

    /// A summary for the interpreter's prompt.
    fn __repr__(&self) -> PyResult<String> {
        Ok(format!("<ggpnet.RtState {}>", self.__str__()?))
    }

    /// A hash agreeing with equality.
    fn __hash__(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        self.state.hash(&mut hasher);
        hasher.finish()
    }

    /// Equal: the same pairs, of the same game.
    fn __eq__(&self, other: &Bound<'_, PyAny>) -> bool {
        other.cast::<RtState>().is_ok_and(|o| o.get().state == self.state)
    }
}

/// Loads the rtGDL game `rules` with `settings`: how a pickled game is rebuilt.
#[pyfunction]
#[pyo3(signature = (rules, settings = None))]
pub fn _rebuild_rt_game(
    py: Python<'_>,
    rules: String,
    settings: Option<&Bound<'_, PyDict>>,
) -> PyResult<RtGame> {
    RtGame::load_rules(py, rules, Settings::from_kwargs(settings)?)
}
