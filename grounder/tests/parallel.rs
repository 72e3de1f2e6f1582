//! Grounding gives the same program whatever the number of threads: the same terms
//! under the same ids, the same atoms in the same order, the same rules.
//!
//! Grounds games of the shared corpus (`$GGPNET_CORPUS`, else `../shared` beside the
//! repository) on 1, 2 and 3 threads. Without the corpus the test is
//! skipped with a notice, unless `GGPNET_REQUIRE_CORPUS=1`.

use ggpnet_grounder::GroundProgram;
use std::path::{Path, PathBuf};

/// Games whose grounding has rounds big enough to be run in parallel, in parts,
/// and with composite indexes built along the way.
const GAMES: [&str; 5] = ["breakthrough", "hex", "chess_200", "amazons_10x10", "checkers"];

fn corpus() -> Option<PathBuf> {
    let dir = match std::env::var_os("GGPNET_CORPUS") {
        Some(dir) => PathBuf::from(dir),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared"),
    };
    dir.join("games").is_dir().then_some(dir)
}

fn ground_on(threads: usize, source: &str) -> GroundProgram {
    let game = ggpnet_kif::parse(source).expect("the game parses");
    let config = ggpnet_grounder::Config::new()
        .threads(threads)
        .expect("a thread count in range");
    ggpnet_grounder::ground(&game, &config).expect("the game grounds")
}

fn assert_same(name: &str, threads: usize, one: &GroundProgram, many: &GroundProgram) {
    let context = format!("{name}: 1 thread against {threads}");
    assert!(one.terms == many.terms, "{context}: the term stores differ");
    assert_eq!(one.roles, many.roles, "{context}: roles");
    assert_eq!(one.initial_state, many.initial_state, "{context}: initial state");
    assert_eq!(one.atoms, many.atoms, "{context}: atoms");
    assert!(one.rules == many.rules, "{context}: the rules differ");
    assert_eq!(one.warnings, many.warnings, "{context}: warnings");
    let text = |p: &GroundProgram| p.atoms.iter().map(|&a| p.kif(a)).collect::<Vec<_>>();
    assert_eq!(text(one), text(many), "{context}: atom texts");
}

#[test]
fn grounding_is_the_same_on_any_number_of_threads() {
    let Some(corpus) = corpus() else {
        assert!(
            std::env::var("GGPNET_REQUIRE_CORPUS").as_deref() != Ok("1"),
            "GGPNET_REQUIRE_CORPUS=1 but no corpus at $GGPNET_CORPUS or ../shared"
        );
        eprintln!("note: no corpus found at $GGPNET_CORPUS or ../shared; skipping");
        return;
    };
    for name in GAMES {
        let path = corpus.join("games").join(format!("{name}.kif"));
        let source = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let one = ground_on(1, &source);
        assert!(!one.rules.is_empty(), "{name}: no rules");
        for threads in [2, 3] {
            assert_same(name, threads, &one, &ground_on(threads, &source));
        }
    }
}
