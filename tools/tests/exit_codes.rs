//! The exit-code contract of the `ggpnet` command (README, "Limits and errors"),
//! for every subcommand: 0 success and agreement, 1 an invalid game or a
//! disagreement, 2 bad input (usage, option values, unreadable or malformed
//! files), 3 a limit reached. Every failure prints one clear message and no
//! backtrace, whatever `RUST_BACKTRACE` says.

mod scratch;

use scratch::File;
use std::path::Path;
use std::process::{Command, Output};

/// A game that parses but is not valid GDL (an unsafe rule).
const INVALID_GDL: &str = "(role r) (init p) (<= (legal r (go ?x)) (true p)) (<= (next p) (true p))
    (<= terminal (true p)) (<= (goal r 100) (true p))";

/// A small valid game.
const VALID: &str = "(role r) (init off) (<= (legal r press) (true off)) (<= (next on) (does r press))
    (<= terminal (true on)) (<= (goal r 100) (true on)) (<= (goal r 0) (true off))";

fn ggpnet(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ggpnet"))
        .args(args)
        .env("RUST_BACKTRACE", "1")
        .output()
        .expect("ggpnet runs")
}

/// Runs `args` and checks the exit code, and that standard error (or output)
/// holds `message` and no backtrace.
fn expect(args: &[&str], code: i32, message: &str) {
    let output = ggpnet(args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(
        output.status.code(),
        Some(code),
        "{args:?}\nstdout: {stdout}\nstderr: {stderr}"
    );
    assert!(
        stderr.contains(message) || stdout.contains(message),
        "{args:?}: no '{message}' in\nstdout: {stdout}\nstderr: {stderr}"
    );
    for text in [&stderr, &stdout] {
        assert!(!text.contains("stack backtrace"), "{args:?}: {text}");
        assert!(!text.contains("panicked"), "{args:?}: {text}");
    }
}

fn path(p: &Path) -> &str {
    p.to_str().expect("a UTF-8 path")
}

#[test]
fn success_is_zero() {
    let game = File::new("valid.kif", VALID);
    expect(&["check", path(&game)], 0, "valid");
    expect(&["perft", path(&game), "--depth", "2"], 0, "perft(1) = 1");
    expect(
        &[
            "mc",
            path(&game),
            "--playouts",
            "10",
            "--threads",
            "1",
            "--evaluator",
            "sweep",
        ],
        0,
        "playouts: 10",
    );
    expect(&["diff", path(&game)], 0, "agree");
}

/// Runs every command that loads a game on `game`, expecting `code` and `message`.
fn expect_of_every_loading_command(game: &Path, code: i32, message: &str) {
    expect_of_every_loading_command_with(&[], game, code, message);
}

/// [`expect_of_every_loading_command`] with the global options `options` first.
fn expect_of_every_loading_command_with(options: &[&str], game: &Path, code: i32, message: &str) {
    for command in ["check", "stats", "mc", "perft", "export", "diff"] {
        let mut args = options.to_vec();
        args.extend([command, path(game)]);
        if command == "export" {
            args.extend(["--format", "json"]);
        }
        expect(&args, code, message);
    }
}

#[test]
fn invalid_games_are_one() {
    let game = File::new("invalid.kif", INVALID_GDL);
    expect_of_every_loading_command(&game, 1, "unsafe rule");
}

#[test]
fn parse_errors_are_two() {
    let game = File::new("unbalanced.kif", "(role r) (init p");
    expect_of_every_loading_command(&game, 2, "parse error at 1:");
}

/// KIF that does not parse is bad input whichever engine is asked for: the
/// interpreter's refusal does not make it an invalid game.
#[test]
fn parse_errors_are_two_on_every_engine() {
    let game = File::new("unbalanced-any-engine.kif", "(role r) (init p");
    for engine in ["auto", "interpreter"] {
        for command in ["check", "stats", "mc", "perft", "diff"] {
            expect(
                &["--engine", engine, command, path(&game)],
                2,
                "parse error at 1:",
            );
        }
    }
}

#[test]
fn limits_are_three() {
    let deepening = File::new(
        "deepening.kif",
        "(role r) (init (c 0)) (<= (legal r go) (true (c ?x))) (<= (next (c (s ?x))) (true (c ?x)))
         (<= terminal (true (c done))) (<= (goal r 0) (true (c ?x)))",
    );
    expect_of_every_loading_command_with(&["--engine", "propnet"], &deepening, 3, "grounding too large");
    // By default (auto) the interpreter runs it, until its term depth bound.
    expect(
        &["check", path(&deepening)],
        0,
        "engine: interpreter, as the propnet could not be built",
    );
    expect(
        &["mc", path(&deepening), "--playouts", "1"],
        3,
        "a term nested 1001 deep",
    );
}

#[test]
fn past_a_limit_auto_runs_the_interpreter_and_says_why() {
    let game = File::new("valid-for-fallback.kif", VALID);
    let fallback = ["--engine", "auto", "--max-ground-rules", "1"];
    let note = "interpreter, as the propnet could not be built: grounding too large";
    for command in ["check", "stats", "mc", "perft"] {
        let mut args = fallback.to_vec();
        args.extend([command, path(&game)]);
        expect(&args, 0, note);
    }
    let mut args = fallback.to_vec();
    args.extend(["check", path(&game), "--json"]);
    expect(&args, 0, "\"engine\":\"interpreter\"");
    let mut args = fallback.to_vec();
    args.extend(["diff", path(&game)]);
    expect(&args, 0, "no propnet to compare");
}

#[test]
fn unreadable_files_are_two() {
    let dir = scratch::dir("exit-codes");
    let missing = dir.join("no-such-game.kif");
    for command in ["check", "stats", "mc", "perft", "diff"] {
        expect(&[command, path(&missing)], 2, "cannot read");
    }
    let game = File::new("valid-for-replay.kif", VALID);
    expect(&["replay", path(&game), path(&missing)], 2, "cannot read");
    expect(&["corpus", path(&missing)], 2, "no games under");
}

#[test]
fn option_values_out_of_range_are_two() {
    let cases: [(&[&str], &str); 12] = [
        (&["mc", "--seconds=-1"], "--seconds"),
        (&["mc", "--seconds", "nan"], "--seconds"),
        (&["mc", "--seconds", "inf"], "--seconds"),
        (&["mc", "--seconds", "1e308"], "--seconds"),
        (&["mc", "--seconds", "1e19", "--evaluator", "lanes"], "--seconds"),
        (&["mc", "--threads", "10000"], "--threads"),
        (&["mc", "--threads", "0"], "--threads"),
        (
            &["mc", "--playouts", "5", "--seconds", "1"],
            "cannot be used with",
        ),
        (&["mc", "--max-depth", "0"], "--max-depth"),
        (&["perft", "--depth", "18446744073709551615"], "--depth"),
        (&["perft", "--depth", "1000000000"], "--depth"),
        (&["bench", "--seconds", "0"], "--seconds"),
    ];
    for (args, message) in cases {
        expect(args, 2, message);
    }
    expect(
        &["mc", "--evaluator", "quantum"],
        2,
        "unknown evaluator 'quantum'",
    );
    expect(
        &["corpus", "--check", "nothing"],
        2,
        "--check takes replay or diff",
    );
}

#[test]
fn engine_play_and_match_options_out_of_range_are_two() {
    let game = File::new("valid-for-match.kif", VALID);
    let game = path(&game);
    let cases: [(&[&str], &str); 11] = [
        (&["--engine", "quantum", "check"], "unknown engine 'quantum'"),
        (&["--max-ground-time", "0", "check"], "--max-ground-time"),
        (&["play", "--search", "chess"], "unknown search 'chess'"),
        (&["play", "--port", "70000"], "--port"),
        (&["play", "--margin=-1"], "--margin"),
        (
            &["match", game, "--player", "r"],
            "'r' is not ROLE=HOST:PORT or ROLE=builtin:SEARCH",
        ),
        (
            &["match", game, "--player", "r=localhost"],
            "'localhost' is not HOST:PORT or builtin:SEARCH",
        ),
        (
            &["match", game, "--player", "nobody=builtin:uct"],
            "the game has no role nobody",
        ),
        (&["match", game], "role r has no player"),
        (
            &["match", game, "--player", "r=builtin:random", "--matches", "0"],
            "--matches",
        ),
        (
            &[
                "match",
                game,
                "--player",
                "r=builtin:random",
                "--gdl2-form",
                "2011",
            ],
            "unknown form '2011' (expected 2010 or 2013)",
        ),
    ];
    for (args, message) in cases {
        expect(args, 2, message);
    }
    // A port already taken is refused, not silently moved (as ggp-base's player does).
    let taken = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    let port = taken.local_addr().expect("address").port().to_string();
    expect(&["play", "--port", &port], 2, "cannot listen on 127.0.0.1:");
}

/// Every numeric option refuses a negative value as a usage error naming the
/// option (not as an unknown flag `-1`).
#[test]
fn negative_values_name_their_option() {
    let game = File::new("valid-for-negatives.kif", VALID);
    let game = path(&game);
    let options: [(&str, &[&str]); 12] = [
        (
            "check",
            &[
                "--ground-threads",
                "--max-ground-rules",
                "--max-ground-atoms",
                "--max-term-depth",
                "--max-join-steps",
                "--max-mem",
                "--max-ground-time",
                "--max-input",
            ],
        ),
        ("stats", &["--timeout", "--jobs"]),
        (
            "mc",
            &["--seconds", "--playouts", "--threads", "--seed", "--max-depth"],
        ),
        ("perft", &["--depth"]),
        ("replay", &["--seed"]),
        ("diff", &["--playouts", "--steps", "--seed"]),
        ("corpus", &["--timeout", "--jobs"]),
        ("play", &["--port", "--threads", "--margin"]),
        (
            "match",
            &[
                "--startclock",
                "--playclock",
                "--matches",
                "--seed",
                "--threads",
                "--max-steps",
                "--max-game-time",
                "--max-open",
            ],
        ),
        ("export", &["--max-nodes"]),
        ("bench", &["--seconds", "--repeats", "--threads"]),
        ("sbg2gdl", &["--max-input"]),
    ];
    for (command, options) in options {
        for option in options {
            let mut args = vec![command];
            if command == "match" {
                args.extend([game, "--player", "r=builtin:random"]);
            }
            args.extend([option, "-1"]);
            expect(&args, 2, &format!("invalid value '-1' for '{option} <"));
        }
    }
}

#[test]
fn diff_runs_a_bounded_number_of_playouts() {
    expect(
        &["diff", "--playouts", "18446744073709551615"],
        2,
        "invalid value '18446744073709551615' for '--playouts <PLAYOUTS>': \
         18446744073709551615 is out of range: playouts must be from 1 to 100000",
    );
    expect(
        &["diff", "--steps", "10001"],
        2,
        "'--steps <STEPS>': 10001 is out of range: steps must be from 1 to 10000",
    );
}

#[test]
fn malformed_traces_are_two_and_never_agree() {
    let game = File::new("valid-traced.kif", VALID);
    let header = r#"{"game":"valid","roles":["r"],"init":["off"]}"#;
    let playout = r#"{"seed":1,"steps":[{"state":["off"],"legal":[["press"]],"joint":["press"],"goals":[[0]]}],"final":{"state":["on"],"terminal":true,"goals":[100]}}"#;
    let perft = r#"{"perft":{"1":1}}"#;
    let good = format!("{header}\n{playout}\n{perft}\n");
    let trace = File::new("good.jsonl", &good);
    expect(&["replay", path(&game), path(&trace)], 0, "agree");
    let cases = [
        ("empty", String::new(), "the trace is empty"),
        (
            "no-header",
            format!("{playout}\n{perft}\n"),
            "must start with its header",
        ),
        (
            "two-headers",
            format!("{header}\n{header}\n{perft}\n"),
            "a second header",
        ),
        (
            "no-perft",
            format!("{header}\n{playout}\n"),
            "without its perft counts",
        ),
        (
            "no-final",
            format!(
                "{header}\n{}\n{perft}\n",
                playout.replace(r#","final":{"state":["on"],"terminal":true,"goals":[100]}"#, "")
            ),
            "neither `final` nor `truncated`",
        ),
        (
            "negative-perft",
            format!("{header}\n{playout}\n{{\"perft\":{{\"1\":-1}}}}\n"),
            "expected u64",
        ),
        (
            "text-perft",
            format!("{header}\n{playout}\n{{\"perft\":{{\"1\":\"one\"}}}}\n"),
            "expected u64",
        ),
        (
            "depth-zero",
            format!("{header}\n{playout}\n{{\"perft\":{{\"0\":1}}}}\n"),
            "perft depth `0`",
        ),
        (
            "after-perft",
            format!("{good}{playout}\n"),
            "after the perft counts",
        ),
        (
            "few-roles",
            format!(
                "{header}\n{}\n{perft}\n",
                playout.replace(r#""goals":[100]"#, r#""goals":[]"#)
            ),
            "0 entries for 1 roles",
        ),
    ];
    for (name, text, message) in cases {
        let trace = File::new(&format!("{name}.jsonl"), &text);
        expect(&["replay", path(&game), path(&trace)], 2, message);
    }
    let wrong = File::new("wrong.jsonl", &good.replace(r#""1":1"#, r#""1":2"#));
    expect(
        &["replay", path(&game), path(&wrong)],
        1,
        "perft(1): expected 2, got 1",
    );
}
