//! Finding the shared corpus (`../shared`, or `$GGPNET_CORPUS`) and its games.

use std::path::{Path, PathBuf};

/// The ggpnet source tree this crate was built in (the workspace root, parent of
/// `tools/`): tests and benches read the project's games from its `games/` and
/// look for the corpus beside it with [`locate`].
pub fn project_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tools/ is inside the workspace root")
}

/// The corpus directory: `$GGPNET_CORPUS` if set, else `shared/` beside `project_root`.
pub fn locate(project_root: &Path) -> Option<PathBuf> {
    let dir = match std::env::var_os("GGPNET_CORPUS") {
        Some(dir) => PathBuf::from(dir),
        None => project_root.join("..").join("shared"),
    };
    dir.join("games").is_dir().then_some(dir)
}

/// The corpus for a test: [`locate`]d beside the project root; when there is
/// none, a test that needs it fails if [`required`], else `None` after a
/// notice that `without` (what the test does instead: skip, or run less)
/// happens.
///
/// ```
/// if let Some(corpus) = ggpnet_tools::corpus::for_test("skipping the corpus part") {
///     assert!(corpus.join("games").is_dir());
/// }
/// ```
pub fn for_test(without: &str) -> Option<PathBuf> {
    let found = locate(project_root());
    if found.is_none() {
        assert!(
            !required(),
            "GGPNET_REQUIRE_CORPUS=1 but no corpus at ../shared or $GGPNET_CORPUS"
        );
        println!("notice: no corpus at ../shared or $GGPNET_CORPUS; {without}");
    }
    found
}

/// Whether a missing corpus must fail (`GGPNET_REQUIRE_CORPUS=1`).
pub fn required() -> bool {
    std::env::var("GGPNET_REQUIRE_CORPUS").is_ok_and(|v| v == "1")
}

/// A game of the corpus and its trace.
#[derive(Clone, Debug)]
pub struct CorpusGame {
    /// File stem, e.g. `ticTacToe`.
    pub name: String,
    /// The `.kif` file.
    pub game: PathBuf,
    /// The `.jsonl` trace, if there is one.
    pub trace: Option<PathBuf>,
}

/// Every game of `games/` and `games-test/`, with its trace from `traces/` or `traces-test/`.
pub fn games(corpus: &Path) -> Vec<CorpusGame> {
    collect(corpus, &[("games", "traces")], &["kif"])
        .into_iter()
        .chain(collect(corpus, &[("games-test", "traces-test")], &["kif"]))
        .collect()
}

/// Every GDL-II game of `games-gdl2/` (`.gdl` and `.kif` files; the infix
/// games of `games-gdl2/infix/` are out of scope), with its trace from `traces-gdl2/`.
pub fn gdl2_games(corpus: &Path) -> Vec<CorpusGame> {
    collect(corpus, &[("games-gdl2", "traces-gdl2")], &["gdl", "kif"])
}

/// The game files with one of `extensions` in each games directory, by name, with
/// their traces from the paired traces directory.
fn collect(corpus: &Path, dirs: &[(&str, &str)], extensions: &[&str]) -> Vec<CorpusGame> {
    let mut out = Vec::new();
    for &(games, traces) in dirs {
        let Ok(entries) = std::fs::read_dir(corpus.join(games)) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file() && p.extension().is_some_and(|e| extensions.iter().any(|x| e == *x)))
            .collect();
        paths.sort();
        for game in paths {
            let name = game
                .file_stem()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            let trace = corpus.join(traces).join(format!("{name}.jsonl"));
            out.push(CorpusGame {
                name,
                game,
                trace: trace.is_file().then_some(trace),
            });
        }
    }
    out
}
