//! `ggpnet corpus`: every game of a corpus replayed in a child process of this
//! program (so a game that takes too long or too much memory cannot take the run
//! down), with a per-game time limit; a JSON summary and a markdown table. The
//! child-process runner (time and memory limits) and the job pool serve `ggpnet stats --dir` too.

use super::failure::Kind;
use super::{CorpusArgs, Failure};
use ggpnet_tools::report::{
    self, CorpusGame, CorpusOutcome, CorpusRun, CorpusStatus, CorpusSummary, ShardRun,
};
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
) -> CorpusGame {
    let name = game.name.clone();
    let ended = |outcome, status, seconds| CorpusGame {
        outcome,
        status,
        seconds,
    };
    let mut command = super::child_command(exe);
    if check == "diff" {
        command.args(["diff", "--json"]).arg(&game.game);
        if gdl2 {
            command.args(["--playouts", "20"]);
        }
    } else {
        let Some(trace) = &game.trace else {
            return ended(CorpusOutcome::Skipped { game: name }, CorpusStatus::NoTrace, None);
        };
        command.args(["replay", "--json"]).arg(&game.game).arg(trace);
    }
    let run = match run_child(command, timeout, max_rss_bytes) {
        Ok(run) => run,
        Err(e) => {
            let outcome = CorpusOutcome::Stopped {
                game: name,
                error: e.to_string(),
            };
            return ended(outcome, CorpusStatus::Error, None);
        }
    };
    let seconds = Some(run.seconds);
    let stopped = |error: String, status| {
        ended(
            CorpusOutcome::Stopped {
                game: name.clone(),
                error,
            },
            status,
            seconds,
        )
    };
    if run.stopped == Some(Limit::Memory) {
        let error = format!("resident memory above {} MiB", max_rss_bytes.unwrap_or(0) >> 20);
        return stopped(error, CorpusStatus::Memory);
    }
    let Some(status) = run.status else {
        return stopped(
            format!("no result within {} s", timeout.as_secs()),
            CorpusStatus::Timeout,
        );
    };
    if let Some((outcome, status)) = checked(check, &run.stdout) {
        return ended(outcome, status, seconds);
    }
    let message = run.stderr.trim().lines().next().unwrap_or("").to_owned();
    let outcome = CorpusOutcome::Failed {
        game: name,
        exit: status.code(),
        error: message.clone(),
    };
    ended(outcome, failure_status(status.code(), &message), seconds)
}

/// The report a child running `check` printed on `stdout`, and the status it
/// gives; `None` when it printed none.
fn checked(check: &str, stdout: &str) -> Option<(CorpusOutcome, CorpusStatus)> {
    let agreed = |agree: bool| match agree {
        true => CorpusStatus::Agree,
        false => CorpusStatus::Differ,
    };
    if check == "diff" {
        let diff: report::Diff = serde_json::from_str(stdout.trim()).ok()?;
        let status = match &diff {
            report::Diff::Compared(d) => agreed(d.agree),
            // `diff` of a game only the interpreter runs: nothing to compare.
            report::Diff::Skipped(_) => CorpusStatus::NoPropnet,
        };
        Some((CorpusOutcome::Diff(diff), status))
    } else {
        let replay: report::Replay = serde_json::from_str(stdout.trim()).ok()?;
        let status = agreed(replay.agree);
        Some((CorpusOutcome::Replay(replay), status))
    }
}

/// The status of a child that printed no report, from the kind of failure its
/// exit code says (see `failure.rs`) and its first line of error.
fn failure_status(code: Option<i32>, message: &str) -> CorpusStatus {
    match code.and_then(Kind::of_exit_code) {
        Some(Kind::Invalid) if message.starts_with("reference interpreter") => CorpusStatus::ReferenceError,
        Some(Kind::Invalid) => CorpusStatus::CompileError,
        Some(Kind::Input) if message.contains("parse error") => CorpusStatus::ParseError,
        Some(Kind::Input) => CorpusStatus::InputError,
        Some(Kind::Limit) => CorpusStatus::TooLarge,
        None => CorpusStatus::Crash,
    }
}

/// The counts of `results` by status.
fn summary(results: &[CorpusGame]) -> CorpusSummary {
    let count = |status: CorpusStatus| results.iter().filter(|r| r.status == status).count();
    let not_checked = |r: &&CorpusGame| matches!(r.status, CorpusStatus::NoTrace | CorpusStatus::NoPropnet);
    CorpusSummary {
        games: results.len(),
        with_trace: results.len() - results.iter().filter(not_checked).count(),
        agree: count(CorpusStatus::Agree),
        differ: count(CorpusStatus::Differ),
        timeout: count(CorpusStatus::Timeout),
        memory: count(CorpusStatus::Memory),
        parse_error: count(CorpusStatus::ParseError),
        input_error: count(CorpusStatus::InputError),
        compile_error: count(CorpusStatus::CompileError),
        too_large: count(CorpusStatus::TooLarge),
        reference_error: count(CorpusStatus::ReferenceError),
        crash: count(CorpusStatus::Crash),
        no_propnet: count(CorpusStatus::NoPropnet),
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
    let names: Vec<&str> = games.iter().map(|g| g.name.as_str()).collect();
    let games = args.sharding.shard().select(&games);
    let exe = std::env::current_exe().map_err(|e| Failure::of(&e).at("cannot find this program"))?;
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
        |i, result| {
            if !args.json {
                eprintln!("{:<40} {}", games[i].name, result.status.name());
            }
        },
    );
    let run = CorpusRun {
        check: args.check.clone(),
        gdl2: args.gdl2,
        timeout_seconds: args.timeout,
        max_mem_mib: super::max_mem_mib(),
    };
    args.sharding
        .write(ShardRun::Corpus(run.clone()), &names, &results)?;
    print_report(results, &run, args.json, args.markdown.as_deref())
}

/// Prints the report of `results` of the run `run` (JSON if `json`, else the
/// summary), writes the markdown table to `markdown` if given, and returns
/// whether every game agreed (or had nothing to check).
pub(crate) fn print_report(
    results: Vec<CorpusGame>,
    run: &CorpusRun,
    json: bool,
    markdown_file: Option<&Path>,
) -> Result<bool, Failure> {
    let summary = summary(&results);
    let all_agree = results.iter().all(|r| {
        matches!(
            r.status,
            CorpusStatus::Agree | CorpusStatus::NoTrace | CorpusStatus::NoPropnet
        )
    });
    if let Some(path) = markdown_file {
        std::fs::write(path, markdown(&results, &summary, run))
            .map_err(|e| Failure::of(&e).at(&format!("cannot write {}", path.display())))?;
    }
    if json {
        let corpus = report::Corpus {
            summary,
            games: results,
        };
        println!("{}", report::to_json(&corpus));
    } else {
        println!("{}", report::to_json(&summary));
    }
    Ok(all_agree)
}

/// The results as a markdown page: how they were made, the totals, a row per game.
fn markdown(results: &[CorpusGame], summary: &CorpusSummary, run: &CorpusRun) -> String {
    let (check, timeout) = (&run.check, run.timeout_seconds);
    let (memory_flag, memory_limit) = match run.max_mem_mib {
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
        summary.games,
        summary.with_trace,
        summary.agree,
        summary.differ,
        summary.timeout,
        summary.memory,
        summary.too_large,
        summary.parse_error,
        summary.input_error,
        summary.compile_error,
        summary.crash
    ));
    out.push_str(
        "| game | parsed | compiled | compile s | components | trace |\n|---|---|---|---:|---:|---|\n",
    );
    for r in results {
        out.push_str(&markdown_row(r));
    }
    out
}

/// The markdown table's row of one game.
fn markdown_row(r: &CorpusGame) -> String {
    let status = r.status.name();
    let parsed = if r.status == CorpusStatus::ParseError {
        "no"
    } else {
        "yes"
    };
    let compiled = match r.status {
        CorpusStatus::Agree | CorpusStatus::Differ => "yes",
        CorpusStatus::Timeout | CorpusStatus::Memory | CorpusStatus::TooLarge => "?",
        _ => "no",
    };
    // Load seconds, components, playouts and steps, first difference, error.
    let (seconds, components, counts, difference, error) = match &r.outcome {
        CorpusOutcome::Replay(x) => (
            x.compile_seconds,
            x.components,
            Some((x.playouts, x.steps)),
            x.first_difference.as_deref(),
            None,
        ),
        CorpusOutcome::Diff(report::Diff::Compared(x)) => (
            Some(x.compile_seconds),
            Some(x.components),
            Some((x.playouts, x.steps)),
            x.first_difference.as_deref(),
            None,
        ),
        CorpusOutcome::Failed { error, .. } | CorpusOutcome::Stopped { error, .. } => {
            (None, None, None, None, Some(error.as_str()))
        }
        CorpusOutcome::Diff(report::Diff::Skipped(_)) | CorpusOutcome::Skipped { .. } => {
            (None, None, None, None, None)
        }
    };
    let compile = seconds.map_or("–".into(), |s| format!("{s:.3}"));
    let components = components.map_or("–".into(), |c| c.to_string());
    let detail = match (r.status, counts) {
        (CorpusStatus::Agree, Some((playouts, steps))) => {
            format!("agree ({playouts} playouts, {steps} steps)")
        }
        (CorpusStatus::Differ, _) => format!("differ: {}", difference.unwrap_or("")),
        _ => format!("{status}: {}", error.unwrap_or("")),
    };
    let detail: String = detail.replace('|', "\\|").chars().take(200).collect();
    format!(
        "| {} | {parsed} | {compiled} | {compile} | {components} | {detail} |\n",
        r.outcome.game()
    )
}
