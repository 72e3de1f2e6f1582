//! The `ggpnet` command-line program: check, stats, mc, perft and replay on a
//! GDL game (the built-in connect four when no file is given). Every subcommand
//! prints a human-readable summary, or one JSON object with `--json`.

use clap::{Args, Parser, Subcommand};
use ggpnet::propnet::playout::{monte_carlo, perft};
use ggpnet::propnet::{load, LoadConfig, Loaded};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

mod corpus;
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
    /// Replay every game of a corpus, each in its own process with a time limit.
    Corpus(CorpusArgs),
}

#[derive(Args)]
struct DiffArgs {
    #[command(flatten)]
    game: GameArgs,
    /// Number of playouts.
    #[arg(long, default_value_t = 3)]
    playouts: usize,
    /// Most moves per playout.
    #[arg(long, default_value_t = 60)]
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
    #[arg(long, default_value_t = 120)]
    timeout: u64,
    /// Games run at once (default: every core).
    #[arg(long)]
    jobs: Option<usize>,
    /// What to run per game: `replay` (the reference trace) or `diff` (against the reference interpreter).
    #[arg(long, default_value = "replay")]
    check: String,
    /// Only games whose name contains this.
    #[arg(long)]
    only: Option<String>,
    /// Write a markdown table to this file.
    #[arg(long)]
    markdown: Option<PathBuf>,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct StatsArgs {
    #[command(flatten)]
    game: GameArgs,
    /// Measure every .kif game of this directory, each in its own process, instead of one game.
    #[arg(long, conflicts_with = "game")]
    dir: Option<PathBuf>,
    /// With --dir: seconds allowed per game.
    #[arg(long, default_value_t = 60)]
    timeout: u64,
    /// With --dir: resident memory allowed per game, in MiB.
    #[arg(long, default_value_t = 4096)]
    max_mem: u64,
    /// With --dir: write a CSV table to this file.
    #[arg(long)]
    csv: Option<PathBuf>,
    /// With --dir: games measured at once (default 1, so figures do not disturb each other).
    #[arg(long)]
    jobs: Option<usize>,
}

#[derive(Args)]
struct GameArgs {
    /// The game (KIF); the built-in connect four if omitted.
    game: Option<PathBuf>,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct McArgs {
    #[command(flatten)]
    game: GameArgs,
    /// How long to run playouts.
    #[arg(long, default_value_t = 5.0)]
    seconds: f64,
    /// Worker threads (default: every core).
    #[arg(long)]
    threads: Option<usize>,
    /// Seed of the random generators (thread t uses seed + t).
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

#[derive(Args)]
struct PerftArgs {
    #[command(flatten)]
    game: GameArgs,
    /// Path length to count to.
    #[arg(long, default_value_t = 4)]
    depth: usize,
}

#[derive(Args)]
struct ReplayArgs {
    /// The game (KIF).
    game: PathBuf,
    /// The trace (JSON Lines, see shared/traces/FORMAT.md).
    trace: PathBuf,
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
}

/// A failure to report: the message, and whether it is the user's input at fault.
struct Failure(String);

fn game_name(path: Option<&Path>) -> String {
    path.and_then(|p| p.file_stem()).map_or_else(
        || "connect_four (built-in)".to_owned(),
        |s| s.to_string_lossy().into_owned(),
    )
}

fn read_game(path: Option<&Path>) -> Result<String, Failure> {
    match path {
        None => Ok(ggpnet::DEFAULT_GAME.to_owned()),
        Some(p) => {
            std::fs::read_to_string(p).map_err(|e| Failure(format!("cannot read {}: {e}", p.display())))
        }
    }
}

fn load_game(path: Option<&Path>) -> Result<Loaded, Failure> {
    let source = read_game(path)?;
    load(&source, &LoadConfig::default()).map_err(|e| {
        let name = path.map_or_else(|| "built-in game".to_owned(), |p| p.display().to_string());
        Failure(format!("{name}: {e}"))
    })
}

/// Peak resident set size of this process, from /proc (0 where unavailable).
fn peak_rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok())
        })
        .map_or(0, |kb| kb * 1024)
}

fn emit(json_mode: bool, value: &Value, text: impl FnOnce() -> String) {
    if json_mode {
        println!("{value}");
    } else {
        print!("{}", text());
    }
}

fn check(args: &GameArgs) -> Result<bool, Failure> {
    let source = read_game(args.game.as_deref())?;
    let name = game_name(args.game.as_deref());
    let (valid, error, warnings) = match load(&source, &LoadConfig::default()) {
        Ok(loaded) => (true, None, loaded.report.warnings),
        Err(e) => {
            let warnings = ggpnet::kif::parse(&source)
                .map(|d| d.warnings.iter().map(|w| w.to_string()).collect())
                .unwrap_or_default();
            (false, Some(e.to_string()), warnings)
        }
    };
    let value = json!({"game": name, "valid": valid, "error": error, "warnings": warnings});
    emit(args.json, &value, || {
        let mut out = String::new();
        for w in &warnings {
            out.push_str(&format!("{w}\n"));
        }
        match &error {
            Some(e) => out.push_str(&format!("{name}: invalid\n{e}\n")),
            None => out.push_str(&format!("{name}: valid ({} warning(s))\n", warnings.len())),
        }
        out
    });
    Ok(valid)
}

fn stats(args: &StatsArgs) -> Result<bool, Failure> {
    if let Some(dir) = &args.dir {
        return stats_dir::run(dir, args);
    }
    let args = &args.game;
    let loaded = load_game(args.game.as_deref())?;
    let r = &loaded.report;
    let total: f64 = r.phases.iter().map(|(_, s)| s).sum();
    let value = json!({
        "game": game_name(args.game.as_deref()),
        "phases": r.phases.iter().map(|(n, s)| (n.to_string(), json!(s))).collect::<serde_json::Map<_, _>>(),
        "total_seconds": total,
        "peak_rss_bytes": peak_rss_bytes(),
        "ground_atoms": r.ground_atoms,
        "ground_rules": r.ground_rules,
        "components_raw": r.components_raw,
        "components": r.components,
        "layers": r.layers,
        "sccs": r.sccs,
        "roles": loaded.game.roles,
        "bases": loaded.game.facts.len(),
        "inputs": loaded.game.moves.len(),
        "warnings": r.warnings,
    });
    emit(args.json, &value, || {
        let mut out = format!("game: {}\n", value["game"].as_str().unwrap_or_default());
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
        for w in &r.warnings {
            out.push_str(&format!("{w}\n"));
        }
        out
    });
    Ok(true)
}

fn mc(args: &McArgs) -> Result<(), Failure> {
    let loaded = load_game(args.game.game.as_deref())?;
    let threads = args
        .threads
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
    let report = monte_carlo(&loaded.game, args.seconds, threads, args.seed);
    let value = json!({
        "game": game_name(args.game.game.as_deref()),
        "threads": report.threads,
        "seconds": report.seconds,
        "nodes": report.nodes,
        "playouts": report.playouts,
        "nodes_per_sec": report.nodes_per_sec(),
        "playouts_per_sec": report.playouts_per_sec(),
        "avg_depth": report.avg_depth(),
        "avg_goals": loaded.game.roles.iter().cloned().zip(report.avg_goals().into_iter().map(|g| json!(g))).collect::<serde_json::Map<_, _>>(),
        "seed": args.seed,
    });
    emit(args.game.json, &value, || {
        let mut out = format!(
            "game: {}\nthreads: {}, seconds: {:.2}\nnodes: {} ({:.0} nodes/s)\nplayouts: {} ({:.0} playouts/s)\naverage depth: {:.2}\n",
            value["game"].as_str().unwrap_or_default(),
            report.threads,
            report.seconds,
            report.nodes,
            report.nodes_per_sec(),
            report.playouts,
            report.playouts_per_sec(),
            report.avg_depth()
        );
        for (role, goal) in loaded.game.roles.iter().zip(report.avg_goals()) {
            out.push_str(&format!("average goal of {role}: {goal:.2}\n"));
        }
        out
    });
    Ok(())
}

fn perft_command(args: &PerftArgs) -> Result<(), Failure> {
    let loaded = load_game(args.game.game.as_deref())?;
    let report = perft(&loaded.game, args.depth);
    let nodes_per_sec = report.nodes as f64 / report.seconds.max(1e-9);
    let counts: serde_json::Map<String, Value> = report
        .counts
        .iter()
        .enumerate()
        .map(|(d, &n)| ((d + 1).to_string(), json!(n as f64 as u64)))
        .collect();
    let value = json!({
        "game": game_name(args.game.game.as_deref()),
        "depth": args.depth,
        "counts": counts,
        "nodes": report.nodes,
        "seconds": report.seconds,
        "nodes_per_sec": nodes_per_sec,
    });
    emit(args.game.json, &value, || {
        let mut out = String::new();
        for (d, n) in report.counts.iter().enumerate() {
            out.push_str(&format!("perft({}) = {n}\n", d + 1));
        }
        out.push_str(&format!(
            "{} states expanded in {:.3} s ({nodes_per_sec:.0} nodes/s)\n",
            report.nodes, report.seconds
        ));
        out
    });
    Ok(())
}

fn replay(args: &ReplayArgs) -> Result<bool, Failure> {
    let loaded = load_game(Some(&args.game))?;
    let file = std::fs::File::open(&args.trace)
        .map_err(|e| Failure(format!("cannot read {}: {e}", args.trace.display())))?;
    let report = ggpnet::replay::replay(&loaded, std::io::BufReader::new(file)).map_err(Failure)?;
    let value = json!({
        "game": game_name(Some(&args.game)),
        "compile_seconds": loaded.report.phases.iter().map(|(_, s)| s).sum::<f64>(),
        "components": loaded.report.components.values().sum::<usize>(),
        "playouts": report.playouts,
        "steps": report.steps,
        "perft_depths": report.perft_depths,
        "agree": report.agree(),
        "first_difference": report.first_difference,
    });
    emit(args.json, &value, || {
        let mut out = format!(
            "{} playouts, {} steps, {} perft depths compared\n",
            report.playouts, report.steps, report.perft_depths
        );
        match &report.first_difference {
            None => out.push_str("agree\n"),
            Some(d) => out.push_str(&format!("first difference: {d}\n")),
        }
        out
    });
    Ok(report.agree())
}

fn diff(args: &DiffArgs) -> Result<bool, Failure> {
    let path = args.game.game.as_deref();
    let loaded = load_game(path)?;
    let source = read_game(path)?;
    let description = ggpnet::kif::parse(&source).map_err(|e| Failure(e.to_string()))?;
    let reference = ggpnet_reference::Reference::new(&description)
        .map_err(|e| Failure(format!("reference interpreter: {e}")))?;
    let report =
        ggpnet::differential::differential(&loaded, &reference, args.playouts, args.steps, args.seed);
    let value = json!({
        "game": game_name(path),
        "compile_seconds": loaded.report.phases.iter().map(|(_, s)| s).sum::<f64>(),
        "components": loaded.report.components.values().sum::<usize>(),
        "playouts": report.playouts,
        "steps": report.steps,
        "agree": report.first_difference.is_none(),
        "first_difference": report.first_difference,
    });
    emit(args.game.json, &value, || match &report.first_difference {
        None => format!(
            "{} playouts, {} states compared: agree\n",
            report.playouts, report.steps
        ),
        Some(d) => format!("first difference: {d}\n"),
    });
    Ok(report.first_difference.is_none())
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let command = cli.command.unwrap_or(Command::Mc(McArgs {
        game: GameArgs {
            game: None,
            json: false,
        },
        seconds: 5.0,
        threads: None,
        seed: 1,
    }));
    let outcome = match &command {
        Command::Check(a) => check(a),
        Command::Stats(a) => stats(a),
        Command::Mc(a) => mc(a).map(|_| true),
        Command::Perft(a) => perft_command(a).map(|_| true),
        Command::Replay(a) => replay(a),
        Command::Diff(a) => diff(a),
        Command::Corpus(a) => corpus::run(a),
    };
    match outcome {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(Failure(message)) => {
            eprintln!("{message}");
            ExitCode::from(2)
        }
    }
}
