//! What an agent that depends on the `ggpnet` library builds: the facade's
//! normal dependencies (as `cargo tree -p ggpnet -e normal` lists them for this
//! machine) hold no crate that only the command line needs, and few crates in
//! all, so that adding a dependency to the library is a deliberate act.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

/// Crates the command line uses and the library must not carry.
const COMMAND_LINE_ONLY: [&str; 4] = ["clap", "indicatif", "percent-encoding", "csv"];

/// Most distinct crates (the workspace's own included) the library may build.
const MAX_CRATES: usize = 60;

/// The distinct `name version` pairs `cargo tree` lists for the facade's
/// normal dependencies, the facade included.
fn library_crates() -> BTreeSet<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_string());
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let output = Command::new(cargo)
        .current_dir(&root)
        .args(["tree", "--offline", "--locked", "-p", "ggpnet", "-e", "normal"])
        .args(["--prefix", "none", "--format", "{p}"])
        .output()
        .expect("cargo runs");
    assert!(
        output.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .expect("cargo tree prints UTF-8")
        .lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            Some(format!("{} {}", words.next()?, words.next()?))
        })
        .collect()
}

#[test]
fn the_library_carries_no_command_line_crate_and_few_crates() {
    let crates = library_crates();
    assert!(
        crates.iter().any(|c| c.starts_with("ggpnet-propnet ")),
        "the listing names the library's own crates: {crates:?}"
    );
    let names: BTreeSet<&str> = crates.iter().filter_map(|c| c.split(' ').next()).collect();
    for name in COMMAND_LINE_ONLY {
        assert!(!names.contains(name), "the library depends on {name}");
    }
    assert!(
        crates.len() <= MAX_CRATES,
        "the library builds {} crates (at most {MAX_CRATES}): {crates:?}",
        crates.len()
    );
    println!("the library builds {} crates", crates.len());
}
