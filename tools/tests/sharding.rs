//! Sharded runs (`--shard I/N --jsonl FILE`) of `corpus`, `stats --dir` and
//! `bench`, put together by `ggpnet merge`: the merged report equals the
//! unsharded one in everything that does not depend on timing (names,
//! statuses, counts, verdicts, exit codes), for 2 and 3 shards; and merge
//! refuses, with exit code 2 and the file and line named, a missing shard,
//! a shard given twice, a game twice, a malformed line, a game in the wrong
//! shard and shards of different runs. The games are small ones written here
//! (and the built-in connect four), so no corpus is needed; with the shared
//! corpus, its tic-tac-toe games' replays are sharded and merged too.

mod scratch;

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

/// Small valid games, and one that does not parse.
const GAMES: [(&str, &str); 5] = [
    (
        "button",
        "(role r) (init off) (<= (legal r press) (true off)) (<= (next on) (does r press))
         (<= terminal (true on)) (<= (goal r 100) (true on)) (<= (goal r 0) (true off))",
    ),
    (
        "count",
        "(role r) (init (c 0)) (init (t 0)) (succ 0 1) (succ 1 2) (succ 2 3)
         (legal r up) (legal r stay)
         (<= (next (c ?y)) (does r up) (true (c ?x)) (succ ?x ?y))
         (<= (next (c ?x)) (does r stay) (true (c ?x)))
         (<= (next (t ?y)) (true (t ?x)) (succ ?x ?y))
         (<= terminal (true (c 3))) (<= terminal (true (t 3)))
         (<= (goal r 100) (true (c 3))) (<= (goal r 0) (not (true (c 3))))",
    ),
    (
        "pair",
        "(role a) (role b) (init s) (legal a x) (legal a y) (legal b x) (legal b y)
         (<= (next same) (does a ?m) (does b ?m)) (<= (next diff) (does a x) (does b y))
         (<= (next diff) (does a y) (does b x))
         (<= terminal (true same)) (<= terminal (true diff))
         (<= (goal a 100) (true same)) (<= (goal a 0) (not (true same)))
         (<= (goal b 100) (true diff)) (<= (goal b 0) (not (true diff)))",
    ),
    ("broken", "(role r) (init p"),
    ("connectFour", ggpnet::DEFAULT_GAME),
];

/// A scratch directory for `test`, with the games in `games/`.
fn scratch(test: &str) -> scratch::Dir {
    let dir = scratch::dir(&format!("sharding-{test}"));
    std::fs::create_dir_all(dir.join("games")).expect("a scratch directory");
    for (name, text) in GAMES {
        std::fs::write(dir.join("games").join(format!("{name}.kif")), text).expect("a scratch game");
    }
    dir
}

/// Runs `ggpnet` with `args` in `dir`.
fn ggpnet(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ggpnet"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("ggpnet runs")
}

/// The JSON report `output` printed.
fn report(output: &Output) -> Value {
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "no JSON report ({e}): {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

/// Keys whose values depend on timing (or on the memory a process happened to use).
const TIMING: [&str; 14] = [
    "phases",
    "total_seconds",
    "peak_rss_bytes",
    "wall_seconds",
    "seconds",
    "compile_seconds",
    "init_seconds",
    "median_init_seconds",
    "worst_init_seconds",
    "worst_init_game",
    "worst_peak_rss_bytes",
    "worst_memory_game",
    "mc",
    "mc_runs",
];

/// `value` without the [`TIMING`] keys, at any depth; perft's rate and
/// evaluator (the faster one) too.
fn stable(mut value: Value) -> Value {
    fn strip(value: &mut Value) {
        match value {
            Value::Object(map) => {
                map.retain(|k, _| {
                    !TIMING.contains(&k.as_str()) && !["nodes_per_sec", "evaluator"].contains(&k.as_str())
                });
                map.values_mut().for_each(strip);
            }
            Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    strip(&mut value);
    value
}

/// Runs `command` (a `ggpnet` command line, without the sharding options)
/// as `n` shards into `dir`, each with `--jsonl` into a file named after
/// `tag`; returns the files, and checks that each shard's lines are the
/// games of its own JSON report.
fn shards(dir: &Path, tag: &str, command: &[&str], n: usize) -> Vec<String> {
    (1..=n)
        .map(|i| {
            let file = format!("{tag}-{i}-of-{n}.jsonl");
            let shard = format!("{i}/{n}");
            let mut args = command.to_vec();
            args.extend(["--shard", &shard, "--jsonl", &file]);
            let output = ggpnet(dir, &args);
            let own = report(&output);
            let text = std::fs::read_to_string(dir.join(&file)).expect("the shard's file");
            let lines: Vec<Value> = text
                .lines()
                .skip(1)
                .map(|l| serde_json::from_str(l).expect("JSON"))
                .collect();
            assert_eq!(Value::Array(lines), own["games"], "{file}");
            file
        })
        .collect()
}

/// Runs `command` unsharded and as 2 and 3 shards merged: the reports and
/// exit codes agree, timing aside. Returns the unsharded report.
fn merged_equals_unsharded(dir: &Path, command: &[&str]) -> Value {
    let whole = ggpnet(dir, command);
    let expected = stable(report(&whole));
    for n in [2, 3] {
        let files = shards(dir, "shard", command, n);
        let mut args = vec!["merge", "--json"];
        // The shards in another order than their numbers: the order of files does not matter.
        args.extend(files.iter().rev().map(String::as_str));
        let merged = ggpnet(dir, &args);
        assert_eq!(stable(report(&merged)), expected, "{n} shards of {command:?}");
        assert_eq!(
            merged.status.code(),
            whole.status.code(),
            "{n} shards of {command:?}"
        );
    }
    expected
}

#[test]
fn stats_dir_shards_merge_to_the_unsharded_report() {
    let dir = scratch("stats");
    let report = merged_equals_unsharded(&dir, &["stats", "--dir", "games", "--json", "--timeout", "120"]);
    let names: Vec<&str> = report["games"]
        .as_array()
        .expect("games")
        .iter()
        .map(|g| g["game"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["broken", "button", "connectFour", "count", "pair"]);
    assert_eq!(report["summary"]["compiled"], 4);
    assert_eq!(report["summary"]["error"], 1);
    // The CSV table of the merge has a line per game, in the run's order.
    let files = shards(&dir, "csv", &["stats", "--dir", "games", "--json"], 2);
    let merged = ggpnet(&dir, &["merge", "--csv", "merged.csv", &files[0], &files[1]]);
    assert_eq!(
        merged.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&merged.stderr)
    );
    let text = String::from_utf8_lossy(&merged.stdout);
    assert!(text.contains("compiled 4 of 5 games"), "{text}");
    let csv = std::fs::read_to_string(dir.join("merged.csv")).expect("the CSV table");
    let first: Vec<&str> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').next().unwrap())
        .collect();
    assert_eq!(first, names);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn corpus_shards_merge_to_the_unsharded_report() {
    let dir = scratch("corpus");
    let command = [
        "corpus",
        ".",
        "--check",
        "diff",
        "--json",
        "--jobs",
        "1",
        "--timeout",
        "300",
    ];
    let report = merged_equals_unsharded(&dir, &command);
    let statuses: Vec<(&str, &str)> = report["games"]
        .as_array()
        .expect("games")
        .iter()
        .map(|g| (g["game"].as_str().unwrap(), g["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        statuses,
        [
            ("broken", "parse error"),
            ("button", "agree"),
            ("connectFour", "agree"),
            ("count", "agree"),
            ("pair", "agree")
        ]
    );
    assert_eq!(report["summary"]["games"], 5);
    // The markdown table of the merge: a row per game.
    let files = shards(&dir, "markdown", &command, 3);
    let mut args = vec!["merge", "--markdown", "merged.md"];
    args.extend(files.iter().map(String::as_str));
    let merged = ggpnet(&dir, &args);
    assert_eq!(
        merged.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&merged.stderr)
    );
    let markdown = std::fs::read_to_string(dir.join("merged.md")).expect("the markdown table");
    let rows = markdown
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| game"))
        .count();
    assert_eq!(rows, 5, "{markdown}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Replays of the shared corpus's tic-tac-toe games (reports with every
/// evaluator's check), when the corpus is there.
#[test]
fn corpus_replay_shards_merge_to_the_unsharded_report() {
    let Some(corpus) = ggpnet_tools::corpus::for_test("skipping the sharded replay of the corpus") else {
        return;
    };
    let dir = scratch("replay");
    let corpus = corpus.display().to_string();
    let command = [
        "corpus",
        &corpus,
        "--only",
        "ticTacToe",
        "--json",
        "--timeout",
        "300",
    ];
    let report = merged_equals_unsharded(&dir, &command);
    let games = report["games"].as_array().expect("games");
    assert!(games.len() >= 3, "{}", report["summary"]);
    assert!(
        games
            .iter()
            .all(|g| g["status"] == "agree" && g["evaluators"].is_object()),
        "{report}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bench_shards_merge_to_the_unsharded_report() {
    let dir = scratch("bench");
    let command = [
        "bench",
        "games/button.kif",
        "games/pair.kif",
        "games/broken.kif",
        "games/count.kif",
        "--seconds",
        "0.05",
        "--repeats",
        "1",
        "--threads",
        "1",
        "--evaluators",
        "sweep",
        "--corpus",
        ".",
        "--out-dir",
        "out",
        "--json",
    ];
    let report = merged_equals_unsharded(&dir, &command);
    let games = report["games"].as_array().expect("games");
    let names: Vec<&str> = games.iter().map(|g| g["game"].as_str().unwrap()).collect();
    // In the order given, not sorted.
    assert_eq!(names, ["button", "pair", "broken", "count"]);
    assert!(
        games[2]["error"].as_str().unwrap().contains("parse error"),
        "{}",
        games[2]
    );
    // Perft to depth 3 (no trace): pair ends after one joint move of four.
    assert_eq!(games[1]["perft"]["counts"], serde_json::json!([4, 0, 0]));
    assert_eq!(games[3]["perft"]["counts"], serde_json::json!([2, 4, 8]));
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs `merge` on `files` in `dir`: it fails with exit 2, and its message contains each of `said`.
fn refused(dir: &Path, files: &[&str], said: &[&str]) {
    let mut args = vec!["merge"];
    args.extend(files);
    let output = ggpnet(dir, &args);
    let message = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{files:?}: {message}");
    assert!(output.stdout.is_empty(), "{files:?}");
    for part in said {
        assert!(message.contains(part), "{files:?}: {message}");
    }
}

#[test]
fn merge_refuses_incomplete_duplicated_and_malformed_shards() {
    let dir = scratch("errors");
    let command = ["stats", "--dir", "games", "--json"];
    let files = shards(&dir, "run", &command, 3);
    let [one, two, three] = [&files[0], &files[1], &files[2]].map(String::as_str);
    refused(&dir, &[one, three], &["shard(s) 2/3 missing"]);
    refused(&dir, &[one, two, two, three], &[two, "shard 2/3 again"]);
    let lines: Vec<String> = std::fs::read_to_string(dir.join(two))
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    let write = |name: &str, lines: &[&str]| std::fs::write(dir.join(name), lines.join("\n") + "\n").unwrap();
    // A game twice in one shard's file.
    write("twice.jsonl", &[&lines[0], &lines[1], &lines[1]]);
    refused(
        &dir,
        &[one, "twice.jsonl", three],
        &["twice.jsonl:3", "again", "twice.jsonl:2"],
    );
    // A line that is not a game result.
    write("malformed.jsonl", &[&lines[0], &lines[1], "{\"game\": 3"]);
    refused(
        &dir,
        &[one, "malformed.jsonl", three],
        &["malformed.jsonl:3", "not a game result"],
    );
    // A game missing from its shard's file.
    write("short.jsonl", &[&lines[0]]);
    refused(
        &dir,
        &[one, "short.jsonl", three],
        &["no result for", "short.jsonl", "shard 2/3"],
    );
    // A game of shard 1 in shard 2's file.
    let first_of_one = std::fs::read_to_string(dir.join(one))
        .unwrap()
        .lines()
        .nth(1)
        .unwrap()
        .to_owned();
    write("stray.jsonl", &[&lines[0], &lines[1], &first_of_one]);
    refused(
        &dir,
        &[one, "stray.jsonl", three],
        &["stray.jsonl:3", "belongs to shard 1/3, not 2/3"],
    );
    // No header; a shard of another split; a shard of another run.
    write("headless.jsonl", &[&lines[1]]);
    refused(
        &dir,
        &["headless.jsonl", two],
        &["headless.jsonl:1", "not the header"],
    );
    let other = shards(&dir, "split", &command, 2);
    refused(
        &dir,
        &[one, &other[1], three],
        &[&other[1], "shard counts differ"],
    );
    let timeout = shards(
        &dir,
        "timeout",
        &["stats", "--dir", "games", "--json", "--timeout", "61"],
        3,
    );
    refused(
        &dir,
        &[one, &timeout[1], three],
        &[&timeout[1], "settings differ"],
    );
    refused(&dir, &[one, two, three, "absent.jsonl"], &["absent.jsonl"]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn shards_out_of_range_are_usage_errors() {
    let dir = scratch("usage");
    for (shard, said) in [
        ("0/3", "shard index must be 1 to 3, not 0"),
        ("4/3", "shard index must be 1 to 3, not 4"),
        ("1/0", "shard count must be 1 to 100000, not 0"),
        ("1/100001", "shard count must be 1 to 100000, not 100001"),
        ("2", "'2' is not a shard"),
        ("a/b", "'a/b' is not a shard"),
    ] {
        for command in [
            &["stats", "--dir", "games"][..],
            &["corpus", "."],
            &["bench", "--corpus", "."],
        ] {
            let mut args = command.to_vec();
            args.extend(["--shard", shard]);
            let output = ggpnet(&dir, &args);
            let message = String::from_utf8_lossy(&output.stderr);
            assert_eq!(output.status.code(), Some(2), "{args:?}: {message}");
            assert!(
                message.contains("--shard <I/N>") && message.contains(said),
                "{args:?}: {message}"
            );
        }
    }
    let output = ggpnet(&dir, &["stats", "games/button.kif", "--shard", "1/2"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("stats --dir only"));
    let _ = std::fs::remove_dir_all(&dir);
}
