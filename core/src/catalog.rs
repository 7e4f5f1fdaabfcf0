//! The built-in catalog: `catalog/patterns.toml`, validated and pre-rendered
//! by `build.rs` into static data (nothing is parsed at run time).
//!
//! With the `prerendered` feature (default) each variant's JSON is static
//! data too, so a fresh instance per request (Spin) renders nothing. Without
//! it (the npm package, where one instance serves many requests and size
//! counts) the catalog is held once, as [`patterns`], and each variant is
//! rendered at first use by the same function `build.rs` uses
//! (`wire::render_catalog`): the same bytes, and the same [`DIGEST`] (computed
//! by `build.rs` in both cases).

#[cfg(feature = "endpoint")]
use std::borrow::Cow;

use crate::pattern::{Category, Kind, MatcherPattern, Variant};
use crate::tags::Tags;

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
    /// Where the fact comes from (only with the `endpoint` feature: the
    /// matcher does not report it).
    #[cfg(feature = "endpoint")]
    pub source: &'static str,
    /// For a regex: its Rust spelling, translated at build time. Without
    /// the `endpoint` feature (the npm matcher-only wasm) only a regex with
    /// no literals has it; the matcher translates the others when it first
    /// compiles them.
    pub rust_regex: Option<&'static str>,
    /// For a regex with literals one of which its every match contains
    /// (`literals::required_literals`, extracted at build time): them,
    /// separated by [`literals::SEPARATOR`].
    pub(crate) regex_literals: Option<&'static str>,
    /// What it recognises, finer than its category (docs/CATALOG.md, "Tags").
    pub tags: Tags,
}

impl BuiltinPattern {
    /// For a regex: the literals its every match contains, if it has a
    /// usable set (else the matcher runs it on every text).
    pub(crate) fn required_literals(&self) -> Option<impl Iterator<Item = &'static str>> {
        self.regex_literals
            .map(|all| all.split(crate::literals::SEPARATOR))
    }
}

/// One variant's patterns pre-rendered as JSON.
#[cfg(feature = "endpoint")]
#[derive(Debug)]
pub(crate) struct Rendered {
    /// Each listed pattern's JSON object followed by a comma, in catalog order.
    pub(crate) fragments: Cow<'static, str>,
    /// Per listed pattern: end offset of its fragment (comma included), confidence.
    pub(crate) entries: Cow<'static, [(u32, f64)]>,
    /// Index into `entries` where each category starts; the last is the total.
    pub(crate) category_starts: [u32; 7],
}

/// A unit of [`Compressed::units`]: the entry it ends before, where its
/// compressed data ends, the CRC-32 and length of its block's bytes up to
/// it, whether it ends its block.
#[cfg(feature = "endpoint")]
pub(crate) type Unit = (u32, u32, u32, u32, bool);

/// One variant's catalog compressed at build time (`build.rs`,
/// `precompress`): the pieces a gzip answer is put together from
/// (`gzip::Member`), and the usual answer compressed whole.
#[cfg(feature = "endpoint")]
#[derive(Debug)]
pub(crate) struct Compressed {
    /// Per category, one raw DEFLATE stream of its fragments less the last
    /// comma, sync-flushed after each unit (a run of patterns of one
    /// confidence, or less), fully flushed after each block's last unit,
    /// the categories one after another.
    pub(crate) stream: &'static [u8],
    /// Per unit: the entry it ends before (as `Rendered::entries` counts),
    /// where its compressed data ends in `stream`, the CRC-32 and length of
    /// its block's bytes from the block's start to its end (less the comma
    /// there), and whether it ends its block (a full flush).
    pub(crate) units: &'static [Unit],
    /// Index into `units` where each category's start; the last is the total.
    pub(crate) category_units: [u32; 7],
    /// The usual answer (no parameter, no custom pattern) as one gzip member.
    pub(crate) usual_gzip: &'static [u8],
    /// The usual answer, brotli (quality 11).
    pub(crate) usual_brotli: &'static [u8],
}

include!(concat!(env!("OUT_DIR"), "/catalog.rs"));

/// The catalog compiled into this build.
#[cfg(feature = "endpoint")]
pub fn builtin_patterns() -> &'static [BuiltinPattern] {
    &PATTERNS
}

/// The catalog compiled into this build: without `endpoint` (the npm
/// matcher-only wasm) it is packed by `build.rs` (no sources, no
/// per-pattern pointers, no id its text spells) and unpacked here once, to
/// the same ids, texts,
/// kinds, categories, confidences (bit for bit), Rust regexes, literals and
/// tags.
#[cfg(not(feature = "endpoint"))]
pub fn builtin_patterns() -> &'static [BuiltinPattern] {
    static UNPACKED: std::sync::OnceLock<Vec<BuiltinPattern>> = std::sync::OnceLock::new();
    UNPACKED.get_or_init(|| {
        let mut parts = PACKED_TEXT.split('\0');
        let mut next = move || parts.next().unwrap_or_default();
        PACKED_META
            .iter()
            .map(|&(tag, percent)| {
                let (id, pattern, rust, literals, tags) = (next(), next(), next(), next(), next());
                BuiltinPattern {
                    // Left out when the text spells it; unpacked once a
                    // process, so the leak is the catalog's ids, once.
                    id: if id.is_empty() {
                        Box::leak(crate::packed_id::spelled_id(pattern).into_boxed_str())
                    } else {
                        id
                    },
                    pattern,
                    kind: if tag & 8 == 0 {
                        Kind::String
                    } else {
                        Kind::Regex
                    },
                    category: Category::ALL[usize::from(tag & 7) % 6],
                    confidence: f64::from(percent) / 100.0,
                    rust_regex: (!rust.is_empty()).then_some(rust),
                    regex_literals: (!literals.is_empty()).then_some(literals),
                    tags: Tags::from_packed(tags),
                }
            })
            .collect()
    })
}

/// The catalog's release date (UTC, `YYYY-MM-DD`).
pub fn catalog_release() -> &'static str {
    RELEASE
}

#[cfg(feature = "endpoint")]
impl Rendered {
    #[cfg(feature = "prerendered")]
    pub(crate) fn of(variant: Variant) -> &'static Rendered {
        match variant {
            Variant::A => &RENDERED_A,
            Variant::B => &RENDERED_B,
        }
    }

    #[cfg(not(feature = "prerendered"))]
    pub(crate) fn of(variant: Variant) -> &'static Rendered {
        static A: std::sync::OnceLock<Rendered> = std::sync::OnceLock::new();
        static B: std::sync::OnceLock<Rendered> = std::sync::OnceLock::new();
        match variant {
            Variant::A => A.get_or_init(|| Rendered::render(variant)),
            Variant::B => B.get_or_init(|| Rendered::render(variant)),
        }
    }

    /// Renders `variant` from [`patterns`], as `build.rs` pre-renders it.
    /// (With `prerendered`: only the test that compares the two.)
    #[cfg_attr(feature = "prerendered", allow(dead_code))]
    pub(crate) fn render(variant: Variant) -> Rendered {
        let listed: Vec<crate::wire::Listed<'_>> = PATTERNS
            .iter()
            .map(|p| crate::wire::Listed {
                id: p.id,
                pattern: p.pattern,
                regex: p.kind == Kind::Regex,
                category: p.category.index(),
                confidence: p.confidence,
                source: p.source,
            })
            .collect();
        let names = Category::ALL.map(|c| c.name(variant));
        let (fragments, entries, category_starts) =
            crate::wire::render_catalog(variant == Variant::A, &names, &listed);
        Rendered {
            fragments: Cow::Owned(fragments),
            entries: Cow::Owned(entries),
            category_starts,
        }
    }

    /// The span of the fragments of `category` at or above
    /// `min_confidence`, as a byte range of [`Rendered::bytes`]. They are a
    /// prefix of the category's run, so this is one span.
    pub(crate) fn category_span(&self, category: Category, min_confidence: f64) -> (u32, u32) {
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
        (start, run[kept - 1].0)
    }

    /// The entries (listed patterns, by their place in this rendering) of
    /// `category` at or above `min_confidence`: a prefix of its run.
    pub(crate) fn category_entries(
        &self,
        category: Category,
        min_confidence: f64,
    ) -> std::ops::Range<usize> {
        let first = self.category_starts[category.index()] as usize;
        let last = self.category_starts[category.index() + 1] as usize;
        let kept = self.entries[first..last].partition_point(|&(_, c)| c >= min_confidence);
        first..first + kept
    }

    /// The bytes of entry `entry`'s fragment (its comma included).
    pub(crate) fn entry_span(&self, entry: usize) -> (u32, u32) {
        let start = if entry == 0 {
            0
        } else {
            self.entries[entry - 1].0
        };
        (start, self.entries[entry].0)
    }

    /// Every fragment, in catalog order: the bytes the spans index.
    pub(crate) fn bytes(&self) -> &[u8] {
        self.fragments.as_bytes()
    }
}

#[cfg(feature = "endpoint")]
impl Compressed {
    pub(crate) fn of(variant: Variant) -> &'static Compressed {
        match variant {
            Variant::A => &COMPRESSED_A,
            Variant::B => &COMPRESSED_B,
        }
    }

    /// The units of `category` and where its compressed data starts in
    /// [`Compressed::stream`].
    pub(crate) fn category(&self, category: Category) -> (&'static [Unit], usize) {
        let i = category.index();
        let first = self.category_units[i] as usize;
        let start = if first == 0 {
            0
        } else {
            self.units[first - 1].1 as usize
        };
        (
            &self.units[first..self.category_units[i + 1] as usize],
            start,
        )
    }
}

#[cfg(all(test, feature = "endpoint"))]
mod tests {
    use super::*;

    /// What the npm build renders at first use is byte for byte what
    /// `build.rs` pre-rendered, and hashes to the [`DIGEST`] ETags use.
    #[test]
    #[cfg(feature = "prerendered")]
    fn rendering_at_first_use_equals_the_prerendered_catalog() {
        let mut digest = xxhash_rust::xxh3::Xxh3::new();
        for variant in Variant::ALL {
            let rendered = Rendered::render(variant);
            let stored = Rendered::of(variant);
            assert_eq!(rendered.fragments, stored.fragments, "{variant:?}");
            assert_eq!(rendered.entries, stored.entries, "{variant:?}");
            assert_eq!(rendered.category_starts, stored.category_starts);
            digest.update(rendered.fragments.as_bytes());
        }
        assert_eq!(digest.digest(), DIGEST);
        assert!(Rendered::of(Variant::A).bytes().len() > 50_000);
    }

    /// Without `prerendered` (`cargo test -p noise-filter-core
    /// --no-default-features --features endpoint`): rendered once, and to
    /// the digest's bytes.
    #[test]
    #[cfg(not(feature = "prerendered"))]
    fn catalog_is_rendered_once_at_first_use() {
        let mut digest = xxhash_rust::xxh3::Xxh3::new();
        for variant in Variant::ALL {
            assert!(std::ptr::eq(Rendered::of(variant), Rendered::of(variant)));
            digest.update(Rendered::of(variant).fragments.as_bytes());
        }
        assert_eq!(digest.digest(), DIGEST);
    }
}

impl From<&BuiltinPattern> for MatcherPattern {
    fn from(p: &BuiltinPattern) -> Self {
        MatcherPattern {
            id: p.id.to_owned(),
            pattern: p.pattern.to_owned(),
            kind: p.kind,
            category: p.category.name(Variant::A).to_owned(),
            confidence: p.confidence,
        }
    }
}
