//! `ggpnet.VectorEnv`: `n` games side by side for learning, with numpy
//! arrays for observations (the base propositions), legal-action masks,
//! rewards (the goals when an episode ends) and end flags. The arrays belong
//! to the environment and are written in place by each step, from Rust with
//! the GIL released (no copies): a caller that keeps one past the next step
//! copies it.

use crate::batch::{all_drawn, engine_for, Batch, Buffers, Setup};
use crate::errors;
use crate::game::{wrap_state, Game, RoleArg};
use crate::settings::evaluator_choice;
use crate::values::{Move, State};
use ggpnet::{EvaluatorChoice, MAX_THREADS};
use numpy::{
    AllowTypeChange, PyArray1, PyArray2, PyArray3, PyArrayLike2, PyArrayMethods, PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PySlice, PyTuple};
use std::sync::Arc;

/// The compiled game behind `game`, or `EngineError` when the interpreter runs it.
pub(crate) fn compiled(game: &Game) -> PyResult<&Arc<ggpnet::propnet::Game>> {
    match game.game.propnet() {
        Some(loaded) => Ok(&loaded.game),
        None => Err(errors::raise(
            "EngineError",
            "the game runs on the interpreter: base propositions, actions and VectorEnv need the propnet",
            Vec::new(),
        )),
    }
}

/// `n` games side by side, stepped together (see the module documentation
/// and `docs/PYTHON.md`).
#[pyclass(module = "ggpnet")]
pub struct VectorEnv {
    /// The game.
    game: Py<Game>,
    /// The lanes and their machines.
    batch: Batch,
    /// Lanes x bases, `uint8`.
    observations: Py<PyArray2<u8>>,
    /// Lanes x roles x actions, `bool`.
    legal_mask: Py<PyArray3<bool>>,
    /// Lanes x roles, `float32`.
    rewards: Py<PyArray2<f32>>,
    /// Lanes, `bool`.
    terminated: Py<PyArray1<bool>>,
    /// Lanes, `bool`.
    truncated: Py<PyArray1<bool>>,
    /// The actions of the last step, copied out of the caller's array, kept
    /// from step to step (an allocation of lanes x roles words a step, and
    /// its release, were a few percent of a step at 4096 lanes).
    actions: Vec<i64>,
    /// Lanes x roles of -1 (every action drawn), played instead of a copy
    /// of the caller's array when all its actions are negative: the copy
    /// of 64 KiB a step at 4096 lanes was time the helpers waited.
    drawn: Vec<i64>,
}

/// Runs `work` on the environment's arrays, borrowed mutably, with the GIL
/// released (a `ValueError` when one of them is borrowed elsewhere or not writeable).
macro_rules! with_buffers {
    ($env:expr, $py:expr, |$batch:ident, $out:ident| $work:expr) => {{
        let env = &mut *$env;
        let mut obs = env.observations.bind($py).try_readwrite().map_err(borrow_error)?;
        let mut mask = env.legal_mask.bind($py).try_readwrite().map_err(borrow_error)?;
        let mut rewards = env.rewards.bind($py).try_readwrite().map_err(borrow_error)?;
        let mut terminated = env.terminated.bind($py).try_readwrite().map_err(borrow_error)?;
        let mut truncated = env.truncated.bind($py).try_readwrite().map_err(borrow_error)?;
        let $out = Buffers {
            observations: obs.as_slice_mut().map_err(borrow_error)?,
            mask: mask.as_slice_mut().map_err(borrow_error)?,
            rewards: rewards.as_slice_mut().map_err(borrow_error)?,
            terminated: terminated.as_slice_mut().map_err(borrow_error)?,
            truncated: truncated.as_slice_mut().map_err(borrow_error)?,
        };
        let $batch = &mut env.batch;
        $py.detach(move || $work)
    }};
}

/// A numpy borrow that failed, as a `ValueError`.
/// A zeroed C-contiguous array of `dtype` (a one-byte type) and `shape`
/// whose data starts on a 64-byte line: a view into a slightly longer array.
/// numpy starts an array's data 16 bytes past a line, and the lanes engine
/// writes 64 flags a store, which then straddled two lines (docs/PYTHON.md).
fn on_lines<'py>(py: Python<'py>, dtype: &str, shape: &[usize]) -> PyResult<Bound<'py, PyAny>> {
    let len: usize = shape.iter().product();
    let flat = PyArray1::<u8>::zeros(py, len + 63, false);
    let start = (64 - flat.data() as usize % 64) % 64;
    let view = flat.get_item(PySlice::new(py, start as isize, (start + len) as isize, 1))?;
    view.call_method1("view", (dtype,))?
        .call_method1("reshape", (PyTuple::new(py, shape)?,))
}

fn borrow_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(format!("the environment's arrays cannot be written: {e}"))
}

impl VectorEnv {
    /// The settings of a batch on `game` from `VectorEnv`'s arguments.
    fn setup(game: &Game, n: usize, threads: Option<usize>, evaluator: Option<&str>) -> PyResult<Setup> {
        if n == 0 {
            return Err(PyValueError::new_err(
                "a VectorEnv needs at least one environment",
            ));
        }
        let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
        let threads = threads.unwrap_or(cores);
        if !(1..=MAX_THREADS).contains(&threads) {
            let refused = ggpnet::SettingError::Threads(threads);
            return Err(errors::error(&ggpnet::Error::InvalidSetting(refused)));
        }
        let evaluator = match evaluator.map(evaluator_choice).transpose()? {
            None | Some(EvaluatorChoice::Auto) => engine_for(n),
            Some(EvaluatorChoice::Fixed(kind)) => kind,
        };
        Ok(Setup {
            lanes: n,
            threads,
            seed: 0,
            auto_reset: true,
            max_steps: game.game.config().get_max_playout_depth(),
            evaluator,
            native: game.game.config().get_native(),
        })
    }
}

#[pymethods]
impl VectorEnv {
    /// `n` games of `game` (which must run on the propnet), each in the
    /// initial state. `seed` seeds the lanes' random streams (lane `i` draws
    /// from stream `i`); `auto_reset` restarts an ended lane in the same
    /// step; `max_steps` truncates an episode (the game's
    /// `max_playout_depth` by default); `threads` (every core by default) and
    /// `evaluator` (`"lanes"`: 512 lanes per evaluation of the net; `"sweep"`
    /// or `"differential"`: scalar state machines; by default lanes from 64
    /// environments on, else sweep) choose how steps run.
    #[new]
    #[pyo3(signature = (game, n, *, seed = 0, auto_reset = true, max_steps = None, threads = None, evaluator = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        game: Py<Game>,
        n: usize,
        seed: u64,
        auto_reset: bool,
        max_steps: Option<u64>,
        threads: Option<usize>,
        evaluator: Option<&str>,
    ) -> PyResult<VectorEnv> {
        let g = game.get();
        let compiled = Arc::clone(compiled(g)?);
        let mut setup = VectorEnv::setup(g, n, threads, evaluator)?;
        setup.seed = seed;
        setup.auto_reset = auto_reset;
        if let Some(max_steps) = max_steps {
            if max_steps == 0 {
                return Err(PyValueError::new_err("max_steps must be at least 1"));
            }
            setup.max_steps = max_steps;
        }
        let batch = py.detach(|| Batch::new(compiled, g.game.random_role(), &setup));
        let (roles, actions, bases) = (batch.roles(), batch.actions(), batch.bases());
        let mut env = VectorEnv {
            game,
            observations: on_lines(py, "uint8", &[n, bases])?.cast_into()?.unbind(),
            legal_mask: on_lines(py, "bool", &[n, roles, actions])?.cast_into()?.unbind(),
            rewards: PyArray2::zeros(py, [n, roles], false).unbind(),
            terminated: PyArray1::zeros(py, [n], false).unbind(),
            truncated: PyArray1::zeros(py, [n], false).unbind(),
            drawn: vec![-1; n * roles],
            batch,
            actions: Vec::new(),
        };
        with_buffers!(&mut env, py, |batch, out| batch.reset(None, None, None, out));
        Ok(env)
    }

    /// The game.
    #[getter]
    fn game(&self, py: Python<'_>) -> Py<Game> {
        self.game.clone_ref(py)
    }

    /// The number of environments (lanes).
    #[getter]
    fn num_envs(&self) -> usize {
        self.batch.lanes()
    }

    /// The number of environments.
    fn __len__(&self) -> usize {
        self.batch.lanes()
    }

    /// The threads steps run on.
    #[getter]
    fn threads(&self) -> usize {
        self.batch.threads()
    }

    /// The evaluator steps run on: `"lanes"`, `"sweep"` or `"differential"`.
    #[getter]
    fn evaluator(&self) -> String {
        self.batch.evaluator().to_string()
    }

    /// The number of actions per role in the masks (the most any role has);
    /// role `r`'s action `a` is `game.actions(r)[a]`.
    #[getter]
    fn num_actions(&self) -> usize {
        self.batch.actions()
    }

    /// Observations, lanes x bases (`uint8`, 1 where the base holds; the
    /// bases are `game.bases`). Written in place by each step.
    #[getter]
    fn observations<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<u8>> {
        self.observations.bind(py).clone()
    }

    /// Legal actions, lanes x roles x actions (`bool`). Written in place by
    /// each step; a lane whose episode ended (without auto-reset) has none.
    #[getter]
    fn legal_mask<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray3<bool>> {
        self.legal_mask.bind(py).clone()
    }

    /// Rewards of the last step, lanes x roles (`float32`): each role's goal
    /// in the lane's terminal state when its episode ended there, else 0.
    #[getter]
    fn rewards<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f32>> {
        self.rewards.bind(py).clone()
    }

    /// Lanes whose episode reached a terminal state in the last step (`bool`).
    #[getter]
    fn terminated<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<bool>> {
        self.terminated.bind(py).clone()
    }

    /// Lanes whose episode was cut short in the last step (`bool`): at
    /// `max_steps`, or where some role had no legal move.
    #[getter]
    fn truncated<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<bool>> {
        self.truncated.bind(py).clone()
    }

    /// Role `role`'s actions in their dense order (`game.actions(role)`).
    fn actions(&self, py: Python<'_>, role: RoleArg) -> PyResult<Vec<Move>> {
        Game::actions(self.game.bind(py), role)
    }

    /// Puts every lane (or the lanes numbered in `lanes`) in the initial
    /// state, reseeding their streams when `seed` is given; returns the
    /// observations.
    #[pyo3(signature = (seed = None, lanes = None))]
    fn reset<'py>(
        mut slf: PyRefMut<'py, Self>,
        seed: Option<u64>,
        lanes: Option<Vec<usize>>,
    ) -> PyResult<Bound<'py, PyArray2<u8>>> {
        let py = slf.py();
        if let Some(&lane) = lanes.iter().flatten().find(|&&l| l >= slf.batch.lanes()) {
            return Err(PyIndexError::new_err(format!("no environment number {lane}")));
        }
        let which = lanes.as_deref();
        with_buffers!(&mut slf, py, |batch, out| batch.reset(which, None, seed, out));
        Ok(slf.observations(py))
    }

    /// Plays `actions` (lanes x roles integers: each role's action number,
    /// or a negative number for a uniformly random legal action; the random
    /// role of GDL-II always plays at random) in every lane whose episode
    /// goes on, and returns `(observations, rewards, terminated, truncated)`,
    /// the environment's arrays. An illegal action raises `IllegalMoveError`
    /// (with `lane`, `role`, `action` and `move`) before any lane moves.
    fn step<'py>(
        mut slf: PyRefMut<'py, Self>,
        actions: PyArrayLike2<'py, i64, AllowTypeChange>,
    ) -> PyResult<Bound<'py, pyo3::types::PyTuple>> {
        let py = slf.py();
        let expected = [slf.batch.lanes(), slf.batch.roles()];
        if actions.shape() != expected {
            let shape = actions.shape().to_vec();
            return Err(PyValueError::new_err(format!(
                "actions must have shape {expected:?}, not {shape:?}"
            )));
        }
        // A copy: the caller's array may change while the GIL is released
        // (none when every action is drawn: the environment's own -1s).
        let mut copy = std::mem::take(&mut slf.actions);
        copy.clear();
        let mut drawn = std::mem::take(&mut slf.drawn);
        // Empty when a step failed after taking it.
        drawn.resize(expected[0] * expected[1], -1);
        match actions.as_slice() {
            Ok(contiguous) if all_drawn(contiguous) => {}
            Ok(contiguous) => copy.extend_from_slice(contiguous),
            Err(_) => copy.extend(actions.as_array().iter().copied()),
        }
        let given = if copy.is_empty() { &drawn } else { &copy };
        if let Err(refused) = slf.batch.check(given) {
            slf.drawn = drawn;
            return Err(slf.illegal(py, refused));
        }
        with_buffers!(&mut slf, py, |batch, out| batch.step(given, out));
        slf.actions = copy;
        slf.drawn = drawn;
        let tuple = (
            slf.observations(py),
            slf.rewards(py),
            slf.terminated(py),
            slf.truncated(py),
        );
        tuple.into_pyobject(py)
    }

    /// Uniformly random legal actions, lanes x roles (`int64`), drawn from the
    /// lanes' streams; -1 for a lane whose episode ended.
    fn sample_actions<'py>(&mut self, py: Python<'py>) -> Bound<'py, PyArray2<i64>> {
        let mut actions = vec![0i64; self.batch.lanes() * self.batch.roles()];
        self.batch.sample(&mut actions);
        let flat = PyArray1::from_vec(py, actions);
        flat.reshape([self.batch.lanes(), self.batch.roles()])
            .expect("as many actions as lanes times roles")
    }

    /// The state of lane `lane`, as a `ggpnet.State` of the game.
    fn state(&self, py: Python<'_>, lane: usize) -> PyResult<State> {
        let game = self.game.bind(py);
        let compiled = compiled(game.get())?;
        let bits = self.lane_state(lane)?;
        let facts = compiled.state_to_kif(&bits);
        let state = game
            .get()
            .game
            .state_from_kif(&facts)
            .map_err(|e| errors::error(&e))?;
        Ok(wrap_state(game, state))
    }

    /// Puts lane `lane` in `state` (a state of the game) as the start of a
    /// new episode, and writes its row.
    fn set_state(mut slf: PyRefMut<'_, Self>, lane: usize, state: &State) -> PyResult<()> {
        let py = slf.py();
        slf.lane_state(lane)?;
        let game = slf.game.bind(py).get();
        let facts = game
            .game
            .state_to_kif(&state.state)
            .map_err(|e| errors::error(&e))?;
        let bits = compiled(game)?
            .state_from_kif(&facts)
            .map_err(|e| errors::error(&ggpnet::Error::Refused(e)))?;
        let which = [lane];
        with_buffers!(&mut slf, py, |batch, out| batch.reset(
            Some(&which),
            Some(&bits),
            None,
            out
        ));
        Ok(())
    }

    /// A summary for the interpreter's prompt.
    fn __repr__(&self) -> String {
        format!(
            "<ggpnet.VectorEnv {} environments, {} roles x {} actions, {} bases, {} on {} threads>",
            self.batch.lanes(),
            self.batch.roles(),
            self.batch.actions(),
            self.batch.bases(),
            self.batch.evaluator(),
            self.batch.threads()
        )
    }
}

impl VectorEnv {
    /// Lane `lane`'s state, or an `IndexError`.
    fn lane_state(&self, lane: usize) -> PyResult<ggpnet::propnet::State> {
        if lane >= self.batch.lanes() {
            return Err(PyIndexError::new_err(format!("no environment number {lane}")));
        }
        Ok(self.batch.state(lane))
    }

    /// The `IllegalMoveError` of an action refused by the batch.
    fn illegal(&self, py: Python<'_>, refused: crate::batch::Refused) -> PyErr {
        let game = self.game.bind(py).get();
        let role = game.game.roles()[refused.role].clone();
        let text = compiled(game).ok().and_then(|c| {
            c.role_moves()[refused.role]
                .get(usize::try_from(refused.action).ok()?)
                .map(|&m| c.move_to_kif(m).to_owned())
        });
        let message = match &text {
            Some(text) => format!(
                "environment {}: {role} may not play {text} (action {})",
                refused.lane, refused.action
            ),
            None => format!(
                "environment {}: {role} has no action {}",
                refused.lane, refused.action
            ),
        };
        let mut attrs = vec![
            ("lane", refused.lane.into()),
            ("role", role.into()),
            ("action", errors::Attr::Int(refused.action.into())),
        ];
        if let Some(text) = text {
            attrs.push(("move", text.into()));
        }
        errors::raise("IllegalMoveError", message, attrs)
    }
}
