//! The built-in catalog: `catalog/patterns.toml`, validated and pre-rendered
//! by `build.rs` into static data (nothing is parsed at run time).

use crate::pattern::{Category, Kind, Variant};

/// One built-in pattern.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BuiltinPattern {
    /// Stable, human-readable, unique id (same in both variants).
    pub id: &'static str,
    /// The pattern text as published.
    pub pattern: &'static str,
    /// Substring or regex.
    pub kind: Kind,
    /// Its category.
    pub category: Category,
    /// Share of matched events that are noise, 0 to 1 (docs/CATALOG.md).
    pub confidence: f64,
    /// Where the fact comes from.
    pub source: &'static str,
    /// For a regex: its Rust spelling, translated at build time.
    pub rust_regex: Option<&'static str>,
}

/// One variant's patterns pre-rendered as JSON.
#[derive(Debug)]
pub(crate) struct Rendered {
    /// Each listed pattern's JSON object followed by a comma, in catalog order.
    pub(crate) fragments: &'static str,
    /// Per listed pattern: end offset of its fragment (comma included), confidence.
    pub(crate) entries: &'static [(u32, f64)],
    /// Index into `entries` where each category starts; the last is the total.
    pub(crate) category_starts: [u32; 7],
}

include!(concat!(env!("OUT_DIR"), "/catalog.rs"));

/// The catalog compiled into this build.
pub fn patterns() -> &'static [BuiltinPattern] {
    &PATTERNS
}

/// The catalog's release date (UTC, `YYYY-MM-DD`).
pub fn release() -> &'static str {
    RELEASE
}

impl Rendered {
    pub(crate) fn of(variant: Variant) -> &'static Rendered {
        match variant {
            Variant::A => &RENDERED_A,
            Variant::B => &RENDERED_B,
        }
    }

    /// Appends the fragments of `category` at or above `min_confidence` and
    /// returns the byte range copied. They are a prefix of the category's
    /// run, so this is one copy.
    pub(crate) fn push_category(
        &self,
        category: Category,
        min_confidence: f64,
        out: &mut Vec<u8>,
    ) -> (u32, u32) {
        let first = self.category_starts[category.index()] as usize;
        let last = self.category_starts[category.index() + 1] as usize;
        let run = &self.entries[first..last];
        let kept = run.partition_point(|&(_, confidence)| confidence >= min_confidence);
        let start = if first == 0 {
            0
        } else {
            self.entries[first - 1].0
        };
        if kept == 0 {
            return (start, start);
        }
        let end = run[kept - 1].0;
        out.extend_from_slice(&self.fragments.as_bytes()[start as usize..end as usize]);
        (start, end)
    }

    /// Total length of all fragments: an upper bound for a body's built-in part.
    pub(crate) fn len(&self) -> usize {
        self.fragments.len()
    }
}
