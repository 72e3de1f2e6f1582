//! Regular Boardgames (`ggpnet_rbg`): every file of the shared corpus's
//! `games-rbg/` parses, and the direct engine agrees with the real RBG
//! compiler rbg2cpp (its numbers in `traces-rbg/NAME.json`, see `FORMAT.md`
//! there): perft at every depth whose count is at most [`PERFT_LIMIT`], and
//! flat Monte-Carlo mean playout length and mean scores within four standard
//! errors. Hostile inputs give the specific error kind and place.

mod scratch;

use ggpnet_rbg::{ErrorKind, Game, Rng};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Perft is checked at every depth whose oracle count is at most this.
const PERFT_LIMIT: u64 = 2_000_000;

/// The corpus's RBG games and traces directories, or `None` (after the notice,
/// or a failure when the corpus is required) when there is no corpus.
fn corpus() -> Option<(PathBuf, PathBuf)> {
    let corpus = ggpnet_tools::corpus::for_test("skipping the RBG corpus games")?;
    let (games, traces) = (corpus.join("games-rbg"), corpus.join("traces-rbg"));
    if !games.is_dir() || !traces.is_dir() {
        assert!(
            !ggpnet_tools::corpus::required(),
            "GGPNET_REQUIRE_CORPUS=1 but no games-rbg/ and traces-rbg/ in the corpus {}",
            corpus.display()
        );
        println!(
            "notice: no games-rbg/ and traces-rbg/ in {}; skipping the RBG corpus games",
            corpus.display()
        );
        return None;
    }
    Some((games, traces))
}

/// Every game file with its trace, by name; each trace must have its game and the other way round.
fn games(games: &Path, traces: &Path) -> Vec<(String, Game, Value)> {
    let mut names: Vec<String> = std::fs::read_dir(games)
        .unwrap_or_else(|e| panic!("{}: {e}", games.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "rbg"))
        .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .collect();
    names.sort();
    let traced = std::fs::read_dir(traces)
        .unwrap_or_else(|e| panic!("{}: {e}", traces.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .count();
    assert!(!names.is_empty(), "no .rbg file in {}", games.display());
    assert_eq!(
        traced,
        names.len(),
        "one trace per game file in {}",
        traces.display()
    );
    names
        .into_iter()
        .map(|name| {
            let text = std::fs::read_to_string(games.join(format!("{name}.rbg"))).unwrap();
            let game = Game::parse(&text).unwrap_or_else(|e| panic!("{name}.rbg:{e}"));
            let trace = std::fs::read_to_string(traces.join(format!("{name}.json")))
                .unwrap_or_else(|e| panic!("{name}.json: {e}"));
            let trace: Value = serde_json::from_str(&trace).unwrap_or_else(|e| panic!("{name}.json: {e}"));
            assert_eq!(trace["game"], format!("{name}.rbg"));
            let players: Vec<&str> = trace["players"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| p.as_str().unwrap())
                .collect();
            assert_eq!(game.players(), players, "{name}: the players");
            (name, game, trace)
        })
        .collect()
}

#[test]
fn corpus_perft_agrees_with_rbg2cpp() {
    let Some((dir, traces)) = corpus() else { return };
    let mut failures = Vec::new();
    for (name, game, trace) in games(&dir, &traces) {
        let started = Instant::now();
        let perft = trace["perft"].as_object().unwrap();
        let start = game.initial_state();
        let (mut checked, mut skipped) = (Vec::new(), Vec::new());
        for depth in 1..=perft.len() {
            let expected = perft[&depth.to_string()].as_u64().unwrap();
            if expected > PERFT_LIMIT {
                skipped.push(depth);
                continue;
            }
            let got = game.perft(&start, depth);
            if got != expected {
                failures.push(format!("{name}: perft({depth}) = {got}, rbg2cpp {expected}"));
            }
            checked.push(depth);
        }
        println!(
            "{name}: perft checked at depths {checked:?}, above {PERFT_LIMIT} at {skipped:?} ({:.1} s)",
            started.elapsed().as_secs_f64()
        );
        assert!(checked.contains(&1), "{name}: not even depth 1 checked");
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Flat Monte-Carlo playouts per game: 2000, fewer for the games whose
/// playouts are long or whose states have many moves, so that each game takes
/// a few seconds.
fn playouts(name: &str) -> usize {
    match name {
        "chess" | "chineseCheckers6" => 300,
        "chess_200" => 400,
        "pentago" | "amazons" => 1000,
        _ => 2000,
    }
}

/// Mean and population standard deviation.
fn mean_sd(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
    (mean, var.sqrt())
}

/// Whether two means agree: |difference| < 4 standard errors of the difference
/// (or the means are equal, for a quantity that does not vary).
fn agree(ours: (f64, f64), n: usize, theirs: (f64, f64), n_theirs: f64) -> bool {
    let diff = (ours.0 - theirs.0).abs();
    let tolerance = 4.0 * (ours.1 * ours.1 / n as f64 + theirs.1 * theirs.1 / n_theirs).sqrt();
    diff < tolerance || diff == 0.0
}

#[test]
fn corpus_flat_monte_carlo_agrees_with_rbg2cpp() {
    let Some((dir, traces)) = corpus() else { return };
    let mut failures = Vec::new();
    for (name, game, trace) in games(&dir, &traces) {
        let started = Instant::now();
        let n = playouts(&name);
        let n_theirs = trace["playouts"].as_f64().unwrap();
        let mut rng = Rng::new(1);
        let start = game.initial_state();
        let (mut lengths, mut scores) = (Vec::new(), vec![Vec::new(); game.players().len()]);
        for _ in 0..n {
            let end = game.random_playout(&start, &mut rng, usize::MAX);
            assert!(end.ended);
            lengths.push(end.moves as f64);
            for (list, score) in scores.iter_mut().zip(&end.scores) {
                list.push(*score as f64);
            }
        }
        let length = mean_sd(&lengths);
        let theirs = (
            trace["mean_length"].as_f64().unwrap(),
            trace["sd_length"].as_f64().unwrap(),
        );
        if !agree(length, n, theirs, n_theirs) {
            failures.push(format!(
                "{name}: mean length {length:?} over {n}, rbg2cpp {theirs:?}"
            ));
        }
        let mut line = format!(
            "{name}: {n} playouts, length {:.2} (rbg2cpp {:.2})",
            length.0, theirs.0
        );
        for (player, list) in game.players().iter().zip(&scores) {
            let ours = mean_sd(list);
            let theirs = (
                trace["mean_scores"][player].as_f64().unwrap(),
                trace["sd_scores"][player].as_f64().unwrap(),
            );
            if !agree(ours, n, theirs, n_theirs) {
                failures.push(format!(
                    "{name}: {player}'s mean score {ours:?} over {n}, rbg2cpp {theirs:?}"
                ));
            }
            line += &format!(", {player} {:.2} ({:.2})", ours.0, theirs.0);
        }
        println!("{line} ({:.1} s)", started.elapsed().as_secs_f64());
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A small valid description around `rules` (players a and b, pieces e and x, a 3x1 board).
fn with_rules(rules: &str) -> String {
    format!(
        "#players = a(100), b(100)\n#pieces = e, x\n#variables = v(5)\n#board = rectangle(up, down, left, right, [e, e, e])\n#rules = {rules}\n"
    )
}

/// The error of parsing `text`: its kind and place.
fn error_of(text: &str) -> (ErrorKind, u32, u32) {
    let err = Game::parse(text).expect_err("an error");
    assert!(
        err.to_string()
            .starts_with(&format!("{}:{}: ", err.line(), err.column())),
        "{err}"
    );
    (err.kind(), err.line(), err.column())
}

#[test]
fn hostile_inputs_are_specific_errors() {
    // Deep nesting: parentheses, patterns, arithmetic.
    let deep = format!("{}->a{}", "(".repeat(100_000), ")".repeat(100_000));
    assert_eq!(error_of(&with_rules(&deep)).0, ErrorKind::NestingTooDeep);
    let deep = format!("->a {}{}", "{? ".repeat(5000), "}".repeat(5000));
    assert_eq!(error_of(&with_rules(&deep)).0, ErrorKind::NestingTooDeep);
    let deep = format!("->a [$ v = {}1{}]", "(".repeat(5000), ")".repeat(5000));
    assert_eq!(error_of(&with_rules(&deep)).0, ErrorKind::NestingTooDeep);
    let long = format!("->a [$ v = 1{}]", " + 1".repeat(100_000));
    assert_eq!(error_of(&with_rules(&long)).0, ErrorKind::NestingTooDeep);
    let stars = format!("->a left{}", "*".repeat(100_000));
    assert_eq!(error_of(&with_rules(&stars)).0, ErrorKind::NestingTooDeep);
    // Macro recursion, direct and mutual: an error at the reference, not a hang.
    let text = with_rules("m").replace("#rules", "#m = ->a m\n#rules");
    assert_eq!(error_of(&text), (ErrorKind::MacroRecursion, 5, 10));
    let text = with_rules("f(1)").replace("#rules", "#f(x) = g(x)\n#g(y) = ->a f(y)\n#rules");
    assert_eq!(error_of(&text).0, ErrorKind::MacroRecursion);
    // Macro expansion too large, and macros nested too deep.
    let mut text = String::from("#m0 = ->a ->b\n");
    for k in 1..30 {
        text += &format!("#m{k} = m{0} m{0} m{0}\n", k - 1);
    }
    assert_eq!(
        error_of(&with_rules("m29").replace("#rules", &format!("{text}#rules"))).0,
        ErrorKind::MacroTooLarge
    );
    let mut text = String::from("#n0 = ->a\n");
    for k in 1..300 {
        text += &format!("#n{k} = n{}\n", k - 1);
    }
    assert_eq!(
        error_of(&with_rules("n299").replace("#rules", &format!("{text}#rules"))).0,
        ErrorKind::MacroTooLarge
    );
    // A huge board, and huge repetitions.
    let line = format!("[{}e]", "e, ".repeat(299));
    let board = format!("rectangle(up, down, left, right, {})", vec![line; 300].join(" "));
    let text = with_rules("->a").replace("rectangle(up, down, left, right, [e, e, e])", &board);
    assert_eq!(error_of(&text).0, ErrorKind::Board);
    assert_eq!(
        error_of(&with_rules("->a (left ^ 1000) ^ 1000")).0,
        ErrorKind::RulesTooLarge
    );
    // A board within its limit, rules within theirs, but their search tables together too large.
    let line = format!("[{}e]", "e, ".repeat(249));
    let board = format!("rectangle(up, down, left, right, {})", vec![line; 240].join(" "));
    let text = with_rules("->a left ^ 600").replace("rectangle(up, down, left, right, [e, e, e])", &board);
    assert_eq!(error_of(&text).0, ErrorKind::RulesTooLarge);
    assert_eq!(
        error_of(&with_rules("->a left ^ 99999999999999999999")).0,
        ErrorKind::NumberTooLarge
    );
    // Unbounded variables.
    assert_eq!(
        error_of(&with_rules("->a").replace("v(5)", "v")),
        (ErrorKind::MissingBound, 3, 14)
    );
    assert_eq!(
        error_of(&with_rules("->a").replace("b(100)", "b")),
        (ErrorKind::MissingBound, 1, 20)
    );
    let text = with_rules("->a").replace("v(5)", "v(99999999999)");
    assert_eq!(error_of(&text), (ErrorKind::NumberTooLarge, 3, 16));
    // Undeclared names.
    assert_eq!(error_of(&with_rules("->a north")), (ErrorKind::Undeclared, 5, 14));
    assert_eq!(error_of(&with_rules("->c")), (ErrorKind::Undeclared, 5, 12));
    assert_eq!(error_of(&with_rules("->a {y}")), (ErrorKind::Undeclared, 5, 15));
    assert_eq!(
        error_of(&with_rules("->a [$ w = 1]")),
        (ErrorKind::Undeclared, 5, 17)
    );
    assert_eq!(
        error_of(&with_rules("->a {$ v < q}")),
        (ErrorKind::Undeclared, 5, 21)
    );
    assert_eq!(
        error_of(&with_rules("->a").replace("[e, e, e]", "[e, z, e]")).0,
        ErrorKind::Undeclared
    );
    // Names in two sets, sections missing or twice.
    assert_eq!(
        error_of(&with_rules("->a").replace("e, x", "e, a")).0,
        ErrorKind::Duplicate
    );
    assert_eq!(
        error_of(&with_rules("->a").replace("v(5)", "left(5)")).0,
        ErrorKind::Duplicate
    );
    assert_eq!(
        error_of(&with_rules("->a").replace("#pieces = e, x\n", "")).0,
        ErrorKind::Section
    );
    assert_eq!(
        error_of(&(with_rules("->a") + "#rules = ->b")).0,
        ErrorKind::Section
    );
    // Bad tokens and syntax.
    assert_eq!(error_of(&with_rules("->a @")), (ErrorKind::BadToken, 5, 14));
    assert_eq!(error_of(&with_rules("->a /* open")), (ErrorKind::BadToken, 5, 14));
    assert_eq!(error_of(&with_rules("->a (left")).0, ErrorKind::Syntax);
    assert_eq!(error_of(&with_rules("->a left ^ 0")).0, ErrorKind::Syntax);
    assert_eq!(error_of(&with_rules("->a ()")), (ErrorKind::Syntax, 5, 15));
    // Ill-formed rules: a switch in a pattern, a star over offs only.
    assert_eq!(
        error_of(&with_rules("->a {? ->b}")),
        (ErrorKind::IllFormed, 5, 17)
    );
    assert_eq!(
        error_of(&with_rules("->a ([x] [e])* ->b")),
        (ErrorKind::IllFormed, 5, 15)
    );
}

#[test]
fn improper_rules_still_end() {
    // The keeper moving forever: the game is ended after the keeper limit.
    let game = Game::parse(&with_rules("(->>)*")).unwrap();
    assert!(game.is_terminal(&game.initial_state()));
    // Modifiers repeated under a star that is not caught statically: the search stops at the limit.
    assert_eq!(
        error_of(&with_rules("->a ([$ v = 1])* ->b")),
        (ErrorKind::IllFormed, 5, 18)
    );
    let game = Game::parse(&with_rules("->a ([$ v = 1 + 0])* ->b")).unwrap();
    let moves = game.perft(&game.initial_state(), 1);
    assert_eq!(moves, ggpnet_rbg::MAX_MOVE_MODIFIERS as u64);
    // Patterns nested as deep as allowed, each applying a modifier, are matched.
    let nested = format!(
        "->a {}{{$ v == 1}}{} ->b",
        "{? [$ v = 1] ".repeat(150),
        "}".repeat(150)
    );
    let game = Game::parse(&with_rules(&nested)).unwrap();
    assert_eq!(game.perft(&game.initial_state(), 1), 1);
    // Cycles of shifts and tests, inside and outside patterns, end.
    let game = Game::parse(&with_rules(
        "(->a (left + right)* {? (left + right)* {x}} [x] ->b [e])*",
    ))
    .unwrap();
    assert_eq!(game.perft(&game.initial_state(), 1), 0);
    let game = Game::parse(&with_rules(
        "(->a (left + right)* {! (left + right)* {x}} [x] ->b (left + right)* [e])*",
    ))
    .unwrap();
    assert_eq!(game.perft(&game.initial_state(), 2), 9);
}

#[test]
fn the_command_line_runs_rbg_files() {
    let exe = env!("CARGO_BIN_EXE_ggpnet");
    let dir = scratch::dir("rbg");
    let game = dir.join("line.rbg");
    std::fs::write(
        &game,
        with_rules("(->a (left* + right*) {e} [x] ->b (left* + right*) {e} [x])*"),
    )
    .unwrap();
    let run = |args: &[&str], file: &Path| {
        std::process::Command::new(exe)
            .args(args)
            .arg(file)
            .output()
            .unwrap()
    };
    // Perft counts RBG moves, on the translation's propnet and on the direct engine.
    for direct in [&[][..], &["--direct"][..]] {
        let out = run(&[&["perft", "--depth", "4"][..], direct].concat(), &game);
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(
            text.contains("perft(2) = 6\nperft(3) = 6\nperft(4) = 0\n"),
            "{direct:?}: {text}"
        );
    }
    // The same totals on one thread or two for a number of playouts (direct engine).
    let mc = |threads: &str| {
        let out = run(
            &[
                "mc",
                "--direct",
                "--json",
                "--playouts",
                "40",
                "--threads",
                threads,
            ],
            &game,
        );
        assert!(out.status.success());
        let value: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            (value["playouts"].as_u64(), value["transitions"].as_u64()),
            (Some(40), Some(120))
        );
        value["avg_goals"].clone()
    };
    assert_eq!(mc("1"), mc("2"));
    // On the translation: RBG moves counted, as on the direct engine; two
    // GDL steps per move ([x], then the switch).
    let out = run(&["mc", "--json", "--playouts", "40", "--threads", "1"], &game);
    assert!(out.status.success());
    let value: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(value["engine"].as_str(), Some("propnet"));
    assert_eq!(value["transition_unit"].as_str(), Some("rbg_player_move"));
    assert_eq!(
        (value["playouts"].as_u64(), value["transitions"].as_u64()),
        (Some(40), Some(120)),
        "{value}"
    );
    // Every playout: the keeper's switch, then three moves of two steps each.
    assert_eq!(value["gdl_steps"].as_u64(), Some(7 * 40), "{value}");
    // A malformed file: exit 2, the file, line and column named.
    let bad = dir.join("bad.rbg");
    std::fs::write(&bad, with_rules("->a north")).unwrap();
    let out = run(&["mc"], &bad);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains(&format!("{}:5:14: north is not declared", bad.display())),
        "{err}"
    );
    // Every command reads the translation; rbg2gdl prints it.
    let out = run(&["check"], &game);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = run(&["rbg2gdl"], &game);
    assert!(out.status.success());
    assert!(String::from_utf8(out.stdout).unwrap().contains("(role a)"));
    // A game the translation refuses: exit 1, the place and the reason.
    let refused = dir.join("refused.rbg");
    std::fs::write(&refused, with_rules("->a (left* + right*) {x} [e] {e} ->b")).unwrap();
    let out = run(&["stats"], &refused);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains(&format!(
            "{}:5:35: the rest of this modifier's move tests",
            refused.display()
        )),
        "{err}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Runs `ggpnet ARGS FILE`: its exit code and standard error.
fn run_on(args: &[&str], file: &Path) -> (Option<i32>, String) {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_ggpnet"))
        .args(args)
        .arg(file)
        .output()
        .unwrap();
    (out.status.code(), String::from_utf8(out.stderr).unwrap())
}

/// The bounds of the per-move draws of `ggpnet mc GAME.rbg` on the
/// translation (`TurnError`) and of `ggpnet perft GAME.rbg`: each is a
/// limit, exit 3, with its reason and the file, never a panic or a hang.
#[test]
fn per_move_bounds_of_the_translation_are_errors() {
    let dir = scratch::dir("rbg-bounds");
    let write = |name: &str, text: &str| {
        let file = dir.join(name);
        std::fs::write(&file, text).unwrap();
        file
    };
    let mc = ["mc", "--playouts", "4", "--threads", "2"];
    // A move of 1001 modifiers: 1002 GDL steps.
    let long = write("long.rbg", &with_rules("->a ([$ v = 1]) ^ 1001 ->b"));
    let too_long = "a move or the keeper's steps longer than 1000 GDL steps";
    let (code, err) = run_on(&mc, &long);
    assert_eq!(code, Some(3), "{err}");
    assert!(
        err.contains(&format!("error: {}: {too_long}", long.display())),
        "{err}"
    );
    let (code, err) = run_on(&["perft", "--depth", "1"], &long);
    assert_eq!(code, Some(3), "{err}");
    assert!(
        err.contains(&format!(
            "error: {}: a move (with the keeper's moves after it) of more than 1000 GDL steps",
            long.display()
        )),
        "{err}"
    );
    // Within the bound, the same move is one RBG move.
    let fits = write("fits.rbg", &with_rules("->a ([$ v = 1]) ^ 990 ->b"));
    let (code, err) = run_on(&mc, &fits);
    assert_eq!(code, Some(0), "{err}");
    // The keeper switching to itself for ever.
    let keeper = write("keeper.rbg", &with_rules("(->>)*"));
    let (code, err) = run_on(&mc, &keeper);
    assert_eq!(code, Some(3), "{err}");
    assert!(
        err.contains(&format!("error: {}: {too_long}", keeper.display())),
        "{err}"
    );
    // 256^3 = 2^24 moves in the first state: two pieces and the switch, each on any of 256 cells.
    let line = format!("[{}e]", "e, ".repeat(15));
    let board = format!("rectangle(up, down, left, right, {})", vec![line; 16].join(" "));
    let any = "(up* + down*) (left* + right*)";
    let many = with_rules(&format!("->a {any} [x] {any} [x] {any} ->b"))
        .replace("rectangle(up, down, left, right, [e, e, e])", &board);
    let many = write("many.rbg", &many);
    let (code, err) = run_on(&mc, &many);
    assert_eq!(code, Some(3), "{err}");
    assert!(
        err.contains(&format!(
            "error: {}: a state with more than 4194304 complete moves",
            many.display()
        )),
        "{err}"
    );
    // The direct engine plays it, keeping a bounded part of those moves
    // (`ggpnet_rbg::MAX_DRAW_STEPS`) and searching again for the one drawn.
    let (code, err) = run_on(&["mc", "--direct", "--playouts", "1", "--threads", "1"], &many);
    assert_eq!(code, Some(0), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The size limits of a description not reached by `hostile_inputs_are_specific_errors`:
/// the text, the names, the automaton, and the values the translation tabulates.
#[test]
fn more_size_limits_are_specific_errors() {
    // More than 4 MiB of text (a comment is enough).
    let text = format!("{}/*{}*/", with_rules("->a"), " ".repeat(4 << 20));
    assert_eq!(error_of(&text), (ErrorKind::RulesTooLarge, 1, 1));
    // More than 4,096 pieces.
    let pieces: Vec<String> = (0..5000).map(|i| format!("p{i}")).collect();
    let text = with_rules("->a").replace(
        "#pieces = e, x",
        &format!("#pieces = e, x, {}", pieces.join(", ")),
    );
    assert_eq!(error_of(&text), (ErrorKind::RulesTooLarge, 2, 1));
    // A star over a sum of 6,000 shifts: 36 million transitions, more than 2^25.
    let text = with_rules(&format!("->a ({})* ->b", vec!["left"; 6000].join(" + ")));
    let err = Game::parse(&text).unwrap_err();
    assert_eq!((err.kind(), err.line()), (ErrorKind::RulesTooLarge, 5), "{err}");
    assert!(err.reason().contains("more than 33554432 transitions"), "{err}");
    // An assignment whose values the translation would tabulate: 200,001 of them.
    let game = Game::parse(&with_rules("->a [$ v = v] ->b").replace("v(5)", "v(200000)")).unwrap();
    let err = ggpnet_rbg::to_gdl(&game).unwrap_err();
    assert_eq!(
        (err.kind(), err.line(), err.column()),
        (ErrorKind::RulesTooLarge, 5, 17),
        "{err}"
    );
    assert!(err.reason().contains("more than 100000 values"), "{err}");
}
