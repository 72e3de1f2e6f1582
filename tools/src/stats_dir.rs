//! `ggpnet stats --dir DIR`: the start-up figures of every game of a directory,
//! each measured by `ggpnet stats GAME --json` in a child process with a time and
//! a memory limit; a table (text, CSV or JSON) and a summary: games compiled,
//! median and worst initialization time, worst peak memory.

use super::corpus_run::{run_all, run_child, Limit};
use super::{Failure, StatsArgs};
use ggpnet_tools::report::{
    self, Decimal, ShardRun, Stats, StatsDir, StatsDirGame, StatsDirOutcome, StatsDirRow, StatsDirRun,
    StatsDirStatus, StatsDirSummary,
};
use indicatif::{ProgressBar, ProgressStyle};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The game files (`.kif`, and `.sbg` translated on loading) directly in `dir`, by name.
fn games(dir: &Path) -> Result<Vec<PathBuf>, Failure> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| Failure::of(&e).at(&format!("cannot read {}", dir.display())))?;
    let mut games: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "kif" || x == "sbg"))
        .collect();
    games.sort();
    Ok(games)
}

/// The name of the game at `path`: its file name without extension.
fn stem(path: &Path) -> String {
    path.file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned())
}

/// Measures one game in a child process.
fn measure(exe: &Path, game: &Path, timeout: Duration, max_rss: u64) -> StatsDirGame {
    let name = stem(game);
    let mut command = super::child_command(exe);
    command.args(["stats", "--json"]).arg(game);
    let run = match run_child(command, timeout, Some(max_rss)) {
        Ok(run) => run,
        Err(e) => {
            return StatsDirGame {
                outcome: StatsDirOutcome::Failed {
                    game: name,
                    error: e.to_string(),
                    peak_rss_bytes: None,
                },
                status: StatsDirStatus::Error,
                wall_seconds: None,
            }
        }
    };
    let failed = |error: String| StatsDirOutcome::Failed {
        game: name.clone(),
        error,
        peak_rss_bytes: Some(run.peak_rss_bytes),
    };
    let (outcome, status) = match (run.stopped, serde_json::from_str::<Stats>(run.stdout.trim())) {
        (Some(Limit::Time), _) => (
            failed(format!("not compiled within {} s", timeout.as_secs())),
            StatsDirStatus::Timeout,
        ),
        (Some(Limit::Memory), _) => (
            failed(format!("resident memory above {} MiB", max_rss >> 20)),
            StatsDirStatus::Memory,
        ),
        (None, Ok(stats)) => (StatsDirOutcome::Measured(Box::new(stats)), StatsDirStatus::Ok),
        (None, Err(_)) => {
            let error = run.stderr.trim().lines().next().unwrap_or("no output");
            (failed(error.to_owned()), StatsDirStatus::Error)
        }
    };
    StatsDirGame {
        outcome,
        status,
        wall_seconds: Some(run.seconds),
    }
}

/// The figures of the games measured, with their names.
fn measured(results: &[StatsDirGame]) -> impl Iterator<Item = (&str, &Stats)> {
    results.iter().filter_map(|r| match &r.outcome {
        StatsDirOutcome::Measured(stats) if r.status == StatsDirStatus::Ok => {
            Some((stats.game(), stats.as_ref()))
        }
        _ => None,
    })
}

/// The summary over all games: counts, median and worst time, worst memory.
fn summary(results: &[StatsDirGame], timeout: u64, max_mem: u64) -> StatsDirSummary {
    let mut times: Vec<(f64, &str)> = measured(results)
        .map(|(game, stats)| (stats.total_seconds(), game))
        .collect();
    times.sort_by(|a, b| a.0.total_cmp(&b.0));
    let median = times.get(times.len() / 2).map(|t| t.0);
    let worst_time = times.last();
    let worst_memory = measured(results)
        .map(|(game, stats)| (stats.peak_rss_bytes(), game))
        .max_by_key(|m| m.0);
    let count = |status: StatsDirStatus| results.iter().filter(|r| r.status == status).count();
    StatsDirSummary {
        games: results.len(),
        compiled: count(StatsDirStatus::Ok),
        timeout: count(StatsDirStatus::Timeout),
        memory: count(StatsDirStatus::Memory),
        error: count(StatsDirStatus::Error),
        timeout_seconds: timeout,
        max_mem_mib: max_mem,
        median_init_seconds: median,
        worst_init_seconds: worst_time.map(|t| t.0),
        worst_init_game: worst_time.map(|t| t.1.to_owned()),
        worst_peak_rss_bytes: worst_memory.map(|m| m.0),
        worst_memory_game: worst_memory.map(|m| m.1.to_owned()),
    }
}

/// The name of the game of `r`.
pub(crate) fn game_name(r: &StatsDirGame) -> &str {
    parts(r).0
}

/// The game's name, its figures (if measured), why it has none (if not) and its peak memory in bytes.
fn parts(r: &StatsDirGame) -> (&str, Option<&Stats>, &str, u64) {
    match &r.outcome {
        StatsDirOutcome::Measured(stats) => (stats.game(), Some(stats.as_ref()), "", stats.peak_rss_bytes()),
        StatsDirOutcome::Failed {
            game,
            error,
            peak_rss_bytes,
        } => (game, None, error, peak_rss_bytes.unwrap_or(0)),
    }
}

/// The CSV table's line of one game.
fn csv_row(r: &StatsDirGame) -> StatsDirRow {
    let (game, stats, error, rss) = parts(r);
    let seconds = |value: f64| Decimal { value, places: 4 };
    let circuit = stats.and_then(Stats::circuit);
    let phase = |name: &str| circuit.and_then(|c| c.phases.get(name)).map(|&s| seconds(s));
    let total = |kinds: &BTreeMap<String, usize>| kinds.values().sum();
    StatsDirRow {
        game: game.to_owned(),
        status: r.status,
        init_seconds: stats.map(|s| seconds(s.total_seconds())),
        parse_seconds: phase("parse"),
        check_seconds: phase("check"),
        ground_seconds: phase("ground"),
        build_seconds: phase("build"),
        optimize_seconds: phase("optimize"),
        layer_seconds: phase("layer"),
        plan_seconds: phase("plan"),
        peak_rss_mib: Decimal {
            value: rss as f64 / 1048576.0,
            places: 1,
        },
        ground_rules: circuit.map(|c| c.ground_rules),
        components_raw: circuit.map(|c| total(&c.components_raw)),
        components: stats.and_then(Stats::components).map(total),
        error: error.to_owned(),
    }
}

/// Writes the CSV table of `results`, a line per game, to `out`.
fn write_csv(results: &[StatsDirGame], out: impl std::io::Write) -> Result<(), csv::Error> {
    let mut writer = csv::Writer::from_writer(out);
    for r in results {
        writer.serialize(csv_row(r))?;
    }
    writer.flush()?;
    Ok(())
}

/// The results as a text table, with the summary.
fn text(results: &[StatsDirGame], summary: &StatsDirSummary) -> String {
    let mut out = format!(
        "{:<36} {:<8} {:>9} {:>9} {:>10}\n",
        "game", "status", "init s", "peak MiB", "components"
    );
    for r in results {
        let (game, stats, _, rss) = parts(r);
        let components: Option<usize> = stats.and_then(Stats::components).map(|c| c.values().sum());
        out.push_str(&format!(
            "{:<36} {:<8} {:>9} {:>9.1} {:>10}\n",
            game,
            r.status.name(),
            stats.map_or("–".into(), |s| format!("{:.3}", s.total_seconds())),
            rss as f64 / 1048576.0,
            components.map_or("–".into(), |n| n.to_string()),
        ));
    }
    let seconds = |s: Option<f64>| s.map_or("–".into(), |s| format!("{s:.3} s"));
    out.push_str(&format!(
        "compiled {} of {} games ({} timeouts at {} s, {} over {} MiB, {} errors)\n\
         median init {}, worst init {} ({}), worst peak memory {:.1} MiB ({})\n",
        summary.compiled,
        summary.games,
        summary.timeout,
        summary.timeout_seconds,
        summary.memory,
        summary.max_mem_mib,
        summary.error,
        seconds(summary.median_init_seconds),
        seconds(summary.worst_init_seconds),
        summary.worst_init_game.as_deref().unwrap_or("–"),
        summary.worst_peak_rss_bytes.unwrap_or(0) as f64 / 1048576.0,
        summary.worst_memory_game.as_deref().unwrap_or("–"),
    ));
    out
}

/// The resident memory allowed per game when `--max-mem` is not given, in MiB.
const DEFAULT_MAX_MEM_MIB: u64 = 4096;

/// Runs every game of `dir`; returns whether every game compiled within the limits.
pub(super) fn run(dir: &Path, args: &StatsArgs) -> Result<bool, Failure> {
    let games = games(dir)?;
    if games.is_empty() {
        return Err(Failure::input(format!("no .kif games in {}", dir.display())));
    }
    let names: Vec<String> = games.iter().map(|g| stem(g)).collect();
    let games = args.sharding.shard().select(&games);
    let exe = std::env::current_exe().map_err(|e| Failure::of(&e).at("cannot find this program"))?;
    let timeout = Duration::from_secs(args.timeout);
    let max_mem = super::max_mem_mib().unwrap_or(DEFAULT_MAX_MEM_MIB);
    let max_rss = max_mem.saturating_mul(1 << 20);
    let bar = ProgressBar::new(games.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} {elapsed} {msg}")
            .map_err(|e| Failure::input(e.to_string()))?,
    );
    let results = run_all(
        games.len(),
        args.jobs.unwrap_or(1),
        |i| measure(&exe, &games[i], timeout, max_rss),
        |_, result| {
            bar.set_message(parts(result).0.to_owned());
            bar.inc(1);
        },
    );
    bar.finish_and_clear();
    let run = StatsDirRun {
        timeout_seconds: args.timeout,
        max_mem_mib: max_mem,
    };
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    args.sharding
        .write(ShardRun::StatsDir(run.clone()), &names, &results)?;
    print_report(results, &run, args.game.json, args.csv.as_deref())
}

/// Prints the report of `results` of the run `run` (JSON if `json`, else the
/// text table), writes the CSV table to `csv_file` if given, and returns
/// whether every game compiled within the limits.
pub(crate) fn print_report(
    results: Vec<StatsDirGame>,
    run: &StatsDirRun,
    json: bool,
    csv_file: Option<&Path>,
) -> Result<bool, Failure> {
    let summary = summary(&results, run.timeout_seconds, run.max_mem_mib);
    if let Some(path) = csv_file {
        let place = format!("cannot write {}", path.display());
        let file = std::fs::File::create(path).map_err(|e| Failure::of(&e).at(&place))?;
        write_csv(&results, file).map_err(|e| Failure::of(&e).at(&place))?;
    }
    let compiled_all = summary.compiled == summary.games;
    if json {
        let all = StatsDir {
            summary,
            games: results,
        };
        println!("{}", report::to_json(&all));
    } else {
        print!("{}", text(&results, &summary));
    }
    Ok(compiled_all)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A game measured on the propnet: `seconds` to load, `rss` bytes at most.
    fn game(name: &str, seconds: f64, rss: u64) -> StatsDirGame {
        let kinds = |pairs: &[(&str, usize)]| pairs.iter().map(|&(k, n)| (k.to_owned(), n)).collect();
        let stats = report::CircuitStats {
            game: name.to_owned(),
            engine: "propnet".to_owned(),
            phases: [("parse".to_owned(), 0.5), ("ground".to_owned(), 1.0)].into(),
            total_seconds: seconds,
            peak_rss_bytes: rss,
            ground_atoms: 3,
            ground_rules: 7,
            components_raw: kinds(&[("and", 4), ("or", 5)]),
            components: kinds(&[("and", 2), ("or", 3)]),
            layers: 1,
            sccs: 0,
            roles: vec!["r".to_owned()],
            bases: 1,
            inputs: 1,
            warnings: Vec::new(),
            relations: Vec::new(),
            fan_in: Vec::new(),
            fan_out: Vec::new(),
            layer_widths: vec![1],
        };
        StatsDirGame {
            outcome: StatsDirOutcome::Measured(Box::new(Stats::Circuit(stats))),
            status: StatsDirStatus::Ok,
            wall_seconds: Some(seconds),
        }
    }

    /// A game with no figures: `status`, and why.
    fn failed(name: &str, status: StatsDirStatus, error: &str, rss: Option<u64>) -> StatsDirGame {
        StatsDirGame {
            outcome: StatsDirOutcome::Failed {
                game: name.to_owned(),
                error: error.to_owned(),
                peak_rss_bytes: rss,
            },
            status,
            wall_seconds: None,
        }
    }

    /// The CSV table of `results`, as text.
    fn csv_text(results: &[StatsDirGame]) -> String {
        let mut bytes = Vec::new();
        write_csv(results, &mut bytes).expect("written to memory");
        String::from_utf8(bytes).expect("UTF-8")
    }

    #[test]
    fn summary_counts_and_extremes() {
        let results = vec![
            game("a", 1.0, 10),
            game("b", 3.0, 5),
            game("c", 2.0, 30),
            failed("d", StatsDirStatus::Timeout, "not compiled within 60 s", Some(99)),
        ];
        let s = summary(&results, 60, 4096);
        assert_eq!(s.games, 4);
        assert_eq!(s.compiled, 3);
        assert_eq!(s.timeout, 1);
        assert_eq!(s.median_init_seconds, Some(2.0));
        assert_eq!(s.worst_init_game.as_deref(), Some("b"));
        assert_eq!(s.worst_memory_game.as_deref(), Some("c"));
    }

    #[test]
    fn csv_has_one_line_per_game_with_phases() {
        let results = vec![
            game("a", 1.0, 1 << 20),
            failed("b", StatsDirStatus::Error, "bad \"x\", y", None),
        ];
        let text = csv_text(&results);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(
            lines[0],
            "game,status,init_seconds,parse_seconds,check_seconds,ground_seconds,build_seconds,\
             optimize_seconds,layer_seconds,plan_seconds,peak_rss_mib,ground_rules,components_raw,components,error"
        );
        assert!(lines[1].starts_with("a,ok,1.0000,0.5000,,1.0000,,,,,1.0,7,9,5,"));
        assert!(lines[2].ends_with(",\"bad \"\"x\"\", y\""));
    }

    /// Names and errors with commas, quotes and line breaks come back whole
    /// when the table is read as CSV.
    #[test]
    fn csv_fields_round_trip() {
        let name = "odd, \"quoted\"\nname";
        let error = "line 1, \"a\"\r\nline 2\n";
        let results = vec![
            game(name, 0.25, 0),
            failed("plain", StatsDirStatus::Error, error, Some(1 << 21)),
            failed("", StatsDirStatus::Memory, ",", None),
        ];
        let text = csv_text(&results);
        let mut reader = csv::Reader::from_reader(text.as_bytes());
        let header = reader.headers().expect("a header").clone();
        let column = |name: &str| header.iter().position(|h| h == name).expect(name);
        let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.expect("a record")).collect();
        assert_eq!(rows.len(), 3);
        let cells = |row: &csv::StringRecord, name: &str| row[column(name)].to_owned();
        assert_eq!(cells(&rows[0], "game"), name);
        assert_eq!(cells(&rows[0], "init_seconds"), "0.2500");
        assert_eq!(cells(&rows[0], "error"), "");
        assert_eq!(cells(&rows[1], "game"), "plain");
        assert_eq!(cells(&rows[1], "status"), "error");
        assert_eq!(cells(&rows[1], "error"), error);
        assert_eq!(cells(&rows[1], "peak_rss_mib"), "2.0");
        assert_eq!(cells(&rows[2], "game"), "");
        assert_eq!(cells(&rows[2], "status"), "memory");
        assert_eq!(cells(&rows[2], "error"), ",");
        assert!(rows.iter().all(|r| r.len() == header.len()));
    }
}
