//! The `ggpnet` command-line program: check, stats, mc, perft, replay and
//! export on a GDL game (the built-in connect four when no file is given; a
//! circuit written by `ggpnet export --format json` is accepted wherever a game
//! is). Every subcommand prints a human-readable summary, or one JSON object with `--json`.

#![cfg_attr(not(test), warn(clippy::too_many_lines))]

use clap::{Args, CommandFactory, FromArgMatches, Parser, Subcommand};
use failure::Failure;

use ggpnet::grounder;
use ggpnet::propnet::driver::{perft, Budget, McReport, PerftReport, DEFAULT_MAX_DEPTH};
use ggpnet::propnet::evaluator::{Choice, EvaluatorConfig, EvaluatorKind};
use ggpnet::propnet::opt::Pass;
use ggpnet::propnet::{load, LoadConfig, Loaded};
use ggpnet_tools::report;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

mod bench;
mod corpus_run;
mod export;
mod failure;

mod input;
mod matches;
mod merge;
mod options;
mod peers;
mod play;
mod rbg;
mod rbg_mc;
mod rtgdl;
mod stats_dir;

#[derive(Parser)]
#[command(
    name = "ggpnet",
    version,
    about = "Compile GDL games into propositional networks and run them"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Optimizer passes to turn off (comma-separated: constants, collapse, merge, negations,
    /// dead, factor, exclusive-inputs, reachable), for ablation studies.
    #[arg(long, global = true, value_delimiter = ',')]
    without: Vec<Pass>,
    /// Optimizer passes off by default to turn on (exclusive-bases).
    #[arg(long, global = true, value_delimiter = ',')]
    with: Vec<Pass>,
    /// Threads the grounder may use for big rounds (the result is the same for any number).
    #[arg(long, global = true, default_value_t = 1, value_parser = options::threads)]
    ground_threads: usize,
    /// Most rule instances grounding may find (static and dynamic, duplicates included)
    /// before it stops with exit code 3.
    #[arg(long, global = true, value_name = "N", default_value_t = grounder::DEFAULT_MAX_GROUND_RULES as u64,
          value_parser = clap::value_parser!(u64).range(1..))]
    max_ground_rules: u64,
    /// Most ground sentences grounding may derive before it stops with exit code 3.
    #[arg(long, global = true, value_name = "N", default_value_t = grounder::DEFAULT_MAX_GROUND_ATOMS as u64,
          value_parser = clap::value_parser!(u64).range(1..))]
    max_ground_atoms: u64,
    /// Deepest nesting of a ground term grounding accepts (1 to 1024; a constant has depth 1).
    #[arg(long, global = true, value_name = "N", default_value_t = grounder::DEFAULT_MAX_TERM_DEPTH as u64,
          value_parser = clap::value_parser!(u64).range(1..=1024))]
    max_term_depth: u64,
    /// Most candidate facts grounding's joins may try (a bound on the time of joins that
    /// find little) before it stops with exit code 3.
    #[arg(long, global = true, value_name = "N", default_value_t = grounder::DEFAULT_MAX_JOIN_STEPS as u64,
          value_parser = clap::value_parser!(u64).range(1..))]
    max_join_steps: u64,
    /// Memory bound of loading a game, in MiB: the grounder's estimate of its own memory
    /// (exit code 3 past it; 5120 when not given). With `corpus` and `stats --dir`, also
    /// the resident memory allowed per game (when not given: none, and 4096).
    #[arg(long, global = true, value_name = "MIB", value_parser = clap::value_parser!(u64).range(1..=1 << 30))]
    max_mem: Option<u64>,
    /// Engine: auto (the default: the propnet, or the reference interpreter when
    /// grounding passes a limit), propnet (exit code 3 past a grounding limit) or
    /// interpreter (its work bounded by 20,000,000 join steps per state and query).
    #[arg(long, global = true, value_parser = options::engine)]
    engine: Option<ggpnet::EngineChoice>,
    /// Longest time grounding may take, in seconds, before it stops (exit code 3, or
    /// the interpreter with `--engine auto`); no limit when not given.
    #[arg(long, global = true, value_name = "SECONDS", value_parser = options::seconds)]
    max_ground_time: Option<f64>,
    /// Largest input file read, in MiB.
    #[arg(long, global = true, value_name = "MIB", default_value_t = input::DEFAULT_MAX_INPUT_MIB,
          value_parser = clap::value_parser!(u64).range(1..=1 << 20))]
    max_input: u64,
}

/// The global limits that are not load settings: `--max-mem` as given, and `--max-input` in bytes.
#[derive(Clone, Copy, Debug)]
struct Limits {
    max_mem_mib: Option<u64>,
    max_input_bytes: u64,
}

/// This run's [`Limits`].
static LIMITS: std::sync::OnceLock<Limits> = std::sync::OnceLock::new();

/// `--max-mem` in MiB, if given.
fn max_mem_mib() -> Option<u64> {
    LIMITS.get().and_then(|l| l.max_mem_mib)
}

/// `--max-input` in bytes.
fn max_input_bytes() -> u64 {
    LIMITS
        .get()
        .map_or(input::DEFAULT_MAX_INPUT_MIB << 20, |l| l.max_input_bytes)
}

/// Reads a user's file within `--max-input` (see [`input::read_text`]).
fn read_input(path: &Path) -> Result<String, Failure> {
    let max = LIMITS
        .get()
        .map_or(input::DEFAULT_MAX_INPUT_MIB << 20, |l| l.max_input_bytes);
    input::read_text(path, max)
}

/// How this run loads games: the optimizer passes (the defaults, plus `--with`, less
/// `--without`) and the grounder's threads.
static LOAD: std::sync::OnceLock<LoadConfig> = std::sync::OnceLock::new();

/// The engine this run may use (`--engine`, if given).
static ENGINE: std::sync::OnceLock<Option<ggpnet::EngineChoice>> = std::sync::OnceLock::new();

/// The command-line options behind [`LOAD`], for the child processes of `corpus` and `stats --dir`.
static LOAD_FLAGS: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();

/// A command running this program with this run's load options, for one game.
fn child_command(exe: &Path) -> std::process::Command {
    let mut command = std::process::Command::new(exe);
    command.args(LOAD_FLAGS.get().into_iter().flatten());
    command
}

#[derive(Subcommand)]
enum Command {
    /// Validate a game: print problems, exit 1 if it is invalid.
    Check(GameArgs),
    /// Time each compilation phase and count what it produced (of one game, or of a directory).
    Stats(StatsArgs),
    /// Flat Monte-Carlo: random playouts for a while, on every core.
    Mc(McArgs),
    /// Count joint-move paths to a depth.
    Perft(PerftArgs),
    /// Replay a reference trace and compare every step.
    Replay(ReplayArgs),
    /// Play random playouts on the propnet and the reference interpreter side by side.
    Diff(DiffArgs),
    /// Benchmark every evaluator (flat Monte-Carlo, one thread and every core) and perft on the anchor games.
    Bench(bench::BenchArgs),
    /// Replay every game of a corpus, each in its own process with a time limit.
    Corpus(CorpusArgs),
    /// Put the --jsonl files of a sharded corpus, stats --dir or bench run
    /// together: print the report of the whole run.
    Merge(merge::MergeArgs),
    /// Write the circuit as Graphviz DOT, JSON or AIGER.
    Export(export::ExportArgs),
    /// Play matches for a game manager over HTTP (the GGP match protocol; rtGDL too).
    Play(PlayArgs),
    /// Run matches of a game between players, as a game manager.
    ///
    /// On a real-time GDL (rtGDL) game, the manager runs the rtGDL execution
    /// model (docs/LANGUAGES.md, "Match play"): --playclock is the wall time of
    /// one lifetime unit (fractions allowed, e.g. 0.2), replies are moves at the
    /// moment they arrive, facts expire on the manager's timer, and the match is
    /// aborted after --max-steps updates or --max-game-time units of game time.
    /// --scramble and --gdl2-form do not apply to rtGDL games.
    Match(MatchArgs),
    /// Translate a Simplified Boardgames game (.sbg) to GDL and print it.
    Sbg2gdl(Sbg2gdlArgs),
    /// Translate a Regular Boardgames game (.rbg) to GDL and print it (one GDL step per modifier of a move).
    Rbg2gdl(Sbg2gdlArgs),
}

#[derive(Args)]
struct Sbg2gdlArgs {
    /// The game (.sbg).
    game: PathBuf,
}

#[derive(Args)]
struct MatchArgs {
    /// The game (KIF, or Simplified Boardgames .sbg).
    game: PathBuf,
    /// A player: ROLE=HOST:PORT, or ROLE=builtin:uct|mc|random (in this process).
    /// A role named `random` with no player is played by the manager.
    #[arg(long, value_parser = matches::player_spec)]
    player: Vec<matches::PlayerSpec>,
    /// Seconds to prepare.
    #[arg(long, default_value_t = 10.0, value_parser = options::seconds)]
    startclock: f64,
    /// Seconds per move (rtGDL: seconds per lifetime unit, e.g. 0.2).
    #[arg(long, default_value_t = 5.0, value_parser = options::seconds)]
    playclock: f64,
    /// Matches to run, one after the other.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    matches: u64,
    /// Give each player the next role at each match.
    #[arg(long)]
    rotate: bool,
    /// Rename the game's symbols in what players are sent (not for rtGDL).
    #[arg(long)]
    scramble: bool,
    /// Seed of the manager's random moves and of scrambling.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Search threads of each built-in player.
    #[arg(long, default_value_t = 1, value_parser = options::threads)]
    threads: usize,
    /// How the built-in UCT players evaluate a leaf: auto (measured at the
    /// start of each match), scalar (one playout) or lanes (512 playouts at once).
    #[arg(long, default_value = "auto", value_parser = options::leaves)]
    leaves: ggpnet::player::Leaves,
    /// Moves after which a match is aborted (rtGDL: updates, moves and expiries).
    #[arg(long, default_value_t = DEFAULT_MAX_DEPTH, value_parser = clap::value_parser!(u64).range(1..))]
    max_steps: u64,
    /// rtGDL only: game time, in lifetime units, after which a match is aborted.
    #[arg(long, default_value = "1000", value_parser = options::game_time)]
    max_game_time: ggpnet::realtime::Time,
    /// rtGDL only: open requests per player at most; further PLAYs wait in
    /// order until one is answered.
    #[arg(long, default_value_t = ggpnet::manager::DEFAULT_MAX_OPEN, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..=64))]
    max_open: usize,
    /// The form of PLAY and STOP in a GDL-II game: the Dresden GameController's
    /// of 2010 (percepts only) or of 2013 (turn, own move, percepts) [default: 2010].
    #[arg(long, value_parser = options::gdl2_form)]
    gdl2_form: Option<ggpnet::manager::Gdl2Form>,
    /// Write the match records (ggp-base's keys) and the results to this file.
    #[arg(long)]
    json: Option<PathBuf>,
}

#[derive(Args)]
struct PlayArgs {
    /// The port to listen on.
    #[arg(long, default_value_t = 9147)]
    port: u16,
    /// The address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    bind: String,
    /// How moves are chosen: uct, mc or random.
    #[arg(long, default_value = "uct", value_parser = options::search)]
    search: ggpnet::player::Search,
    /// Search threads per match (default: every core).
    #[arg(long, value_parser = options::threads)]
    threads: Option<usize>,
    /// How UCT evaluates a leaf: auto (measured at the start of each match),
    /// scalar (one playout) or lanes (512 playouts at once).
    #[arg(long, default_value = "auto", value_parser = options::leaves)]
    leaves: ggpnet::player::Leaves,
    /// Seconds before a clock runs out at which the player answers.
    #[arg(long, default_value_t = 0.3, value_parser = options::seconds)]
    margin: f64,
    /// Also log each request as a JSON object per line to this file.
    #[arg(long)]
    json_log: Option<PathBuf>,
}

#[derive(Args)]
struct DiffArgs {
    #[command(flatten)]
    game: GameArgs,
    /// Number of playouts (1 to 100,000).
    #[arg(long, default_value_t = 3, value_parser = options::diff_playouts)]
    playouts: usize,
    /// Most moves per playout (1 to 10,000).
    #[arg(long, default_value_t = 60, value_parser = options::diff_steps)]
    steps: usize,
    /// Seed of the move choices.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

#[derive(Args)]
struct CorpusArgs {
    /// The corpus directory (with games/, traces/, ...); default: $GGPNET_CORPUS or ../shared.
    dir: Option<PathBuf>,
    /// Seconds allowed per game.
    #[arg(long, default_value_t = 120, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    timeout: u64,
    /// Games run at once (default: every core).
    #[arg(long, value_parser = options::threads)]
    jobs: Option<usize>,
    /// What to run per game: `replay` (the reference trace) or `diff` (against the reference interpreter).
    #[arg(long, default_value = "replay")]
    check: String,
    /// Only games whose name contains this.
    #[arg(long)]
    only: Option<String>,
    /// The GDL-II corpus instead: games-gdl2/ with traces-gdl2/ (percepts compared too; `diff`
    /// plays 20 playouts per game).
    #[arg(long)]
    gdl2: bool,
    /// Write a markdown table to this file.
    #[arg(long)]
    markdown: Option<PathBuf>,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    sharding: merge::ShardArgs,
}

#[derive(Args)]
struct StatsArgs {
    #[command(flatten)]
    game: GameArgs,
    /// Measure every .kif game of this directory, each in its own process, instead of one game.
    #[arg(long, conflicts_with = "game")]
    dir: Option<PathBuf>,
    /// With --dir: seconds allowed per game.
    #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    timeout: u64,
    /// With --dir: write a CSV table to this file.
    #[arg(long)]
    csv: Option<PathBuf>,
    /// With --dir: games measured at once (default 1, so figures do not disturb each other).
    #[arg(long, value_parser = options::threads)]
    jobs: Option<usize>,
    #[command(flatten)]
    sharding: merge::ShardArgs,
}

#[derive(Args)]
struct GameArgs {
    /// The game (KIF, Simplified Boardgames .sbg, Regular Boardgames .rbg, or a circuit exported as .json); the built-in connect four if omitted.
    game: Option<PathBuf>,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct McArgs {
    #[command(flatten)]
    game: GameArgs,
    /// How long to run playouts (default 5).
    #[arg(long, value_parser = options::seconds, conflicts_with = "playouts")]
    seconds: Option<f64>,
    /// Run this many playouts instead of a time (the same totals for the same seed and threads).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    playouts: Option<u64>,
    /// Worker threads (default: every core).
    #[arg(long, value_parser = options::threads)]
    threads: Option<usize>,
    /// Seed of the random generators.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Evaluator: auto (a short calibration picks the fastest), sweep, differential or lanes.
    #[arg(long, default_value = "auto")]
    evaluator: Choice,
    /// Native code: on (where the platform allows) or off (the interpreters, to measure them).
    #[arg(long, default_value = "on", value_name = "on|off", value_parser = options::on_off, action = clap::ArgAction::Set)]
    native: bool,
    /// Moves after which a playout that has not ended is abandoned (on an rtGDL game: updates).
    #[arg(long, default_value_t = DEFAULT_MAX_DEPTH, value_parser = clap::value_parser!(u64).range(1..))]
    max_depth: u64,
    /// rtGDL games only: how long a simulated player takes to move, in lifetime
    /// units: uniform:MAX (uniform in (0, MAX]), exp:MEAN (exponential), or
    /// immediate (one millionth of a unit); MAX and MEAN at most 1000000, six
    /// fraction digits [default: uniform:1].
    #[arg(long, value_parser = options::time_model)]
    time_model: Option<ggpnet::realtime::TimeModel>,
    /// On a Regular Boardgames (.rbg) game: run its direct engine instead of the propnet of its GDL translation.
    #[arg(long)]
    direct: bool,
}

#[derive(Args)]
struct PerftArgs {
    #[command(flatten)]
    game: GameArgs,
    /// Path length to count to.
    #[arg(long, default_value_t = 4, value_parser = options::perft_depth)]
    depth: usize,
    /// On a Regular Boardgames (.rbg) game: run its direct engine instead of the propnet of its GDL translation.
    #[arg(long)]
    direct: bool,
    /// Evaluator: auto (a short calibration picks the faster scalar one, and a
    /// race on the game's own last-ply work whether the last ply runs on the
    /// lanes), sweep, differential, or lanes (the sweep, and the last ply 512
    /// states at a time on the lanes evaluator).
    #[arg(long, default_value = "auto")]
    evaluator: Choice,
    /// Native code: on (where the platform allows) or off (the interpreters, to measure them).
    #[arg(long, default_value = "on", value_name = "on|off", value_parser = options::on_off, action = clap::ArgAction::Set)]
    native: bool,
}

#[derive(Args)]
struct ReplayArgs {
    /// The game (KIF, or Simplified Boardgames .sbg).
    game: PathBuf,
    /// The trace (JSON Lines, see shared/traces/FORMAT.md).
    trace: PathBuf,
    /// Evaluator to check: auto checks all (sweep and differential against the
    /// trace, lanes against the scalar driver), or one of sweep, differential, lanes.
    #[arg(long, default_value = "auto")]
    evaluator: Choice,
    /// Seed of the lanes check.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

fn game_name(path: Option<&Path>) -> String {
    path.and_then(|p| p.file_stem()).map_or_else(
        || "connect_four (built-in)".to_owned(),
        |s| s.to_string_lossy().into_owned(),
    )
}

/// The GDL text of the game at `path` (the built-in game when none): the file
/// itself, or its translation when it is a Simplified Boardgames (`.sbg`) or
/// Regular Boardgames (`.rbg`) file.
fn read_game(path: Option<&Path>) -> Result<String, Failure> {
    match path {
        None => Ok(ggpnet::DEFAULT_GAME.to_owned()),
        Some(p) if p.extension().is_some_and(|e| e == "sbg") => read_sbg(p),
        Some(p) if rbg::is_rbg(Some(p)) => rbg::read_rbg(p),
        Some(p) => read_input(p),
    }
}

/// The GDL translation of the Simplified Boardgames file `path`; its warnings
/// go to standard error, each naming the file, line and column.
fn read_sbg(path: &Path) -> Result<String, Failure> {
    let text = read_input(path)?;
    let parsed = ggpnet::sbg::parse(&text)
        .map_err(|e| Failure::worded(&e, format!("error: {}:{e}", path.display())))?;
    for warning in &parsed.warnings {
        eprintln!("{}:{warning}", path.display());
    }
    Ok(ggpnet::sbg::to_gdl(&parsed.rules))
}

/// Whether `path` is a circuit written by `ggpnet export --format json`.
fn is_circuit_file(path: Option<&Path>) -> bool {
    path.is_some_and(|p| p.extension().is_some_and(|e| e == "json"))
}

fn load_game_with(path: Option<&Path>, config: &LoadConfig) -> Result<Loaded, Failure> {
    let source = read_game(path)?;
    load_game_from(path, &source, config)
}

/// Loads `source`, the text of the game at `path` (a KIF description, or a circuit
/// written by `ggpnet export --format json`); the failure names the file.
fn load_game_from(path: Option<&Path>, source: &str, config: &LoadConfig) -> Result<Loaded, Failure> {
    let name = path.map_or_else(|| "built-in game".to_owned(), |p| p.display().to_string());
    load_source(path, source, config).map_err(|f| f.at(&name))
}

/// [`load_game_from`], with a failure that does not name the file.
fn load_source(path: Option<&Path>, source: &str, config: &LoadConfig) -> Result<Loaded, Failure> {
    if is_circuit_file(path) {
        return ggpnet::propnet::export::json::load(source).map_err(|e| Failure::of(&e));
    }
    if rtgdl::is_rtgdl(path, source) {
        return Err(rtgdl::unsupported());
    }
    with_spinner(config, |config| load(source, config)).map_err(|e| Failure::of(&e))
}

/// Runs `load` with `config`, showing the loading phase under way and the time
/// spent on a spinner when standard error is a terminal (cleared when done).
fn with_spinner<T>(config: &LoadConfig, load: impl FnOnce(&LoadConfig) -> T) -> T {
    use std::io::IsTerminal;
    if !std::io::stderr().is_terminal() {
        return load(config);
    }
    let spinner = indicatif::ProgressBar::new_spinner();
    if let Ok(style) = indicatif::ProgressStyle::with_template("{spinner} loading: {msg} ({elapsed})") {
        spinner.set_style(style);
    }
    spinner.enable_steady_tick(std::time::Duration::from_millis(100));
    let shown = spinner.clone();
    let progress = ggpnet::propnet::pipeline::Progress::new(move |phase| shown.set_message(phase));
    let out = load(&config.clone().progress(Some(progress)));
    spinner.finish_and_clear();
    out
}

/// `--engine`, if given.
fn engine_given() -> Option<ggpnet::EngineChoice> {
    ENGINE.get().copied().flatten()
}

/// The agent API's settings for this run: [`load_config`] and `--engine` (auto when not given).
fn game_config() -> ggpnet::Config {
    ggpnet::Config::new()
        .load(load_config())
        .engine(engine_given().unwrap_or(ggpnet::EngineChoice::Auto))
}

/// Loads the game at `path` on the engine `--engine` allows, with `config`.
fn load_any(path: Option<&Path>, config: &ggpnet::Config) -> Result<ggpnet::Game, Failure> {
    let source = read_game(path)?;
    load_any_from(path, &source, config)
}

/// [`load_any`] of `source`, the text of the game at `path`; the failure names the file.
fn load_any_from(
    path: Option<&Path>,
    source: &str,
    config: &ggpnet::Config,
) -> Result<ggpnet::Game, Failure> {
    let name = path.map_or_else(|| "built-in game".to_owned(), |p| p.display().to_string());
    let game = load_any_source(path, source, config).map_err(|f| f.at(&name))?;
    if let Some(why) = game.fallback_reason() {
        eprintln!("note: {name} runs on the interpreter, as the propnet could not be built: {why}");
    }
    Ok(game)
}

/// [`load_any_from`], with a failure that does not name the file.
fn load_any_source(
    path: Option<&Path>,
    source: &str,
    config: &ggpnet::Config,
) -> Result<ggpnet::Game, Failure> {
    if is_circuit_file(path) {
        return load_source(path, source, config.get_load())
            .map(|loaded| ggpnet::Game::from_loaded(loaded, config));
    }
    if rtgdl::is_rtgdl(path, source) {
        return Err(rtgdl::unsupported());
    }
    with_spinner(config.get_load(), |load| {
        ggpnet::Game::load(source, &config.clone().load(load.clone()))
    })
    .map_err(|e| Failure::of(&e))
}

/// Loads a game as the command line says (`--with`, `--without`, `--ground-threads`).
fn load_game(path: Option<&Path>) -> Result<Loaded, Failure> {
    load_game_with(path, &load_config())
}

/// The load settings of this run.
fn load_config() -> LoadConfig {
    LOAD.get().cloned().unwrap_or_default()
}

/// The value of the first `key: value` line of a /proc file (None where unavailable).
fn proc_field(path: &str, key: &str) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines().find_map(|line| {
        let (k, v) = line.split_once(':')?;
        (k.trim() == key).then(|| v.trim().to_owned())
    })
}

/// A `kB` figure of a /proc status file, in bytes (0 where unavailable).
fn proc_bytes(path: &str, key: &str) -> u64 {
    proc_field(path, key)
        .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// Peak resident set size of this process (0 where unavailable).
fn peak_rss_bytes() -> u64 {
    proc_bytes("/proc/self/status", "VmHWM")
}

/// Prints `value` as one line of JSON if `json_mode`, else the text `text` makes.
fn emit(json_mode: bool, value: &impl serde::Serialize, text: impl FnOnce() -> String) {
    if json_mode {
        println!("{}", report::to_json(value));
    } else {
        print!("{}", text());
    }
}

/// Validates a game: prints the verdict, and fails with the exit code of the
/// first error (1 invalid, 2 parse error, 3 too large).
fn check(args: &GameArgs) -> Result<bool, Failure> {
    let path = args.game.as_deref();
    let source = read_game(path)?;
    if rtgdl::is_rtgdl(path, &source) {
        return rtgdl::check(args, &source);
    }
    let name = game_name(path);
    let (warnings, engine, failure) = match load_any_source(path, &source, &game_config()) {
        Ok(game) => {
            let warnings = game.propnet().map(|l| l.report.warnings.clone());
            let warnings = warnings.unwrap_or_else(|| parse_warnings(&source));
            (warnings, Some(game), None)
        }
        Err(failure) => (parse_warnings(&source), None, Some(failure)),
    };
    let error = failure.as_ref().map(Failure::message);
    let engine_text = engine
        .as_ref()
        .map_or(String::new(), |game| match game.fallback_reason() {
            Some(why) => format!("; engine: interpreter, as the propnet could not be built: {why}"),
            None => format!("; engine: {}", game.engine()),
        });
    let used = engine.as_ref().map(report::EngineUsed::of);
    let value = report::Check {
        game: name.clone(),
        valid: failure.is_none(),
        error: error.map(str::to_owned),
        warnings: warnings.clone(),
        language: None,
        engine: used.as_ref().map(|u| u.engine.clone()),
        fallback_reason: used.and_then(|u| u.fallback_reason),
    };
    emit(args.json, &value, || {
        let mut out = String::new();
        for w in &warnings {
            out.push_str(&format!("{w}\n"));
        }
        match error {
            Some(e) => out.push_str(&format!("{name}: invalid\n{e}\n")),
            None => out.push_str(&format!(
                "{name}: valid ({} warning(s){engine_text})\n",
                warnings.len()
            )),
        }
        out
    });
    failure.map_or(Ok(true), |f| Err(f.printed()))
}

/// The parser's warnings about `source` (none when it does not parse).
fn parse_warnings(source: &str) -> Vec<String> {
    ggpnet::kif::parse(source)
        .map(|d| d.warnings.iter().map(|w| w.to_string()).collect())
        .unwrap_or_default()
}

fn stats(args: &StatsArgs) -> Result<bool, Failure> {
    if let Some(dir) = &args.dir {
        return stats_dir::run(dir, args);
    }
    if args.sharding.given() {
        return Err(Failure::input(
            "error: --shard and --jsonl apply to stats --dir only",
        ));
    }
    let args = &args.game;
    let start = std::time::Instant::now();
    let path = args.game.as_deref();
    let source = read_game(path)?;
    if rtgdl::is_rtgdl(path, &source) {
        return rtgdl::stats(args, &source);
    }
    let game = load_any_from(path, &source, &game_config())?;
    let Some(loaded) = game.propnet() else {
        return interpreter_stats(args, &game, start.elapsed().as_secs_f64());
    };
    let r = &loaded.report;
    let total = report::load_seconds(r);
    let breakdown = ggpnet::propnet::inspect::breakdown(&loaded.circuit, &loaded.layering);
    let value = circuit_stats(game_name(path), loaded, total, &breakdown);
    emit(args.json, &value, || {
        let mut out = format!("game: {}\n", value.game());
        for (name, seconds) in &r.phases {
            out.push_str(&format!("  {name:<9} {:>9.3} ms\n", seconds * 1e3));
        }
        out.push_str(&format!("  {:<9} {:>9.3} ms\n", "total", total * 1e3));
        out.push_str(&format!(
            "peak memory: {:.1} MiB\n",
            peak_rss_bytes() as f64 / 1048576.0
        ));
        out.push_str(&format!(
            "ground: {} atoms, {} rules\n",
            r.ground_atoms, r.ground_rules
        ));
        let kinds = |m: &std::collections::BTreeMap<&str, usize>| {
            let total: usize = m.values().sum();
            let parts: Vec<String> = m.iter().map(|(k, v)| format!("{k} {v}")).collect();
            format!("{total} ({})", parts.join(", "))
        };
        out.push_str(&format!(
            "components before optimization: {}\n",
            kinds(&r.components_raw)
        ));
        out.push_str(&format!(
            "components after optimization:  {}\n",
            kinds(&r.components)
        ));
        out.push_str(&format!("layers: {}, cyclic SCCs: {}\n", r.layers, r.sccs));
        out.push_str(&stats_breakdown(&breakdown));
        for w in &r.warnings {
            out.push_str(&format!("{w}\n"));
        }
        out
    });
    Ok(true)
}

/// The report of `ggpnet stats` on the propnet `loaded` of the game `game`,
/// loaded in `total` seconds, its size broken down by `breakdown`.
fn circuit_stats(
    game: String,
    loaded: &Loaded,
    total: f64,
    breakdown: &ggpnet::propnet::inspect::Breakdown,
) -> report::Stats {
    let r = &loaded.report;
    let kinds =
        |m: &std::collections::BTreeMap<&str, usize>| m.iter().map(|(k, n)| (k.to_string(), *n)).collect();
    let buckets = |h: &[ggpnet::propnet::inspect::Bucket]| h.iter().map(report::Bucket::from).collect();
    let relations = breakdown
        .relations
        .iter()
        .map(|(relation, nodes)| report::RelationSize {
            relation: relation.clone(),
            nodes: *nodes,
        });
    report::Stats::Circuit(report::CircuitStats {
        game,
        engine: ggpnet::Engine::Propnet.name().to_owned(),
        phases: r.phases.iter().map(|(n, s)| (n.to_string(), *s)).collect(),
        total_seconds: total,
        peak_rss_bytes: peak_rss_bytes(),
        ground_atoms: r.ground_atoms,
        ground_rules: r.ground_rules,
        components_raw: kinds(&r.components_raw),
        components: kinds(&r.components),
        layers: r.layers,
        sccs: r.sccs,
        roles: loaded.game.roles().to_vec(),
        bases: loaded.game.facts().len(),
        inputs: loaded.game.moves().len(),
        warnings: r.warnings.clone(),
        relations: relations.collect(),
        fan_in: buckets(&breakdown.fan_in),
        fan_out: buckets(&breakdown.fan_out),
        layer_widths: breakdown.layer_widths.clone(),
    })
}

/// `ggpnet stats` of a game the interpreter runs: no circuit to measure.
fn interpreter_stats(args: &GameArgs, game: &ggpnet::Game, seconds: f64) -> Result<bool, Failure> {
    let value = report::Stats::Interpreter(report::InterpreterStats {
        game: game_name(args.game.as_deref()),
        engine: report::EngineUsed::of(game),
        total_seconds: seconds,
        peak_rss_bytes: peak_rss_bytes(),
        roles: game.roles().to_vec(),
    });
    emit(args.json, &value, || {
        format!(
            "game: {}\nengine: interpreter{}\nload time: {:.3} ms\npeak memory: {:.1} MiB\n",
            value.game(),
            game.fallback_reason()
                .map_or(String::new(), |why| format!(" (no propnet: {why})")),
            seconds * 1e3,
            peak_rss_bytes() as f64 / 1048576.0
        )
    });
    Ok(true)
}

/// The text lines of `ggpnet stats` about where the circuit's size comes from.
fn stats_breakdown(b: &ggpnet::propnet::inspect::Breakdown) -> String {
    let top: Vec<String> = b
        .relations
        .iter()
        .take(12)
        .map(|(n, c)| format!("{n} {c}"))
        .collect();
    let more = if b.relations.len() > 12 {
        format!(", ... ({} relations)", b.relations.len())
    } else {
        String::new()
    };
    let histogram = |h: &[ggpnet::propnet::inspect::Bucket]| {
        let parts: Vec<String> = h
            .iter()
            .map(|x| match x.min == x.max {
                true => format!("{}: {}", x.min, x.nodes),
                false => format!("{}-{}: {}", x.min, x.max, x.nodes),
            })
            .collect();
        parts.join(", ")
    };
    let widths: Vec<String> = b.layer_widths.iter().map(|w| w.to_string()).collect();
    format!(
        "components by relation: {}{more}\nfan-in of gates: {}\nfan-out: {}\nlayer widths: {}\n",
        top.join(", "),
        histogram(&b.fan_in),
        histogram(&b.fan_out),
        widths.join(" ")
    )
}

fn mc(args: &McArgs) -> Result<(), Failure> {
    let path = args.game.game.as_deref();
    if args.direct && !rbg::is_rbg(path) {
        return Err(rbg::direct_needs_rbg());
    }
    if let Some(rbg_file) = path.filter(|p| rbg::is_rbg(Some(p))) {
        return match args.direct {
            true => rbg::mc(args, rbg_file),
            false => rbg_mc::mc(args, rbg_file),
        };
    }
    let source = read_game(path)?;
    if rtgdl::is_rtgdl(path, &source) {
        return rtgdl::mc(args, &source);
    }
    if args.time_model.is_some() {
        return Err(Failure::input(
            "error: --time-model applies to rtGDL (real-time GDL) games only",
        ));
    }
    let config = game_config()
        .evaluator(args.evaluator)
        .native(args.native)
        .max_playout_depth(args.max_depth)
        .map_err(|e| Failure::input(format!("error: --max-depth: {}", e.reason())))?;
    let game = load_any_from(path, &source, &config)?;
    let (threads, budget) = mc_threads_and_budget(args);
    let how = ggpnet::Playouts::new(budget).threads(threads).seed(args.seed);
    let run = game
        .playouts(&game.initial_state(), &how)
        .map_err(|e| Failure::of(&e))?;
    let run = McReport {
        evaluator: run.evaluator.unwrap_or(EvaluatorKind::Differential),
        threads: run.threads,
        seconds: run.seconds,
        totals: run.totals,
    };
    let evaluator = match game.engine() {
        ggpnet::Engine::Propnet => run.evaluator.name(),
        ggpnet::Engine::Interpreter => "interpreter",
    };
    let totals = &run.totals;
    let value = mc_report(args, &game, evaluator, &run);
    emit(args.game.json, &value, || {
        let mut out = format!(
            "game: {}\nevaluator: {}, threads: {}, seconds: {:.2}\ntransitions: {} ({:.0} transitions/s)\nstates visited: {} ({:.0} states/s)\nplayouts: {} ({:.0} playouts/s)\naverage depth: {:.2}\n",
            value.game,
            evaluator,
            run.threads,
            run.seconds,
            run.totals.transitions,
            run.transitions_per_sec(),
            run.totals.states,
            run.states_per_sec(),
            run.totals.playouts,
            run.playouts_per_sec(),
            run.avg_depth()
        );
        if totals.abandoned > 0 {
            out.push_str(&format!(
                "abandoned playouts: {} ({} at the depth limit of {} moves, the others where a role had no legal move)\n",
                totals.abandoned, totals.at_depth_limit, args.max_depth
            ));
        }
        average_goal_lines(
            &mut out,
            game.roles(),
            &run.avg_goals(),
            &run.totals.missing_goals,
        );
        out
    });
    Ok(())
}

/// The report of `ggpnet mc` (`args`) on `game`: the playouts `run` with `evaluator`.
fn mc_report(args: &McArgs, game: &ggpnet::Game, evaluator: &str, run: &McReport) -> report::Mc {
    let totals = &run.totals;
    report::Mc {
        game: game_name(args.game.game.as_deref()),
        engine: report::EngineUsed::of(game),
        evaluator: evaluator.to_owned(),
        run: report::PlayoutRun {
            threads: run.threads,
            seconds: run.seconds,
            playouts: totals.playouts,
            playouts_per_sec: run.playouts_per_sec(),
            avg_goals: report::per_role(game.roles(), &run.avg_goals()),
            missing_goals: report::per_role(game.roles(), &totals.missing_goals),
            seed: args.seed,
        },
        transitions: totals.transitions,
        states: totals.states,
        abandoned: totals.abandoned,
        at_depth_limit: totals.at_depth_limit,
        max_depth: args.max_depth,
        transitions_per_sec: run.transitions_per_sec(),
        states_per_sec: run.states_per_sec(),
        avg_depth: run.avg_depth(),
    }
}

fn perft_command(args: &PerftArgs) -> Result<(), Failure> {
    if args.direct && !rbg::is_rbg(args.game.game.as_deref()) {
        return Err(rbg::direct_needs_rbg());
    }
    if let Some(rbg_file) = args.game.game.as_deref().filter(|p| rbg::is_rbg(Some(p))) {
        return match args.direct {
            true => rbg::perft(args, rbg_file),
            false => rbg::perft_translation(args, rbg_file),
        };
    }
    let game = load_any(args.game.game.as_deref(), &game_config())?;
    let config = EvaluatorConfig::new(args.evaluator).native(args.native);
    let (scalar, counted) = match game.propnet() {
        Some(loaded) => {
            let counted = perft(&loaded.game, args.depth, config);
            (counted.evaluator.map_or("sweep", EvaluatorKind::name), counted)
        }
        None => ("interpreter", interpreter_perft(&game, args.depth)?),
    };
    let evaluator = if counted.last_ply_on_lanes {
        "lanes"
    } else {
        scalar
    };
    let nodes_per_sec = counted.nodes as f64 / counted.seconds.max(1e-9);
    let counts = counted.counts.iter().enumerate();
    let value = report::Perft {
        game: game_name(args.game.game.as_deref()),
        depth: args.depth,
        engine: game.engine().name().to_owned(),
        evaluator: evaluator.to_owned(),
        scalar: scalar.to_owned(),
        counts: counts.map(|(d, &n)| (d + 1, report::path_count(n))).collect(),
        nodes: counted.nodes,
        seconds: counted.seconds,
        nodes_per_sec,
    };
    emit(args.game.json, &value, || {
        let mut out = String::new();
        for (d, n) in counted.counts.iter().enumerate() {
            out.push_str(&format!("perft({}) = {n}\n", d + 1));
        }
        out.push_str(&format!(
            "{} states expanded in {:.3} s ({nodes_per_sec:.0} nodes/s)\n",
            counted.nodes, counted.seconds
        ));
        out
    });
    Ok(())
}

/// Perft on the interpreter, timed, in the propnet's report form (`nodes`: the
/// states reached short of the depth, the start included; unlike the propnet's
/// count, terminal ones included).
fn interpreter_perft(game: &ggpnet::Game, depth: usize) -> Result<PerftReport, Failure> {
    let start = std::time::Instant::now();
    let counts = game
        .perft(depth, EvaluatorKind::Differential)
        .map_err(|e| Failure::of(&e))?;
    let expanded: u128 = 1 + counts[..depth - 1].iter().sum::<u128>();
    Ok(PerftReport {
        nodes: u64::try_from(expanded).unwrap_or(u64::MAX),
        counts,
        seconds: start.elapsed().as_secs_f64(),
        ..PerftReport::default()
    })
}

/// Steps the lanes evaluator is compared with the scalar driver in a replay.
const LANES_CHECK_STEPS: usize = 100;

fn replay(args: &ReplayArgs) -> Result<bool, Failure> {
    let game = load_any(Some(&args.game), &game_config())?;
    let trace = read_input(&args.trace)?;
    let trace = ggpnet_tools::replay::Trace::read(trace.as_bytes())
        .map_err(|e| Failure::input(format!("{}: {e}", args.trace.display())))?;
    // The interpreter has one way to evaluate; the propnet one per evaluator.
    let kinds: Vec<EvaluatorKind> = match (game.propnet(), args.evaluator) {
        (None, _) => vec![EvaluatorKind::Differential],
        (Some(_), Choice::Auto) => EvaluatorKind::ALL.to_vec(),
        (Some(_), Choice::Fixed(kind)) => vec![kind],
    };
    let mut evaluators = std::collections::BTreeMap::new();
    let mut first_difference = None;
    let mut totals = ggpnet_tools::replay::ReplayReport::default();
    for kind in kinds {
        let name = match game.propnet() {
            Some(_) => kind.name(),
            None => "interpreter",
        };
        let (check, difference) = check_evaluator(&game, &trace, kind, args.seed, &mut totals);
        evaluators.insert(name.to_owned(), check);
        if first_difference.is_none() {
            first_difference = difference.map(|d| format!("[{name}] {d}"));
        }
    }
    let loaded = game.propnet();
    let value = report::Replay {
        game: game_name(Some(&args.game)),
        engine: report::EngineUsed::of(&game),
        compile_seconds: loaded.map(|l| report::load_seconds(&l.report)),
        components: loaded.map(|l| report::component_count(&l.report)),
        playouts: totals.playouts,
        steps: totals.steps,
        perft_depths: totals.perft_depths,
        evaluators,
        agree: first_difference.is_none(),
        first_difference,
    };
    emit(args.json, &value, || {
        let mut out = format!(
            "{} playouts, {} steps, {} perft depths compared with each of: {}\n",
            value.playouts,
            value.steps,
            value.perft_depths,
            value.evaluators.keys().cloned().collect::<Vec<_>>().join(", ")
        );
        match &value.first_difference {
            None => out.push_str("agree\n"),
            Some(d) => out.push_str(&format!("first difference: {d}\n")),
        }
        out
    });
    Ok(value.agree)
}

/// Checks the evaluator `kind` of `game`: the lanes against the scalar driver
/// (seeded by `seed`), any other against `trace` (its counts then become
/// `totals`); returns its part of the report and its first difference, if any.
fn check_evaluator(
    game: &ggpnet::Game,
    trace: &ggpnet_tools::replay::Trace,
    kind: EvaluatorKind,
    seed: u64,
    totals: &mut ggpnet_tools::replay::ReplayReport,
) -> (report::EvaluatorCheck, Option<String>) {
    match game.propnet() {
        Some(loaded) if !kind.is_scalar() => {
            let r = ggpnet_tools::differential::lanes_against_scalar(&loaded.game, seed, LANES_CHECK_STEPS);
            let check = report::EvaluatorCheck::Lanes {
                lanes: r.playouts,
                steps: r.steps,
                agree: r.first_difference.is_none(),
            };
            (check, r.first_difference)
        }
        _ => {
            let r = ggpnet_tools::replay::replay(game, trace, kind);
            let check = report::EvaluatorCheck::Trace {
                playouts: r.playouts,
                steps: r.steps,
                perft_depths: r.perft_depths,
                agree: r.agree(),
            };
            *totals = r.clone();
            (check, r.first_difference)
        }
    }
}

fn diff(args: &DiffArgs) -> Result<bool, Failure> {
    let path = args.game.game.as_deref();
    if is_circuit_file(path) {
        return Err(Failure::input(
            "error: diff needs the game description (KIF) for the reference interpreter, not a circuit"
                .to_owned(),
        ));
    }
    let source = read_game(path)?;
    let game = load_any_from(path, &source, &game_config())?;
    let Some(loaded) = game.propnet() else {
        let reason = format!(
            "no propnet to compare: {}",
            game.fallback_reason().unwrap_or("--engine interpreter")
        );
        let value = report::Diff::Skipped(report::DiffSkipped {
            game: game_name(path),
            engine: ggpnet::Engine::Interpreter.name().to_owned(),
            agree: (),
            skipped: reason.clone(),
        });
        emit(args.game.json, &value, || format!("{reason}\n"));
        return Ok(true);
    };
    let description = ggpnet::kif::parse(&source).map_err(|e| Failure::of(&e))?;
    let reference = ggpnet_reference::Reference::new(&description)
        .map_err(|e| Failure::of(&e).at("reference interpreter"))?;
    let compared =
        ggpnet_tools::differential::differential(loaded, &reference, args.playouts, args.steps, args.seed);
    let value = report::Diff::Compared(report::DiffCompared {
        game: game_name(path),
        compile_seconds: report::load_seconds(&loaded.report),
        components: report::component_count(&loaded.report),
        playouts: compared.playouts,
        steps: compared.steps,
        agree: compared.first_difference.is_none(),
        first_difference: compared.first_difference.clone(),
    });
    emit(args.game.json, &value, || match &compared.first_difference {
        None => format!(
            "{} playouts, {} states compared: agree\n",
            compared.playouts, compared.steps
        ),
        Some(d) => format!("first difference: {d}\n"),
    });
    Ok(compared.first_difference.is_none())
}

/// Parses the command line `args` as clap's derive would, except that a value
/// that looks like a negative number (`--seconds -1`) goes to its option, whose
/// parser refuses it naming the option, rather than being read as a flag.
fn parse_cli<I, T>(args: I) -> Cli
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    let matches = negative_values(Cli::command()).get_matches_from(args);
    Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit())
}

/// `command` with every option that takes a value, in every subcommand,
/// taking a negative number as its value.
fn negative_values(command: clap::Command) -> clap::Command {
    command
        .mut_args(|arg| {
            let takes_values = arg.get_action().takes_values();
            arg.allow_negative_numbers(takes_values)
        })
        .mut_subcommands(negative_values)
}

fn main() -> ExitCode {
    failure::install_panic_hook();
    let cli = parse_cli(std::env::args_os());
    let optimize = cli
        .with
        .iter()
        .fold(ggpnet::propnet::OptimizeConfig::default(), |o, &p| o.enable(p));
    let optimize = cli.without.iter().fold(optimize, |o, &p| o.disable(p));
    let config = LoadConfig::new().optimize(optimize).ground(ground_config(&cli));
    LOAD.set(config).expect("set once");
    ENGINE.set(cli.engine).expect("set once");
    LIMITS
        .set(Limits {
            max_mem_mib: cli.max_mem,
            max_input_bytes: cli.max_input << 20,
        })
        .expect("set once");
    let mut flags = Vec::new();
    for (name, passes) in [("--with", &cli.with), ("--without", &cli.without)] {
        if !passes.is_empty() {
            let names: Vec<_> = passes.iter().map(|p| p.name()).collect();
            flags.extend([name.to_owned(), names.join(",")]);
        }
    }
    flags.extend(["--ground-threads".to_owned(), cli.ground_threads.to_string()]);
    flags.extend(["--max-input".to_owned(), cli.max_input.to_string()]);
    let limits = [
        ("--max-ground-rules", cli.max_ground_rules),
        ("--max-ground-atoms", cli.max_ground_atoms),
        ("--max-term-depth", cli.max_term_depth),
        ("--max-join-steps", cli.max_join_steps),
    ];
    for (name, value) in limits {
        flags.extend([name.to_owned(), value.to_string()]);
    }
    if let Some(mib) = cli.max_mem {
        flags.extend(["--max-mem".to_owned(), mib.to_string()]);
    }
    if let Some(seconds) = cli.max_ground_time {
        flags.extend(["--max-ground-time".to_owned(), seconds.to_string()]);
    }
    if let Some(engine) = cli.engine {
        flags.extend(["--engine".to_owned(), options::engine_name(engine).to_owned()]);
    }
    LOAD_FLAGS.set(flags).expect("set once");
    // With no subcommand: `ggpnet mc` on the built-in game, with mc's defaults.
    let command = cli
        .command
        .or_else(|| parse_cli(["ggpnet", "mc"]).command)
        .expect("mc parses");
    let outcome = match &command {
        Command::Check(a) => check(a),
        Command::Stats(a) => stats(a),
        Command::Mc(a) => mc(a).map(|_| true),
        Command::Perft(a) => perft_command(a).map(|_| true),
        Command::Replay(a) => replay(a),
        Command::Diff(a) => diff(a),
        Command::Corpus(a) => corpus_run::run(a),
        Command::Bench(a) => bench::run(a),
        Command::Merge(a) => merge::run(a),
        Command::Export(a) => export::run(a).map(|_| true),
        Command::Play(a) => play::run(a),
        Command::Match(a) => matches::run(a),
        Command::Sbg2gdl(a) => read_sbg(&a.game).map(|gdl| {
            print!("{gdl}");
            true
        }),
        Command::Rbg2gdl(a) => rbg::read_rbg(&a.game).map(|gdl| {
            print!("{gdl}");
            true
        }),
    };
    match outcome {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(failure) => failure.report(),
    }
}

/// The grounding limits and threads given on the command line (the thread
/// count is in range: clap checked it).
fn ground_config(cli: &Cli) -> ggpnet::grounder::Config {
    let size = |value: u64| usize::try_from(value).unwrap_or(usize::MAX);
    let ground = grounder::Config::new()
        .max_ground_rules(size(cli.max_ground_rules))
        .max_ground_atoms(size(cli.max_ground_atoms))
        .max_term_depth(size(cli.max_term_depth))
        .max_join_steps(size(cli.max_join_steps))
        .max_time(cli.max_ground_time.map(std::time::Duration::from_secs_f64))
        .threads(cli.ground_threads)
        .expect("clap checks --ground-threads");
    match cli.max_mem {
        Some(mib) => ground.max_bytes(size(mib.saturating_mul(1 << 20))),
        None => ground,
    }
}

/// The threads (every core unless given) and the budget (5 s unless given)
/// of `ggpnet mc`.
pub(crate) fn mc_threads_and_budget(args: &McArgs) -> (usize, Budget) {
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let budget = args
        .playouts
        .map_or(Budget::Seconds(args.seconds.unwrap_or(5.0)), Budget::Playouts);
    (threads, budget)
}

/// Appends a line per role with its average goal, and how many playouts
/// ended without a goal for it, if any.
pub(crate) fn average_goal_lines(
    out: &mut String,
    roles: &[String],
    averages: &[Option<f64>],
    missing: &[u64],
) {
    for ((role, goal), missing) in roles.iter().zip(averages).zip(missing) {
        match goal {
            Some(goal) => out.push_str(&format!("average goal of {role}: {goal:.2}\n")),
            None => out.push_str(&format!("average goal of {role}: none\n")),
        }
        if *missing > 0 {
            out.push_str(&format!(
                "  no goal value for {role} at the end of {missing} playouts\n"
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    /// `--OPTION -1` goes to the option, for every option that takes a value
    /// in every subcommand: accepted, or refused naming the option; never read
    /// as an unknown flag.
    #[test]
    fn negative_values_reach_their_option() {
        let command = negative_values(Cli::command());
        command.clone().debug_assert();
        for sub in command.get_subcommands() {
            for arg in sub.get_arguments().filter(|a| a.get_action().takes_values()) {
                let Some(long) = arg.get_long() else { continue };
                let option = format!("--{long}");
                let args = ["ggpnet", sub.get_name(), &option, "-1"];
                let Err(e) = command.clone().try_get_matches_from(args) else {
                    continue;
                };
                let text = e.to_string();
                assert_ne!(
                    e.kind(),
                    clap::error::ErrorKind::UnknownArgument,
                    "{args:?}: {text}"
                );
                if e.kind() == clap::error::ErrorKind::ValueValidation {
                    assert!(text.contains(&format!("'{option} <")), "{args:?}: {text}");
                }
            }
        }
    }

    /// The help of `--max-mem` states the grounder's default.
    #[test]
    fn max_mem_help_states_the_default() {
        let help = Cli::command().render_long_help().to_string();
        let default = format!("{} when not given", grounder::DEFAULT_MAX_BYTES >> 20);
        assert!(help.contains(&default), "{help}");
    }
}
