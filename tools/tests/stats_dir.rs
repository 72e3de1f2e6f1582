//! `ggpnet stats --dir DIR`: the JSON report and the CSV table of a directory
//! of games, read back as a user would, with game names and errors that hold
//! commas, quotes and line breaks.

mod scratch;

use std::process::Command;

/// A small valid game.
const VALID: &str = "(role r) (init off) (<= (legal r press) (true off)) (<= (next on) (does r press))
    (<= terminal (true on)) (<= (goal r 100) (true on)) (<= (goal r 0) (true off))";

/// A scratch directory of this test binary, with `games` in a directory of its own.
fn game_directory(games: &[(&str, &str)]) -> scratch::Dir {
    let dir = scratch::dir("stats-dir");
    let games_dir = dir.join("games");
    std::fs::create_dir_all(&games_dir).expect("a scratch directory");
    for (name, text) in games {
        std::fs::write(games_dir.join(name), text).expect("a scratch game");
    }
    dir
}

#[test]
fn the_json_report_and_the_csv_table_agree_and_read_back() {
    let valid = "odd, \"name\"\nline";
    let broken = "broken, \"quoted\"";
    let dir = game_directory(&[
        (&format!("{valid}.kif"), VALID),
        (&format!("{broken}.kif"), "(role r) (init p"),
    ]);
    let table = dir.join("table.csv");
    let output = Command::new(env!("CARGO_BIN_EXE_ggpnet"))
        .args(["stats", "--json", "--timeout", "120", "--dir"])
        .arg(dir.join("games"))
        .arg("--csv")
        .arg(&table)
        .output()
        .expect("ggpnet runs");
    // Not every game compiled: exit 1, with the report printed.
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("one JSON report");
    assert_eq!(report["summary"]["games"], 2);
    assert_eq!(report["summary"]["compiled"], 1);
    assert_eq!(report["summary"]["error"], 1);
    let games = report["games"].as_array().expect("games");
    // In file name order: `broken, ...` before `odd, ...`.
    assert_eq!(games[0]["game"], broken);
    assert_eq!(games[0]["status"], "error");
    let error = games[0]["error"].as_str().expect("the error");
    assert!(error.contains("parse error at 1:"), "{error}");
    assert!(error.contains(broken), "{error}");
    assert_eq!(games[1]["game"], valid);
    assert_eq!(games[1]["status"], "ok");
    assert_eq!(games[1]["engine"], "propnet");
    assert_eq!(games[1]["roles"], serde_json::json!(["r"]));
    assert!(games[1]["phases"]["ground"].is_number(), "{}", games[1]);

    let mut reader = csv::Reader::from_path(&table).expect("the CSV table");
    let header = reader.headers().expect("a header").clone();
    let column = |name: &str| header.iter().position(|h| h == name).expect(name);
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.expect("a record")).collect();
    assert_eq!(rows.len(), 2);
    assert!(rows.iter().all(|r| r.len() == header.len()));
    assert_eq!(&rows[0][column("game")], broken);
    assert_eq!(&rows[0][column("status")], "error");
    assert_eq!(&rows[0][column("error")], error);
    assert_eq!(&rows[0][column("ground_rules")], "");
    assert_eq!(&rows[1][column("game")], valid);
    assert_eq!(&rows[1][column("status")], "ok");
    assert_eq!(&rows[1][column("error")], "");
    let ground_rules = games[1]["ground_rules"].as_u64().expect("ground rules");
    assert_eq!(rows[1][column("ground_rules")], ground_rules.to_string());
    let _ = std::fs::remove_dir_all(&dir);
}
