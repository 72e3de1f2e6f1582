//! `ggpnet bench` end to end on two small corpus games: a report with every
//! evaluator on one thread and on two, the peers measured on this CPU (or
//! said to be measured on another) beside them, perft counts checked against
//! the traces (to the RBG compiler's perft depth where the peer file has
//! one), the vector width the lanes ran in, and the same figures in the
//! markdown table.

mod scratch;

use serde_json::Value;
use std::process::Command;

#[test]
fn bench_reports_every_evaluator_anchors_and_perft() {
    let Some(corpus) = ggpnet_tools::corpus::for_test("skipping the bench test") else {
        return;
    };
    let out_dir = scratch::dir("bench-test");
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
    // The peers of the file the report names, measured on this CPU or said
    // to be measured on another one (ticTacToe's ggplib figure).
    let file = report["peers"]["file"].as_str().expect("the peers' file");
    let cross = report["peers"]["cross_machine"].as_bool().expect("cross_machine");
    let cpu = report["cpu"].as_str().unwrap_or("");
    let here = [
        ("anchors/peers-epyc.json", "AMD EPYC"),
        ("anchors/peers.md", "AMD EPYC"),
        ("anchors/peers-xeon.md", "Intel(R) Xeon(R) Processor"),
    ];
    if !cross {
        assert!(here.contains(&(file, cpu)), "{file} on {cpu}");
    } else {
        assert_eq!(file, "anchors/peers-epyc.json", "{cpu}");
    }
    let ggplib = games[0]["anchors"]["ggplib"].as_f64().expect("ggplib's anchor");
    let peers = std::fs::read_to_string(corpus.join(file)).expect("the peers' file");
    if file.ends_with(".json") {
        // The JSON file gives the RBG compiler too, and its bulk perft's
        // depth is the depth ours ran to.
        let peers: Value = serde_json::from_str(&peers).expect("JSON");
        assert_eq!(peers["flat_mc"]["ticTacToe"]["ggplib"].as_f64(), Some(ggplib));
        let c4 = &games[1];
        let rbg = &peers["flat_mc"]["connectFour_7x6"]["rbg_as_gdl_steps"];
        assert_eq!(
            c4["anchors"]["rbg_compiler"].as_f64(),
            rbg.as_f64(),
            "{}",
            c4["anchors"]
        );
        let depth = &c4["anchors"]["rbg_perft"]["depth"];
        assert_eq!(&c4["perft"]["depth"], depth, "{}", c4["perft"]);
    } else {
        let row = peers
            .lines()
            .find(|l| l.starts_with("| ticTacToe |"))
            .expect("ticTacToe in the peers' file");
        assert!(
            row.split('|').filter_map(number).any(|f| f == ggplib),
            "{row} / {ggplib}"
        );
    }
    // The markdown table: a row per game, our figure beside the anchor's.
    let markdown = std::fs::read_to_string(out_dir.join("bench.md")).expect("bench.md");
    let _ = std::fs::remove_dir_all(&out_dir);
    let said = if cross {
        "crosses machines"
    } else {
        "measured on this CPU"
    };
    assert!(markdown.contains(said), "{markdown}");
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

/// `ggpnet bench` on Regular Boardgames files counts RBG player moves, as
/// `ggpnet mc GAME.rbg` does: per-move draws on the translation (the lanes,
/// which have none, left out), perft in RBG moves; the unit in the JSON.
#[test]
fn bench_on_rbg_files_counts_rbg_moves() {
    let dir = scratch::dir("bench-rbg");
    let header = "#players = a(100), b(100) #pieces = e, x #variables =
        #board = rectangle(up, down, left, right, [e, e, e]) #rules = ";
    let line = dir.join("line.rbg");
    let rules = "(->a (left* + right*) {e} [x] ->b (left* + right*) {e} [x])*";
    std::fs::write(&line, format!("{header}{rules}")).unwrap();
    // Only the keeper moves: GDL steps, but no RBG player move.
    let keeper = dir.join("keeper.rbg");
    std::fs::write(&keeper, format!("{header}->> [x] ->> [x] ->>")).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_ggpnet"))
        .arg("bench")
        .args([&line, &keeper])
        .args(["--seconds", "0.2", "--repeats", "1", "--threads", "2", "--json"])
        .arg("--corpus")
        .arg(&dir)
        .arg("--out-dir")
        .arg(dir.join("out"))
        .output()
        .expect("ggpnet runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let report: Value = serde_json::from_slice(&output.stdout).expect("a JSON report");
    let games = report["games"].as_array().expect("games");
    let (line, keeper) = (&games[0], &games[1]);
    for game in games {
        assert_eq!(game["transition_unit"], "rbg_player_move", "{game}");
        assert!(game["mc"].get("lanes").is_none(), "{game}");
    }
    for threads in ["1", "2"] {
        for evaluator in ["sweep", "differential"] {
            assert!(
                line["mc"][evaluator][threads].as_f64().unwrap_or(0.0) > 0.0,
                "{line}"
            );
            assert_eq!(keeper["mc"][evaluator][threads].as_f64(), Some(0.0), "{keeper}");
        }
    }
    // Three cells filled one by one: 3, then 2 moves each, then 1 (GDL steps would count 3, 3, 6).
    let counts: Vec<u64> = line["perft"]["counts"]
        .as_array()
        .expect("perft counts")
        .iter()
        .filter_map(Value::as_u64)
        .collect();
    assert_eq!(counts, [3, 6], "{line}");
    std::fs::remove_dir_all(&dir).unwrap();
}
