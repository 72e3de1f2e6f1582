//! `ggpnet stats --dir DIR`: the start-up figures of every game of a directory,
//! each measured by `ggpnet stats GAME --json` in a child process with a time and
//! a memory limit; a table (text, CSV or JSON) and a summary: games compiled,
//! median and worst initialization time, worst peak memory.

use super::corpus_run::{run_all, run_child, Limit};
use super::{Failure, StatsArgs};
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The game files (`.kif`, and `.sbg` translated on loading) directly in `dir`, by name.
fn games(dir: &Path) -> Result<Vec<PathBuf>, Failure> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| Failure::input(format!("cannot read {}: {e}", dir.display())))?;
    let mut games: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "kif" || x == "sbg"))
        .collect();
    games.sort();
    Ok(games)
}

/// Measures one game in a child process.
fn measure(exe: &Path, game: &Path, timeout: Duration, max_rss: u64) -> Value {
    let name = game
        .file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    let mut command = super::child_command(exe);
    command.args(["stats", "--json"]).arg(game);
    let run = match run_child(command, timeout, Some(max_rss)) {
        Ok(run) => run,
        Err(e) => return json!({"game": name, "status": "error", "error": e.to_string()}),
    };
    let mut value = match (run.stopped, serde_json::from_str::<Value>(run.stdout.trim())) {
        (Some(Limit::Time), _) => json!({"status": "timeout",
            "error": format!("not compiled within {} s", timeout.as_secs())}),
        (Some(Limit::Memory), _) => json!({"status": "memory",
            "error": format!("resident memory above {} MiB", max_rss >> 20)}),
        (None, Ok(value)) => {
            let mut value = value;
            value["status"] = json!("ok");
            value
        }
        (None, Err(_)) => {
            let error = run.stderr.trim().lines().next().unwrap_or("no output").to_owned();
            json!({"status": "error", "error": error})
        }
    };
    value["game"] = json!(name);
    value["wall_seconds"] = json!(run.seconds);
    if value["peak_rss_bytes"].is_null() {
        value["peak_rss_bytes"] = json!(run.peak_rss_bytes);
    }
    value
}

fn total(value: &Value, key: &str) -> Option<u64> {
    value[key]
        .as_object()
        .map(|m| m.values().filter_map(Value::as_u64).sum())
}

/// The summary over all games: counts, median and worst time, worst memory.
fn summary(results: &[Value], timeout: u64, max_mem: u64) -> Value {
    let compiled: Vec<&Value> = results.iter().filter(|r| r["status"] == json!("ok")).collect();
    let mut times: Vec<(f64, &str)> = compiled
        .iter()
        .map(|r| {
            (
                r["total_seconds"].as_f64().unwrap_or(0.0),
                r["game"].as_str().unwrap_or("?"),
            )
        })
        .collect();
    times.sort_by(|a, b| a.0.total_cmp(&b.0));
    let median = times.get(times.len() / 2).map(|t| t.0);
    let worst_time = times.last();
    let worst_memory = compiled
        .iter()
        .max_by_key(|r| r["peak_rss_bytes"].as_u64().unwrap_or(0))
        .map(|r| {
            (
                r["peak_rss_bytes"].as_u64().unwrap_or(0),
                r["game"].as_str().unwrap_or("?"),
            )
        });
    let count = |status: &str| results.iter().filter(|r| r["status"] == json!(status)).count();
    json!({
        "games": results.len(),
        "compiled": compiled.len(),
        "timeout": count("timeout"),
        "memory": count("memory"),
        "error": count("error"),
        "timeout_seconds": timeout,
        "max_mem_mib": max_mem,
        "median_init_seconds": median,
        "worst_init_seconds": worst_time.map(|t| t.0),
        "worst_init_game": worst_time.map(|t| t.1),
        "worst_peak_rss_bytes": worst_memory.map(|m| m.0),
        "worst_memory_game": worst_memory.map(|m| m.1),
    })
}

const PHASES: [&str; 7] = ["parse", "check", "ground", "build", "optimize", "layer", "plan"];

/// One CSV line per game (no field holds a comma except the error, which is quoted).
fn csv(results: &[Value]) -> String {
    let mut out = format!(
        "game,status,init_seconds,{},peak_rss_mib,ground_rules,components_raw,components,error\n",
        PHASES.map(|p| format!("{p}_seconds")).join(",")
    );
    for r in results {
        let number = |v: &Value| v.as_f64().map_or(String::new(), |x| format!("{x:.4}"));
        let phases: Vec<String> = PHASES.iter().map(|p| number(&r["phases"][p])).collect();
        let error = r["error"].as_str().unwrap_or("").replace('"', "\"\"");
        out.push_str(&format!(
            "{},{},{},{},{:.1},{},{},{},\"{error}\"\n",
            r["game"].as_str().unwrap_or("?"),
            r["status"].as_str().unwrap_or("?"),
            number(&r["total_seconds"]),
            phases.join(","),
            r["peak_rss_bytes"].as_u64().unwrap_or(0) as f64 / 1048576.0,
            r["ground_rules"]
                .as_u64()
                .map_or(String::new(), |n| n.to_string()),
            total(r, "components_raw").map_or(String::new(), |n| n.to_string()),
            total(r, "components").map_or(String::new(), |n| n.to_string()),
        ));
    }
    out
}

fn text(results: &[Value], summary: &Value) -> String {
    let mut out = format!(
        "{:<36} {:<8} {:>9} {:>9} {:>10}\n",
        "game", "status", "init s", "peak MiB", "components"
    );
    for r in results {
        out.push_str(&format!(
            "{:<36} {:<8} {:>9} {:>9.1} {:>10}\n",
            r["game"].as_str().unwrap_or("?"),
            r["status"].as_str().unwrap_or("?"),
            r["total_seconds"]
                .as_f64()
                .map_or("–".into(), |s| format!("{s:.3}")),
            r["peak_rss_bytes"].as_u64().unwrap_or(0) as f64 / 1048576.0,
            total(r, "components").map_or("–".into(), |n| n.to_string()),
        ));
    }
    let seconds = |key: &str| summary[key].as_f64().map_or("–".into(), |s| format!("{s:.3} s"));
    out.push_str(&format!(
        "compiled {} of {} games ({} timeouts at {} s, {} over {} MiB, {} errors)\n\
         median init {}, worst init {} ({}), worst peak memory {:.1} MiB ({})\n",
        summary["compiled"],
        summary["games"],
        summary["timeout"],
        summary["timeout_seconds"],
        summary["memory"],
        summary["max_mem_mib"],
        summary["error"],
        seconds("median_init_seconds"),
        seconds("worst_init_seconds"),
        summary["worst_init_game"].as_str().unwrap_or("–"),
        summary["worst_peak_rss_bytes"].as_u64().unwrap_or(0) as f64 / 1048576.0,
        summary["worst_memory_game"].as_str().unwrap_or("–"),
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
    let exe =
        std::env::current_exe().map_err(|e| Failure::input(format!("cannot find this program: {e}")))?;
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
        |_, value| {
            bar.set_message(value["game"].as_str().unwrap_or("").to_owned());
            bar.inc(1);
        },
    );
    bar.finish_and_clear();
    let summary = summary(&results, args.timeout, max_mem);
    if let Some(path) = &args.csv {
        std::fs::write(path, csv(&results))
            .map_err(|e| Failure::input(format!("cannot write {}: {e}", path.display())))?;
    }
    if args.game.json {
        println!("{}", json!({"summary": summary, "games": results}));
    } else {
        print!("{}", text(&results, &summary));
    }
    Ok(summary["compiled"] == summary["games"])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn game(name: &str, status: &str, seconds: f64, rss: u64) -> Value {
        json!({"game": name, "status": status, "total_seconds": seconds, "peak_rss_bytes": rss,
               "phases": {"parse": 0.5, "ground": 1.0}, "components": {"and": 2, "or": 3}})
    }

    #[test]
    fn summary_counts_and_extremes() {
        let results = vec![
            game("a", "ok", 1.0, 10),
            game("b", "ok", 3.0, 5),
            game("c", "ok", 2.0, 30),
            json!({"game": "d", "status": "timeout", "peak_rss_bytes": 99}),
        ];
        let s = summary(&results, 60, 4096);
        assert_eq!(s["games"], 4);
        assert_eq!(s["compiled"], 3);
        assert_eq!(s["timeout"], 1);
        assert_eq!(s["median_init_seconds"], 2.0);
        assert_eq!(s["worst_init_game"], "b");
        assert_eq!(s["worst_memory_game"], "c");
    }

    #[test]
    fn csv_has_one_line_per_game_with_phases() {
        let results = vec![
            game("a", "ok", 1.0, 1 << 20),
            json!({"game": "b", "status": "error", "error": "bad \"x\", y"}),
        ];
        let text = csv(&results);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert!(lines[1].starts_with("a,ok,1.0000,0.5000,,1.0000,,,,,1.0,,,5,"));
        assert!(lines[2].ends_with(",\"bad \"\"x\"\", y\""));
    }
}
