//! `ggpnet corpus`: every game of a corpus replayed in a child process of this
//! program (so a game that takes too long or too much memory cannot take the run
//! down), with a per-game time limit; a JSON summary and a markdown table.

use super::{CorpusArgs, Failure};
use serde_json::{json, Value};
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The outcome of one game.
fn run_game(exe: &Path, game: &ggpnet::corpus::CorpusGame, check: &str, timeout: Duration) -> Value {
    let mut command = Command::new(exe);
    if check == "diff" {
        command.args(["diff", "--json"]).arg(&game.game);
    } else {
        let Some(trace) = &game.trace else {
            return json!({"game": game.name, "status": "no trace"});
        };
        command.args(["replay", "--json"]).arg(&game.game).arg(trace);
    }
    let start = Instant::now();
    let child = command.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn();
    let mut child = match child {
        Ok(c) => c,
        Err(e) => return json!({"game": game.name, "status": "error", "error": e.to_string()}),
    };
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
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if start.elapsed() > timeout => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(_) => break None,
        }
    };
    let out = out_reader.join().unwrap_or_default();
    let err = err_reader.join().unwrap_or_default();
    let seconds = start.elapsed().as_secs_f64();
    let Some(status) = status else {
        return json!({"game": game.name, "status": "timeout", "seconds": seconds,
                      "error": format!("no result within {} s", timeout.as_secs())});
    };
    if let Ok(mut value) = serde_json::from_str::<Value>(out.trim()) {
        value["status"] = json!(if value["agree"] == json!(true) {
            "agree"
        } else {
            "differ"
        });
        value["seconds"] = json!(seconds);
        return value;
    }
    let message = err.trim().lines().next().unwrap_or("").to_owned();
    let stage = if message.contains("parse error") {
        "parse"
    } else if message.starts_with("reference interpreter") {
        "reference"
    } else {
        "compile"
    };
    json!({"game": game.name, "status": format!("{stage} error"), "seconds": seconds,
           "exit": status.code(), "error": message})
}

pub(super) fn run(args: &CorpusArgs) -> Result<bool, Failure> {
    let dir = match &args.dir {
        Some(d) => d.clone(),
        None => ggpnet::corpus::locate(Path::new("."))
            .ok_or_else(|| Failure("no corpus: pass a directory or set GGPNET_CORPUS".into()))?,
    };
    let games: Vec<_> = ggpnet::corpus::games(&dir)
        .into_iter()
        .filter(|g| args.only.as_ref().is_none_or(|o| g.name.contains(o.as_str())))
        .collect();
    if games.is_empty() {
        return Err(Failure(format!("no games under {}", dir.display())));
    }
    if !matches!(args.check.as_str(), "replay" | "diff") {
        return Err(Failure(format!(
            "--check takes replay or diff, not {}",
            args.check
        )));
    }
    let exe = std::env::current_exe().map_err(|e| Failure(format!("cannot find this program: {e}")))?;
    let jobs = args
        .jobs
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
        .max(1);
    let timeout = Duration::from_secs(args.timeout);
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<Value>>> = Mutex::new(vec![None; games.len()]);
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(game) = games.get(i) else { break };
                let value = run_game(&exe, game, &args.check, timeout);
                if !args.json {
                    eprintln!("{:<40} {}", game.name, value["status"].as_str().unwrap_or("?"));
                }
                results.lock().expect("no panics while holding the lock")[i] = Some(value);
            });
        }
    });
    let results: Vec<Value> = results
        .into_inner()
        .expect("threads joined")
        .into_iter()
        .map(|v| v.expect("every game ran"))
        .collect();
    let count = |status: &str| results.iter().filter(|r| r["status"] == json!(status)).count();
    let with_trace = results
        .iter()
        .filter(|r| r["status"] != json!("no trace"))
        .count();
    let summary = json!({
        "games": results.len(),
        "with_trace": with_trace,
        "agree": count("agree"),
        "differ": count("differ"),
        "timeout": count("timeout"),
        "parse_error": count("parse error"),
        "compile_error": count("compile error"),
        "reference_error": count("reference error"),
    });
    if let Some(path) = &args.markdown {
        std::fs::write(path, markdown(&results, &summary, args.timeout, &args.check))
            .map_err(|e| Failure(format!("cannot write {}: {e}", path.display())))?;
    }
    if args.json {
        println!("{}", json!({"summary": summary, "games": results}));
    } else {
        println!("{summary}");
    }
    Ok(true)
}

fn markdown(results: &[Value], summary: &Value, timeout: u64, check: &str) -> String {
    let mut out = format!(
        "# Corpus results\n\nGenerated by `ggpnet corpus ../shared --check {check} --markdown FILE` (release \
         build); each game runs in its own process with a time limit of {timeout} s. "
    );
    out.push_str(if check == "diff" {
        "Each game is played on the propnet and on the reference interpreter side by side.\n\n"
    } else {
        "Each game is replayed against its reference trace (state, legal moves, terminal, goals, perft).\n\n"
    });
    out.push_str(&format!(
        "Totals: {} games, {} with a trace; {} agree, {} differ, {} timed out, {} parse errors, {} compile errors.\n\n",
        summary["games"], summary["with_trace"], summary["agree"], summary["differ"], summary["timeout"],
        summary["parse_error"], summary["compile_error"]
    ));
    out.push_str(
        "| game | parsed | compiled | compile s | components | trace |\n|---|---|---|---:|---:|---|\n",
    );
    for r in results {
        let status = r["status"].as_str().unwrap_or("?");
        let parsed = if status == "parse error" { "no" } else { "yes" };
        let compiled = match status {
            "agree" | "differ" => "yes",
            "timeout" => "?",
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
