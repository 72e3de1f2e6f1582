//! What `Game.playouts` and `Game.playout` return, and how their arguments
//! make a [`ggpnet::Playouts`].

use crate::values::State;
use ggpnet::{Budget, PlayoutEnd, PlayoutReport as Report, Playouts};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;

/// How to run playouts: exactly one budget, `threads` (every core when
/// `None`), `seed`. Out-of-range values are refused by the playouts
/// themselves (`SettingError`).
pub fn how(
    playouts: Option<u64>,
    seconds: Option<f64>,
    threads: Option<usize>,
    seed: u64,
) -> PyResult<Playouts> {
    let how = Playouts::new(budget(playouts, seconds)?).seed(seed);
    Ok(match threads {
        Some(threads) => how.threads(threads),
        None => how,
    })
}

/// The budget of `playouts` ended playouts or `seconds` of wall time
/// (exactly one must be given).
pub fn budget(playouts: Option<u64>, seconds: Option<f64>) -> PyResult<Budget> {
    match (playouts, seconds) {
        (Some(n), None) => Ok(Budget::Playouts(n)),
        (None, Some(s)) => Ok(Budget::Seconds(s)),
        _ => Err(PyTypeError::new_err("give exactly one of playouts= and seconds=")),
    }
}

/// What a run of playouts added up to.
#[pyclass(frozen, get_all, module = "ggpnet")]
pub struct PlayoutReport {
    /// The engine that ran them: `"propnet"` or `"interpreter"`.
    engine: &'static str,
    /// The propnet evaluator that ran them (`None` on the interpreter).
    evaluator: Option<&'static str>,
    /// Threads used.
    threads: usize,
    /// Wall seconds spent.
    seconds: f64,
    /// State transitions: joint moves applied (a playout of `d` moves counts `d`).
    transitions: u64,
    /// States visited (transitions plus one per playout begun).
    states: u64,
    /// Playouts that reached a terminal state.
    playouts: u64,
    /// Playouts abandoned (a role without a legal move, or the depth limit).
    abandoned: u64,
    /// Of the abandoned playouts, those at the depth limit.
    at_depth_limit: u64,
    /// The sum of the depths of finished playouts.
    depth_sum: u64,
    /// Per role, its mean goal over the finished playouts that gave it one.
    avg_goals: Vec<Option<f64>>,
    /// Per role, the sum of its goals over the finished playouts that gave it
    /// one (whole numbers: reports of several runs add up exactly).
    goal_sums: Vec<f64>,
    /// Per role, the finished playouts that gave it no goal.
    missing_goals: Vec<u64>,
}

impl From<Report> for PlayoutReport {
    /// The report's figures, with the goals averaged.
    fn from(report: Report) -> PlayoutReport {
        let t = &report.totals;
        PlayoutReport {
            engine: report.engine.name(),
            evaluator: report.evaluator.map(|k| k.name()),
            threads: report.threads,
            seconds: report.seconds,
            transitions: t.transitions,
            states: t.states,
            playouts: t.playouts,
            abandoned: t.abandoned,
            at_depth_limit: t.at_depth_limit,
            depth_sum: t.depth_sum,
            avg_goals: report.avg_goals(),
            goal_sums: t.goal_sums.clone(),
            missing_goals: t.missing_goals.clone(),
        }
    }
}

#[pymethods]
impl PlayoutReport {
    /// State transitions per wall second: the headline rate.
    #[getter]
    fn transitions_per_sec(&self) -> f64 {
        self.transitions as f64 / self.seconds.max(1e-9)
    }

    /// The mean number of moves of a finished playout.
    #[getter]
    fn avg_depth(&self) -> f64 {
        self.depth_sum as f64 / self.playouts.max(1) as f64
    }

    /// A summary for the interpreter's prompt.
    fn __repr__(&self) -> String {
        format!(
            "<ggpnet.PlayoutReport {} playouts, {} transitions in {:.3} s on {} threads ({}), avg goals {}>",
            self.playouts,
            self.transitions,
            self.seconds,
            self.threads,
            self.evaluator.unwrap_or(self.engine),
            python_list(&self.avg_goals)
        )
    }
}

/// How one playout ended.
#[pyclass(frozen, get_all, module = "ggpnet")]
pub struct Playout {
    /// Whether it ended in a terminal state (else it was abandoned).
    terminal: bool,
    /// Joint moves played.
    depth: u64,
    /// Per role, its goal in the terminal state (`None` for a role given
    /// none); empty when abandoned.
    goals: Vec<Option<i64>>,
    /// The state it ended in.
    state: Py<State>,
}

impl Playout {
    /// The playout that ended as `end` in `last`.
    pub fn new(py: Python<'_>, end: PlayoutEnd, last: State) -> PyResult<Playout> {
        let (terminal, depth, goals) = match end {
            PlayoutEnd::Terminal { depth, goals } => (true, depth, goals),
            PlayoutEnd::Abandoned { depth } => (false, depth, Vec::new()),
        };
        Ok(Playout {
            terminal,
            depth,
            goals,
            state: Py::new(py, last)?,
        })
    }
}

#[pymethods]
impl Playout {
    /// A summary for the interpreter's prompt.
    fn __repr__(&self) -> String {
        let end = if self.terminal { "terminal" } else { "abandoned" };
        format!(
            "<ggpnet.Playout {end} after {} moves, goals {}>",
            self.depth,
            python_list(&self.goals)
        )
    }
}

/// `values` as Python prints a list of them (`None` for a missing one).
fn python_list<T: std::fmt::Display>(values: &[Option<T>]) -> String {
    let shown: Vec<String> = values
        .iter()
        .map(|v| v.as_ref().map_or_else(|| "None".to_owned(), T::to_string))
        .collect();
    format!("[{}]", shown.join(", "))
}
