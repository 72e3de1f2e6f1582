//! The public API of every library crate, kept as a snapshot under
//! `tools/tests/public_api/` so that a change to it is deliberate: this test
//! lists each crate's public items from its source (functions and methods with
//! their signatures, types with their public fields and variants, traits,
//! constants, re-exports and public modules) and compares the list with the
//! snapshot. After a deliberate change, `GGPNET_BLESS=1 cargo test --release
//! -p ggpnet-tools --test public_api` rewrites the snapshots; review their diff.
//!
//! An item counts as public when it is declared `pub` (not `pub(crate)` or
//! narrower), in any module: a `pub` item of a private module may be
//! re-exported, so it is listed too, under its module's path.

use quote::ToTokens;
use std::fs;
use std::path::{Path, PathBuf};
use syn::{Fields, ImplItem, Item, TraitItem, Visibility};

/// The library crates: name and source directory under the project root.
const CRATES: [(&str, &str); 8] = [
    ("ggpnet", "src"),
    ("ggpnet_kif", "kif/src"),
    ("ggpnet_grounder", "grounder/src"),
    ("ggpnet_propnet", "propnet/src"),
    ("ggpnet_reference", "reference/src"),
    ("ggpnet_rtgdl", "rtgdl/src"),
    ("ggpnet_sbg", "sbg/src"),
    ("ggpnet_rbg", "rbg/src"),
];

#[test]
fn the_public_api_is_the_snapshot() {
    let root = ggpnet_tools::corpus::project_root();
    let bless = std::env::var("GGPNET_BLESS").is_ok_and(|v| v == "1");
    let mut changed = Vec::new();
    for (name, dir) in CRATES {
        let listed = public_items(&root.join(dir).join("lib.rs"), name).join("\n") + "\n";
        let snapshot = root.join("tools/tests/public_api").join(format!("{name}.txt"));
        if bless {
            fs::write(&snapshot, &listed).expect("the snapshot is written");
        } else if fs::read_to_string(&snapshot).ok().as_deref() != Some(listed.as_str()) {
            changed.push(format!("{name} ({})", snapshot.display()));
        }
    }
    assert!(
        changed.is_empty(),
        "the public API changed in {}: if deliberate, rerun with GGPNET_BLESS=1 and review the snapshots' diff",
        changed.join(", ")
    );
}

/// The public items of the crate whose root file is `root`, one line each,
/// sorted: `path kind text`.
fn public_items(root: &Path, crate_name: &str) -> Vec<String> {
    let mut lines = Vec::new();
    walk(root, crate_name, &mut lines);
    lines.sort();
    lines.dedup();
    lines
}

/// Lists the public items of the module in `file` (path `module`) and of the
/// modules it declares in files of their own.
fn walk(file: &Path, module: &str, lines: &mut Vec<String>) {
    let text = fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let parsed = syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    items(&parsed.items, file, module, lines);
}

fn items(list: &[Item], file: &Path, module: &str, lines: &mut Vec<String>) {
    for item in list {
        if is_test_only(item) {
            continue;
        }
        match item {
            Item::Mod(m) => {
                let path = format!("{module}::{}", m.ident);
                if is_pub(&m.vis) {
                    lines.push(format!("{path} mod"));
                }
                match &m.content {
                    Some((_, inner)) => items(inner, file, &path, lines),
                    None => walk(&module_file(file, &m.ident.to_string()), &path, lines),
                }
            }
            Item::Impl(i) => impl_items(i, module, lines),
            other => {
                if let Some(line) = item_line(other, module) {
                    lines.push(line);
                }
            }
        }
    }
}

/// The file of module `name` declared in `file`: `name.rs` or `name/mod.rs`
/// beside a `lib.rs` or `mod.rs`, else in the folder named after `file`.
fn module_file(file: &Path, name: &str) -> PathBuf {
    let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    let dir = match stem {
        "lib" | "mod" | "main" => file.parent().expect("a folder").to_path_buf(),
        _ => file.with_extension(""),
    };
    let flat = dir.join(format!("{name}.rs"));
    if flat.exists() {
        flat
    } else {
        dir.join(name).join("mod.rs")
    }
}

/// Whether `item` is compiled for tests only (`#[cfg(test)]`).
fn is_test_only(item: &Item) -> bool {
    let attrs = match item {
        Item::Mod(m) => &m.attrs,
        Item::Fn(f) => &f.attrs,
        Item::Impl(i) => &i.attrs,
        Item::Const(c) => &c.attrs,
        Item::Use(u) => &u.attrs,
        _ => return false,
    };
    attrs
        .iter()
        .any(|a| a.path().is_ident("cfg") && a.meta.to_token_stream().to_string().contains("test"))
}

fn is_pub(vis: &Visibility) -> bool {
    matches!(vis, Visibility::Public(_))
}

/// Tokens as one line of text.
fn text(tokens: &impl ToTokens) -> String {
    tokens.to_token_stream().to_string()
}

/// The line of a public item other than a module or an impl block.
fn item_line(item: &Item, module: &str) -> Option<String> {
    let line = match item {
        Item::Fn(f) if is_pub(&f.vis) => format!("{module} fn {}", text(&f.sig)),
        Item::Struct(s) if is_pub(&s.vis) => {
            format!(
                "{module}::{} struct{} {}",
                s.ident,
                text(&s.generics),
                fields(&s.fields, false)
            )
        }
        Item::Enum(e) if is_pub(&e.vis) => {
            let variants: Vec<String> = e
                .variants
                .iter()
                .map(|v| format!("{}{}", v.ident, fields(&v.fields, true)))
                .collect();
            format!(
                "{module}::{} enum{} {{ {} }}",
                e.ident,
                text(&e.generics),
                variants.join(", ")
            )
        }
        Item::Trait(t) if is_pub(&t.vis) => {
            let members: Vec<String> = t
                .items
                .iter()
                .filter_map(|i| match i {
                    TraitItem::Fn(f) => Some(text(&f.sig)),
                    TraitItem::Type(ty) => Some(format!("type {}", ty.ident)),
                    TraitItem::Const(c) => Some(format!("const {}", c.ident)),
                    _ => None,
                })
                .collect();
            format!("{module}::{} trait {{ {} }}", t.ident, members.join("; "))
        }
        Item::Const(c) if is_pub(&c.vis) => format!("{module}::{} const {}", c.ident, text(&c.ty)),
        Item::Static(s) if is_pub(&s.vis) => format!("{module}::{} static {}", s.ident, text(&s.ty)),
        Item::Type(t) if is_pub(&t.vis) => format!("{module}::{} type {}", t.ident, text(&t.ty)),
        Item::Use(u) if is_pub(&u.vis) => format!("{module} use {}", text(&u.tree)),
        _ => return None,
    };
    Some(line)
}

/// A struct's public fields, or all of a variant's (`all`).
fn fields(fields: &Fields, all: bool) -> String {
    let shown: Vec<String> = fields
        .iter()
        .filter(|f| all || is_pub(&f.vis))
        .map(|f| match &f.ident {
            Some(name) => format!("{name}: {}", text(&f.ty)),
            None => text(&f.ty),
        })
        .collect();
    match fields {
        Fields::Named(_) => format!(" {{ {} }}", shown.join(", ")),
        Fields::Unnamed(_) => format!("({})", shown.join(", ")),
        Fields::Unit => String::new(),
    }
}

/// The public methods and associated items of an impl block, and the trait
/// it implements for its type.
fn impl_items(block: &syn::ItemImpl, module: &str, lines: &mut Vec<String>) {
    let ty = text(&block.self_ty);
    if let Some((_, trait_path, _)) = &block.trait_ {
        lines.push(format!("{module} impl {} for {ty}", text(trait_path)));
        return;
    }
    for item in &block.items {
        match item {
            ImplItem::Fn(f) if is_pub(&f.vis) => lines.push(format!("{module} {ty}::{}", text(&f.sig))),
            ImplItem::Const(c) if is_pub(&c.vis) => {
                lines.push(format!("{module} {ty}::{} const {}", c.ident, text(&c.ty)))
            }
            _ => {}
        }
    }
}
