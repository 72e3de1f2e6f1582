//! What the `ggpnet` command prints: one type per report, each field
//! documented with what it means and its unit. These types are the contract of
//! the machine-readable output: a field's name is its JSON key (nested types
//! are nested objects, except where a field is said to be *flattened*: its
//! keys then sit beside the others), an `Option` field is `null` when it has no
//! value unless it is said to be left out, and a number that is not finite
//! (a rate over no time, the median of no runs) is `null`. Key order carries
//! no meaning.
//!
//! | command | report |
//! | --- | --- |
//! | `check --json` | [`Check`] |
//! | `stats --json` | [`Stats`] |
//! | `stats --dir DIR --json` | [`StatsDir`]; `--csv FILE`: a [`StatsDirRow`] per game |
//! | `mc --json` | [`Mc`], or [`RtMc`] on a real-time GDL game |
//! | `perft --json` | [`Perft`] |
//! | `replay --json` | [`Replay`] |
//! | `diff --json` | [`Diff`] |
//! | `corpus --json` | [`Corpus`] (without `--json`, its [`CorpusSummary`] alone) |
//! | `bench --json` | [`Bench`] (also written to `bench.json` in `--out-dir`) |
//! | `match --json FILE` | [`MatchFile`] |
//! | `play --json-log FILE` | a [`RequestLog`] per line |
//! | `corpus`, `stats --dir`, `bench` with `--jsonl FILE` | a [`ShardHeader`], then an entry of the report's `games` per line ([`CorpusGame`], [`StatsDirGame`], [`BenchGame`]) |
//! | `merge FILES...` | the report of the command the files are shards of, as above |

use crate::shard::Shard;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::collections::BTreeMap;

/// Defines an enum of statuses, each written as a fixed string in the JSON
/// (serde's derive, renamed) and in the tables ([`name`](CorpusStatus::name)):
/// one list of variants and their strings.
macro_rules! named_status {
    ($(#[$meta:meta])* pub enum $name:ident {
        $($(#[$doc:meta])* $variant:ident => $text:literal,)*
    }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
        pub enum $name {
            $($(#[$doc])* #[serde(rename = $text)] $variant,)*
        }

        impl $name {
            /// The status as the JSON and the tables give it.
            pub fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)*
                }
            }
        }
    };
}

/// Role name → a value of that role: a JSON object, roles in name order.
pub type PerRole<T> = BTreeMap<String, T>;

/// `roles` paired with their `values`, in the same order.
pub fn per_role<T: Clone>(roles: &[String], values: &[T]) -> PerRole<T> {
    roles.iter().cloned().zip(values.iter().cloned()).collect()
}

/// A report as one line of compact JSON.
pub fn to_json(report: &impl Serialize) -> String {
    serde_json::to_string(report).expect("a report serializes: every map key is a string or a number")
}

/// A report as indented JSON.
pub fn to_json_pretty(report: &impl Serialize) -> String {
    serde_json::to_string_pretty(report).expect("a report serializes: every map key is a string or a number")
}

/// Seconds a game's loading took, all phases together.
pub fn load_seconds(report: &ggpnet::propnet::LoadReport) -> f64 {
    report.phases.iter().map(|(_, seconds)| seconds).sum()
}

/// Components of a loaded circuit (after optimization), all kinds together.
pub fn component_count(report: &ggpnet::propnet::LoadReport) -> usize {
    report.components.values().sum()
}

/// The engine a game runs on (flattened into the reports that have it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EngineUsed {
    /// `propnet`, or `interpreter` (the reference interpreter).
    pub engine: String,
    /// On the interpreter, why the propnet could not be built (a grounding
    /// limit passed with `--engine auto`, an rtGDL game outside what the
    /// propnet compiles); otherwise `null` (also with `--engine interpreter`).
    pub fallback_reason: Option<String>,
}

impl EngineUsed {
    /// The engine `game` runs on.
    pub fn of(game: &ggpnet::Game) -> EngineUsed {
        EngineUsed {
            engine: game.engine().name().to_owned(),
            fallback_reason: game.fallback_reason().map(str::to_owned),
        }
    }

    /// The engine the real-time GDL game `game` runs on.
    pub fn of_realtime(game: &ggpnet::realtime::RtGame) -> EngineUsed {
        EngineUsed {
            engine: game.engine().name().to_owned(),
            fallback_reason: game.fallback_reason().map(str::to_owned),
        }
    }
}

/// The language field of the reports on a real-time GDL game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Language {
    /// Real-time GDL: the string `rtgdl`.
    #[serde(rename = "rtgdl")]
    Rtgdl,
}

/// `ggpnet check --json`: whether a game is valid.
#[derive(Clone, Debug, Serialize)]
pub struct Check {
    /// The game: its file name without extension, or `connect_four (built-in)`.
    pub game: String,
    /// Whether the game loaded (exit 0); otherwise `error` says why.
    pub valid: bool,
    /// The first error, as printed on standard error; `null` when valid.
    pub error: Option<String>,
    /// The parser's and the checks' warnings, one message each.
    pub warnings: Vec<String>,
    /// `rtgdl` on a real-time GDL game; left out on any other.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub language: Option<Language>,
    /// The engine the game runs on (see [`EngineUsed`]); `null` when invalid.
    pub engine: Option<String>,
    /// See [`EngineUsed`]; `null` when invalid.
    pub fallback_reason: Option<String>,
}

/// `ggpnet stats --json`: what loading a game took and produced, by the
/// engine it runs on (the JSON has no tag: the keys tell the three apart).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Stats {
    /// A real-time GDL game (it has `language`).
    Rtgdl(RtStats),
    /// A game on the propnet: the circuit measured (it has `phases`).
    Circuit(CircuitStats),
    /// A game on the interpreter: no circuit to measure.
    Interpreter(InterpreterStats),
}

impl Stats {
    /// The game's name.
    pub fn game(&self) -> &str {
        match self {
            Stats::Rtgdl(s) => &s.game,
            Stats::Circuit(s) => &s.game,
            Stats::Interpreter(s) => &s.game,
        }
    }

    /// Seconds loading took.
    pub fn total_seconds(&self) -> f64 {
        match self {
            Stats::Rtgdl(s) => s.total_seconds,
            Stats::Circuit(s) => s.total_seconds,
            Stats::Interpreter(s) => s.total_seconds,
        }
    }

    /// Peak resident memory of the process, in bytes.
    pub fn peak_rss_bytes(&self) -> u64 {
        match self {
            Stats::Rtgdl(s) => s.peak_rss_bytes,
            Stats::Circuit(s) => s.peak_rss_bytes,
            Stats::Interpreter(s) => s.peak_rss_bytes,
        }
    }

    /// The circuit's figures, when the game is a GDL game on the propnet.
    pub fn circuit(&self) -> Option<&CircuitStats> {
        match self {
            Stats::Circuit(s) => Some(s),
            _ => None,
        }
    }

    /// Components by kind after optimization, when there is a circuit.
    pub fn components(&self) -> Option<&BTreeMap<String, usize>> {
        match self {
            Stats::Rtgdl(s) => s.components.as_ref(),
            Stats::Circuit(s) => Some(&s.components),
            Stats::Interpreter(_) => None,
        }
    }
}

/// [`Stats`] of a GDL game on the propnet.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CircuitStats {
    /// The game: its file name without extension, or `connect_four (built-in)`.
    pub game: String,
    /// Always `propnet`.
    pub engine: String,
    /// Phase name (`parse`, `check`, `ground`, `build`, `optimize`, `layer`,
    /// `plan`) → seconds it took.
    pub phases: BTreeMap<String, f64>,
    /// Seconds of all phases together.
    pub total_seconds: f64,
    /// Peak resident memory of the process, in bytes (0 where the system does not say).
    pub peak_rss_bytes: u64,
    /// Ground sentences that may hold.
    pub ground_atoms: usize,
    /// Ground rule instances.
    pub ground_rules: usize,
    /// Component kind (`and`, `or`, `not`, `base`, `input`, `constant`, ...)
    /// → count, before optimization.
    pub components_raw: BTreeMap<String, usize>,
    /// The same after optimization.
    pub components: BTreeMap<String, usize>,
    /// Layers of the evaluation order.
    pub layers: usize,
    /// Cyclic strongly connected components.
    pub sccs: usize,
    /// The roles, in the game's order.
    pub roles: Vec<String>,
    /// Base propositions (state facts).
    pub bases: usize,
    /// Input propositions (moves).
    pub inputs: usize,
    /// The parser's and the checks' warnings.
    pub warnings: Vec<String>,
    /// Components by the relation they come from, most first.
    pub relations: Vec<RelationSize>,
    /// Gates (and, or, not) by number of inputs, in buckets 0, 1, 2, 3-4, 5-8, ...
    pub fan_in: Vec<Bucket>,
    /// Nodes by number of readers (gates, outputs, transitions), in the same buckets.
    pub fan_out: Vec<Bucket>,
    /// Nodes per layer, layer 0 first.
    pub layer_widths: Vec<usize>,
}

/// The components that come from one relation.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RelationSize {
    /// The relation's name.
    pub relation: String,
    /// Its components.
    pub nodes: usize,
}

/// A histogram bucket: how many nodes have a count in `min..=max`.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Bucket {
    /// Smallest count of the bucket.
    pub min: usize,
    /// Largest count of the bucket.
    pub max: usize,
    /// Nodes with a count in the bucket.
    pub nodes: usize,
}

impl From<&ggpnet::propnet::inspect::Bucket> for Bucket {
    fn from(b: &ggpnet::propnet::inspect::Bucket) -> Bucket {
        Bucket {
            min: b.min,
            max: b.max,
            nodes: b.nodes,
        }
    }
}

/// [`Stats`] of a GDL game on the interpreter.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct InterpreterStats {
    /// The game: its file name without extension, or `connect_four (built-in)`.
    pub game: String,
    /// The engine (`interpreter`) and why (flattened).
    #[serde(flatten)]
    pub engine: EngineUsed,
    /// Seconds loading took.
    pub total_seconds: f64,
    /// Peak resident memory of the process, in bytes (0 where the system does not say).
    pub peak_rss_bytes: u64,
    /// The roles, in the game's order.
    pub roles: Vec<String>,
}

/// [`Stats`] of a real-time GDL game.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RtStats {
    /// The game: its file name without extension.
    pub game: String,
    /// Always `rtgdl`.
    pub language: Language,
    /// The engine and, on the interpreter, why (flattened).
    #[serde(flatten)]
    pub engine: EngineUsed,
    /// Component kind → count of the compiled circuit; `null` on the interpreter.
    pub components: Option<BTreeMap<String, usize>>,
    /// Seconds loading took.
    pub total_seconds: f64,
    /// Peak resident memory of the process, in bytes (0 where the system does not say).
    pub peak_rss_bytes: u64,
    /// The roles, in the game's order.
    pub roles: Vec<String>,
    /// Facts of the initial state.
    pub initial_facts: usize,
    /// Game time, in lifetime units, until the first fact of the initial state
    /// expires; `null` if none ever does.
    pub initial_next_expiry: Option<String>,
}

/// What every playout run reports, GDL or real-time (flattened into [`Mc`] and [`RtMc`]).
#[derive(Clone, Debug, Serialize)]
pub struct PlayoutRun {
    /// Worker threads.
    pub threads: usize,
    /// Wall seconds the playouts took.
    pub seconds: f64,
    /// Playouts finished.
    pub playouts: u64,
    /// Playouts per wall second.
    pub playouts_per_sec: f64,
    /// Role → mean of its goal value (its highest derivable one in GDL) at the
    /// end of the playouts that give it one; `null` if none does.
    pub avg_goals: PerRole<Option<f64>>,
    /// Role → finished playouts whose end gives it no goal value.
    pub missing_goals: PerRole<u64>,
    /// Seed of the random generators.
    pub seed: u64,
}

/// `ggpnet mc --json` on a GDL game: flat Monte-Carlo from the initial state.
#[derive(Clone, Debug, Serialize)]
pub struct Mc {
    /// The game: its file name without extension, or `connect_four (built-in)`.
    pub game: String,
    /// The engine (flattened).
    #[serde(flatten)]
    pub engine: EngineUsed,
    /// The evaluator that ran (`sweep`, `differential`, `lanes`), or `interpreter`.
    pub evaluator: String,
    /// Threads, time, playouts, goals, seed (flattened).
    #[serde(flatten)]
    pub run: PlayoutRun,
    /// State transitions: joint moves applied, a playout of `d` moves
    /// counting `d` (the unit of the peer reasoners' "nodes").
    pub transitions: u64,
    /// States visited: the transitions plus each playout's start state.
    pub states: u64,
    /// Playouts stopped in a non-terminal state: where a role had no legal
    /// move, or at the depth limit.
    pub abandoned: u64,
    /// Of those, the ones stopped at the depth limit.
    pub at_depth_limit: u64,
    /// The depth limit, in moves (`--max-depth`).
    pub max_depth: u64,
    /// State transitions per wall second: the headline rate.
    pub transitions_per_sec: f64,
    /// States visited per wall second.
    pub states_per_sec: f64,
    /// Moves per finished playout.
    pub avg_depth: f64,
}

/// The unit of the counts of `ggpnet mc GAME.rbg` ([`RbgMc::transition_unit`]):
/// one per move of a player, keeper moves not counted (rbg2cpp's benchmark's unit).
pub const RBG_PLAYER_MOVE: &str = "rbg_player_move";

/// `ggpnet mc --json` on a Regular Boardgames (`.rbg`) game: the fields of
/// [`Mc`], whose `transitions`, `transitions_per_sec`, `avg_depth` and
/// `max_depth` count RBG player moves, as the unit field says.
#[derive(Clone, Debug, Serialize)]
pub struct RbgMc {
    /// The common fields (flattened).
    #[serde(flatten)]
    pub mc: Mc,
    /// The unit of the move counts: always [`RBG_PLAYER_MOVE`].
    pub transition_unit: String,
    /// GDL steps applied along the playouts (player and keeper steps of the
    /// translation); `None` on the direct engine.
    pub gdl_steps: Option<u64>,
}

/// `ggpnet mc --json` on a real-time GDL game: random timed playouts.
#[derive(Clone, Debug, Serialize)]
pub struct RtMc {
    /// The game: its file name without extension.
    pub game: String,
    /// Always `rtgdl`.
    pub language: Language,
    /// The engine (flattened).
    #[serde(flatten)]
    pub engine: EngineUsed,
    /// How long a simulated player takes to move (`uniform:MAX`, `exp:MEAN`, `immediate`).
    pub time_model: String,
    /// Threads, time, playouts, goals, seed (flattened).
    #[serde(flatten)]
    pub run: PlayoutRun,
    /// Playouts that ended in a terminal state.
    pub terminal: u64,
    /// Playouts stopped at the event limit.
    pub at_event_limit: u64,
    /// Playouts where nothing could happen any more.
    pub stalled: u64,
    /// The event limit, in updates per playout (`--max-depth`).
    pub max_events: u64,
    /// Updates performed, over all playouts.
    pub events: u64,
    /// Moves that took part in updates.
    pub moves: u64,
    /// Moves ignored as illegal when they arrived.
    pub ignored_moves: u64,
    /// Updates per wall second.
    pub events_per_sec: f64,
    /// Updates per playout.
    pub avg_events: f64,
    /// Game time per playout, in lifetime units.
    pub avg_game_time: f64,
}

/// `ggpnet perft --json`: joint-move paths counted to a depth.
#[derive(Clone, Debug, Serialize)]
pub struct Perft {
    /// The game: its file name without extension, or `connect_four (built-in)`.
    pub game: String,
    /// The depth counted to.
    pub depth: usize,
    /// `propnet` or `interpreter`.
    pub engine: String,
    /// The evaluator of the last ply: `lanes` when it ran in batches on the
    /// lanes evaluator, else the one of `scalar`.
    pub evaluator: String,
    /// The scalar evaluator that expanded the plies above the last (`sweep`,
    /// `differential`), or `interpreter` (`direct` for RBG's own engine).
    pub scalar: String,
    /// Depth (from 1) → joint-move paths of that length (through a 64-bit
    /// float: exact up to 2^53).
    pub counts: BTreeMap<usize, u64>,
    /// States expanded.
    pub nodes: u64,
    /// Wall seconds.
    pub seconds: f64,
    /// States expanded per wall second.
    pub nodes_per_sec: f64,
}

/// A path count as the reports give it: through a 64-bit float, so exact up
/// to 2^53, rounded above, and at most `u64::MAX`.
pub fn path_count(count: u128) -> u64 {
    count as f64 as u64
}

/// `ggpnet replay --json`: a reference trace replayed with each evaluator.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Replay {
    /// The game: its file name without extension.
    pub game: String,
    /// The engine (flattened).
    #[serde(flatten)]
    pub engine: EngineUsed,
    /// Seconds loading took; `null` on the interpreter.
    pub compile_seconds: Option<f64>,
    /// Components of the circuit; `null` on the interpreter.
    pub components: Option<usize>,
    /// Playouts of the trace compared.
    pub playouts: usize,
    /// Steps compared, over all playouts.
    pub steps: usize,
    /// Perft depths compared.
    pub perft_depths: usize,
    /// Evaluator name (`sweep`, `differential`, `lanes`, or `interpreter`) → its own check.
    pub evaluators: BTreeMap<String, EvaluatorCheck>,
    /// Whether every evaluator agreed.
    pub agree: bool,
    /// Where and what first differed, prefixed with the evaluator in
    /// brackets; `null` when all agree.
    pub first_difference: Option<String>,
}

/// One evaluator's part of a [`Replay`] (the keys tell the two kinds apart).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(untagged)]
pub enum EvaluatorCheck {
    /// The lanes, compared with the scalar driver move by move.
    Lanes {
        /// Lanes (playouts) compared.
        lanes: usize,
        /// Steps compared, over all lanes.
        steps: usize,
        /// Whether they agreed.
        agree: bool,
    },
    /// A scalar evaluator (or the interpreter), compared with the trace.
    Trace {
        /// Playouts compared.
        playouts: usize,
        /// Steps compared.
        steps: usize,
        /// Perft depths compared.
        perft_depths: usize,
        /// Whether they agreed.
        agree: bool,
    },
}

/// `ggpnet diff --json`: random playouts on the propnet and the reference
/// interpreter side by side (the keys tell the two cases apart).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Diff {
    /// The playouts were compared.
    Compared(DiffCompared),
    /// The game runs on the interpreter: nothing to compare.
    Skipped(DiffSkipped),
}

/// A [`Diff`] that compared.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DiffCompared {
    /// The game: its file name without extension, or `connect_four (built-in)`.
    pub game: String,
    /// Seconds loading the propnet took.
    pub compile_seconds: f64,
    /// Components of the circuit.
    pub components: usize,
    /// Playouts played.
    pub playouts: usize,
    /// States compared.
    pub steps: usize,
    /// Whether the two agreed everywhere.
    pub agree: bool,
    /// Where and what first differed; `null` when they agree.
    pub first_difference: Option<String>,
}

/// A [`Diff`] of a game with no propnet.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct DiffSkipped {
    /// The game: its file name without extension, or `connect_four (built-in)`.
    pub game: String,
    /// Always `interpreter`.
    pub engine: String,
    /// Always `null`: nothing was compared.
    pub agree: (),
    /// Why: `no propnet to compare: ` and the reason the propnet was not built.
    pub skipped: String,
}

/// `ggpnet corpus --json`: every game of a corpus checked in its own process.
#[derive(Clone, Debug, Serialize)]
pub struct Corpus {
    /// Games by outcome.
    pub summary: CorpusSummary,
    /// One entry per game, in name order.
    pub games: Vec<CorpusGame>,
}

/// The counts of a [`Corpus`] run, by [`CorpusStatus`].
#[derive(Clone, Debug, Default, Serialize)]
pub struct CorpusSummary {
    /// Games run.
    pub games: usize,
    /// Games checked: all but `no trace` and `no propnet`.
    pub with_trace: usize,
    /// Games with status `agree`.
    pub agree: usize,
    /// ... `differ`.
    pub differ: usize,
    /// ... `timeout`.
    pub timeout: usize,
    /// ... `memory`.
    pub memory: usize,
    /// ... `parse error`.
    pub parse_error: usize,
    /// ... `input error`.
    pub input_error: usize,
    /// ... `compile error`.
    pub compile_error: usize,
    /// ... `too large`.
    pub too_large: usize,
    /// ... `reference error`.
    pub reference_error: usize,
    /// ... `crash`.
    pub crash: usize,
    /// ... `no propnet`.
    pub no_propnet: usize,
}

named_status! {
    /// How a game of a [`Corpus`] run ended: a string in the JSON.
    pub enum CorpusStatus {
        /// `agree`: the check passed.
        Agree => "agree",
        /// `differ`: the check found a difference.
        Differ => "differ",
        /// `timeout`: stopped at the time limit.
        Timeout => "timeout",
        /// `memory`: stopped past the memory limit.
        Memory => "memory",
        /// `parse error`: the game does not parse (exit 2).
        ParseError => "parse error",
        /// `input error`: other bad input, such as an unreadable trace (exit 2).
        InputError => "input error",
        /// `compile error`: an invalid game (exit 1).
        CompileError => "compile error",
        /// `too large`: a grounding limit reached (exit 3).
        TooLarge => "too large",
        /// `reference error`: the reference interpreter refused the game (exit 1, `diff`).
        ReferenceError => "reference error",
        /// `crash`: any other end without a report.
        Crash => "crash",
        /// `no trace`: a game without a reference trace, not run (`replay`).
        NoTrace => "no trace",
        /// `no propnet`: a game only the interpreter runs, nothing to compare (`diff`).
        NoPropnet => "no propnet",
        /// `error`: the child process could not be started.
        Error => "error",
    }
}

/// An optional value whose key must be present (`null` for none), so that
/// it tells apart the cases of an untagged enum.
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(deserializer: D) -> Result<Option<T>, D::Error> {
    Option::deserialize(deserializer)
}

/// One game of a [`Corpus`] run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct CorpusGame {
    /// What the run gave (flattened).
    #[serde(flatten)]
    pub outcome: CorpusOutcome,
    /// How it ended.
    pub status: CorpusStatus,
    /// Wall seconds of its process; left out when none ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seconds: Option<f64>,
}

/// What the run of one [`Corpus`] game gave (flattened: the keys tell the cases apart).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(untagged)]
pub enum CorpusOutcome {
    /// The [`Replay`] report of `ggpnet replay --json` (`--check replay`).
    Replay(Replay),
    /// The [`Diff`] report of `ggpnet diff --json` (`--check diff`).
    Diff(Diff),
    /// The process ended without a report.
    Failed {
        /// The game's name.
        game: String,
        /// Its exit code; `null` when killed by a signal (always present:
        /// the key tells this case from `Stopped`).
        #[serde(deserialize_with = "present")]
        exit: Option<i32>,
        /// The first line of its standard error.
        error: String,
    },
    /// The process was stopped at a limit, or could not start.
    Stopped {
        /// The game's name.
        game: String,
        /// Which limit, or why it could not start.
        error: String,
    },
    /// Not run: no trace to replay.
    Skipped {
        /// The game's name.
        game: String,
    },
}

impl CorpusOutcome {
    /// The game's name.
    pub fn game(&self) -> &str {
        match self {
            CorpusOutcome::Replay(r) => &r.game,
            CorpusOutcome::Diff(Diff::Compared(d)) => &d.game,
            CorpusOutcome::Diff(Diff::Skipped(d)) => &d.game,
            CorpusOutcome::Failed { game, .. }
            | CorpusOutcome::Stopped { game, .. }
            | CorpusOutcome::Skipped { game } => game,
        }
    }
}

/// `ggpnet stats --dir DIR --json`: the [`Stats`] of every game of a
/// directory, each measured in its own process with a time and memory limit.
#[derive(Clone, Debug, Serialize)]
pub struct StatsDir {
    /// Counts and extremes.
    pub summary: StatsDirSummary,
    /// One entry per game, in file name order.
    pub games: Vec<StatsDirGame>,
}

/// The summary of a [`StatsDir`] run.
#[derive(Clone, Debug, Serialize)]
pub struct StatsDirSummary {
    /// Games run.
    pub games: usize,
    /// Games with status `ok`.
    pub compiled: usize,
    /// ... `timeout`.
    pub timeout: usize,
    /// ... `memory`.
    pub memory: usize,
    /// ... `error`.
    pub error: usize,
    /// The time limit per game, in seconds.
    pub timeout_seconds: u64,
    /// The resident memory limit per game, in MiB.
    pub max_mem_mib: u64,
    /// Median loading time of the games compiled, in seconds; `null` if none was.
    pub median_init_seconds: Option<f64>,
    /// Longest loading time, in seconds; `null` if none compiled.
    pub worst_init_seconds: Option<f64>,
    /// The game that took it.
    pub worst_init_game: Option<String>,
    /// Highest peak resident memory of a game compiled, in bytes.
    pub worst_peak_rss_bytes: Option<u64>,
    /// The game that used it.
    pub worst_memory_game: Option<String>,
}

/// One game of a [`StatsDir`] run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StatsDirGame {
    /// What the measure gave (flattened).
    #[serde(flatten)]
    pub outcome: StatsDirOutcome,
    /// How it ended.
    pub status: StatsDirStatus,
    /// Wall seconds of its process; left out when none ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wall_seconds: Option<f64>,
}

/// What measuring one game of a [`StatsDir`] run gave (flattened).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(untagged)]
pub enum StatsDirOutcome {
    /// The game's [`Stats`].
    Measured(Box<Stats>),
    /// No figures.
    Failed {
        /// The game's name (its file name without extension).
        game: String,
        /// Why: the limit reached, or the first line of the process's standard error.
        error: String,
        /// The largest resident memory seen while it ran, in bytes (sampled every
        /// 20 ms); left out when no process ran.
        #[serde(skip_serializing_if = "Option::is_none")]
        peak_rss_bytes: Option<u64>,
    },
}

named_status! {
    /// How measuring one game of a [`StatsDir`] run ended: a string in the JSON.
    pub enum StatsDirStatus {
        /// `ok`: measured.
        Ok => "ok",
        /// `timeout`: stopped at the time limit.
        Timeout => "timeout",
        /// `memory`: stopped past the memory limit.
        Memory => "memory",
        /// `error`: the game failed to load, or the process could not start.
        Error => "error",
    }
}

/// A line of the CSV table of `ggpnet stats --dir DIR --csv FILE`: the
/// header is the field names. Numbers are written with fixed decimals; an
/// empty cell is a figure the game does not have.
#[derive(Clone, Debug, Serialize)]
pub struct StatsDirRow {
    /// The game's name.
    pub game: String,
    /// Its [`StatsDirStatus`].
    pub status: StatsDirStatus,
    /// Seconds loading took, 4 decimals.
    pub init_seconds: Option<Decimal>,
    /// Seconds of the parse phase, 4 decimals (GDL games on the propnet).
    pub parse_seconds: Option<Decimal>,
    /// ... of the check phase.
    pub check_seconds: Option<Decimal>,
    /// ... of grounding.
    pub ground_seconds: Option<Decimal>,
    /// ... of building the circuit.
    pub build_seconds: Option<Decimal>,
    /// ... of optimizing it.
    pub optimize_seconds: Option<Decimal>,
    /// ... of layering it.
    pub layer_seconds: Option<Decimal>,
    /// ... of planning its evaluation.
    pub plan_seconds: Option<Decimal>,
    /// Peak resident memory in MiB, 1 decimal (0.0 when not measured).
    pub peak_rss_mib: Decimal,
    /// Ground rule instances.
    pub ground_rules: Option<usize>,
    /// Components before optimization.
    pub components_raw: Option<usize>,
    /// Components after optimization.
    pub components: Option<usize>,
    /// Why the game has no figures; empty when it has.
    pub error: String,
}

/// A number written with a fixed count of decimals (as text).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Decimal {
    /// The number.
    pub value: f64,
    /// Decimals written.
    pub places: usize,
}

impl Serialize for Decimal {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(&format_args!("{:.*}", self.places, self.value))
    }
}

/// `ggpnet bench --json` (and `bench.json`): flat Monte-Carlo with every
/// evaluator and perft on the anchor games, beside the peers' figures.
#[derive(Clone, Debug, Serialize)]
pub struct Bench {
    /// Where and how the games were measured (flattened).
    #[serde(flatten)]
    pub run: BenchRun,
    /// One entry per game, in the order given.
    pub games: Vec<BenchGame>,
}

/// The part of a [`Bench`] that is not about one game: the machine and the settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BenchRun {
    /// The CPU's model name (`/proc/cpuinfo`), or `unknown`.
    pub cpu: String,
    /// Width of the registers the lanes use, in bits (128, 256 or 512).
    pub lane_vector_bits: u32,
    /// Cores available.
    pub cores: usize,
    /// Threads of the parallel runs.
    pub threads: usize,
    /// Seconds of flat Monte-Carlo per evaluator and thread count (`--seconds`).
    pub seconds: f64,
    /// Runs those seconds are split into (`--repeats`).
    pub repeats: u32,
    /// The unit of every rate: state transitions (joint moves applied) per
    /// second, except in a game whose `transition_unit` says otherwise.
    pub unit: String,
    /// The peers' figures used.
    pub peers: Peers,
}

/// The peer figures a [`Bench`] compares with.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Peers {
    /// The file of `anchors/` measured on this CPU (by `/proc/cpuinfo`'s model
    /// name and family), else `anchors/peers-epyc.json`.
    pub file: String,
    /// The CPU it was measured on, as the file says.
    pub measured_on: String,
    /// True when no file was measured on this CPU: every ratio to a peer crosses machines.
    pub cross_machine: bool,
}

/// One game of a [`Bench`] (read back by way of a JSON value: the rates'
/// keys are thread counts, which serde's flattening cannot read from text).
#[derive(Clone, Debug, Serialize)]
pub struct BenchGame {
    /// The game's name.
    pub game: String,
    /// The anchors' flat Monte-Carlo figures for it.
    pub anchors: Anchors,
    /// Our figures, or why there are none (flattened).
    #[serde(flatten)]
    pub result: BenchResult,
}

/// Our figures for one game of a [`Bench`] (flattened: the keys tell the cases apart).
#[derive(Clone, Debug, Serialize)]
#[serde(untagged)]
pub enum BenchResult {
    /// The game loaded and ran.
    Measured(BenchMeasured),
    /// The game did not load.
    NotLoaded {
        /// Why, as `ggpnet` would print it.
        error: String,
    },
}

impl<'de> Deserialize<'de> for BenchGame {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<BenchGame, D::Error> {
        use serde::de::Error;
        let value = serde_json::Value::deserialize(deserializer)?;
        let field = |key: &'static str| match value.get(key) {
            Some(v) => Ok(v.clone()),
            None => Err(D::Error::missing_field(key)),
        };
        fn read<T: serde::de::DeserializeOwned, E: Error>(v: serde_json::Value) -> Result<T, E> {
            serde_json::from_value(v).map_err(E::custom)
        }
        let result = match value.get("error") {
            Some(_) => BenchResult::NotLoaded {
                error: read(field("error")?)?,
            },
            None => BenchResult::Measured(read(value.clone())?),
        };
        Ok(BenchGame {
            game: read(field("game")?)?,
            anchors: read(field("anchors")?)?,
            result,
        })
    }
}

/// The figures of one game that loaded.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BenchMeasured {
    /// Seconds loading took.
    pub init_seconds: f64,
    /// Components of the circuit.
    pub components: usize,
    /// Evaluator → thread count → transitions per second, the median of the runs.
    pub mc: BTreeMap<String, BTreeMap<usize, f64>>,
    /// The same, every run (`repeats` of `seconds / repeats` each, alternating
    /// between the thread counts).
    pub mc_runs: BTreeMap<String, BTreeMap<usize, Vec<f64>>>,
    /// The unit of `mc` and `mc_runs` where it is not the run's: on a
    /// Regular Boardgames file, [`RBG_PLAYER_MOVE`] (RBG player moves per
    /// second, one uniform draw per RBG move, keeper moves not counted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transition_unit: Option<String>,
    /// Perft against the reference trace; left out with `--skip-perft`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub perft: Option<BenchPerft>,
}

/// Perft in a [`Bench`]: to the depth of the game's reference trace (3 without
/// one), the faster scalar evaluator's figures.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct BenchPerft {
    /// The depth counted to.
    pub depth: usize,
    /// The faster scalar evaluator.
    pub evaluator: String,
    /// States expanded.
    pub nodes: u64,
    /// States expanded per second.
    pub nodes_per_sec: f64,
    /// Wall seconds of the faster evaluator's run.
    pub seconds: f64,
    /// Joint-move paths of each length from 1 (see [`path_count`]).
    pub counts: Vec<u64>,
    /// Depths the trace gives counts for (0: no trace).
    pub trace_depths: usize,
    /// Whether every evaluator's counts equal the trace's.
    pub counts_match: bool,
}

/// The peers' figures for a game, measured on the CPU of the peer file
/// ([`Peers`]); `null` where there is none.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Anchors {
    /// Sironi's propnet, flat Monte-Carlo, transitions per second.
    pub sironi: Option<f64>,
    /// ggplib, flat Monte-Carlo, transitions per second.
    pub ggplib: Option<f64>,
    /// The RBG compiler on the game's RBG file, flat Monte-Carlo in GDL steps
    /// per second, where its perft counts equal the GDL game's (the same rules).
    pub rbg_compiler: Option<f64>,
    /// The RBG compiler's bulk-counting perft of the same file, where it has one.
    pub rbg_perft: Option<RbgPerft>,
}

/// A perft run of the RBG compiler that counts the last ply without applying
/// it, as ggpnet's perft does.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RbgPerft {
    /// The depth counted to.
    pub depth: usize,
    /// Wall seconds it took.
    pub seconds: f64,
}

/// The first line of a shard's file (`--jsonl FILE` of `corpus`, `stats
/// --dir` and `bench`); every further line is one entry of the report's
/// `games`, of the games of this shard (see [`crate::shard_file`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ShardHeader {
    /// The shard: `I/N`.
    pub shard: Shard,
    /// Every game of the whole run (all shards), in the run's order.
    pub games: Vec<String>,
    /// The command, and the settings its report depends on.
    pub run: ShardRun,
}

/// The command a [`ShardHeader`] is of: an object with one key, the command.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ShardRun {
    /// `ggpnet corpus`.
    Corpus(CorpusRun),
    /// `ggpnet stats --dir`.
    StatsDir(StatsDirRun),
    /// `ggpnet bench`: the report's fields other than `games` (a shard run
    /// on another CPU is another run: merge refuses it).
    Bench(BenchRun),
}

/// The settings of a sharded `ggpnet corpus`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CorpusRun {
    /// `replay` or `diff` (`--check`).
    pub check: String,
    /// Whether it ran the GDL-II corpus (`--gdl2`).
    pub gdl2: bool,
    /// Seconds allowed per game (`--timeout`).
    pub timeout_seconds: u64,
    /// The resident memory allowed per game, in MiB (`--max-mem`); `null` when none.
    pub max_mem_mib: Option<u64>,
}

/// The settings of a sharded `ggpnet stats --dir`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StatsDirRun {
    /// Seconds allowed per game (`--timeout`).
    pub timeout_seconds: u64,
    /// The resident memory allowed per game, in MiB.
    pub max_mem_mib: u64,
}

/// The file of `ggpnet match --json FILE`.
#[derive(Clone, Debug, Serialize)]
pub struct MatchFile<'a, R> {
    /// Each match's record, with ggp-base's keys (`ggpnet::manager::MatchRecord`,
    /// or `ggpnet::manager::RtMatchRecord` on a real-time GDL game).
    pub matches: &'a [R],
    /// Per player, its results over the matches.
    pub results: &'a [PlayerResult],
}

/// One player's results in a [`MatchFile`].
#[derive(Clone, Debug, Serialize)]
pub struct PlayerResult {
    /// The player as given (`ROLE=HOST:PORT` or `ROLE=builtin:SEARCH`), or
    /// `manager (random)` for the manager's random moves.
    pub player: String,
    /// The role it played in the first match.
    pub first_role: String,
    /// Matches played.
    pub matches: u64,
    /// Matches where its goal was above every other player's (the `random` role is no opponent).
    pub wins: u64,
    /// Matches where it was level with the best.
    pub draws: u64,
    /// Its mean goal value.
    pub average_goal: f64,
    /// Errors and illegal moves it was charged with.
    pub errors: u64,
    /// Its longest reply, in seconds.
    pub max_reply_seconds: f64,
}

/// A line of `ggpnet play --json-log FILE`: one request and its reply.
#[derive(Clone, Debug, Serialize)]
pub struct RequestLog<'a> {
    /// The game manager's address.
    pub peer: &'a str,
    /// Milliseconds from the request to the reply.
    pub ms: f64,
    /// What the request was, in short.
    pub note: &'a str,
    /// The reply sent.
    pub reply: &'a str,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `report` read back from its JSON gives the same JSON: the reports a
    /// parent process reads from its children keep every key and value.
    fn reads_back<T: Serialize + serde::de::DeserializeOwned>(report: &T) -> T {
        let text = to_json(report);
        let read: T = serde_json::from_str(&text).expect("the report reads back");
        assert_eq!(to_json(&read), text);
        read
    }

    /// The engine `name`, run for the reason `why`.
    fn engine(name: &str, why: Option<&str>) -> EngineUsed {
        EngineUsed {
            engine: name.to_owned(),
            fallback_reason: why.map(str::to_owned),
        }
    }

    #[test]
    fn each_kind_of_stats_reads_back_as_itself() {
        let interpreter = Stats::Interpreter(InterpreterStats {
            game: "g".to_owned(),
            engine: engine("interpreter", Some("grounding too large")),
            total_seconds: 0.5,
            peak_rss_bytes: 1 << 20,
            roles: vec!["a".to_owned()],
        });
        assert!(matches!(reads_back(&interpreter), Stats::Interpreter(_)));
        let text = to_json(&interpreter);
        assert!(
            text.contains(r#""engine":"interpreter","fallback_reason":"grounding too large""#),
            "{text}"
        );
        let rtgdl = Stats::Rtgdl(RtStats {
            game: "r".to_owned(),
            language: Language::Rtgdl,
            engine: engine("propnet", None),
            components: Some([("and".to_owned(), 2)].into()),
            total_seconds: 0.25,
            peak_rss_bytes: 7,
            roles: vec!["a".to_owned(), "b".to_owned()],
            initial_facts: 3,
            initial_next_expiry: None,
        });
        assert!(matches!(reads_back(&rtgdl), Stats::Rtgdl(_)));
        assert!(to_json(&rtgdl).contains(r#""language":"rtgdl""#));
        let circuit = Stats::Circuit(CircuitStats {
            game: "c".to_owned(),
            engine: "propnet".to_owned(),
            phases: [("parse".to_owned(), 0.125)].into(),
            total_seconds: 0.125,
            peak_rss_bytes: 9,
            ground_atoms: 1,
            ground_rules: 2,
            components_raw: [("or".to_owned(), 4)].into(),
            components: [("or".to_owned(), 3)].into(),
            layers: 1,
            sccs: 0,
            roles: vec!["a".to_owned()],
            bases: 1,
            inputs: 1,
            warnings: vec!["w".to_owned()],
            relations: vec![RelationSize {
                relation: "cell".to_owned(),
                nodes: 3,
            }],
            fan_in: vec![Bucket {
                min: 1,
                max: 2,
                nodes: 3,
            }],
            fan_out: Vec::new(),
            layer_widths: vec![3],
        });
        assert!(matches!(reads_back(&circuit), Stats::Circuit(_)));
    }

    #[test]
    fn replays_and_diffs_read_back_as_themselves() {
        let replay = Replay {
            game: "g".to_owned(),
            engine: engine("propnet", None),
            compile_seconds: Some(0.5),
            components: Some(10),
            playouts: 2,
            steps: 20,
            perft_depths: 3,
            evaluators: [
                (
                    "lanes".to_owned(),
                    EvaluatorCheck::Lanes {
                        lanes: 512,
                        steps: 100,
                        agree: true,
                    },
                ),
                (
                    "sweep".to_owned(),
                    EvaluatorCheck::Trace {
                        playouts: 2,
                        steps: 20,
                        perft_depths: 3,
                        agree: false,
                    },
                ),
            ]
            .into(),
            agree: false,
            first_difference: Some("[sweep] step 3".to_owned()),
        };
        let read = reads_back(&replay);
        assert!(matches!(read.evaluators["lanes"], EvaluatorCheck::Lanes { .. }));
        assert!(matches!(read.evaluators["sweep"], EvaluatorCheck::Trace { .. }));
        let compared = Diff::Compared(DiffCompared {
            game: "g".to_owned(),
            compile_seconds: 0.5,
            components: 10,
            playouts: 3,
            steps: 30,
            agree: true,
            first_difference: None,
        });
        assert!(matches!(reads_back(&compared), Diff::Compared(_)));
        let skipped = Diff::Skipped(DiffSkipped {
            game: "g".to_owned(),
            engine: "interpreter".to_owned(),
            agree: (),
            skipped: "no propnet to compare: --engine interpreter".to_owned(),
        });
        assert!(matches!(reads_back(&skipped), Diff::Skipped(_)));
        assert!(to_json(&skipped).contains(r#""agree":null"#));
    }

    /// The entries of sharded runs' JSON lines read back as themselves:
    /// a process ended without a report (exit `null`) is not one stopped at a limit.
    #[test]
    fn sharded_entries_read_back_as_themselves() {
        let game = |outcome, status| CorpusGame {
            outcome,
            status,
            seconds: Some(0.5),
        };
        let failed = game(
            CorpusOutcome::Failed {
                game: "f".to_owned(),
                exit: None,
                error: "killed".to_owned(),
            },
            CorpusStatus::Crash,
        );
        assert!(matches!(
            reads_back(&failed).outcome,
            CorpusOutcome::Failed { exit: None, .. }
        ));
        let stopped = CorpusOutcome::Stopped {
            game: "s".to_owned(),
            error: "no result within 1 s".to_owned(),
        };
        let read = reads_back(&game(stopped, CorpusStatus::Timeout));
        assert!(matches!(read.outcome, CorpusOutcome::Stopped { .. }));
        assert_eq!(read.status, CorpusStatus::Timeout);
        let skipped = game(
            CorpusOutcome::Skipped { game: "k".to_owned() },
            CorpusStatus::NoTrace,
        );
        assert!(matches!(
            reads_back(&skipped).outcome,
            CorpusOutcome::Skipped { .. }
        ));
        let measured = BenchGame {
            game: "b".to_owned(),
            anchors: Anchors::default(),
            result: BenchResult::Measured(BenchMeasured {
                init_seconds: 0.25,
                components: 9,
                mc: [("sweep".to_owned(), [(1, 1e6), (2, 2e6)].into())].into(),
                mc_runs: [("sweep".to_owned(), [(1, vec![1e6])].into())].into(),
                transition_unit: Some(RBG_PLAYER_MOVE.to_owned()),
                perft: None,
            }),
        };
        let BenchResult::Measured(read) = reads_back(&measured).result else {
            panic!("measured read back as not loaded");
        };
        assert_eq!(read.transition_unit.as_deref(), Some(RBG_PLAYER_MOVE));
        let not_loaded = BenchGame {
            game: "n".to_owned(),
            anchors: Anchors::default(),
            result: BenchResult::NotLoaded {
                error: "e".to_owned(),
            },
        };
        assert!(matches!(
            reads_back(&not_loaded).result,
            BenchResult::NotLoaded { .. }
        ));
        let unknown = serde_json::from_str::<CorpusStatus>(r#""fine""#).unwrap_err();
        let message = unknown.to_string();
        assert!(message.contains("unknown variant `fine`"), "{message}");
        assert!(message.contains("`parse error`"), "names the statuses: {message}");
    }

    /// A flattened outcome puts its keys beside the status; a missing
    /// optional one is left out, and numbers that are not finite are `null`.
    #[test]
    fn flattened_outcomes_and_non_finite_numbers() {
        let game = CorpusGame {
            outcome: CorpusOutcome::Failed {
                game: "g".to_owned(),
                exit: None,
                error: "e".to_owned(),
            },
            status: CorpusStatus::Crash,
            seconds: None,
        };
        assert_eq!(
            to_json(&game),
            r#"{"game":"g","exit":null,"error":"e","status":"crash"}"#
        );
        let anchors = Anchors {
            sironi: Some(f64::NAN),
            ..Anchors::default()
        };
        assert!(to_json(&anchors).starts_with(r#"{"sironi":null,"#));
        let status = StatsDirStatus::Memory;
        assert_eq!(to_json(&status), r#""memory""#);
    }
}
