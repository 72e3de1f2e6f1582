//! `ggpnet.Game`: a loaded game and the agent API on it (roles, states,
//! legal moves, next states, goals, random and joint moves, successors,
//! playouts on every core with the GIL released), mirroring
//! [`ggpnet::Game`] and [`ggpnet::Machine`].

use crate::errors;
use crate::playouts::{Playout, PlayoutReport};
use crate::settings::{evaluator_choice, Settings};
use crate::source;
use crate::stream::PyStream;
use crate::values::{Move, State};
use ggpnet::{EvaluatorChoice, Machine, MachineError, Stream};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use std::sync::Mutex;

/// A game loaded from GDL (or GDL-II, or a Simplified Boardgames game): its
/// rules compiled to a propositional network, or run by the reference
/// interpreter when grounding passes a limit. Immutable and shareable by
/// threads; pickled as its rules and settings (unpickling compiles again).
#[pyclass(frozen, module = "ggpnet")]
pub struct Game {
    /// The game.
    pub(crate) game: ggpnet::Game,
    /// The GDL text it was loaded from.
    rules: String,
    /// The settings it was loaded with.
    settings: Settings,
    /// The machine for queries (a query that finds it busy makes another).
    machine: Mutex<Machine>,
    /// The random stream of draws given no `rng`.
    rng: Mutex<Stream>,
}

/// A role given by number or by name.
#[derive(FromPyObject)]
pub enum RoleArg {
    /// The role's number.
    Index(usize),
    /// The role's name.
    Name(String),
}

impl Game {
    /// Loads `rules` with `settings`, with the GIL released.
    pub(crate) fn load_rules(py: Python<'_>, rules: String, settings: Settings) -> PyResult<Game> {
        let config = settings.config()?;
        let game = py
            .detach(|| ggpnet::Game::load(&rules, &config))
            .map_err(|e| errors::load_error(&e))?;
        Ok(Game {
            machine: Mutex::new(game.machine()),
            game,
            rules,
            settings,
            rng: Mutex::new(Stream::new(0, 0)),
        })
    }

    /// Runs `query` on the game's machine, or on a new one when another
    /// thread is using it (no lock is ever waited for).
    pub(crate) fn with_machine<T>(&self, query: impl FnOnce(&mut Machine) -> T) -> T {
        match self.machine.try_lock() {
            Ok(mut machine) => query(&mut machine),
            Err(_) => query(&mut self.game.machine()),
        }
    }

    /// The number of `role`.
    pub(crate) fn role(&self, role: &RoleArg) -> PyResult<usize> {
        match role {
            RoleArg::Index(i) if *i < self.game.roles().len() => Ok(*i),
            RoleArg::Index(i) => Err(errors::error(&ggpnet::Error::NoSuchRole {
                role: *i,
                roles: self.game.roles().len(),
            })),
            RoleArg::Name(name) => self.game.role_index(name).ok_or_else(|| {
                let message = format!("no role '{name}': the roles are {}", self.game.roles().join(", "));
                errors::raise("NoSuchRoleError", message, vec![("role", name.as_str().into())])
            }),
        }
    }

    /// The move of `role` given as a `Move` or as KIF text.
    fn move_arg(&self, role: usize, given: &Bound<'_, PyAny>) -> PyResult<ggpnet::Move> {
        if let Ok(m) = given.cast::<Move>() {
            return Ok(m.get().mv.clone());
        }
        let text: String = given
            .extract()
            .map_err(|_| PyTypeError::new_err("a move is a ggpnet.Move or its KIF text"))?;
        self.game.parse_move(role, &text).map_err(|e| errors::error(&e))
    }

    /// A joint move given as a sequence of `Move`s or KIF texts, one per role.
    fn joint_arg(&self, joint: &Bound<'_, PyAny>) -> PyResult<Vec<ggpnet::Move>> {
        let given: Vec<Bound<'_, PyAny>> = joint.extract()?;
        let expected = self.game.roles().len();
        if given.len() != expected {
            let found = given.len();
            let wrong = MachineError::WrongJointLength { expected, found };
            return Err(py_err(ggpnet::Error::Refused(wrong)));
        }
        given
            .iter()
            .enumerate()
            .map(|(role, m)| self.move_arg(role, m))
            .collect()
    }

    /// Runs `draw` on the stream `rng` names: a `ggpnet.Stream`, a seed (a
    /// new stream), or `None` (the game's own stream).
    fn with_rng<T>(
        &self,
        rng: Option<&Bound<'_, PyAny>>,
        draw: impl FnOnce(&mut Stream) -> T,
    ) -> PyResult<T> {
        match rng {
            None => {
                let mut stream = self.rng.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
                Ok(draw(&mut stream))
            }
            Some(given) => match given.cast::<PyStream>() {
                Ok(stream) => Ok(draw(&mut stream.borrow_mut().stream)),
                Err(_) => {
                    let seed: u64 = given
                        .extract()
                        .map_err(|_| PyTypeError::new_err("rng is a ggpnet.Stream, a seed or None"))?;
                    Ok(draw(&mut Stream::new(seed, 0)))
                }
            },
        }
    }
}

/// `value` as a move of the game `game`.
pub(crate) fn wrap_move(game: &Bound<'_, Game>, mv: ggpnet::Move) -> Move {
    Move {
        mv,
        game: game.clone().unbind(),
    }
}

/// `state` as a state of the game `game`.
pub(crate) fn wrap_state(game: &Bound<'_, Game>, state: ggpnet::State) -> State {
    State {
        state,
        game: game.clone().unbind(),
    }
}

/// Moves as moves of `game`.
fn wrap_moves(game: &Bound<'_, Game>, moves: Vec<ggpnet::Move>) -> Vec<Move> {
    moves.into_iter().map(|m| wrap_move(game, m)).collect()
}

/// A Rust error of the agent API as its Python exception.
fn py_err(e: ggpnet::Error) -> PyErr {
    errors::error(&e)
}

#[pymethods]
impl Game {
    /// Loads a game: `source` is a path (a `pathlib.Path`, or a `str` without a
    /// parenthesis, a line break or `<<`) or the rules' text; `format` is `"gdl"`, `"sbg"` or `None`
    /// (SBG for a `.sbg` file). Settings: `engine`, `evaluator`,
    /// `max_playout_depth`, the grounding limits `max_ground_rules`,
    /// `max_ground_atoms`, `max_term_depth`, `max_ground_bytes`,
    /// `max_join_steps`, `max_ground_time` (seconds), `ground_threads`, `native`.
    #[staticmethod]
    #[pyo3(signature = (source, *, format = None, **settings))]
    fn load(
        py: Python<'_>,
        source: &Bound<'_, PyAny>,
        format: Option<&str>,
        settings: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Game> {
        let settings = Settings::from_kwargs(settings)?;
        let rules = source::read(py, source, format)?;
        Game::load_rules(py, rules, settings)
    }

    /// The roles' names, in the order of the `role` facts (role numbers index it).
    #[getter]
    fn roles(&self) -> Vec<String> {
        self.game.roles().to_vec()
    }

    /// The number of the role named `name` (`NoSuchRoleError` if none is).
    fn role_index(&self, name: String) -> PyResult<usize> {
        self.role(&RoleArg::Name(name))
    }

    /// The engine that runs the game: `"propnet"` or `"interpreter"`.
    #[getter]
    fn engine(&self) -> &'static str {
        self.game.engine().name()
    }

    /// Why the interpreter runs the game instead of the propnet (`None` when
    /// the propnet runs it, or the interpreter was asked for).
    #[getter]
    fn fallback_reason(&self) -> Option<String> {
        self.game.fallback_reason().map(str::to_owned)
    }

    /// Whether the game is GDL-II (the role `random`, or rules for `sees`).
    #[getter]
    fn is_gdl2(&self) -> bool {
        self.game.is_gdl2()
    }

    /// The number of the role `random` of GDL-II, if the game has it.
    #[getter]
    fn random_role(&self) -> Option<usize> {
        self.game.random_role()
    }

    /// The GDL text the game was loaded from (an SBG game's translation).
    #[getter]
    fn rules(&self) -> &str {
        &self.rules
    }

    /// The settings the game was loaded with, as `Game.load` takes them.
    #[getter]
    fn settings<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        self.settings.to_dict(py)
    }

    /// The most joint moves a playout plays before it is abandoned (the
    /// `max_playout_depth` setting, or its default); `VectorEnv`'s default
    /// `max_steps` and the OpenSpiel adapter's `max_game_length`.
    #[getter]
    fn max_playout_depth(&self) -> u64 {
        self.game.config().get_max_playout_depth()
    }

    /// The evaluator playouts use on the propnet (`None` on the interpreter);
    /// the first ask calibrates when the evaluator is `"auto"` (see `calibrate`).
    #[getter]
    fn evaluator(&self, py: Python<'_>) -> Option<&'static str> {
        py.detach(|| self.game.evaluator()).map(|k| k.name())
    }

    /// Chooses the evaluator playouts use now (about 0.2 s per evaluator when
    /// it is `"auto"`, once): `(evaluator, seconds spent)`, `None` on the
    /// interpreter.
    fn calibrate(&self, py: Python<'_>) -> Option<(&'static str, f64)> {
        py.detach(|| self.game.calibrate())
            .map(|c| (c.evaluator.name(), c.seconds))
    }

    /// The base propositions (facts a state may hold) in the order of
    /// `VectorEnv`'s observations; `EngineError` on the interpreter.
    #[getter]
    fn bases(&self) -> PyResult<Vec<String>> {
        Ok(crate::env::compiled(self)?.facts().to_vec())
    }

    /// Every move of `role` that can ever be legal, in the dense order of
    /// `VectorEnv`'s actions (action `i` is `actions(role)[i]`);
    /// `EngineError` on the interpreter.
    pub(crate) fn actions(slf: &Bound<'_, Self>, role: RoleArg) -> PyResult<Vec<Move>> {
        let game = slf.get();
        let role = game.role(&role)?;
        let compiled = crate::env::compiled(game)?;
        let moves = compiled.role_moves()[role]
            .iter()
            .map(|&m| game.game.parse_move(role, compiled.move_to_kif(m)))
            .collect::<Result<Vec<_>, _>>()
            .map_err(py_err)?;
        Ok(wrap_moves(slf, moves))
    }

    /// Every percept (`sees`) `role` can receive, KIF, in the circuit's
    /// order: the vocabulary of the environments' GDL-II observations
    /// (empty for a game without `sees`); `EngineError` on the interpreter.
    fn possible_percepts(&self, role: RoleArg) -> PyResult<Vec<String>> {
        let role = self.role(&role)?;
        let compiled = crate::env::compiled(self)?;
        Ok(compiled
            .percepts()
            .iter()
            .filter(|(r, _)| *r == role)
            .map(|(_, text)| text.clone())
            .collect())
    }

    /// The initial state.
    fn initial_state(slf: &Bound<'_, Self>) -> State {
        wrap_state(slf, slf.get().game.initial_state())
    }

    /// The legal moves of `role` (a number or a name) in `state` (propnet: in
    /// input order; interpreter: sorted by text).
    fn legal_moves(slf: &Bound<'_, Self>, state: &State, role: RoleArg) -> PyResult<Vec<Move>> {
        let game = slf.get();
        let role = game.role(&role)?;
        let moves = game
            .with_machine(|m| m.legal_moves(&state.state, role))
            .map_err(py_err)?;
        Ok(wrap_moves(slf, moves))
    }

    /// Whether `state` is terminal.
    fn is_terminal(&self, state: &State) -> PyResult<bool> {
        self.with_machine(|m| m.is_terminal(&state.state)).map_err(py_err)
    }

    /// Per role, its goal in `state`: the highest value derivable, `None` if none is.
    fn goals(&self, state: &State) -> PyResult<Vec<Option<i64>>> {
        self.with_machine(|m| m.goals(&state.state)).map_err(py_err)
    }

    /// Per role, every goal value derivable in `state`, ascending.
    fn goal_values(&self, state: &State) -> PyResult<Vec<Vec<i64>>> {
        self.with_machine(|m| m.goal_values(&state.state)).map_err(py_err)
    }

    /// The state after every role plays its move of `joint` (one `Move` or
    /// KIF text per role, in role order) in `state`; an illegal move raises
    /// `IllegalMoveError` naming the role and the move.
    fn next_state(slf: &Bound<'_, Self>, state: &State, joint: &Bound<'_, PyAny>) -> PyResult<State> {
        let game = slf.get();
        let joint = game.joint_arg(joint)?;
        let next = game
            .with_machine(|m| m.next_state(&state.state, &joint))
            .map_err(py_err)?;
        Ok(wrap_state(slf, next))
    }

    /// Per role, the GDL-II percepts (`sees`) after `joint` in `state`, KIF,
    /// sorted; empty lists for a game without `sees`.
    fn percepts(&self, state: &State, joint: &Bound<'_, PyAny>) -> PyResult<Vec<Vec<String>>> {
        let joint = self.joint_arg(joint)?;
        self.with_machine(|m| m.percepts(&state.state, &joint))
            .map_err(py_err)
    }

    /// A uniformly random legal move of `role` in `state` (`None` if it has
    /// none), drawn from `rng` (a `Stream`, a seed, or `None`: the game's stream).
    #[pyo3(signature = (state, role, rng = None))]
    fn random_move(
        slf: &Bound<'_, Self>,
        state: &State,
        role: RoleArg,
        rng: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Option<Move>> {
        let game = slf.get();
        let role = game.role(&role)?;
        let drawn = game.with_rng(rng, |rng| {
            game.with_machine(|m| m.random_move(&state.state, role, rng))
        })?;
        Ok(drawn.map_err(py_err)?.map(|m| wrap_move(slf, m)))
    }

    /// A joint move of uniformly random legal moves (drawn in role order),
    /// with the moves of `fixed` (one entry per role, a move or `None`) where
    /// given; `None` when some role has no legal move.
    #[pyo3(signature = (state, fixed = None, rng = None))]
    fn random_joint_move(
        slf: &Bound<'_, Self>,
        state: &State,
        fixed: Option<Vec<Option<Bound<'_, PyAny>>>>,
        rng: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Option<Vec<Move>>> {
        let game = slf.get();
        let fixed = match fixed {
            None => vec![None; game.game.roles().len()],
            Some(given) => given
                .iter()
                .enumerate()
                .map(|(role, m)| m.as_ref().map(|m| game.move_arg(role, m)).transpose())
                .collect::<PyResult<Vec<_>>>()?,
        };
        let drawn = game.with_rng(rng, |rng| {
            game.with_machine(|m| m.random_joint_move_with(&state.state, &fixed, rng))
        })?;
        Ok(drawn.map_err(py_err)?.map(|joint| wrap_moves(slf, joint)))
    }

    /// Every joint move in `state` (each combination of the roles' legal
    /// moves, the first role's changing slowest); `TooManyJointMovesError`
    /// past `MAX_JOINT_MOVES`.
    fn legal_joint_moves(slf: &Bound<'_, Self>, state: &State) -> PyResult<Vec<Vec<Move>>> {
        let game = slf.get();
        let joints = slf
            .py()
            .detach(|| game.with_machine(|m| m.legal_joint_moves(&state.state)))
            .map_err(py_err)?;
        Ok(joints.into_iter().map(|j| wrap_moves(slf, j)).collect())
    }

    /// Each legal joint move with the state it leads to, as `legal_joint_moves`
    /// orders them.
    fn successors(slf: &Bound<'_, Self>, state: &State) -> PyResult<Vec<(Vec<Move>, State)>> {
        let game = slf.get();
        let successors = slf
            .py()
            .detach(|| game.with_machine(|m| m.successors(&state.state)))
            .map_err(py_err)?;
        Ok(successors
            .into_iter()
            .map(|(joint, next)| (wrap_moves(slf, joint), wrap_state(slf, next)))
            .collect())
    }

    /// A move of `role` written in KIF (any spacing); on the propnet, a move
    /// that is never legal raises `UnknownMoveError`.
    fn parse_move(slf: &Bound<'_, Self>, role: RoleArg, text: &str) -> PyResult<Move> {
        let game = slf.get();
        let role = game.role(&role)?;
        let mv = game.game.parse_move(role, text).map_err(py_err)?;
        Ok(wrap_move(slf, mv))
    }

    /// The canonical KIF of `move` (as `str(move)`).
    fn move_to_kif(&self, r#move: &Move) -> PyResult<String> {
        self.game.move_to_kif(&r#move.mv).map_err(py_err)
    }

    /// The true facts of `state`, canonical KIF, sorted by byte order.
    fn state_to_kif(&self, state: &State) -> PyResult<Vec<String>> {
        self.game.state_to_kif(&state.state).map_err(py_err)
    }

    /// The state in which exactly `facts` (KIF) hold; a fact that can never
    /// hold raises `UnknownFactError`.
    fn state_from_kif(slf: &Bound<'_, Self>, facts: Vec<String>) -> PyResult<State> {
        let state = slf.get().game.state_from_kif(&facts).map_err(py_err)?;
        Ok(wrap_state(slf, state))
    }

    /// Perft: `counts[d - 1]` is the number of joint-move paths of length `d`
    /// from `state` (the initial state when `None`), for `d` up to `depth`,
    /// counted with the scalar `evaluator` on the propnet (the GIL released).
    #[pyo3(signature = (depth, evaluator = "differential", state = None))]
    fn perft(
        &self,
        py: Python<'_>,
        depth: usize,
        evaluator: &str,
        state: Option<&State>,
    ) -> PyResult<Vec<u128>> {
        let kind = match evaluator_choice(evaluator)? {
            EvaluatorChoice::Fixed(kind) if kind.is_scalar() => kind,
            _ => {
                return Err(crate::settings::bad_name(
                    "evaluator",
                    evaluator,
                    "sweep or differential",
                ))
            }
        };
        let from = state.map_or_else(|| self.game.initial_state(), |s| s.state.clone());
        py.detach(|| self.game.perft_from(&from, depth, kind))
            .map_err(py_err)
    }

    /// Random playouts from `state` (the initial state when `None`) until
    /// the budget is spent: `playouts` ended playouts or `seconds` of wall
    /// time (exactly one of them), on `threads` threads (every core when
    /// `None`), drawn from `seed`; the GIL is released meanwhile.
    #[pyo3(signature = (state = None, *, playouts = None, seconds = None, threads = None, seed = 0))]
    fn playouts(
        &self,
        py: Python<'_>,
        state: Option<&State>,
        playouts: Option<u64>,
        seconds: Option<f64>,
        threads: Option<usize>,
        seed: u64,
    ) -> PyResult<PlayoutReport> {
        let how = crate::playouts::how(playouts, seconds, threads, seed)?;
        let report = match state {
            Some(state) => py.detach(|| self.game.playouts(&state.state, &how)),
            None => py.detach(|| self.game.playouts(&self.game.initial_state(), &how)),
        };
        Ok(PlayoutReport::from(report.map_err(py_err)?))
    }

    /// One random playout from `state` (each role in turn plays a uniformly
    /// random legal move, drawn from `rng`) to a terminal state, a state where
    /// some role has no legal move, or `max_playout_depth` moves.
    #[pyo3(signature = (state, rng = None))]
    fn playout(slf: &Bound<'_, Self>, state: &State, rng: Option<&Bound<'_, PyAny>>) -> PyResult<Playout> {
        let game = slf.get();
        let (end, last) = game
            .with_rng(rng, |rng| {
                game.with_machine(|m| m.playout_to_end(&state.state, rng))
            })?
            .map_err(py_err)?;
        Playout::new(slf.py(), end, wrap_state(slf, last))
    }

    /// Pickled as its rules and settings: unpickling loads it again.
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let rebuild = py.import("ggpnet._ggpnet")?.getattr("_rebuild_game")?;
        (rebuild, (self.rules.as_str(), self.settings.to_dict(py)?)).into_pyobject(py)
    }

    /// A game is immutable: its copy is itself.
    fn __copy__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// A game is immutable: its copy is itself (no compiling again).
    fn __deepcopy__(slf: Py<Self>, _memo: &Bound<'_, PyAny>) -> Py<Self> {
        slf
    }

    /// A summary for the interpreter's prompt.
    fn __repr__(&self) -> String {
        format!(
            "<ggpnet.Game roles={:?} engine={}>",
            self.game.roles(),
            self.game.engine()
        )
    }
}

/// Loads `rules` with `settings` (the settings `Game.settings` gave): how a
/// pickled game is rebuilt.
#[pyfunction]
#[pyo3(signature = (rules, settings = None))]
pub fn _rebuild_game(py: Python<'_>, rules: String, settings: Option<&Bound<'_, PyDict>>) -> PyResult<Game> {
    Game::load_rules(py, rules, Settings::from_kwargs(settings)?)
}

/// The state of `game` whose true facts are `facts`: how a pickled state is rebuilt.
#[pyfunction]
pub fn _restore_state(game: &Bound<'_, Game>, facts: Vec<String>) -> PyResult<State> {
    Game::state_from_kif(game, facts)
}

/// The move `text` of role number `role` of `game`: how a pickled move is rebuilt.
#[pyfunction]
pub fn _restore_move(game: &Bound<'_, Game>, role: usize, text: &str) -> PyResult<Move> {
    Game::parse_move(game, RoleArg::Index(role), text)
}
