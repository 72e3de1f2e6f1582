//! The settings of a flat Monte-Carlo run ([`McConfig`]), validated once, by
//! the setter that takes each value: a setting out of range is refused there
//! with a [`SettingError`], so a config that exists is one the driver runs as
//! it says. The limits are this module's constants; the facade and the
//! command line refer to them rather than repeating them.

use crate::evaluator::EvaluatorConfig;
use std::fmt;

/// Moves after which a random playout that has not ended is abandoned, unless
/// configured otherwise: far beyond every game of the corpus (its reference
/// traces stop at 500), so that a game whose terminal is unreachable still
/// finishes its playouts.
pub const DEFAULT_MAX_DEPTH: u64 = 10_000;

/// Most threads a run may ask for.
pub const MAX_THREADS: usize = 1024;

/// Longest time budget, in seconds: about 31 years, far beyond any real run,
/// and far below the range where adding it to a clock overflows.
pub const MAX_SECONDS: f64 = 1e9;

/// When a flat Monte-Carlo run stops.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Budget {
    /// After this many wall seconds (above 0, at most [`MAX_SECONDS`]).
    Seconds(f64),
    /// After this many ended playouts (finished or abandoned) in all (split
    /// evenly over threads; the lanes evaluator finishes the step in which its
    /// share is reached). Gives the same totals for the same seed and thread count.
    Playouts(u64),
}

/// A setting of a run refused by its setter, with the value refused.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum SettingError {
    /// A thread count outside 1 to [`MAX_THREADS`].
    Threads(usize),
    /// A time budget that is not a number above 0 and at most [`MAX_SECONDS`].
    Seconds(f64),
    /// A playout depth limit of 0 (a playout makes at least one move).
    MaxDepth(u64),
}

impl SettingError {
    /// The setting refused, as a phrase (`threads`, `a time budget`,
    /// `max depth`).
    ///
    /// ```
    /// use ggpnet_propnet::driver::SettingError;
    /// assert_eq!(SettingError::Threads(0).setting(), "threads");
    /// ```
    pub fn setting(&self) -> &'static str {
        match self {
            SettingError::Threads(_) => "threads",
            SettingError::Seconds(_) => "a time budget",
            SettingError::MaxDepth(_) => "max depth",
        }
    }

    /// Why it was refused: the range allowed and the value given.
    ///
    /// ```
    /// use ggpnet_propnet::driver::SettingError;
    /// assert_eq!(SettingError::Threads(0).reason(), "must be 1 to 1024, not 0");
    /// ```
    pub fn reason(&self) -> String {
        match self {
            SettingError::Threads(n) => format!("must be 1 to {MAX_THREADS}, not {n}"),
            SettingError::Seconds(s) => {
                format!("must be more than 0 and at most {MAX_SECONDS:e} seconds, not {s}")
            }
            SettingError::MaxDepth(d) => format!("must be at least 1, not {d}"),
        }
    }
}

impl fmt::Display for SettingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.setting(), self.reason())
    }
}

impl std::error::Error for SettingError {}

/// How to run flat Monte-Carlo: the evaluator, threads, budget, seed and the
/// depth at which a playout is abandoned. [`McConfig::new`] takes the budget
/// and gives the rest their defaults (the evaluator `Auto` in native code, one
/// thread, seed 0, [`DEFAULT_MAX_DEPTH`]); each `with_` method changes one,
/// and those that can refuse a value return a [`SettingError`] instead.
///
/// ```
/// use ggpnet_propnet::driver::{Budget, McConfig, SettingError};
/// use ggpnet_propnet::{EvaluatorConfig, EvaluatorKind};
/// let config = McConfig::new(Budget::Playouts(100))?
///     .with_evaluator(EvaluatorKind::Sweep.into())
///     .with_threads(2)?
///     .with_seed(7)
///     .with_max_depth(50)?;
/// assert_eq!(config.evaluator(), EvaluatorConfig::from(EvaluatorKind::Sweep));
/// assert_eq!((config.threads(), config.seed(), config.max_depth()), (2, 7, 50));
/// assert_eq!(config.budget(), Budget::Playouts(100));
///
/// assert_eq!(config.with_threads(0).unwrap_err(), SettingError::Threads(0));
/// assert_eq!(config.with_max_depth(0).unwrap_err(), SettingError::MaxDepth(0));
/// assert!(McConfig::new(Budget::Seconds(-1.0)).is_err());
/// # Ok::<(), SettingError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct McConfig {
    evaluator: EvaluatorConfig,
    threads: usize,
    budget: Budget,
    seed: u64,
    max_depth: u64,
}

impl McConfig {
    /// A run until `budget` is spent, with the defaults above; refuses a
    /// time budget that is not above 0 and at most [`MAX_SECONDS`].
    ///
    /// ```
    /// use ggpnet_propnet::driver::{Budget, McConfig, DEFAULT_MAX_DEPTH};
    /// use ggpnet_propnet::EvaluatorConfig;
    /// let config = McConfig::new(Budget::Seconds(0.5)).unwrap();
    /// assert_eq!(config.evaluator(), EvaluatorConfig::default());
    /// assert_eq!((config.threads(), config.seed(), config.max_depth()), (1, 0, DEFAULT_MAX_DEPTH));
    /// assert!(McConfig::new(Budget::Seconds(f64::NAN)).is_err());
    /// ```
    pub fn new(budget: Budget) -> Result<McConfig, SettingError> {
        if let Budget::Seconds(s) = budget {
            if !(s.is_finite() && s > 0.0 && s <= MAX_SECONDS) {
                return Err(SettingError::Seconds(s));
            }
        }
        Ok(McConfig {
            evaluator: EvaluatorConfig::default(),
            threads: 1,
            budget,
            seed: 0,
            max_depth: DEFAULT_MAX_DEPTH,
        })
    }

    /// The same with evaluator `evaluator` (`Auto`: the chooser's calibration
    /// picks among all three).
    ///
    /// ```
    /// use ggpnet_propnet::driver::{Budget, McConfig};
    /// use ggpnet_propnet::{Choice, EvaluatorConfig, EvaluatorKind};
    /// let interpreted = EvaluatorConfig::new(Choice::Fixed(EvaluatorKind::Lanes)).with_native(false);
    /// let config = McConfig::new(Budget::Playouts(1)).unwrap().with_evaluator(interpreted);
    /// assert_eq!(config.evaluator(), interpreted);
    /// ```
    pub fn with_evaluator(self, evaluator: EvaluatorConfig) -> McConfig {
        McConfig { evaluator, ..self }
    }

    /// The same on `threads` threads, each with its own evaluator cache and
    /// random streams; refuses a count outside 1 to [`MAX_THREADS`].
    ///
    /// ```
    /// use ggpnet_propnet::driver::{Budget, McConfig, SettingError, MAX_THREADS};
    /// let config = McConfig::new(Budget::Playouts(1)).unwrap();
    /// assert_eq!(config.with_threads(MAX_THREADS).unwrap().threads(), MAX_THREADS);
    /// assert_eq!(config.with_threads(MAX_THREADS + 1), Err(SettingError::Threads(MAX_THREADS + 1)));
    /// ```
    pub fn with_threads(self, threads: usize) -> Result<McConfig, SettingError> {
        if !(1..=MAX_THREADS).contains(&threads) {
            return Err(SettingError::Threads(threads));
        }
        Ok(McConfig { threads, ..self })
    }

    /// The same with every random stream drawn from `seed`.
    ///
    /// ```
    /// use ggpnet_propnet::driver::{Budget, McConfig};
    /// assert_eq!(McConfig::new(Budget::Playouts(1)).unwrap().with_seed(9).seed(), 9);
    /// ```
    pub fn with_seed(self, seed: u64) -> McConfig {
        McConfig { seed, ..self }
    }

    /// The same with playouts abandoned after `max_depth` moves; refuses 0.
    ///
    /// ```
    /// use ggpnet_propnet::driver::{Budget, McConfig, SettingError};
    /// let config = McConfig::new(Budget::Playouts(1)).unwrap();
    /// assert_eq!(config.with_max_depth(1).unwrap().max_depth(), 1);
    /// assert_eq!(config.with_max_depth(0), Err(SettingError::MaxDepth(0)));
    /// ```
    pub fn with_max_depth(self, max_depth: u64) -> Result<McConfig, SettingError> {
        if max_depth == 0 {
            return Err(SettingError::MaxDepth(max_depth));
        }
        Ok(McConfig { max_depth, ..self })
    }

    /// Which evaluator, and whether in native code.
    pub fn evaluator(&self) -> EvaluatorConfig {
        self.evaluator
    }

    /// Threads (1 to [`MAX_THREADS`]).
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// When to stop.
    pub fn budget(&self) -> Budget {
        self.budget
    }

    /// Seed of every random stream.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Moves after which a playout is abandoned (at least 1).
    pub fn max_depth(&self) -> u64 {
        self.max_depth
    }
}
