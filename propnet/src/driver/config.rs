//! The settings of a flat Monte-Carlo run ([`McConfig`]), validated once, by
//! the setter that takes each value: a setting out of range is refused there
//! with a [`SettingError`], so a config that exists is one the driver runs as
//! it says. The limits are this module's constants; the facade and the
//! command line refer to them rather than repeating them.

use crate::evaluator::EvaluatorConfig;

/// Moves after which a random playout that has not ended is abandoned, unless
/// configured otherwise: far beyond every game of the corpus (its reference
/// traces stop at 500), so that a game whose terminal is unreachable still
/// finishes its playouts.
pub const DEFAULT_MAX_DEPTH: u64 = 10_000;

pub use ggpnet_grounder::{SettingError, MAX_SECONDS, MAX_THREADS};

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

/// How to run flat Monte-Carlo: the evaluator, threads, budget, seed and the
/// depth at which a playout is abandoned. [`McConfig::new`] takes the budget
/// and gives the rest their defaults (the evaluator `Auto` in native code, one
/// thread, seed 0, [`DEFAULT_MAX_DEPTH`]); each setter changes one,
/// and those that can refuse a value return a [`SettingError`] instead.
///
/// ```
/// use ggpnet_propnet::driver::{Budget, McConfig, SettingError};
/// use ggpnet_propnet::{EvaluatorConfig, EvaluatorKind};
/// let config = McConfig::new(Budget::Playouts(100))?
///     .evaluator(EvaluatorKind::Sweep.into())
///     .threads(2)?
///     .seed(7)
///     .max_depth(50)?;
/// assert_eq!(config.get_evaluator(), EvaluatorConfig::from(EvaluatorKind::Sweep));
/// assert_eq!((config.get_threads(), config.get_seed(), config.get_max_depth()), (2, 7, 50));
/// assert_eq!(config.get_budget(), Budget::Playouts(100));
///
/// assert_eq!(config.threads(0).unwrap_err(), SettingError::Threads(0));
/// assert_eq!(config.max_depth(0).unwrap_err(), SettingError::MaxDepth(0));
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
    /// assert_eq!(config.get_evaluator(), EvaluatorConfig::default());
    /// assert_eq!((config.get_threads(), config.get_seed(), config.get_max_depth()), (1, 0, DEFAULT_MAX_DEPTH));
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
    /// let interpreted = EvaluatorConfig::new(Choice::Fixed(EvaluatorKind::Lanes)).native(false);
    /// let config = McConfig::new(Budget::Playouts(1)).unwrap().evaluator(interpreted);
    /// assert_eq!(config.get_evaluator(), interpreted);
    /// ```
    pub fn evaluator(self, evaluator: EvaluatorConfig) -> McConfig {
        McConfig { evaluator, ..self }
    }

    /// The same on `threads` threads, each with its own evaluator cache and
    /// random streams; refuses a count outside 1 to [`MAX_THREADS`].
    ///
    /// ```
    /// use ggpnet_propnet::driver::{Budget, McConfig, SettingError, MAX_THREADS};
    /// let config = McConfig::new(Budget::Playouts(1)).unwrap();
    /// assert_eq!(config.threads(MAX_THREADS).unwrap().get_threads(), MAX_THREADS);
    /// assert_eq!(config.threads(MAX_THREADS + 1), Err(SettingError::Threads(MAX_THREADS + 1)));
    /// ```
    pub fn threads(self, threads: usize) -> Result<McConfig, SettingError> {
        if !(1..=MAX_THREADS).contains(&threads) {
            return Err(SettingError::Threads(threads));
        }
        Ok(McConfig { threads, ..self })
    }

    /// The same with every random stream drawn from `seed`.
    ///
    /// ```
    /// use ggpnet_propnet::driver::{Budget, McConfig};
    /// assert_eq!(McConfig::new(Budget::Playouts(1)).unwrap().seed(9).get_seed(), 9);
    /// ```
    pub fn seed(self, seed: u64) -> McConfig {
        McConfig { seed, ..self }
    }

    /// The same with playouts abandoned after `max_depth` moves; refuses 0.
    ///
    /// ```
    /// use ggpnet_propnet::driver::{Budget, McConfig, SettingError};
    /// let config = McConfig::new(Budget::Playouts(1)).unwrap();
    /// assert_eq!(config.max_depth(1).unwrap().get_max_depth(), 1);
    /// assert_eq!(config.max_depth(0), Err(SettingError::MaxDepth(0)));
    /// ```
    pub fn max_depth(self, max_depth: u64) -> Result<McConfig, SettingError> {
        if max_depth == 0 {
            return Err(SettingError::MaxDepth(max_depth));
        }
        Ok(McConfig { max_depth, ..self })
    }

    /// Which evaluator, and whether in native code.
    pub fn get_evaluator(&self) -> EvaluatorConfig {
        self.evaluator
    }

    /// Threads (1 to [`MAX_THREADS`]).
    pub fn get_threads(&self) -> usize {
        self.threads
    }

    /// When to stop.
    pub fn get_budget(&self) -> Budget {
        self.budget
    }

    /// Seed of every random stream.
    pub fn get_seed(&self) -> u64 {
        self.seed
    }

    /// Moves after which a playout is abandoned (at least 1).
    pub fn get_max_depth(&self) -> u64 {
        self.max_depth
    }
}
