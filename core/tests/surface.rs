//! The crate's documented surface is its whole public surface: every item
//! `lib.rs` exports is named in its "The public surface" list, and the list
//! names nothing else, so a reader of the crate's front page sees the API
//! as it is.

use std::collections::BTreeSet;

const LIB: &str = include_str!("../src/lib.rs");

/// The names the doc list links (`[`Name`]`, methods left out) and the one
/// it names in code (`MemoryStore`, behind a feature the docs build lacks).
fn documented() -> BTreeSet<String> {
    let section: String = LIB
        .lines()
        .skip_while(|l| !l.starts_with("//! ## The public surface"))
        .take_while(|l| l.starts_with("//!"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut names = BTreeSet::new();
    for part in section.split("[`").skip(1) {
        let name = part.split('`').next().unwrap_or_default();
        if !name.contains("::") {
            names.insert(name.to_owned());
        }
    }
    for part in section.split('`').skip(1).step_by(2) {
        if part == "MemoryStore" {
            names.insert(part.to_owned());
        }
    }
    names
}

/// The names `lib.rs` exports: `pub use` items and `pub mod`s.
fn exported() -> BTreeSet<String> {
    let code: String = LIB
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut names = BTreeSet::new();
    for line in code.lines() {
        if let Some(module) = line.strip_prefix("pub mod ") {
            names.insert(module.trim_end_matches(';').to_owned());
        }
    }
    for block in code.split("pub use ").skip(1) {
        let block = block.split(';').next().unwrap_or_default();
        // `module::Item`, `module::{A, B}`, `{ module::{A}, other::B }`.
        let items = block.replace(['{', '}', '\n'], " ");
        for item in items.split(',') {
            let item = item.trim();
            if let Some(name) = item.rsplit("::").next().filter(|n| !n.is_empty()) {
                let name = name.split_whitespace().last().unwrap_or(name);
                names.insert(name.to_owned());
            }
        }
    }
    names
}

#[test]
fn the_doc_list_is_the_public_surface() {
    let (documented, exported) = (documented(), exported());
    let undocumented: Vec<_> = exported.difference(&documented).collect();
    let not_exported: Vec<_> = documented.difference(&exported).collect();
    assert!(
        undocumented.is_empty() && not_exported.is_empty(),
        "exported but not in the list: {undocumented:?}; in the list but not exported: {not_exported:?}"
    );
    assert!(exported.len() > 50, "{exported:?}");
}
