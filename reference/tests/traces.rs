//! Replays the reference traces of the corpus (see `shared/traces/FORMAT.md`) with the
//! interpreter: for every game, the header (roles, initial state) and the first
//! playout — at most `MAX_STEPS` steps of it — must agree: at every step the state,
//! every role's legal moves, the goals and "not terminal"; at the end the final
//! state, "terminal" and the goals.
//!
//! The corpus is looked for at `$GGPNET_CORPUS`, else at `../shared` from the
//! workspace root. Without it the test prints a notice and passes, unless
//! `GGPNET_REQUIRE_CORPUS=1`. `GGPNET_TRACE_FILTER=text` replays only the games
//! whose name contains `text`. Run it in release mode:
//! `cargo test --release -p ggpnet-reference --test traces -- --nocapture`.

use ggpnet_reference::{RefState, Reference};
use serde_json::Value;
use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Steps of the first playout replayed per game.
const MAX_STEPS: usize = 60;

/// Time allowed for `Reference::new`, and separately for the replay, per game.
const BUDGET: Duration = Duration::from_secs(5);

/// Invalid test cases whose traces show what the recording reasoner did with unsafe
/// rules (it dropped the literals it could not place), not GDL semantics
/// (FORMAT.md, "Traces to read with care"). They must be rejected.
const MUST_REJECT: &[(&str, &str)] = &[
    ("test_case_3b", "distinctCell's variables occur only in distinct"),
    ("test_case_3e", "(legal ?p ?p) binds ?p by no positive literal"),
    ("test_case_3f", "role variables bound by no positive literal"),
];

/// Games expected to disagree with their trace, and why. Two invalid-GDL quirks are
/// not here because the interpreter reads them as the recording reasoner did, so they
/// must agree: `test_clean_not_distinct` (the parser reads `(not (distinct a b))` as
/// `a = b`) and `test_case_3a` (the parser keeps the zero-argument sentence `(open2)`
/// apart from the constant `open2`).
const KNOWN_DIFFERENCES: &[(&str, &str)] = &[];

/// What replaying one game gave.
enum Outcome {
    /// Everything compared agreed; the number of steps replayed.
    Agree(usize),
    /// A comparison failed.
    Differ(String),
    /// `Reference::new` refused the game.
    Rejected(String),
    /// Over the time budget; what was compared until then agreed.
    Skipped(String),
}

struct Report {
    name: String,
    outcome: Outcome,
    build: Duration,
    replay: Duration,
}

fn corpus() -> Option<PathBuf> {
    let dir = match std::env::var_os("GGPNET_CORPUS") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared"),
    };
    dir.join("games").is_dir().then_some(dir)
}

/// Every (name, game file, trace file) of the corpus, sorted by name.
fn games(corpus: &Path) -> Vec<(String, PathBuf, PathBuf)> {
    let mut all = Vec::new();
    for (games, traces) in [("games", "traces"), ("games-test", "traces-test")] {
        let Ok(entries) = std::fs::read_dir(corpus.join(games)) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "kif") {
                let name = path.file_stem().unwrap().to_string_lossy().into_owned();
                let trace = corpus.join(traces).join(format!("{name}.jsonl"));
                all.push((name, path, trace));
            }
        }
    }
    all.sort();
    all
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|items| {
            items
                .iter()
                .map(|i| i.as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

fn integers(value: &Value) -> Vec<i64> {
    match value {
        Value::Number(n) => n.as_i64().into_iter().collect(),
        Value::Array(items) => items.iter().filter_map(Value::as_i64).collect(),
        _ => Vec::new(),
    }
}

fn compare<T: PartialEq + std::fmt::Debug>(what: &str, ours: T, theirs: T) -> Result<(), String> {
    if ours == theirs {
        Ok(())
    } else {
        Err(format!("{what}: interpreter {ours:?}, trace {theirs:?}"))
    }
}

/// Compares the legal moves and goals of every role and "not terminal" in `state`.
fn compare_step(reference: &Reference, state: &RefState, step: &Value, at: usize) -> Result<(), String> {
    let legal = step["legal"].as_array().cloned().unwrap_or_default();
    let goals = step["goals"].as_array().cloned().unwrap_or_default();
    let roles = reference.roles().len();
    compare(&format!("step {at}: number of legal lists"), roles, legal.len())?;
    for (r, moves) in legal.iter().enumerate() {
        compare(
            &format!("step {at}: legal moves of role {r}"),
            reference
                .legal_moves(state, r)
                .map_err(|e| format!("step {at}: {e}"))?,
            strings(moves),
        )?;
    }
    let theirs: Vec<Vec<i64>> = goals.iter().map(integers).collect();
    compare(
        &format!("step {at}: goals"),
        reference.goals(state).map_err(|e| format!("step {at}: {e}"))?,
        theirs,
    )?;
    compare(
        &format!("step {at}: terminal"),
        reference
            .is_terminal(state)
            .map_err(|e| format!("step {at}: {e}"))?,
        false,
    )
}

fn replay(name: &str, game: &Path, trace: &Path) -> Report {
    let mut report = Report {
        name: name.to_string(),
        outcome: Outcome::Agree(0),
        build: Duration::ZERO,
        replay: Duration::ZERO,
    };
    let started = Instant::now();
    let built = std::fs::read_to_string(game)
        .map_err(|e| e.to_string())
        .and_then(|text| ggpnet_kif::parse(&text).map_err(|e| e.to_string()))
        .map(|description| Reference::new(&description));
    report.build = started.elapsed();
    let reference = match built {
        Err(e) => {
            report.outcome = Outcome::Differ(format!("cannot read the game: {e}"));
            return report;
        }
        Ok(Err(e)) => {
            report.outcome = Outcome::Rejected(e.to_string());
            return report;
        }
        Ok(Ok(reference)) => reference,
    };
    if report.build > BUDGET {
        report.outcome = Outcome::Skipped(format!("Reference::new took {:?}", report.build));
        return report;
    }
    let started = Instant::now();
    report.outcome = match follow(&reference, trace, started) {
        Ok(outcome) => outcome,
        Err(difference) => Outcome::Differ(difference),
    };
    report.replay = started.elapsed();
    report
}

/// Follows the header and the first playout of `trace`.
fn follow(reference: &Reference, trace: &Path, started: Instant) -> Result<Outcome, String> {
    let file = File::open(trace).map_err(|e| format!("cannot open the trace: {e}"))?;
    let mut lines = BufReader::new(file).lines();
    let mut next_line = || -> Result<Option<Value>, String> {
        match lines.next() {
            None => Ok(None),
            Some(line) => {
                let line = line.map_err(|e| e.to_string())?;
                serde_json::from_str(&line).map(Some).map_err(|e| e.to_string())
            }
        }
    };
    let header = next_line()?.ok_or("empty trace")?;
    compare("roles", reference.roles(), strings(&header["roles"]))?;
    let mut state = reference.initial_state();
    compare("initial state", state.facts(), strings(&header["init"]))?;
    let Some(playout) = next_line()?.filter(|line| line.get("seed").is_some()) else {
        return Ok(Outcome::Agree(0));
    };
    let steps = playout["steps"].as_array().cloned().unwrap_or_default();
    let mut replayed = 0;
    for (at, step) in steps.iter().enumerate().take(MAX_STEPS) {
        if started.elapsed() > BUDGET {
            return Ok(Outcome::Skipped(format!(
                "replay over budget after {replayed} agreeing steps"
            )));
        }
        compare(
            &format!("step {at}: state"),
            state.facts(),
            strings(&step["state"]),
        )?;
        compare_step(reference, &state, step, at)?;
        let joint = strings(&step["joint"]);
        state = reference
            .next_state(&state, &joint)
            .map_err(|e| format!("step {at}: {e}"))?;
        replayed += 1;
    }
    if let Some(step) = steps.get(replayed) {
        compare(
            &format!("step {replayed}: state"),
            state.facts(),
            strings(&step["state"]),
        )?;
    } else if let Some(last) = playout.get("final") {
        compare("final state", state.facts(), strings(&last["state"]))?;
        compare(
            "final terminal",
            reference.is_terminal(&state).map_err(|e| e.to_string())?,
            true,
        )?;
        let theirs: Vec<Vec<i64>> = last["goals"]
            .as_array()
            .map(|goals| goals.iter().map(integers).collect())
            .unwrap_or_default();
        compare(
            "final goals",
            reference.goals(&state).map_err(|e| e.to_string())?,
            theirs,
        )?;
    }
    Ok(Outcome::Agree(replayed))
}

#[test]
fn corpus_traces_agree() {
    let Some(corpus) = corpus() else {
        if std::env::var("GGPNET_REQUIRE_CORPUS").as_deref() == Ok("1") {
            panic!("GGPNET_REQUIRE_CORPUS=1 but no corpus at $GGPNET_CORPUS or ../shared");
        }
        println!("notice: no corpus found (set GGPNET_CORPUS); trace replay skipped");
        return;
    };
    let filter = std::env::var("GGPNET_TRACE_FILTER").unwrap_or_default();
    let games: Vec<_> = games(&corpus)
        .into_iter()
        .filter(|(name, ..)| name.contains(&filter))
        .collect();
    assert!(!games.is_empty(), "no game in {}", corpus.display());

    // Two workers: the machines running this are shared.
    let next = AtomicUsize::new(0);
    let reports = Mutex::new(Vec::new());
    std::thread::scope(|scope| {
        for _ in 0..2 {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some((name, game, trace)) = games.get(i) else {
                    break;
                };
                let report = replay(name, game, trace);
                reports.lock().unwrap().push(report);
            });
        }
    });
    let mut reports = reports.into_inner().unwrap();
    reports.sort_by(|a, b| a.name.cmp(&b.name));

    let listed = |list: &[(&str, &str)], name: &str| list.iter().any(|(n, _)| *n == name);
    let (mut agree, mut differ, mut known, mut rejected, mut skipped) = (0, 0, 0, 0, 0);
    let mut failures = Vec::new();
    for report in &reports {
        let name = report.name.as_str();
        match &report.outcome {
            Outcome::Agree(steps) => {
                agree += 1;
                if listed(MUST_REJECT, name) {
                    failures.push(format!("{name}: accepted, but its rules are unsafe"));
                }
                if listed(KNOWN_DIFFERENCES, name) {
                    println!("note: {name} agrees ({steps} steps) although listed as a known difference");
                }
            }
            Outcome::Differ(why) => {
                differ += 1;
                if listed(KNOWN_DIFFERENCES, name) {
                    known += 1;
                    println!("known difference {name}: {why}");
                } else {
                    println!("DIFFER {name}: {why}");
                    failures.push(format!("{name}: {why}"));
                }
            }
            Outcome::Rejected(why) => {
                rejected += 1;
                println!("rejected {name}: {why}");
                if !listed(MUST_REJECT, name) {
                    failures.push(format!("{name}: rejected: {why}"));
                }
            }
            Outcome::Skipped(why) => {
                skipped += 1;
                println!("skipped {name}: {why}");
            }
        }
    }
    if filter.is_empty() {
        for (name, reason) in MUST_REJECT.iter().chain(KNOWN_DIFFERENCES) {
            if !reports.iter().any(|r| r.name == *name) {
                failures.push(format!("{name} ({reason}) is missing from the corpus"));
            }
        }
    }
    let mut slowest: Vec<&Report> = reports.iter().collect();
    slowest.sort_by_key(|r| std::cmp::Reverse(r.build + r.replay));
    println!("slowest games (build + replay):");
    for r in slowest.iter().take(12) {
        let steps = match r.outcome {
            Outcome::Agree(n) => format!("{n} steps"),
            _ => "-".into(),
        };
        println!("  {:<40} {:>9.3?} + {:>9.3?}  {steps}", r.name, r.build, r.replay);
    }
    println!(
        "summary: {} games: {agree} agree, {differ} differ ({known} known), {rejected} rejected, \
         {skipped} skipped",
        reports.len()
    );
    assert!(failures.is_empty(), "disagreements:\n{}", failures.join("\n"));
}
