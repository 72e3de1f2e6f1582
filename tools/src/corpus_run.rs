//! `ggpnet corpus`: every game of a corpus replayed in a child process of this
//! program (so a game that takes too long or too much memory cannot take the run
//! down), with a per-game time limit; a JSON summary and a markdown table. The
//! child-process runner (time and memory limits) and the job pool serve `ggpnet stats --dir` too.

use super::{CorpusArgs, Failure};
use serde_json::{json, Value};
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// What a child process printed and how it ended.
pub(crate) struct ChildRun {
    /// Its standard output.
    pub stdout: String,
    /// Its standard error.
    pub stderr: String,
    /// Its exit status; `None` when it was stopped at a limit or could not be waited for.
    pub status: Option<std::process::ExitStatus>,
    /// The limit it was stopped at, if any.
    pub stopped: Option<Limit>,
    /// Wall-clock seconds from start to end.
    pub seconds: f64,
    /// The largest resident set size seen while it ran (sampled every 20 ms).
    pub peak_rss_bytes: u64,
}

/// A limit a child process was stopped at.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Limit {
    /// It ran longer than allowed.
    Time,
    /// Its resident set grew past the allowed size.
    Memory,
}

/// Resident set size of process `pid` (0 where unavailable).
fn rss_bytes(pid: u32) -> u64 {
    super::proc_bytes(&format!("/proc/{pid}/status"), "VmRSS")
}

/// Runs `command` to its end, or kills it once it runs past `timeout` or its
/// resident set grows past `max_rss_bytes`.
pub(crate) fn run_child(
    mut command: Command,
    timeout: Duration,
    max_rss_bytes: Option<u64>,
) -> std::io::Result<ChildRun> {
    let start = Instant::now();
    let mut child = command.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn()?;
    // Drain the pipes on threads so a chatty child cannot block.
    let mut stdout = child.stdout.take().expect("piped");
    let mut stderr = child.stderr.take().expect("piped");
    let out_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stdout.read_to_string(&mut s);
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        let _ = stderr.read_to_string(&mut s);
        s
    });
    let mut peak = 0;
    let mut stopped = None;
    let status = loop {
        let rss = rss_bytes(child.id());
        peak = peak.max(rss);
        let over = if start.elapsed() > timeout {
            Some(Limit::Time)
        } else if max_rss_bytes.is_some_and(|max| rss > max) {
            Some(Limit::Memory)
        } else {
            None
        };
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if over.is_some() => {
                let _ = child.kill();
                let _ = child.wait();
                stopped = over;
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(_) => break None,
        }
    };
    Ok(ChildRun {
        stdout: out_reader.join().unwrap_or_default(),
        stderr: err_reader.join().unwrap_or_default(),
        status,
        stopped,
        seconds: start.elapsed().as_secs_f64(),
        peak_rss_bytes: peak,
    })
}

/// Runs `task` on every index below `count`, `jobs` at a time, calling `done`
/// as each finishes; returns the results in index order.
pub(crate) fn run_all<T: Send>(
    count: usize,
    jobs: usize,
    task: impl Fn(usize) -> T + Sync,
    done: impl Fn(usize, &T) + Sync,
) -> Vec<T> {
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<T>>> = Mutex::new((0..count).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..jobs.max(1) {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                if i >= count {
                    break;
                }
                let value = task(i);
                done(i, &value);
                results.lock().expect("no panics while holding the lock")[i] = Some(value);
            });
        }
    });
    results
        .into_inner()
        .expect("threads joined")
        .into_iter()
        .map(|v| v.expect("every task ran"))
        .collect()
}

/// The outcome of one game.
fn run_game(
    exe: &Path,
    game: &ggpnet_tools::corpus::CorpusGame,
    check: &str,
    gdl2: bool,
    timeout: Duration,
    max_rss_bytes: Option<u64>,
) -> Value {
    let mut command = super::child_command(exe);
    if check == "diff" {
        command.args(["diff", "--json"]).arg(&game.game);
        if gdl2 {
            command.args(["--playouts", "20"]);
        }
    } else {
        let Some(trace) = &game.trace else {
            return json!({"game": game.name, "status": "no trace"});
        };
        command.args(["replay", "--json"]).arg(&game.game).arg(trace);
    }
    let run = match run_child(command, timeout, max_rss_bytes) {
        Ok(run) => run,
        Err(e) => return json!({"game": game.name, "status": "error", "error": e.to_string()}),
    };
    let seconds = run.seconds;
    if run.stopped == Some(Limit::Memory) {
        return json!({"game": game.name, "status": "memory", "seconds": seconds,
                      "error": format!("resident memory above {} MiB", max_rss_bytes.unwrap_or(0) >> 20)});
    }
    let Some(status) = run.status else {
        return json!({"game": game.name, "status": "timeout", "seconds": seconds,
                      "error": format!("no result within {} s", timeout.as_secs())});
    };
    if let Ok(mut value) = serde_json::from_str::<Value>(run.stdout.trim()) {
        value["status"] = json!(match &value["agree"] {
            Value::Bool(true) => "agree",
            // `diff` of a game only the interpreter runs: nothing to compare.
            Value::Null if value["skipped"].is_string() => "no propnet",
            _ => "differ",
        });
        value["seconds"] = json!(seconds);
        return value;
    }
    let message = run.stderr.trim().lines().next().unwrap_or("").to_owned();
    json!({"game": game.name, "status": failure_status(status.code(), &message), "seconds": seconds,
           "exit": status.code(), "error": message})
}

/// The status of a child that printed no report, from its exit code (see `failure.rs`) and first line of error.
fn failure_status(code: Option<i32>, message: &str) -> &'static str {
    match code {
        Some(1) if message.starts_with("reference interpreter") => "reference error",
        Some(1) => "compile error",
        Some(2) if message.contains("parse error") => "parse error",
        Some(2) => "input error",
        Some(3) => "too large",
        _ => "crash",
    }
}

pub(super) fn run(args: &CorpusArgs) -> Result<bool, Failure> {
    if !matches!(args.check.as_str(), "replay" | "diff") {
        return Err(Failure::input(format!(
            "--check takes replay or diff, not {}",
            args.check
        )));
    }
    let dir = match &args.dir {
        Some(d) => d.clone(),
        None => ggpnet_tools::corpus::locate(Path::new("."))
            .ok_or_else(|| Failure::input("no corpus: pass a directory or set GGPNET_CORPUS"))?,
    };
    let games = if args.gdl2 {
        ggpnet_tools::corpus::gdl2_games(&dir)
    } else {
        ggpnet_tools::corpus::games(&dir)
    };
    let games: Vec<_> = games
        .into_iter()
        .filter(|g| args.only.as_ref().is_none_or(|o| g.name.contains(o.as_str())))
        .collect();
    if games.is_empty() {
        return Err(Failure::input(format!("no games under {}", dir.display())));
    }
    let exe =
        std::env::current_exe().map_err(|e| Failure::input(format!("cannot find this program: {e}")))?;
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let timeout = Duration::from_secs(args.timeout);
    let max_rss_bytes = super::max_mem_mib().map(|mib| mib.saturating_mul(1 << 20));
    let results = run_all(
        games.len(),
        jobs,
        |i| run_game(&exe, &games[i], &args.check, args.gdl2, timeout, max_rss_bytes),
        |i, value| {
            if !args.json {
                eprintln!(
                    "{:<40} {}",
                    games[i].name,
                    value["status"].as_str().unwrap_or("?")
                );
            }
        },
    );
    let count = |status: &str| results.iter().filter(|r| r["status"] == json!(status)).count();
    let not_checked = |r: &Value| r["status"] == json!("no trace") || r["status"] == json!("no propnet");
    let with_trace = results.iter().filter(|r| !not_checked(r)).count();
    let summary = json!({
        "games": results.len(),
        "with_trace": with_trace,
        "agree": count("agree"),
        "differ": count("differ"),
        "timeout": count("timeout"),
        "memory": count("memory"),
        "parse_error": count("parse error"),
        "input_error": count("input error"),
        "compile_error": count("compile error"),
        "too_large": count("too large"),
        "reference_error": count("reference error"),
        "crash": count("crash"),
        "no_propnet": count("no propnet"),
    });
    let all_agree = results
        .iter()
        .all(|r| r["status"] == json!("agree") || not_checked(r));
    if let Some(path) = &args.markdown {
        std::fs::write(path, markdown(&results, &summary, args))
            .map_err(|e| Failure::input(format!("cannot write {}: {e}", path.display())))?;
    }
    if args.json {
        println!("{}", json!({"summary": summary, "games": results}));
    } else {
        println!("{summary}");
    }
    Ok(all_agree)
}

fn markdown(results: &[Value], summary: &Value, args: &CorpusArgs) -> String {
    let (check, timeout) = (&args.check, args.timeout);
    let (memory_flag, memory_limit) = match super::max_mem_mib() {
        Some(mib) => (
            format!(" --max-mem {mib}"),
            format!(" and a memory limit of {mib} MiB"),
        ),
        None => (String::new(), String::new()),
    };
    let mut out = format!(
        "# Corpus results\n\nGenerated by `ggpnet corpus ../shared --check {check} --timeout {timeout}{memory_flag} \
         --markdown FILE` (release build); each game runs in its own process with a time limit of \
         {timeout} s{memory_limit}. "
    );
    out.push_str(if check == "diff" {
        "Each game is played on the propnet and on the reference interpreter side by side.\n\n"
    } else {
        "Each game is replayed against its reference trace (state, legal moves, terminal, goals, perft).\n\n"
    });
    out.push_str(&format!(
        "Totals: {} games, {} with a trace; {} agree, {} differ, {} timed out, {} over the memory limit, \
         {} too large, {} parse errors, {} other input errors, {} compile errors, {} crashes.\n\n",
        summary["games"],
        summary["with_trace"],
        summary["agree"],
        summary["differ"],
        summary["timeout"],
        summary["memory"],
        summary["too_large"],
        summary["parse_error"],
        summary["input_error"],
        summary["compile_error"],
        summary["crash"]
    ));
    out.push_str(
        "| game | parsed | compiled | compile s | components | trace |\n|---|---|---|---:|---:|---|\n",
    );
    for r in results {
        let status = r["status"].as_str().unwrap_or("?");
        let parsed = if status == "parse error" { "no" } else { "yes" };
        let compiled = match status {
            "agree" | "differ" => "yes",
            "timeout" | "memory" | "too large" => "?",
            _ => "no",
        };
        let compile = r["compile_seconds"]
            .as_f64()
            .map_or("–".into(), |s| format!("{s:.3}"));
        let components = r["components"].as_u64().map_or("–".into(), |c| c.to_string());
        let detail = match status {
            "agree" => format!("agree ({} playouts, {} steps)", r["playouts"], r["steps"]),
            "differ" => format!("differ: {}", r["first_difference"].as_str().unwrap_or("")),
            _ => format!("{status}: {}", r["error"].as_str().unwrap_or("")),
        };
        let detail: String = detail.replace('|', "\\|").chars().take(200).collect();
        out.push_str(&format!(
            "| {} | {parsed} | {compiled} | {compile} | {components} | {detail} |\n",
            r["game"].as_str().unwrap_or("?")
        ));
    }
    out
}
