//! The keyword settings of `Game.load` (engine, evaluator, limits), kept as
//! given so that a pickled game is rebuilt with the same ones, and turned
//! into a [`ggpnet::Config`].

use crate::errors::{keyword_error, raise};
use ggpnet::{Config, EngineChoice, EvaluatorChoice};
use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::time::Duration;

/// The settings `Game.load` takes, each `None` when not given (the default).
#[derive(Clone, Debug, Default)]
pub struct Settings {
    engine: Option<String>,
    evaluator: Option<String>,
    max_playout_depth: Option<u64>,
    max_ground_rules: Option<usize>,
    max_ground_atoms: Option<usize>,
    max_term_depth: Option<usize>,
    max_ground_bytes: Option<usize>,
    max_join_steps: Option<usize>,
    max_ground_time: Option<f64>,
    ground_threads: Option<usize>,
    native: Option<bool>,
}

/// The names of the settings, in the order `Game.settings` lists them.
pub const NAMES: [&str; 11] = [
    "engine",
    "evaluator",
    "max_playout_depth",
    "max_ground_rules",
    "max_ground_atoms",
    "max_term_depth",
    "max_ground_bytes",
    "max_join_steps",
    "max_ground_time",
    "ground_threads",
    "native",
];

impl Settings {
    /// The settings of `kwargs` (a value of `None` is the default); an
    /// unknown name is a `TypeError`, as for any function.
    pub fn from_kwargs(kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Settings> {
        let mut settings = Settings::default();
        let Some(kwargs) = kwargs else {
            return Ok(settings);
        };
        for (key, value) in kwargs.iter() {
            let name: String = key.extract()?;
            if value.is_none() {
                continue;
            }
            settings.set(&name, &value)?;
        }
        Ok(settings)
    }

    /// Sets the setting `name` to `value`.
    fn set(&mut self, name: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        match name {
            "engine" => self.engine = Some(value.extract()?),
            "evaluator" => self.evaluator = Some(value.extract()?),
            "max_playout_depth" => self.max_playout_depth = Some(value.extract()?),
            "max_ground_rules" => self.max_ground_rules = Some(value.extract()?),
            "max_ground_atoms" => self.max_ground_atoms = Some(value.extract()?),
            "max_term_depth" => self.max_term_depth = Some(value.extract()?),
            "max_ground_bytes" => self.max_ground_bytes = Some(value.extract()?),
            "max_join_steps" => self.max_join_steps = Some(value.extract()?),
            "max_ground_time" => self.max_ground_time = Some(value.extract()?),
            "ground_threads" => self.ground_threads = Some(value.extract()?),
            "native" => self.native = Some(value.extract()?),
            _ => {
                let known = NAMES.join(", ");
                return Err(PyTypeError::new_err(format!(
                    "unknown setting '{name}' (the settings are {known})"
                )));
            }
        }
        Ok(())
    }

    /// The settings given, by name (what `Game.load` takes back).
    pub fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        let texts = [("engine", &self.engine), ("evaluator", &self.evaluator)];
        for (name, value) in texts {
            if let Some(value) = value {
                dict.set_item(name, value)?;
            }
        }
        if let Some(depth) = self.max_playout_depth {
            dict.set_item("max_playout_depth", depth)?;
        }
        for (name, value) in self.limits() {
            if let Some(value) = value {
                dict.set_item(name, value)?;
            }
        }
        if let Some(time) = self.max_ground_time {
            dict.set_item("max_ground_time", time)?;
        }
        if let Some(threads) = self.ground_threads {
            dict.set_item("ground_threads", threads)?;
        }
        if let Some(native) = self.native {
            dict.set_item("native", native)?;
        }
        Ok(dict)
    }

    /// The grounding limits that are counts, by name.
    fn limits(&self) -> [(&'static str, Option<usize>); 5] {
        [
            ("max_ground_rules", self.max_ground_rules),
            ("max_ground_atoms", self.max_ground_atoms),
            ("max_term_depth", self.max_term_depth),
            ("max_ground_bytes", self.max_ground_bytes),
            ("max_join_steps", self.max_join_steps),
        ]
    }

    /// The configuration these settings make; a value out of range is a
    /// `SettingError`.
    pub fn config(&self) -> PyResult<Config> {
        let mut config = Config::new();
        if let Some(engine) = &self.engine {
            config = config.engine(engine_choice(engine)?);
        }
        if let Some(evaluator) = &self.evaluator {
            config = config.evaluator(evaluator_choice(evaluator)?);
        }
        if let Some(depth) = self.max_playout_depth {
            config = config
                .max_playout_depth(depth)
                .map_err(|e| keyword_error("max_playout_depth", &e))?;
        }
        if let Some(threads) = self.ground_threads {
            config = config
                .ground_threads(threads)
                .map_err(|e| keyword_error("ground_threads", &e))?;
        }
        if let Some(time) = self.max_ground_time {
            config = config.max_ground_time(Some(seconds("max_ground_time", time)?));
        }
        for (name, value) in self.limits() {
            let Some(value) = value else { continue };
            config = match name {
                "max_ground_rules" => config.max_ground_rules(value),
                "max_ground_atoms" => config.max_ground_atoms(value),
                "max_term_depth" => config.max_term_depth(value),
                "max_ground_bytes" => config.max_ground_bytes(value),
                _ => config.max_join_steps(value),
            };
        }
        if let Some(native) = self.native {
            config = config.native(native);
        }
        Ok(config)
    }
}

/// A duration of `value` seconds, positive and finite.
fn seconds(setting: &str, value: f64) -> PyResult<Duration> {
    if value.is_finite() && value > 0.0 && value <= 1e9 {
        return Ok(Duration::from_secs_f64(value));
    }
    let reason = format!("must be more than 0 and at most 1e9 seconds, not {value}");
    Err(raise(
        "SettingError",
        format!("{setting}: {reason}"),
        vec![("setting", setting.into()), ("reason", reason.into())],
    ))
}

/// The engine named `name`: `auto`, `propnet` or `interpreter`.
pub fn engine_choice(name: &str) -> PyResult<EngineChoice> {
    match name {
        "auto" => Ok(EngineChoice::Auto),
        "propnet" => Ok(EngineChoice::Propnet),
        "interpreter" => Ok(EngineChoice::Interpreter),
        _ => Err(bad_name("engine", name, "auto, propnet or interpreter")),
    }
}

/// The evaluator named `name`: `auto`, `sweep`, `differential` or `lanes`.
pub fn evaluator_choice(name: &str) -> PyResult<EvaluatorChoice> {
    name.parse()
        .map_err(|_| bad_name("evaluator", name, "auto, sweep, differential or lanes"))
}

/// A `SettingError` for a name that is not one of `expected`.
pub fn bad_name(setting: &str, name: &str, expected: &str) -> PyErr {
    let reason = format!("must be {expected}, not '{name}'");
    raise(
        "SettingError",
        format!("{setting}: {reason}"),
        vec![("setting", setting.into()), ("reason", reason.into())],
    )
}
