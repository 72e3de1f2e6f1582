//! The limits of grounding, set once and read by every phase that grounds.
//!
//! A [`Config`] is built from [`Config::new`] (the defaults) by builder
//! methods, one per setting; its fields are private, so every value in it has
//! passed its setter's check. A setting that can be out of range (the thread
//! count) is set by a method that returns a [`SettingError`] instead; the
//! limits themselves accept any value (a limit of 0 stops at the first rule).
//! The bounds of settings and their error are the workspace's: every crate
//! with settings depends on this one.

use std::fmt;
use std::time::Duration;

/// Limits of grounding; passing one stops grounding with an
/// [`ErrorKind::TooLarge`](crate::ErrorKind::TooLarge) error naming the limit,
/// its value and the relation being grounded.
///
/// ```
/// use ggpnet_grounder::Config;
/// let config = Config::new().max_ground_rules(1000).threads(2).unwrap();
/// assert_eq!(config.get_max_ground_rules(), 1000);
/// assert_eq!(config.get_threads(), 2);
/// assert!(Config::new().threads(0).is_err());
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Config {
    max_ground_rules: usize,
    max_ground_atoms: usize,
    max_term_depth: usize,
    max_bytes: usize,
    max_join_steps: usize,
    max_time: Option<Duration>,
    threads: usize,
}

// The defaults leave room above the largest games of the shared corpus: racer4
// finds 15.3 M rule instances in 37 M join steps, mummymaze1p 13.2 M in 16 M,
// with 10.4 M ground atoms and 3.05 GiB estimated; no corpus term is nested
// deeper than 3.

/// The default of [`Config::max_ground_rules`].
pub const DEFAULT_MAX_GROUND_RULES: usize = 20_000_000;
/// The default of [`Config::max_ground_atoms`].
pub const DEFAULT_MAX_GROUND_ATOMS: usize = 16_000_000;
/// The default of [`Config::max_term_depth`].
pub const DEFAULT_MAX_TERM_DEPTH: usize = 64;
/// The default of [`Config::max_bytes`].
pub const DEFAULT_MAX_BYTES: usize = 5 << 30;
/// The default of [`Config::max_join_steps`].
pub const DEFAULT_MAX_JOIN_STEPS: usize = 100_000_000;
/// The most threads any part of ggpnet runs a task on (grounding, playouts).
pub const MAX_THREADS: usize = 1024;
/// Longest time budget of a run, in seconds: about 31 years, far beyond any
/// real run, and far below the range where adding it to a clock overflows.
pub const MAX_SECONDS: f64 = 1e9;

impl Default for Config {
    fn default() -> Self {
        Config {
            max_ground_rules: DEFAULT_MAX_GROUND_RULES,
            max_ground_atoms: DEFAULT_MAX_GROUND_ATOMS,
            max_term_depth: DEFAULT_MAX_TERM_DEPTH,
            max_bytes: DEFAULT_MAX_BYTES,
            max_join_steps: DEFAULT_MAX_JOIN_STEPS,
            max_time: None,
            threads: 1,
        }
    }
}

impl Config {
    /// The default limits, on one thread.
    pub fn new() -> Config {
        Config::default()
    }

    /// Most rule instances grounding may find (static and dynamic rules, each
    /// instance counted as found, duplicates included).
    pub fn max_ground_rules(mut self, rules: usize) -> Config {
        self.max_ground_rules = rules;
        self
    }

    /// Most distinct ground sentences (static and dynamic).
    pub fn max_ground_atoms(mut self, atoms: usize) -> Config {
        self.max_ground_atoms = atoms;
        self
    }

    /// Deepest nesting of a ground argument (a constant has depth 1, `(s 0)`
    /// depth 2). Printing a term recurses on its nesting: keep this in the
    /// thousands at most.
    pub fn max_term_depth(mut self, depth: usize) -> Config {
        self.max_term_depth = depth;
        self
    }

    /// Most bytes the grounder's terms, facts, indexes and rules may take (an estimate).
    pub fn max_bytes(mut self, bytes: usize) -> Config {
        self.max_bytes = bytes;
        self
    }

    /// Most candidate facts the joins may try, matching or not (a bound on the
    /// time of a join that finds few instances).
    pub fn max_join_steps(mut self, steps: usize) -> Config {
        self.max_join_steps = steps;
        self
    }

    /// Longest wall time grounding may take (`None`, the default: no bound): a
    /// bound that holds on any machine, for callers that fall back to an
    /// interpreter when it passes. The compilation of the ground program that
    /// follows (`ggpnet_propnet`'s optimizer) stops at the same time, counted
    /// from the start of grounding.
    pub fn max_time(mut self, time: Option<Duration>) -> Config {
        self.max_time = time;
        self
    }

    /// Threads the joins of a big round run on, 1 to [`MAX_THREADS`] (the
    /// ground program is the same for any number). One by default: on the
    /// project's 2-core machines two threads ground no faster (0.6x to 1.15x,
    /// docs/INIT.md).
    pub fn threads(mut self, threads: usize) -> Result<Config, SettingError> {
        if !(1..=MAX_THREADS).contains(&threads) {
            return Err(SettingError::Threads(threads));
        }
        self.threads = threads;
        Ok(self)
    }

    /// See [`Config::max_ground_rules`].
    pub fn get_max_ground_rules(&self) -> usize {
        self.max_ground_rules
    }

    /// See [`Config::max_ground_atoms`].
    pub fn get_max_ground_atoms(&self) -> usize {
        self.max_ground_atoms
    }

    /// See [`Config::max_term_depth`].
    pub fn get_max_term_depth(&self) -> usize {
        self.max_term_depth
    }

    /// See [`Config::max_bytes`].
    pub fn get_max_bytes(&self) -> usize {
        self.max_bytes
    }

    /// See [`Config::max_join_steps`].
    pub fn get_max_join_steps(&self) -> usize {
        self.max_join_steps
    }

    /// See [`Config::max_time`].
    pub fn get_max_time(&self) -> Option<Duration> {
        self.max_time
    }

    /// See [`Config::threads`].
    pub fn get_threads(&self) -> usize {
        self.threads
    }
}

/// A setting refused by its setter, with the value refused: one error for
/// every settings type of the workspace (grounding, playouts, the player).
///
/// ```
/// use ggpnet_grounder::SettingError;
/// let error = ggpnet_grounder::Config::new().threads(0).unwrap_err();
/// assert_eq!(error, SettingError::Threads(0));
/// assert_eq!(error.to_string(), "threads must be 1 to 1024, not 0");
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub enum SettingError {
    /// A thread count outside 1 to [`MAX_THREADS`].
    Threads(usize),
    /// A time budget that is not a number above 0 and at most [`MAX_SECONDS`].
    Seconds(f64),
    /// A playout depth limit of 0 (a playout makes at least one move).
    MaxDepth(u64),
    /// A perft depth outside 1 to `max`.
    PerftDepth {
        /// The depth given.
        depth: usize,
        /// The deepest allowed.
        max: usize,
    },
    /// A count that must be at least 1 given 0; names the setting.
    Zero(&'static str),
    /// A whole number outside `min` to `max`; names the setting.
    ///
    /// ```
    /// use ggpnet_grounder::SettingError;
    /// let error = SettingError::OutOfRange { setting: "shard index", value: 4, min: 1, max: 3 };
    /// assert_eq!(error.to_string(), "shard index must be 1 to 3, not 4");
    /// ```
    OutOfRange {
        /// The setting, as a phrase.
        setting: &'static str,
        /// The value given.
        value: u64,
        /// The smallest allowed.
        min: u64,
        /// The largest allowed.
        max: u64,
    },
}

impl SettingError {
    /// The setting refused, as a phrase (`threads`, `a time budget`,
    /// `max depth`, or the name of the count).
    ///
    /// ```
    /// use ggpnet_grounder::SettingError;
    /// assert_eq!(SettingError::Threads(0).setting(), "threads");
    /// ```
    pub fn setting(&self) -> &'static str {
        match self {
            SettingError::Threads(_) => "threads",
            SettingError::Seconds(_) => "a time budget",
            SettingError::MaxDepth(_) => "max depth",
            SettingError::PerftDepth { .. } => "perft depth",
            SettingError::Zero(name) => name,
            SettingError::OutOfRange { setting, .. } => setting,
        }
    }

    /// Why it was refused: the range allowed and the value given.
    ///
    /// ```
    /// use ggpnet_grounder::SettingError;
    /// assert_eq!(SettingError::Threads(0).reason(), "must be 1 to 1024, not 0");
    /// ```
    pub fn reason(&self) -> String {
        match self {
            SettingError::Threads(n) => format!("must be 1 to {MAX_THREADS}, not {n}"),
            SettingError::Seconds(s) => {
                format!("must be more than 0 and at most {MAX_SECONDS:e} seconds, not {s}")
            }
            SettingError::MaxDepth(d) => format!("must be at least 1, not {d}"),
            SettingError::PerftDepth { depth, max } => format!("must be 1 to {max}, not {depth}"),
            SettingError::Zero(_) => "must be at least 1, not 0".to_owned(),
            SettingError::OutOfRange { value, min, max, .. } => {
                format!("must be {min} to {max}, not {value}")
            }
        }
    }
}

impl fmt::Display for SettingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.setting(), self.reason())
    }
}

impl std::error::Error for SettingError {}
