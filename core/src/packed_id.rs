//! The id a built-in pattern's text spells: what the packed catalog of the
//! npm matcher-only wasm stores instead of the id, when the two are the
//! same (564 of the catalog's 1,006 ids; ~3.7 KB gzip of the packed text).
//!
//! This file is compiled twice: into the crate (`catalog.rs` unpacks with
//! it), and into `build.rs` through `#[path]`, which packs with it. It uses
//! nothing but `std`.

/// `pattern` lowercased, each run of characters other than ASCII letters
/// and digits written as one `-`, with none at either end
/// (`Loading chunk \d+ failed` spells `loading-chunk-d-failed`).
pub fn spelled_id(pattern: &str) -> String {
    let mut id = String::with_capacity(pattern.len());
    for c in pattern.chars() {
        if c.is_ascii_alphanumeric() {
            id.push(c.to_ascii_lowercase());
        } else if !id.is_empty() && !id.ends_with('-') {
            id.push('-');
        }
    }
    if id.ends_with('-') {
        id.pop();
    }
    id
}
