//! The crates' layering, checked on their source: no crate of the workspace
//! has a cycle among its top-level modules (a module reached through a
//! re-export of the crate root counts as the module it comes from), and every
//! top-level module of the propnet crate may use only the modules below it in
//! [`ORDER`] (the pipeline's order, see that crate's documentation), and
//! every one of the rtGDL crate only those below it in [`RTGDL_ORDER`] (from
//! text to play, see its documentation), so their graphs cannot silently
//! grow a cycle. Unit-test modules (`#[cfg(test)] mod
//! tests`, last in their files) are left out: tests load games through the top
//! of the crate.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// The top-level modules, lowest first: each may use only those before it.
const ORDER: [&str; 13] = [
    "random",
    "ir",
    "opt",
    "layout",
    "jit",
    "profile",
    "evaluator",
    "game",
    "driver",
    "machine",
    "pipeline",
    "inspect",
    "export",
];

/// The top-level modules of the rtGDL crate, lowest first: each may use only those before it.
const RTGDL_ORDER: [&str; 8] = [
    "time",
    "syntax",
    "circuit",
    "error",
    "interpreter",
    "net",
    "game",
    "playout",
];

/// Every `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).expect("a source directory") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The code of a source file without its comments and its unit-test module.
fn code(text: &str) -> String {
    let mut kept = String::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        if line.trim() == "#[cfg(test)]"
            && lines
                .peek()
                .is_some_and(|next| next.trim_start().starts_with("mod tests"))
        {
            break;
        }
        kept.push_str(line.split("//").next().unwrap_or(""));
        kept.push('\n');
    }
    kept
}

/// The names that `text` reaches through `crate::` (the first segment of
/// each path, every name of a `crate::{...}` group).
fn crate_names(text: &str) -> Vec<String> {
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    let mut names = Vec::new();
    for (at, _) in text.match_indices("crate::") {
        let before = text[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue; // `ggpnet_crate::`, say: not this crate's root
        }
        let rest = &text[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            names.extend(
                group
                    .split(',')
                    .map(|item| ident(item.trim()))
                    .filter(|n| !n.is_empty()),
            );
        } else {
            names.push(ident(rest));
        }
    }
    names
}

/// The crate root's re-exports: name to the top-level module it comes from.
fn reexports(lib: &str) -> BTreeMap<String, String> {
    let mut map = BTreeMap::new();
    for line in code(lib).lines() {
        let Some(path) = line.trim().strip_prefix("pub use ") else {
            continue;
        };
        let module: String = path
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        let items = path[module.len()..].trim_start_matches("::");
        let items = items
            .trim_end_matches(';')
            .trim_start_matches('{')
            .trim_end_matches('}');
        for item in items.split(',') {
            let name = item.rsplit("::").next().unwrap_or("").trim();
            if !name.is_empty() {
                map.insert(name.to_owned(), module.clone());
            }
        }
    }
    map
}

/// The top-level module a source file belongs to (`None` for the crate root).
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let relative = file.strip_prefix(src).expect("a file under src");
    let first = relative
        .components()
        .next()?
        .as_os_str()
        .to_string_lossy()
        .into_owned();
    let name = first.trim_end_matches(".rs").to_owned();
    (name != "lib").then_some(name)
}

/// The library crates' source folders under the project root (the command
/// line's too), each of whose module graphs must be acyclic.
const CRATES: [&str; 9] = [
    "src",
    "kif/src",
    "grounder/src",
    "propnet/src",
    "reference/src",
    "rtgdl/src",
    "sbg/src",
    "rbg/src",
    "tools/src",
];

/// The dependencies between the top-level modules of the crate whose sources
/// are in `src` (under the project root), read from the source.
fn dependencies(src: &str) -> BTreeMap<String, BTreeSet<String>> {
    let src = ggpnet_tools::corpus::project_root().join(src);
    let lib = fs::read_to_string(src.join("lib.rs")).expect("lib.rs");
    let reexported = reexports(&lib);
    let mut files = Vec::new();
    sources(&src, &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let Some(module) = module_of(&src, &file).filter(|m| m != "main") else {
            continue;
        };
        let text = fs::read_to_string(&file).expect("a readable source file");
        let uses = graph.entry(module.clone()).or_default();
        for name in crate_names(&code(&text)) {
            let target = reexported.get(&name).cloned().unwrap_or(name);
            if target != module {
                uses.insert(target);
            }
        }
    }
    graph
}

#[test]
fn every_propnet_module_uses_only_modules_below_it() {
    in_order("propnet/src", &ORDER);
}

#[test]
fn every_rtgdl_module_uses_only_modules_below_it() {
    in_order("rtgdl/src", &RTGDL_ORDER);
}

/// Panics unless every top-level module of the crate in `src` is in `order`
/// and uses only the modules before it there.
fn in_order(src: &str, order: &[&str]) {
    let graph = dependencies(src);
    let rank = |m: &str| order.iter().position(|&o| o == m);
    for (module, uses) in &graph {
        let Some(own) = rank(module) else {
            panic!("module {module} of {src} is not in the declared order: place it there");
        };
        for used in uses {
            match rank(used) {
                Some(r) if r < own => {}
                Some(_) => panic!("{module} uses {used}, which is not below it"),
                None => panic!("{module} uses crate::{used}, which is no top-level module"),
            }
        }
    }
    for module in order {
        assert!(
            graph.contains_key(*module),
            "declared module {module} is not in src/"
        );
    }
}

#[test]
fn no_crate_has_an_import_cycle() {
    for src in CRATES {
        acyclic(src, &dependencies(src));
    }
}

/// Panics, naming the modules left, if `graph` (of the crate in `src`) has a cycle.
fn acyclic(src: &str, graph: &BTreeMap<String, BTreeSet<String>>) {
    // Kahn's algorithm: repeatedly take a module all of whose uses are taken.
    let mut taken: BTreeSet<&str> = BTreeSet::new();
    while taken.len() < graph.len() {
        let ready: Vec<&str> = graph
            .iter()
            .filter(|(m, uses)| {
                !taken.contains(m.as_str())
                    && uses
                        .iter()
                        .all(|u| taken.contains(u.as_str()) || !graph.contains_key(u))
            })
            .map(|(m, _)| m.as_str())
            .collect();
        assert!(
            !ready.is_empty(),
            "{src}: a cycle among {:?}",
            graph
                .keys()
                .filter(|m| !taken.contains(m.as_str()))
                .collect::<Vec<_>>()
        );
        taken.extend(ready);
    }
}

#[test]
fn the_scanner_sees_uses_groups_and_reexports() {
    let text = "use crate::evaluator::{Sweep};\nuse crate::{game::Game, layout};\nlet x = crate::load(1); // crate::export\n#[cfg(test)]\nmod tests {\n use crate::pipeline;\n}";
    assert_eq!(crate_names(&code(text)), ["evaluator", "game", "layout", "load"]);
    let map = reexports("pub use pipeline::{load, LoadConfig};\npub use ir::Circuit;\n");
    assert_eq!(map.get("load").map(String::as_str), Some("pipeline"));
    assert_eq!(map.get("Circuit").map(String::as_str), Some("ir"));
}
