//! `ggpnet bench` end to end on two small corpus games: a report with every
//! evaluator on one thread and on two, the anchors of `anchors/peers.md`
//! beside them, perft counts checked against the traces, the vector width the
//! lanes ran in, and the same figures in the markdown table.

use serde_json::Value;
use std::path::Path;
use std::process::Command;

#[test]
fn bench_reports_every_evaluator_anchors_and_perft() {
    let Some(corpus) = ggpnet::corpus::locate(Path::new(env!("CARGO_MANIFEST_DIR"))) else {
        assert!(
            !ggpnet::corpus::required(),
            "GGPNET_REQUIRE_CORPUS=1 but no corpus at ../shared or $GGPNET_CORPUS"
        );
        println!("notice: corpus not found at ../shared or $GGPNET_CORPUS; skipping the bench test");
        return;
    };
    let out_dir = std::env::temp_dir().join(format!("ggpnet-bench-test-{}", std::process::id()));
    let output = Command::new(env!("CARGO_BIN_EXE_ggpnet"))
        .arg("bench")
        .args([
            "ticTacToe",
            "connectFour_7x6",
            "--seconds",
            "0.2",
            "--repeats",
            "1",
        ])
        .args(["--threads", "2", "--json", "--corpus"])
        .arg(&corpus)
        .arg("--out-dir")
        .arg(&out_dir)
        .output()
        .expect("ggpnet runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report: Value = serde_json::from_slice(&output.stdout).expect("a JSON report");
    assert!(
        [128, 256, 512].contains(&report["lane_vector_bits"].as_u64().unwrap_or(0)),
        "{}",
        report["lane_vector_bits"]
    );
    assert!(!report["cpu"].as_str().unwrap_or("").is_empty());
    let games = report["games"].as_array().expect("games");
    let names: Vec<&str> = games.iter().map(|g| g["game"].as_str().unwrap_or("?")).collect();
    assert_eq!(names, ["ticTacToe", "connectFour_7x6"]);
    for game in games {
        let name = &game["game"];
        for evaluator in ["sweep", "differential", "lanes"] {
            for threads in ["1", "2"] {
                let rate = game["mc"][evaluator][threads].as_f64().unwrap_or(0.0);
                assert!(rate > 0.0, "{name} {evaluator} {threads}: {rate}");
            }
        }
        assert_eq!(game["perft"]["counts_match"], true, "{name}: {}", game["perft"]);
        assert!(game["perft"]["depth"].as_u64().unwrap_or(0) > 0, "{name}");
    }
    // Anchors as `anchors/peers.md` has them (ticTacToe's ggplib figure).
    let ggplib = games[0]["anchors"]["ggplib"].as_f64().expect("ggplib's anchor");
    let peers = std::fs::read_to_string(corpus.join("anchors/peers.md")).expect("peers.md");
    let row = peers
        .lines()
        .find(|l| l.starts_with("| ticTacToe |"))
        .expect("ticTacToe in peers.md");
    assert!(
        row.split('|').filter_map(number).any(|f| f == ggplib),
        "{row} / {ggplib}"
    );
    // The markdown table: a row per game, our figure beside the anchor's.
    let markdown = std::fs::read_to_string(out_dir.join("bench.md")).expect("bench.md");
    let _ = std::fs::remove_dir_all(&out_dir);
    let table_row = markdown
        .lines()
        .find(|l| l.starts_with("| connectFour_7x6 |"))
        .expect("a connect four row");
    let sweep = table_row.split('|').nth(2).and_then(number);
    let expected = games[1]["mc"]["sweep"]["1"].as_f64().unwrap().round();
    assert_eq!(sweep, Some(expected), "{table_row}");
}

/// A markdown table cell's number, written with thousands separators.
fn number(cell: &str) -> Option<f64> {
    cell.trim().replace(',', "").parse().ok()
}
