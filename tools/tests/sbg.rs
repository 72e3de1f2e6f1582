//! Simplified Boardgames: every game's GDL translation, compiled to a propnet,
//! agrees with the direct move generator (`ggpnet::sbg::board`) on perft and on
//! random playouts compared at every step (see `ggpnet_tools::sbg_oracle`): the
//! project's games (`games/sbg/`), the shared corpus's (`../shared/games-sbg/`),
//! and 300 random games. The named games' GDL also agrees with the reference
//! interpreter.

mod scratch;

use ggpnet::sbg::{self, Rules};
use ggpnet::{Config, Engine, EngineChoice, Game};
use ggpnet_tools::sbg_oracle::{compare_perft, compare_playouts};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Parses `text`, translates it and compiles the propnet (no interpreter fallback).
fn load(text: &str) -> Result<(Rules, Game), String> {
    let parsed = sbg::parse(text).map_err(|e| e.to_string())?;
    let config = Config::new().engine(EngineChoice::Propnet);
    let game = Game::load(&sbg::to_gdl(&parsed.rules), &config).map_err(|e| e.to_string())?;
    assert_eq!(game.engine(), Engine::Propnet);
    Ok((parsed.rules, game))
}

/// Checks one game file: perft to `depth` and 20 playouts; prints a line.
fn check_file(path: &Path, depth: usize) {
    let started = Instant::now();
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let (rules, game) = load(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let counts = compare_perft(&rules, &game, depth).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let steps = compare_playouts(&rules, &game, 20, 7).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    // A third opinion: the GDL on the reference interpreter, 3 playouts of at most 60 moves.
    let description = ggpnet::kif::parse(&sbg::to_gdl(&rules)).unwrap();
    let reference = ggpnet_reference::Reference::new(&description).unwrap();
    let report = ggpnet_tools::differential::differential(game.propnet().unwrap(), &reference, 3, 60, 1);
    assert_eq!(report.first_difference, None, "{}", path.display());
    println!(
        "{}: perft {counts:?}, 20 playouts ({steps} states) and the reference interpreter agree ({:.1} s)",
        path.display(),
        started.elapsed().as_secs_f64()
    );
}

fn sbg_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "sbg"))
        .collect();
    files.sort();
    files
}

#[test]
fn project_games_agree_with_the_oracle() {
    let files = sbg_files(&ggpnet_tools::corpus::project_root().join("games/sbg"));
    assert!(files.len() >= 6, "{files:?}");
    for file in files {
        check_file(&file, 4);
    }
}

#[test]
fn corpus_games_agree_with_the_oracle() {
    let dir = ggpnet_tools::corpus::locate(ggpnet_tools::corpus::project_root())
        .map(|corpus| corpus.join("games-sbg"))
        .filter(|dir| dir.is_dir());
    let Some(dir) = dir else {
        assert!(
            !ggpnet_tools::corpus::required(),
            "GGPNET_REQUIRE_CORPUS=1 but no games-sbg/ in a corpus at ../shared or $GGPNET_CORPUS"
        );
        println!("notice: no games-sbg/ in a corpus at ../shared or $GGPNET_CORPUS; skipping its SBG games");
        return;
    };
    let files = sbg_files(&dir);
    assert!(!files.is_empty(), "no .sbg file in {}", dir.display());
    for file in files {
        check_file(&file, 4);
    }
}

#[test]
fn random_games_agree_with_the_oracle() {
    let (mut checked, mut paths, mut states, mut deep) = (0, 0, 0, 0);
    for seed in 0..300 {
        let text = sbg::random::game(seed);
        let (rules, game) = load(&text).unwrap_or_else(|e| panic!("seed {seed}: {e}\n{text}"));
        // Depth 3, or 2 where depth 3 has too many paths to keep the test short.
        let depth = if sbg::board::perft(&rules, 3)[2] > 20_000 {
            2
        } else {
            3
        };
        let counts =
            compare_perft(&rules, &game, depth).unwrap_or_else(|e| panic!("seed {seed}: {e}\n{text}"));
        states +=
            compare_playouts(&rules, &game, 3, seed).unwrap_or_else(|e| panic!("seed {seed}: {e}\n{text}"));
        paths += counts.iter().sum::<u128>();
        deep += usize::from(counts[depth - 1] > 0);
        checked += 1;
    }
    println!(
        "{checked} random games agree with the oracle: {paths} perft paths, {states} playout states, {deep} games with paths at the last depth"
    );
    assert_eq!(checked, 300);
}

#[test]
fn translation_of_a_star_stays_small() {
    // A rook riding with a star on the largest board: one reach state per
    // direction, so the grounding grows with squares x squares, not with words.
    let row = format!("|R{}|", ".".repeat(15));
    let empty = format!("|{}|", ".".repeat(16));
    let board: Vec<String> = std::iter::repeat_n(empty, 15).chain([row]).collect();
    let text = format!(
        "<<Rook>> <BOARD> 16 16 {} <PIECES> R (0,1,e)(0,1,e)^* + (1,0,e)(1,0,e)^* + (-1,0,e)(-1,0,e)^* + (0,-1,e)(0,-1,e)^* & <GOALS> 4 &",
        board.join(" ")
    );
    let (rules, game) = load(&text).unwrap();
    assert_eq!(compare_perft(&rules, &game, 2).unwrap(), vec![30, 0]);
    let report = &game.propnet().unwrap().report;
    // 256 origins x 30 destinations x a few states: tens of thousands, not millions.
    assert!(
        report.ground_atoms < 100_000,
        "{} ground atoms",
        report.ground_atoms
    );
}

#[test]
fn the_command_line_reads_sbg_files() {
    let exe = env!("CARGO_BIN_EXE_ggpnet");
    let hexapawn = ggpnet_tools::corpus::project_root().join("games/sbg/hexapawn.sbg");
    let out = std::process::Command::new(exe)
        .arg("sbg2gdl")
        .arg(&hexapawn)
        .output()
        .unwrap();
    assert!(out.status.success());
    let gdl = String::from_utf8(out.stdout).unwrap();
    assert!(
        gdl.contains("(init (cell 0 0 white p))") && gdl.contains("(role black)"),
        "{gdl}"
    );
    // A command taking a game file translates it on the way.
    let out = std::process::Command::new(exe)
        .args(["perft", "--depth", "3"])
        .arg(&hexapawn)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("perft(3) = 28"), "{text}");
    // A malformed file: exit 2, the file, line and column named.
    let bad = scratch::File::new("bad.sbg", "<<M>>\n<BOARD> 2 2\n|..|\n|.x3|\n");
    let out = std::process::Command::new(exe)
        .arg("mc")
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(
        err.contains(&format!(
            "{}:4:4: expected a square ('.' or a letter) or '|' closing the row, found '3'",
            bad.display()
        )),
        "{err}"
    );
}

#[test]
fn edge_cases_agree_with_the_oracle() {
    let cases = [
        // Turn limit 0: the initial state is a draw.
        "<<A>> <BOARD> 2 2 |k.| |.K| <PIECES> K (0,1,e) & <GOALS> 0 &",
        // No movement rule: white cannot move and loses at once.
        "<<B>> <BOARD> 2 2 |k.| |.K| <PIECES> <GOALS> 5 &",
        // An empty board.
        "<<C>> <BOARD> 3 2 |...| |...| <PIECES> K (0,1,e) & <GOALS> 5 &",
        // The empty word and (0,0,w): a move that changes nothing.
        "<<D>> <BOARD> 3 3 |k..| |...| |..K| <PIECES> K (1,0,e)^* + (0,0,w) & <GOALS> 6 &",
        // Both players' counts met at the start: a draw.
        "<<E>> <BOARD> 2 2 |k.| |.K| <PIECES> K (0,1,e) & <GOALS> 5 & #K 1 & #k 1 &",
        // A reach square under the piece: reached only by a move that stays there.
        "<<F>> <BOARD> 2 2 |k.| |.K| <PIECES> K (0,0,w) + (-1,0,e) & <GOALS> 5 & @K 1 0 &",
        // Self-capture ends on an own piece, which counts against its owner.
        "<<G>> <BOARD> 3 2 |kk.| |KK.| <PIECES> K (1,0,w) + (0,1,p) & <GOALS> 6 & #K 0 &",
        // Intermediate squares must meet their letters: leaps over own, then opponent.
        "<<H>> <BOARD> 1 4 |k| |p| |P| |K| <PIECES> K (0,1,w)(0,1,p)(0,1,p) & P (0,1,p) & <GOALS> 4 &",
    ];
    for text in cases {
        let (rules, game) = load(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        let counts = compare_perft(&rules, &game, 4).unwrap_or_else(|e| panic!("{text}: {e}"));
        compare_playouts(&rules, &game, 5, 1).unwrap_or_else(|e| panic!("{text}: {e}"));
        println!("{text}: perft {counts:?}");
    }
}
