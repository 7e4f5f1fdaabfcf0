//! The JSON shape of one pattern in each variant.
//!
//! Built-in patterns are rendered by `build.rs` and custom patterns per request;
//! both go through these structs (this file is included by `build.rs` through
//! `#[path]`), so a built-in and a custom pattern can never be spelled
//! differently. Field order is the field order of docs/CONTRACT.md.

use serde::Serialize;

/// A pattern as Variant A writes it.
#[derive(Debug, Serialize)]
pub struct PatternA<'a> {
    pub id: &'a str,
    pub pattern: &'a str,
    #[serde(rename = "type")]
    pub kind: &'a str,
    pub category: &'a str,
    pub confidence: f64,
    pub source: &'a str,
}

/// A pattern as Variant B writes it: no `type`, no `source`.
#[derive(Debug, Serialize)]
pub struct PatternB<'a> {
    pub id: &'a str,
    pub pattern: &'a str,
    pub category: &'a str,
    pub confidence: f64,
}

/// One catalog pattern as [`render_catalog`] takes it.
#[cfg_attr(feature = "prerendered", allow(dead_code))]
#[derive(Debug, Clone, Copy)]
pub struct Listed<'a> {
    pub id: &'a str,
    pub pattern: &'a str,
    pub regex: bool,
    /// Index of its category in the category table's order (docs/CONTRACT.md).
    pub category: usize,
    pub confidence: f64,
    pub source: &'a str,
}

/// One variant's catalog as JSON fragments: every listed pattern's object
/// followed by a comma, in catalog order (`patterns` is in it); per fragment
/// its end offset and confidence; where each category starts in those
/// entries (the last is the total). Variant B lists no regex. `names` are
/// the variant's category spellings. `build.rs` pre-renders with this, and
/// without the `prerendered` feature the core renders with it at first use:
/// the same function, so the same bytes.
#[cfg_attr(feature = "prerendered", allow(dead_code))]
pub fn render_catalog(
    variant_a: bool,
    names: &[&str; 6],
    patterns: &[Listed<'_>],
) -> (String, Vec<(u32, f64)>, [u32; 7]) {
    let mut fragments = String::new();
    let mut entries = Vec::new();
    let mut starts = [0u32; 7];
    for (category, start) in starts.iter_mut().take(6).enumerate() {
        *start = entries.len() as u32;
        for p in patterns.iter().filter(|p| p.category == category) {
            let json = if variant_a {
                serde_json::to_string(&PatternA {
                    id: p.id,
                    pattern: p.pattern,
                    kind: if p.regex { "regex" } else { "string" },
                    category: names[category],
                    confidence: p.confidence,
                    source: p.source,
                })
            } else if p.regex {
                // Variant B has no `type`: every pattern is a substring, so
                // regex patterns are left out of it.
                continue;
            } else {
                serde_json::to_string(&PatternB {
                    id: p.id,
                    pattern: p.pattern,
                    category: names[category],
                    confidence: p.confidence,
                })
            };
            // Plain structs of strings and a finite float always serialize.
            fragments.push_str(&json.unwrap_or_default());
            fragments.push(',');
            entries.push((fragments.len() as u32, p.confidence));
        }
    }
    starts[6] = entries.len() as u32;
    (fragments, entries, starts)
}
