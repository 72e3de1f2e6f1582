//! Every game of the shared corpus, checked two ways through the `ggpnet corpus`
//! command (each game in its own process with a time limit):
//!
//! - replayed against its reference trace (state, legal moves, terminal, goals at
//!   every step, then perft);
//! - played side by side on the propnet and on the reference interpreter
//!   (differential testing, random playouts).
//!
//! Games too large to ground replay on the reference interpreter (the fallback
//! of `ggpnet::Game::load`); their `diff` has nothing to compare.
//!
//! The GDL-II corpus (`games-gdl2/`, traces in `traces-gdl2/`) is checked the
//! same two ways, percepts included (`ggpnet corpus --gdl2`; `diff` plays 20
//! playouts per game there).
//!
//! Games that do not agree yet are listed, with the reason, in
//! `tools/tests/corpus_expected_failures.txt` and `tools/tests/differential_expected_failures.txt`
//! (GDL-II: `tools/tests/gdl2_expected_failures.txt`, `tools/tests/gdl2_differential_expected_failures.txt`).
//! A test fails when an unlisted game disagrees, and when a listed game now
//! agrees (so the lists only shrink). The two tests run at the same time, one
//! game each.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

fn expected_failures(file: &str) -> BTreeMap<String, String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests").join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (name, reason) = l.split_once(char::is_whitespace).unwrap_or((l, ""));
            assert!(
                !reason.trim().is_empty(),
                "expected failure {name} needs a reason"
            );
            (name.to_owned(), reason.trim().to_owned())
        })
        .collect()
}

/// Which corpus a test checks.
#[derive(Clone, Copy)]
enum Corpus {
    /// `games/` and `games-test/`.
    Gdl,
    /// `games-gdl2/`.
    Gdl2,
}

#[test]
fn corpus_traces_replay() {
    check_corpus(Corpus::Gdl, "replay", "corpus_expected_failures.txt");
}

#[test]
fn corpus_differential_against_reference() {
    check_corpus(Corpus::Gdl, "diff", "differential_expected_failures.txt");
}

#[test]
fn gdl2_traces_replay() {
    check_corpus(Corpus::Gdl2, "replay", "gdl2_expected_failures.txt");
}

#[test]
fn gdl2_differential_against_reference() {
    check_corpus(Corpus::Gdl2, "diff", "gdl2_differential_expected_failures.txt");
}

fn check_corpus(corpus_set: Corpus, check: &str, expected_file: &str) {
    let Some(corpus) = ggpnet_tools::corpus::for_test("skipping the corpus replay") else {
        return;
    };
    let timeout = std::env::var("GGPNET_CORPUS_TIMEOUT").unwrap_or_else(|_| "300".into());
    // A memory limit makes the games that are too large fail the same way on every
    // machine (a time limit alone depends on the machine's load), and keeps the two
    // corpus tests, which run at once, within the machine's memory.
    let max_mem = std::env::var("GGPNET_CORPUS_MAX_MEM").unwrap_or_else(|_| "6144".into());
    let mut command = Command::new(env!("CARGO_BIN_EXE_ggpnet"));
    command.arg("corpus");
    if let Corpus::Gdl2 = corpus_set {
        command.arg("--gdl2");
    }
    let output = command
        .args([
            "--json",
            "--jobs",
            "1",
            "--check",
            check,
            "--timeout",
            &timeout,
            "--max-mem",
            &max_mem,
            "--engine",
            "auto",
        ])
        .arg(&corpus)
        .output()
        .expect("ggpnet runs");
    let report: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "ggpnet corpus printed no JSON report ({e}): {}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    let expected = expected_failures(expected_file);
    let mut unexpected = Vec::new();
    let mut fixed = Vec::new();
    let mut seen = 0;
    let mut no_propnet = Vec::new();
    for game in report["games"].as_array().expect("games") {
        let name = game["game"].as_str().expect("name");
        let status = game["status"].as_str().expect("status");
        if status == "no trace" {
            continue;
        }
        if status == "no propnet" {
            // `diff` of a game only the interpreter runs (too large to ground):
            // nothing to compare; its trace replay (on the interpreter) checks it.
            no_propnet.push(name.to_owned());
            continue;
        }
        seen += 1;
        match (status == "agree", expected.contains_key(name)) {
            (false, false) => unexpected.push(format!(
                "{name}: {status}: {}",
                game["first_difference"]
                    .as_str()
                    .or(game["error"].as_str())
                    .unwrap_or("")
            )),
            (true, true) => fixed.push(name.to_owned()),
            _ => {}
        }
    }
    println!("corpus {check} summary: {}", report["summary"]);
    if !no_propnet.is_empty() {
        println!("games with no propnet to compare (on the interpreter): {no_propnet:?}");
    }
    let all_agree = report["summary"]["agree"] == report["summary"]["with_trace"];
    assert!(
        no_propnet.len() <= 3,
        "more games than the three known to be too large to ground (chess, slaughter, laikLee_hex) fall back to the interpreter: {no_propnet:?}"
    );
    assert_eq!(
        output.status.code(),
        Some(if all_agree { 0 } else { 1 }),
        "ggpnet corpus exits 0 when every game agrees, 1 otherwise: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let least = match corpus_set {
        Corpus::Gdl => 300,
        // 33 games; small_dominion and 7wonders have no propnet to `diff`.
        Corpus::Gdl2 => 31,
    };
    assert!(seen >= least, "only {seen} games with traces were replayed");
    assert!(
        unexpected.is_empty(),
        "games that disagree but are not listed:\n{}",
        unexpected.join("\n")
    );
    assert!(
        fixed.is_empty(),
        "listed games that now agree (remove them from tests/{expected_file}): {fixed:?}"
    );
}
