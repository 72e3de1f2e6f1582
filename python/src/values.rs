//! States and moves as Python values: immutable, hashable, comparable
//! (equality by value; an order by their KIF text, within one game),
//! printed as KIF, and picklable with the game they belong to.

use crate::errors;
use crate::game::Game;
use pyo3::basic::CompareOp;
use pyo3::prelude::*;
use pyo3::types::PyTuple;
use std::cmp::Ordering;
use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};

/// A game state: a set of true facts. Hashable, comparable, printed as its
/// facts in KIF (sorted), pickled with its game. Only the game that made it
/// (or one unpickled with it) accepts it.
#[pyclass(frozen, module = "ggpnet")]
pub struct State {
    /// The state.
    pub(crate) state: ggpnet::State,
    /// The game it belongs to.
    pub(crate) game: Py<Game>,
}

/// A move of one role. Hashable, comparable, printed as KIF, pickled with
/// its game. Only the game that made it (or one unpickled with it) accepts it.
#[pyclass(frozen, module = "ggpnet")]
pub struct Move {
    /// The move.
    pub(crate) mv: ggpnet::Move,
    /// The game it belongs to.
    pub(crate) game: Py<Game>,
}

/// The hash of a value by Rust's hasher (fixed keys: the same in every run).
fn hash_of(value: &impl Hash) -> u64 {
    let mut hasher = DefaultHasher::new();
    value.hash(&mut hasher);
    hasher.finish()
}

/// The answer of a comparison `op` of two values ordered as `order` says, or
/// `NotImplemented` when `other` is of another type.
fn compare(py: Python<'_>, op: CompareOp, order: Option<PyResult<Ordering>>) -> PyResult<Py<PyAny>> {
    match order {
        None => Ok(py.NotImplemented()),
        Some(order) => Ok(op
            .matches(order?)
            .into_pyobject(py)?
            .to_owned()
            .into_any()
            .unbind()),
    }
}

impl State {
    /// The true facts, in KIF, sorted.
    fn kif(&self) -> PyResult<Vec<String>> {
        self.game
            .get()
            .game
            .state_to_kif(&self.state)
            .map_err(|e| errors::error(&e))
    }
}

#[pymethods]
impl State {
    /// The game this state belongs to.
    #[getter]
    fn game(&self, py: Python<'_>) -> Py<Game> {
        self.game.clone_ref(py)
    }

    /// The true facts, in canonical KIF, sorted by byte order.
    fn facts(&self) -> PyResult<Vec<String>> {
        self.kif()
    }

    /// The facts in KIF, separated by spaces.
    fn __str__(&self) -> String {
        let game = &self.game.get().game;
        game.display_state(&self.state).to_string()
    }

    /// A summary for the interpreter's prompt.
    fn __repr__(&self) -> String {
        format!("<ggpnet.State {}>", self.__str__())
    }

    /// A hash agreeing with equality.
    fn __hash__(&self) -> u64 {
        hash_of(&self.state)
    }

    /// Equal states are the same facts of the same game; the order is that
    /// of their sorted lists of facts (states of two games are unordered).
    fn __richcmp__(&self, other: &Bound<'_, PyAny>, op: CompareOp) -> PyResult<Py<PyAny>> {
        let py = other.py();
        let order = other.cast::<State>().ok().map(|other| {
            let other = other.get();
            if matches!(op, CompareOp::Eq | CompareOp::Ne) {
                return Ok(if self.state == other.state {
                    Ordering::Equal
                } else {
                    Ordering::Less
                });
            }
            if !self.game.is(&other.game) {
                return Err(errors::raise(
                    "ForeignStateError",
                    "states of two games are not ordered",
                    Vec::new(),
                ));
            }
            Ok(self.kif()?.cmp(&other.kif()?))
        });
        compare(py, op, order)
    }

    /// Rebuilt from its facts by its game (pickled with it).
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let restore = py.import("ggpnet._ggpnet")?.getattr("_restore_state")?;
        let args = (self.game.clone_ref(py), self.kif()?);
        (restore, args).into_pyobject(py)
    }

    /// A state is immutable: its copy is itself.
    fn __copy__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// A state is immutable: its copy is itself (the game is not copied either).
    fn __deepcopy__(slf: Py<Self>, _memo: &Bound<'_, PyAny>) -> Py<Self> {
        slf
    }
}

impl Move {
    /// The move's KIF text.
    pub(crate) fn kif(&self) -> PyResult<String> {
        self.game
            .get()
            .game
            .move_to_kif(&self.mv)
            .map_err(|e| errors::error(&e))
    }
}

#[pymethods]
impl Move {
    /// The number of the role whose move it is.
    #[getter]
    fn role(&self) -> usize {
        self.mv.role()
    }

    /// The name of the role whose move it is.
    #[getter]
    fn role_name(&self) -> String {
        self.game.get().game.roles()[self.mv.role()].clone()
    }

    /// The game this move belongs to.
    #[getter]
    fn game(&self, py: Python<'_>) -> Py<Game> {
        self.game.clone_ref(py)
    }

    /// The move in canonical KIF, such as `(drop 4)`.
    fn __str__(&self) -> String {
        self.game.get().game.display_move(&self.mv).to_string()
    }

    /// A summary for the interpreter's prompt.
    fn __repr__(&self) -> String {
        format!("<ggpnet.Move {} {}>", self.role_name(), self.__str__())
    }

    /// A hash agreeing with equality.
    fn __hash__(&self) -> u64 {
        hash_of(&self.mv)
    }

    /// Equal moves are the same move of the same role and game; the order is
    /// by role, then by KIF text (moves of two games are unordered).
    fn __richcmp__(&self, other: &Bound<'_, PyAny>, op: CompareOp) -> PyResult<Py<PyAny>> {
        let py = other.py();
        let order = other.cast::<Move>().ok().map(|other| {
            let other = other.get();
            if matches!(op, CompareOp::Eq | CompareOp::Ne) {
                return Ok(if self.mv == other.mv {
                    Ordering::Equal
                } else {
                    Ordering::Less
                });
            }
            if !self.game.is(&other.game) {
                return Err(errors::raise(
                    "ForeignMoveError",
                    "moves of two games are not ordered",
                    Vec::new(),
                ));
            }
            Ok((self.mv.role(), self.kif()?).cmp(&(other.mv.role(), other.kif()?)))
        });
        compare(py, op, order)
    }

    /// Rebuilt from its role and text by its game (pickled with it).
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let restore = py.import("ggpnet._ggpnet")?.getattr("_restore_move")?;
        let args = (self.game.clone_ref(py), self.mv.role(), self.kif()?);
        (restore, args).into_pyobject(py)
    }

    /// A move is immutable: its copy is itself.
    fn __copy__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    /// A move is immutable: its copy is itself.
    fn __deepcopy__(slf: Py<Self>, _memo: &Bound<'_, PyAny>) -> Py<Self> {
        slf
    }
}
