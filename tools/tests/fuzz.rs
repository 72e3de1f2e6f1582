//! A short pass of every fuzz target (`ggpnet_tools::fuzz`): first the saved inputs
//! under `tools/tests/fuzz_regressions/TARGET/` (inputs that once found a bug), then
//! a fixed number of seeded mutations of real inputs (the built-in game, corpus
//! games, an exported circuit, a trace). The long runs are libFuzzer's
//! (`fuzz/README.md`); this pass keeps what they found fixed and runs in
//! seconds.

use ggpnet::propnet::export::json;
use ggpnet::propnet::load;
use ggpnet_tools::fuzz;
use rand::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::path::{Path, PathBuf};

/// Mutations tried per target and seed input.
const MUTATIONS: usize = 150;

/// Small corpus games that seed the KIF and game targets.
const SEED_GAMES: [&str; 3] = ["ticTacToe", "buttons", "blocks"];

/// Pieces inserted by the mutator: KIF syntax and keywords, every kind of
/// whitespace, JSON punctuation, numbers at the edges of their types.
const PIECES: [&str; 34] = [
    "(",
    ")",
    "?x",
    " ",
    "\u{c}",
    "\u{b}",
    "\u{a0}",
    "\u{85}",
    "\u{3000}",
    "\n",
    ";",
    "not",
    "or",
    "distinct",
    "true",
    "does",
    "next",
    "init",
    "legal",
    "goal",
    "terminal",
    "role",
    "<=",
    "0",
    "100",
    "-1",
    "[",
    "]",
    "{",
    "}",
    "\"",
    ",",
    "18446744073709551616",
    "1e999",
];

fn regressions(target: &str) -> Vec<(PathBuf, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fuzz_regressions")
        .join(target);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|entries| entries.filter_map(|e| Some(e.ok()?.path())).collect())
        .unwrap_or_default();
    files.sort();
    files
        .into_iter()
        .filter(|p| p.is_file())
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p, bytes)
        })
        .collect()
}

/// One to four random edits of `input`.
fn mutate(input: &[u8], rng: &mut Xoshiro256PlusPlus) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..rng.gen_range(1..=4) {
        let at = rng.gen_range(0..=out.len());
        let end = (at + rng.gen_range(0..64)).min(out.len());
        match rng.gen_range(0..5) {
            0 if at < out.len() => out[at] = rng.gen(),
            1 => {
                let piece = PIECES[rng.gen_range(0..PIECES.len())];
                out.splice(at..at, piece.bytes());
            }
            2 => {
                out.drain(at..end);
            }
            3 => {
                let copy = out[at..end].to_vec();
                out.splice(end..end, copy);
            }
            _ if at < out.len() && out[at].is_ascii_digit() => out[at] = b'0' + rng.gen_range(0..10),
            _ => {}
        }
    }
    out
}

/// Runs `target` on the regression inputs, then on mutations of each seed input.
fn run(name: &str, target: fn(&[u8]), seeds: &[Vec<u8>]) {
    let saved = regressions(name);
    for (path, bytes) in &saved {
        println!("{name}: {}", path.display());
        target(bytes);
    }
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(0x6675_7a7a);
    for seed in seeds {
        target(seed);
        for _ in 0..MUTATIONS {
            target(&mutate(seed, &mut rng));
        }
    }
    println!(
        "{name}: {} saved inputs, {} seed inputs, {} mutations",
        saved.len(),
        seeds.len(),
        seeds.len() * MUTATIONS
    );
}

fn corpus() -> Option<PathBuf> {
    ggpnet_tools::corpus::for_test("fuzzing from the built-in game only")
}

/// The built-in game, and the small corpus games when the corpus is present.
fn seed_games() -> Vec<Vec<u8>> {
    let mut seeds = vec![ggpnet::DEFAULT_GAME.as_bytes().to_vec()];
    if let Some(corpus) = corpus() {
        for name in SEED_GAMES {
            let path = corpus.join("games").join(format!("{name}.kif"));
            seeds.push(std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())));
        }
    }
    seeds
}

/// The project's real-time GDL games (`games/rtgdl/`).
fn rtgdl_games() -> Vec<Vec<u8>> {
    let dir = ggpnet_tools::corpus::project_root().join("games/rtgdl");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .collect();
    paths.sort();
    paths
        .iter()
        .map(|p| std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        .collect()
}

#[test]
fn fuzz_realtime() {
    let seeds = rtgdl_games();
    assert!(seeds.len() >= 6, "the six example games");
    run("realtime", fuzz::realtime, &seeds);
}

#[test]
fn fuzz_kif() {
    run("kif", fuzz::kif, &seed_games());
}

#[test]
fn fuzz_game() {
    run("game", fuzz::game, &seed_games());
}

#[test]
fn fuzz_circuit() {
    let tic_tac_toe = "(role x) (role o) (init (cell 1 b)) (init (cell 2 b)) (init (control x))
        (<= (legal ?p (mark ?c)) (true (cell ?c b)) (true (control ?p)))
        (<= (legal x noop) (true (control o))) (<= (legal o noop) (true (control x)))
        (<= (next (cell ?c ?p)) (does ?p (mark ?c)))
        (<= (next (cell ?c b)) (true (cell ?c b)) (not (marked ?c)))
        (<= (marked ?c) (does ?p (mark ?c)))
        (<= (next (cell ?c ?m)) (true (cell ?c ?m)) (distinct ?m b))
        (<= (next (control o)) (true (control x))) (<= (next (control x)) (true (control o)))
        (<= terminal (not (open))) (<= (open) (true (cell ?c b)))
        (<= (goal ?p 50) (role ?p))";
    let mut seeds = Vec::new();
    for source in [tic_tac_toe, ggpnet::DEFAULT_GAME] {
        let loaded = load(source, &Default::default()).expect("the seed game loads");
        seeds.push(json::write(&loaded.circuit, &loaded.layering).into_bytes());
    }
    run("circuit", fuzz::circuit, &seeds);
}

#[test]
fn fuzz_trace() {
    let mut seeds = vec![b"{\"game\":\"g\",\"roles\":[\"r\"],\"init\":[]}\n{\"perft\":{\"1\":1}}\n".to_vec()];
    if let Some(corpus) = corpus() {
        let path = corpus.join("traces/ticTacToe.jsonl");
        seeds.push(std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())));
    }
    run("trace", fuzz::trace, &seeds);
}
