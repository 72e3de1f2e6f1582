//! Regular Boardgames translated to GDL (`ggpnet_rbg::to_gdl`): on every
//! shared game the translation can take, the propnet of the translation
//! agrees with the direct engine on perft (`ggpnet perft GAME.rbg`, counting
//! RBG moves, against the rbg2cpp counts of `traces-rbg/` at every depth up to
//! [`PERFT_BUDGET`]) and along random playouts (the board, the variables, the
//! player to move, the set of legal moves, terminal and scores compared at
//! every RBG state); its `rbg2gdl` output passes `ggpnet check`; flat
//! Monte-Carlo on it (`ggpnet mc GAME.rbg`, one uniform draw per RBG move)
//! gives rbg2cpp's mean length and scores within the trace's tolerance. The
//! games it refuses are listed in [`UNTRANSLATABLE`] with the reason checked.

mod scratch;

use ggpnet::{Config, EngineChoice, Game, Machine, State};
use ggpnet_rbg::{ErrorKind, Rng};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// Perft is checked at every depth whose rbg2cpp count is at most this.
const PERFT_BUDGET: u64 = 100_000;

/// The shared games the translation refuses (a test after a modifier reads
/// what the move changes: see `ggpnet_rbg::to_gdl`).
const UNTRANSLATABLE: [&str; 10] = [
    "amazons",
    "chess",
    "chess_200",
    "chess_kingCapture",
    "chineseCheckers6",
    "englishDraughts",
    "englishDraughts_split",
    "pentago",
    "reversi",
    "skirmish",
];

/// Random playouts compared per game: 1,000, fewer where playouts are long
/// and states have many moves (every complete move is enumerated on the
/// translation at every state), so that each game takes about 10 s.
fn playouts(name: &str) -> usize {
    match name {
        "gomoku_freeStyle" | "gomoku_standard" => 200,
        "breakthrough" | "gomoku_standard_11x11" | "hex" | "hex_9x9" | "knightthrough" => 300,
        _ => 1000,
    }
}

/// Flat Monte-Carlo playouts per game and scalar evaluator on the
/// translation: 400, 200 on the large boards (each move enumerates every
/// complete move of the state on the propnet).
fn mc_playouts(name: &str) -> u64 {
    match name {
        "gomoku_freeStyle" | "gomoku_standard" | "gomoku_standard_11x11" | "hex" | "hex_9x9" => 200,
        _ => 400,
    }
}

/// The corpus's RBG games (sorted) and the traces directory, or `None` after the notice.
fn corpus() -> Option<(Vec<PathBuf>, PathBuf)> {
    let corpus = ggpnet_tools::corpus::for_test("skipping the RBG translation tests")?;
    let (games, traces) = (corpus.join("games-rbg"), corpus.join("traces-rbg"));
    if !games.is_dir() {
        assert!(
            !ggpnet_tools::corpus::required(),
            "no games-rbg/ in {}",
            corpus.display()
        );
        println!("notice: no games-rbg/ in {}; skipping", corpus.display());
        return None;
    }
    let mut files: Vec<PathBuf> = std::fs::read_dir(&games)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "rbg"))
        .collect();
    files.sort();
    Some((files, traces))
}

fn stem(path: &Path) -> String {
    path.file_stem().unwrap().to_string_lossy().into_owned()
}

/// The direct game and, when translatable, the propnet of its translation.
fn load(path: &Path) -> (ggpnet_rbg::Game, Result<Game, ggpnet_rbg::RbgError>) {
    let text = std::fs::read_to_string(path).unwrap();
    let rbg = ggpnet_rbg::Game::parse(&text).unwrap();
    let gdl = ggpnet_rbg::to_gdl(&rbg).map(|gdl| {
        let config = Config::new().engine(EngineChoice::Propnet);
        Game::load(&gdl, &config).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    });
    (rbg, gdl)
}

#[test]
fn shared_games_translate_or_are_refused_with_the_reason() {
    let Some((files, _)) = corpus() else { return };
    for file in &files {
        let name = stem(file);
        let (_, gdl) = load(file);
        match gdl {
            Ok(game) => {
                assert!(!UNTRANSLATABLE.contains(&name.as_str()), "{name} translates now");
                let report = &game.propnet().unwrap().report;
                println!("{name}: translated, {} ground atoms", report.ground_atoms);
            }
            Err(e) => {
                assert_eq!(e.kind(), ErrorKind::Untranslatable, "{name}: {e}");
                assert!(UNTRANSLATABLE.contains(&name.as_str()), "{name}: {e}");
                println!("{name}: refused: {e}");
            }
        }
    }
}

/// `ggpnet ARGS FILE` with its standard output; the run must succeed.
fn ggpnet(args: &[&str], file: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_ggpnet"))
        .args(args)
        .arg(file)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "ggpnet {args:?} {}: {err}", file.display());
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn translated_perft_agrees_with_rbg2cpp_and_the_output_checks() {
    let Some((files, traces)) = corpus() else { return };
    let dir = scratch::dir("rbg2gdl");
    for file in &files {
        let name = stem(file);
        if UNTRANSLATABLE.contains(&name.as_str()) {
            continue;
        }
        let started = Instant::now();
        let trace: Value =
            serde_json::from_str(&std::fs::read_to_string(traces.join(format!("{name}.json"))).unwrap())
                .unwrap();
        let perft = trace["perft"].as_object().unwrap();
        let depth = (1..=perft.len())
            .take_while(|d| perft[&d.to_string()].as_u64().unwrap() <= PERFT_BUDGET)
            .last()
            .unwrap_or(1);
        let out = ggpnet(&["perft", "--json", "--depth", &depth.to_string()], file);
        let value: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(value["engine"], "propnet", "{name}");
        for d in 1..=depth {
            let key = d.to_string();
            assert_eq!(value["counts"][&key], perft[&key], "{name}: perft({d})");
        }
        let kif = dir.join(format!("{name}.kif"));
        std::fs::write(&kif, ggpnet(&["rbg2gdl"], file)).unwrap();
        ggpnet(&["check"], &kif);
        println!(
            "{name}: perft agrees at depths 1..={depth}, the GDL checks ({:.1} s)",
            started.elapsed().as_secs_f64()
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The propnet side of a differential playout.
struct Translation {
    game: Game,
    machine: Machine,
}

impl Translation {
    fn kif(&self, state: &State) -> Vec<String> {
        self.game.state_to_kif(state).unwrap()
    }

    /// Applies the keeper's steps (every role `noop`) until a player is to move or the game is over.
    fn settle(&mut self, mut state: State) -> State {
        for _ in 0..10_000 {
            if self.machine.is_terminal(&state).unwrap() {
                return state;
            }
            let joints = self.machine.legal_joint_moves(&state).unwrap();
            let keeper = joints.len() == 1
                && joints[0]
                    .iter()
                    .all(|m| self.game.move_to_kif(m).unwrap() == "noop");
            if !keeper {
                return state;
            }
            state = self.machine.next_state(&state, &joints[0]).unwrap();
        }
        panic!("the keeper does not stop");
    }

    /// Every complete move of the player `role` from `state`, as (state, cell) steps.
    fn moves(
        &mut self,
        state: &State,
        role: usize,
        prefix: &mut Vec<(u32, u32)>,
        out: &mut BTreeSet<Vec<(u32, u32)>>,
    ) {
        let moves = self.machine.legal_moves(state, role).unwrap();
        assert!(
            !moves.is_empty(),
            "a partial move {prefix:?} without a continuation"
        );
        for m in moves {
            let text = self.game.move_to_kif(&m).unwrap();
            let parts: Vec<&str> = text.trim_matches(|c| c == '(' || c == ')').split(' ').collect();
            let step = (parts[1].parse().unwrap(), parts[2].parse().unwrap());
            prefix.push(step);
            if parts[0] == "s" {
                out.insert(prefix.clone());
            } else {
                let next = self.step(state, role, step, false);
                self.moves(&next, role, prefix, out);
            }
            prefix.pop();
        }
    }

    /// The state after `role` plays the step `(t, x)` (the closing switch when `last`).
    fn step(&mut self, state: &State, role: usize, (t, x): (u32, u32), last: bool) -> State {
        let kind = if last { "s" } else { "m" };
        let joint: Vec<_> = (0..self.game.roles().len())
            .map(|r| match r == role {
                true => self.game.parse_move(r, &format!("({kind} {t} {x})")).unwrap(),
                false => self.game.parse_move(r, "noop").unwrap(),
            })
            .collect();
        self.machine.next_state(state, &joint).unwrap()
    }
}

/// The facts the direct engine's `state` should have in the translation.
fn expected_facts(rbg: &ggpnet_rbg::Game, state: &ggpnet_rbg::State) -> BTreeSet<String> {
    let mut facts = BTreeSet::new();
    for c in 0..rbg.cells() {
        facts.insert(format!("(cell {c} {})", rbg.piece_at(state, c)));
    }
    for v in 0..rbg.variables().len() {
        facts.insert(format!("(var {v} {})", rbg.variable(state, v)));
    }
    facts
}

/// Compares `n` random playouts (seeded by `seed`); returns the RBG states compared.
fn compare_playouts(name: &str, rbg: &ggpnet_rbg::Game, t: &mut Translation, n: usize, seed: u64) -> usize {
    let mut rng = Rng::new(seed);
    let mut compared = 0;
    let (mut moves, mut ours) = (Vec::new(), BTreeSet::new());
    for playout in 0..n {
        let mut s = rbg.initial_state();
        let initial = t.game.initial_state();
        let mut g = t.settle(initial);
        for ply in 0.. {
            let at = format!("{name}: playout {playout}, move {ply}");
            let facts: BTreeSet<String> = t
                .kif(&g)
                .into_iter()
                .filter(|f| f.starts_with("(cell") || f.starts_with("(var"))
                .collect();
            assert_eq!(facts, expected_facts(rbg, &s), "{at}: the state");
            compared += 1;
            let terminal = rbg.is_terminal(&s);
            assert_eq!(t.machine.is_terminal(&g).unwrap(), terminal, "{at}: terminal");
            if terminal {
                let goals: Vec<Option<i64>> = rbg.scores(&s).into_iter().map(Some).collect();
                assert_eq!(t.machine.goals(&g).unwrap(), goals, "{at}: scores");
                break;
            }
            let role = rbg.current_player(&s).unwrap();
            rbg.legal_moves(&s, &mut moves);
            let theirs: BTreeSet<Vec<(u32, u32)>> = moves.iter().map(|m| m.steps().to_vec()).collect();
            ours.clear();
            t.moves(&g, role, &mut Vec::new(), &mut ours);
            assert_eq!(ours, theirs, "{at}: the legal moves");
            let chosen = &moves[rng.below(moves.len())];
            let steps = chosen.steps();
            for (k, &step) in steps.iter().enumerate() {
                g = t.step(&g, role, step, k + 1 == steps.len());
            }
            g = t.settle(g);
            rbg.apply(&mut s, chosen);
        }
    }
    compared
}

#[test]
fn translated_playouts_agree_with_the_direct_engine() {
    let Some((files, _)) = corpus() else { return };
    for file in &files {
        let name = stem(file);
        let (rbg, gdl) = load(file);
        let Ok(game) = gdl else { continue };
        let started = Instant::now();
        let machine = game.machine();
        let mut t = Translation { game, machine };
        let n = playouts(&name);
        let states = compare_playouts(&name, &rbg, &mut t, n, 7);
        println!(
            "{name}: {n} playouts ({states} states) agree ({:.1} s)",
            started.elapsed().as_secs_f64()
        );
    }
}

/// Whether `ours` (a mean over `n` playouts) agrees with the trace's `theirs`
/// over its `playouts`, sd `sd` (taken for both): FORMAT.md's tolerance,
/// 4 standard errors of the difference.
fn within_tolerance(ours: f64, n: u64, theirs: f64, sd: f64, playouts: f64) -> bool {
    (ours - theirs).abs() <= 4.0 * (sd * sd / n as f64 + sd * sd / playouts).sqrt()
}

/// Checks one `ggpnet mc --json` run of `n` playouts of `name` against its trace.
fn check_mc(name: &str, evaluator: &str, value: &Value, trace: &Value, n: u64) {
    let at = format!("{name} ({evaluator})");
    assert_eq!(value["evaluator"], evaluator, "{at}");
    assert_eq!(value["transition_unit"], "rbg_player_move", "{at}");
    assert_eq!(value["playouts"], n, "{at}: every playout ends");
    let length = value["avg_depth"].as_f64().unwrap();
    let moves = value["transitions"].as_u64().unwrap();
    assert!(
        (length * n as f64 - moves as f64).abs() < 0.5,
        "{at}: moves {moves}, mean {length}"
    );
    let playouts = trace["playouts"].as_f64().unwrap();
    let (mean, sd) = (
        trace["mean_length"].as_f64().unwrap(),
        trace["sd_length"].as_f64().unwrap(),
    );
    assert!(
        within_tolerance(length, n, mean, sd, playouts),
        "{at}: mean length {length}, rbg2cpp {mean} (sd {sd})"
    );
    for (player, theirs) in trace["mean_scores"].as_object().unwrap() {
        let ours = value["avg_goals"][player].as_f64().unwrap();
        let (theirs, sd) = (
            theirs.as_f64().unwrap(),
            trace["sd_scores"][player].as_f64().unwrap(),
        );
        assert!(
            within_tolerance(ours, n, theirs, sd, playouts),
            "{at}: {player} scores {ours}, rbg2cpp {theirs} (sd {sd})"
        );
    }
}

#[test]
fn translated_flat_mc_draws_rbg_moves_as_rbg2cpp() {
    let Some((files, traces)) = corpus() else { return };
    for file in &files {
        let name = stem(file);
        if UNTRANSLATABLE.contains(&name.as_str()) {
            continue;
        }
        let trace: Value =
            serde_json::from_str(&std::fs::read_to_string(traces.join(format!("{name}.json"))).unwrap())
                .unwrap();
        let n = mc_playouts(&name);
        for evaluator in ["sweep", "differential"] {
            let started = Instant::now();
            let args = [
                "mc",
                "--json",
                "--threads",
                "1",
                "--evaluator",
                evaluator,
                "--playouts",
                &n.to_string(),
            ];
            let value: Value = serde_json::from_str(&ggpnet(&args, file)).unwrap();
            check_mc(&name, evaluator, &value, &trace, n);
            println!(
                "{name} ({evaluator}): {n} playouts, mean length {:.2} (rbg2cpp {}) ({:.1} s)",
                value["avg_depth"].as_f64().unwrap(),
                trace["mean_length"],
                started.elapsed().as_secs_f64()
            );
        }
    }
}

#[test]
fn lanes_are_refused_for_flat_mc_on_a_translated_game() {
    let dir = scratch::dir("rbg-lanes");
    let file = dir.join("tiny.rbg");
    std::fs::write(
        &file,
        "#players = a(100), b(100) #pieces = e, x #variables = #board = rectangle(u, d, l, r, [e, e])
         #rules = [$ a = 50, b = 50] (->a (l* + r*) {e} [x] ->b ->>)*",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_ggpnet"))
        .args(["mc", "--evaluator", "lanes", "--playouts", "10"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--evaluator lanes"));
    let value: Value = serde_json::from_str(&ggpnet(
        &["mc", "--json", "--playouts", "10", "--evaluator", "sweep"],
        &file,
    ))
    .unwrap();
    // `a` fills a cell, `b` passes, twice; then `a` has no move: 4 player moves a playout.
    assert_eq!(value["transitions"], 40);
    assert_eq!(value["avg_depth"], 4.0);
    assert_eq!(value["avg_goals"]["a"], 50.0);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn an_untranslatable_game_is_a_clear_error() {
    // After emptying a cell, the move tests that cell again (here and there):
    // whether the move completes depends on the board after the modifier.
    let text = "#players = a(100), b(100) #pieces = e, x #variables =
        #board = rectangle(up, down, left, right, [x, e, e])
        #rules = (->a (left* + right*) {x} [e] right left {e} ->b ->>)*";
    let game = ggpnet_rbg::Game::parse(text).unwrap();
    let err = ggpnet_rbg::to_gdl(&game).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Untranslatable);
    assert_eq!((err.line(), err.column()), (3, 44), "{err}");
    assert!(err.reason().contains("a cell this modifier"), "{err}");
    // Testing another cell is exact, and translates.
    let text = text.replace("right left {e}", "right {e}");
    let game = ggpnet_rbg::Game::parse(&text).unwrap();
    assert!(ggpnet_rbg::to_gdl(&game).is_ok());
}
