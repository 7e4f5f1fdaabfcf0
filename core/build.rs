//! Turns `catalog/patterns.toml` into static data.
//!
//! The Spin component starts a fresh instance for every request, so nothing
//! may be parsed or compiled per request. This script validates the catalog
//! (ids, categories, confidences, every regex in the shared subset, linear in
//! a backtracking engine and no catch-all: `syntax::validate`) and fails
//! the build on any error; then it writes the patterns as a static array and
//! pre-renders each pattern's JSON for both variants, sorted so that any
//! request's built-in part is at most six contiguous slices. With the core's
//! `prerendered` feature off (the npm build), only the patterns and the
//! rendering's digest are written; the core renders at first use.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::path::PathBuf;

use serde::Deserialize;

#[path = "src/compiled_size.rs"]
mod compiled_size;
#[path = "src/gzip.rs"]
#[allow(dead_code, unreachable_pub)]
mod gzip;
#[path = "src/literals.rs"]
#[allow(dead_code, unreachable_pub)]
mod literals;
#[path = "src/packed_id.rs"]
#[allow(unreachable_pub)]
mod packed_id;
#[path = "src/rust_regex.rs"]
#[allow(dead_code, unreachable_pub)]
mod rust_regex;
// Every built-in regex is compiled with Rust's `regex`, with the core's
// `host-regex` feature too (which `syntax.rs` then reads as its engine).
#[allow(unused_imports)]
use rust_regex as host_regex;
#[path = "src/syntax.rs"]
#[allow(dead_code, unreachable_pub, unused_imports)]
mod syntax;
#[path = "src/tags.rs"]
#[allow(dead_code, unreachable_pub)]
mod tags;
#[path = "src/wire.rs"]
#[allow(dead_code, unreachable_pub)]
mod wire;

const CATEGORIES_A: [&str; 6] = [
    "browser-extension",
    "third-party-script",
    "bot-traffic",
    "network-issue",
    "known-library",
    "other",
];
const CATEGORIES_B: [&str; 6] = [
    "BROWSER_EXTENSION",
    "THIRD_PARTY_SCRIPT",
    "BOT_TRAFFIC",
    "NETWORK_ISSUE",
    "KNOWN_LIBRARY",
    "OTHER",
];
const VARIANTS: [&str; 6] = [
    "BrowserExtension",
    "ThirdPartyScript",
    "BotTraffic",
    "NetworkIssue",
    "KnownLibrary",
    "Other",
];

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CatalogFile {
    release: String,
    pattern: Vec<Entry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    id: String,
    pattern: String,
    #[serde(rename = "type")]
    kind: String,
    category: String,
    confidence: f64,
    source: String,
    /// Sub-kinds, from the vocabulary in `src/tags.rs`; at least one.
    tags: Vec<String>,
}

struct Checked {
    entry: Entry,
    category: usize,
    regex: Option<String>,
    /// For a regex with a usable literal set: the literals, joined by
    /// `literals::SEPARATOR`.
    literals: Option<String>,
    /// The tags as bits (`tags::Tags`).
    tags: u64,
}

fn main() {
    let manifest = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("cargo sets it"));
    let path = manifest.join("catalog/patterns.toml");
    println!("cargo::rerun-if-changed={}", path.display());
    println!("cargo::rerun-if-changed=src/syntax.rs");
    println!("cargo::rerun-if-changed=src/literals.rs");
    println!("cargo::rerun-if-changed=src/wire.rs");
    println!("cargo::rerun-if-changed=src/tags.rs");
    println!("cargo::rerun-if-changed=src/gzip.rs");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let file: CatalogFile =
        toml::from_str(&text).unwrap_or_else(|e| panic!("{} is not valid: {e}", path.display()));

    let mut errors = Vec::new();
    let patterns = check(file.pattern, &mut errors);
    if !is_date(&file.release) {
        errors.push(format!(
            "release {:?} is not a YYYY-MM-DD date",
            file.release
        ));
    }
    if !errors.is_empty() {
        panic!(
            "catalog/patterns.toml has {} error(s):\n  {}",
            errors.len(),
            errors.join("\n  ")
        );
    }

    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it")).join("catalog.rs");
    std::fs::write(&out, generate(&file.release, &patterns)).expect("OUT_DIR is writable");
}

fn check(entries: Vec<Entry>, errors: &mut Vec<String>) -> Vec<Checked> {
    let mut ids = HashSet::new();
    let mut texts = HashSet::new();
    let mut out = Vec::with_capacity(entries.len());
    for entry in entries {
        let at = format!("pattern {:?}", entry.id);
        if !is_id(&entry.id) {
            errors.push(format!("{at}: id must match ^[a-z0-9][a-z0-9-]{{1,62}}$"));
        }
        if entry.id.starts_with("custom-") {
            errors.push(format!(
                "{at}: ids starting with custom- are kept for custom patterns"
            ));
        }
        if !ids.insert(entry.id.clone()) {
            errors.push(format!("{at}: duplicate id"));
        }
        if !texts.insert((entry.kind.clone(), entry.pattern.to_lowercase())) {
            errors.push(format!("{at}: the same pattern text appears twice"));
        }
        if entry.pattern.trim().len() < 3 || entry.pattern.chars().any(char::is_control) {
            errors.push(format!(
                "{at}: pattern must be at least 3 visible characters, no controls"
            ));
        }
        if !(0.0..=1.0).contains(&entry.confidence)
            || ((entry.confidence * 100.0).round() - entry.confidence * 100.0).abs() > 1e-9
        {
            errors.push(format!(
                "{at}: confidence must be in [0, 1] with at most 2 decimals"
            ));
        }
        if entry.source.trim().is_empty() || entry.source.chars().count() > 200 {
            errors.push(format!("{at}: source must be 1 to 200 characters"));
        }
        let mut tag_bits = 0u64;
        if entry.tags.is_empty() {
            errors.push(format!("{at}: needs at least one tag"));
        }
        for tag in &entry.tags {
            match tags::NAMES.iter().position(|t| t == tag) {
                Some(i) if tag_bits & (1 << i) == 0 => tag_bits |= 1 << i,
                Some(_) => errors.push(format!("{at}: tag {tag:?} given twice")),
                None => errors.push(format!(
                    "{at}: unknown tag {tag:?} (the vocabulary is in src/tags.rs)"
                )),
            }
        }
        let category = CATEGORIES_A.iter().position(|c| *c == entry.category);
        if category.is_none() {
            errors.push(format!("{at}: unknown category {:?}", entry.category));
        }
        let regex = match entry.kind.as_str() {
            "string" => None,
            "regex" => match syntax::validate_regex(&entry.pattern) {
                Ok(rust) => Some(rust),
                Err(e) => {
                    errors.push(format!("{at}: {e}"));
                    None
                }
            },
            other => {
                errors.push(format!("{at}: type must be string or regex, not {other:?}"));
                None
            }
        };
        let literals = regex
            .as_deref()
            .and_then(literals::required_literals)
            .map(|found| {
                for l in &found {
                    assert!(
                        !l.contains(['\0', literals::SEPARATOR]),
                        "{at}: literal {l:?} holds a character that cannot be packed"
                    );
                }
                found.join(&literals::SEPARATOR.to_string())
            });
        out.push(Checked {
            category: category.unwrap_or(0),
            regex,
            literals,
            tags: tag_bits,
            entry,
        });
    }
    // Catalog order: category (the category table, docs/CONTRACT.md), then confidence, highest
    // first, then id. Per category the patterns at or above any threshold are
    // then a prefix of that category's run.
    out.sort_by(|a, b| {
        a.category
            .cmp(&b.category)
            .then(b.entry.confidence.total_cmp(&a.entry.confidence))
            .then(a.entry.id.cmp(&b.entry.id))
    });
    out
}

fn is_id(id: &str) -> bool {
    let b = id.as_bytes();
    (2..=63).contains(&b.len())
        && (b[0].is_ascii_lowercase() || b[0].is_ascii_digit())
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
}

fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
}

fn generate(release: &str, patterns: &[Checked]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "// @generated by build.rs from catalog/patterns.toml. Do not edit."
    );
    let _ = writeln!(s, "pub(crate) const RELEASE: &str = {release:?};");
    // Without the `endpoint` feature (the npm matcher-only wasm) the
    // catalog is packed (`compact`): no sources (the matcher never reports
    // them, and they are a third of the catalog's bytes), no per-pattern
    // pointers; the core unpacks it once. Nothing is rendered then.
    if std::env::var_os("CARGO_FEATURE_ENDPOINT").is_none() {
        compact(&mut s, patterns);
        return s;
    }
    let _ = writeln!(
        s,
        "pub(crate) static PATTERNS: [BuiltinPattern; {}] = [",
        patterns.len()
    );
    for p in patterns {
        let e = &p.entry;
        let _ = writeln!(
            s,
            "    BuiltinPattern {{ id: {:?}, pattern: {:?}, kind: Kind::{}, category: Category::{}, \
             confidence: {:?}, source: {:?}, rust_regex: {:?}, regex_literals: {:?}, \
             tags: Tags::from_bits({:#x}) }},",
            e.id,
            e.pattern,
            if p.regex.is_some() { "Regex" } else { "String" },
            VARIANTS[p.category],
            e.confidence,
            e.source,
            p.regex,
            p.literals,
            p.tags,
        );
    }
    let _ = writeln!(s, "];");
    // Without the `prerendered` feature (the npm build) the core renders
    // these at first use, from PATTERNS, with the same function: the catalog
    // is then held once. The digest is computed here either way.
    let prerendered = std::env::var_os("CARGO_FEATURE_PRERENDERED").is_some();
    let mut digest = xxhash_rust::xxh3::Xxh3::new();
    let mut compressed_digest = xxhash_rust::xxh3::Xxh3::new();
    for (variant, names) in [("A", &CATEGORIES_A), ("B", &CATEGORIES_B)] {
        let (fragments, entries, starts) = render(variant, names, patterns);
        digest.update(fragments.as_bytes());
        // Compressed with or without `prerendered`: the npm build renders
        // the catalog at first use, but compressing it there would cost a
        // worker's first request tens of milliseconds, and brotli's encoder
        // would be in the wasm.
        precompress(
            &mut s,
            variant,
            release,
            &fragments,
            &entries,
            &starts,
            &mut compressed_digest,
        );
        if !prerendered {
            continue;
        }
        let _ = writeln!(
            s,
            "pub(crate) static RENDERED_{variant}: Rendered = Rendered {{"
        );
        let _ = writeln!(s, "    fragments: Cow::Borrowed({fragments:?}),");
        let _ = writeln!(s, "    entries: Cow::Borrowed(&{entries:?}),");
        let _ = writeln!(s, "    category_starts: {starts:?},");
        let _ = writeln!(s, "}};");
    }
    // Identifies the rendered catalog in ETags (shape.rs).
    let _ = writeln!(s, "pub(crate) const DIGEST: u64 = {:#x};", digest.digest());
    // And its compressed forms, in the ETags of encoded answers.
    let _ = writeln!(
        s,
        "pub(crate) const COMPRESSED_DIGEST: u64 = {:#x};",
        compressed_digest.digest()
    );
    s
}

/// The confidence threshold of a variant's usual answer
/// (`pattern::DEFAULT_MIN_CONFIDENCE`; a core test holds the usual answer
/// compressed here to the one the core renders).
const USUAL_MIN_CONFIDENCE: f64 = 0.5;

/// Plain bytes after which the next unit ends in a full flush: a block.
/// Nothing in a block refers back before it, so an account whose
/// exclusions cut holes in a category compresses only the blocks that
/// hold them (shape.rs); each block costs some compression (its first
/// bytes have no history).
const BLOCK: usize = 16 << 10;

/// One variant's catalog compressed, for `catalog::Compressed`:
///
/// - per category, one DEFLATE stream of its fragments with a sync flush
///   after each unit: a run of patterns of one confidence, cut further so
///   that every [`BLOCK`] bytes or so a unit ends in a full flush. Any
///   request's part of a category (those at or above its threshold) is a
///   prefix of the category, so it ends at a unit's end, and the stream up
///   to there is a piece of its gzip answer (`gzip::Member`); so is the
///   stream from a block's start to a unit's end. The stream holds the
///   category's bytes less its last comma, each unit's comma moved to the
///   start of the next, so a request's composer adds only the commas
///   between categories. Per unit: its last entry, where its compressed
///   data ends, the CRC-32 and length of its block's bytes up to it, and
///   whether it ends its block;
/// - the variant's usual answer (every category at the default threshold,
///   no custom pattern) compressed whole: gzip by zopfli (its default
///   15 iterations) and brotli at quality 11, which composing gives up (a category
///   stream cannot refer to the one before it: ~10 % larger).
fn precompress(
    s: &mut String,
    variant: &str,
    release: &str,
    fragments: &str,
    entries: &[(u32, f64)],
    starts: &[u32; 7],
    digest: &mut xxhash_rust::xxh3::Xxh3,
) {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets it"));
    let bytes = fragments.as_bytes();
    let end_of = |entry: usize| {
        if entry == 0 {
            0
        } else {
            entries[entry - 1].0 as usize
        }
    };
    let mut stream = Vec::new();
    let mut units = Vec::new();
    let mut category_units = [0u32; 7];
    for category in 0..6 {
        category_units[category] = units.len() as u32;
        let (first, last) = (starts[category] as usize, starts[category + 1] as usize);
        let start = end_of(first);
        // Unit boundaries: the entries before which the confidence changes
        // or a block is full, and the category's end.
        let mut cuts: Vec<(usize, bool)> = Vec::new();
        let mut block_from = start;
        for e in first + 1..last {
            let at = end_of(e) - 1;
            let full = at - block_from >= BLOCK;
            if full || entries[e].1 != entries[e - 1].1 {
                cuts.push((e, full));
                if full {
                    block_from = at;
                }
            }
        }
        if first < last {
            cuts.push((last, false));
        }
        let mut pieces = Vec::new();
        let mut from = start;
        for &(cut, full) in &cuts {
            // Less the unit's own last comma; the next unit starts with it.
            let to = end_of(cut) - 1;
            pieces.push((&bytes[from..to], full));
            from = to;
        }
        let (compressed, ends) = gzip::sync_flushed(pieces.iter().copied(), gzip::BUILD_LEVEL);
        let base = stream.len();
        stream.extend_from_slice(&compressed);
        let mut block_from = start;
        for (&(cut, full), end) in cuts.iter().zip(ends) {
            let to = end_of(cut) - 1;
            let plain = &bytes[block_from..to];
            units.push((
                cut as u32,
                (base + end) as u32,
                crc32fast::hash(plain),
                plain.len() as u32,
                full,
            ));
            if full {
                block_from = to;
            }
        }
    }
    category_units[6] = units.len() as u32;

    // The usual answer, as shape.rs assembles it: the head, each
    // category's patterns at or above the threshold, the last comma
    // dropped, the list's end.
    let mut usual = match variant {
        "A" => format!("{{\"version\":\"{release}\",\"patterns\":[").into_bytes(),
        _ => b"{\"patterns\":[".to_vec(),
    };
    for category in 0..6 {
        let (first, last) = (starts[category] as usize, starts[category + 1] as usize);
        let kept = entries[first..last].partition_point(|e| e.1 >= USUAL_MIN_CONFIDENCE);
        usual.extend_from_slice(&bytes[end_of(first)..end_of(first + kept)]);
    }
    if usual.last() == Some(&b',') {
        usual.pop();
    }
    usual.extend_from_slice(b"]}");
    // zopfli: 3.5 % (A) and 5 % (B) smaller than miniz_oxide's highest
    // level for about a second of build (docs/BENCHMARKS.md, "Bytes on the
    // wire"); every client of the usual answer in gzip downloads it.
    let mut deflate = Vec::new();
    zopfli::compress(
        zopfli::Options::default(),
        zopfli::Format::Deflate,
        &usual[..],
        &mut deflate,
    )
    .expect("compressing into memory");
    let usual_gzip = gzip::whole(&usual, &deflate);
    let mut usual_brotli = Vec::new();
    {
        use std::io::Write as _;
        let params = brotli::enc::BrotliEncoderParams {
            quality: 11,
            lgwin: 22,
            ..Default::default()
        };
        let mut writer = brotli::CompressorWriter::with_params(&mut usual_brotli, 1 << 16, &params);
        writer.write_all(&usual).expect("compressing into memory");
    }

    let lower = variant.to_lowercase();
    for (name, data) in [
        ("stream", &stream),
        ("usual.gz", &usual_gzip),
        ("usual.br", &usual_brotli),
    ] {
        digest.update(data);
        std::fs::write(out.join(format!("{lower}.{name}")), data).expect("OUT_DIR is writable");
    }
    let _ = writeln!(
        s,
        "pub(crate) static COMPRESSED_{variant}: Compressed = Compressed {{"
    );
    let _ = writeln!(
        s,
        "    stream: include_bytes!(concat!(env!(\"OUT_DIR\"), \"/{lower}.stream\")),"
    );
    let _ = writeln!(s, "    units: &{units:?},");
    let _ = writeln!(s, "    category_units: {category_units:?},");
    let _ = writeln!(
        s,
        "    usual_gzip: include_bytes!(concat!(env!(\"OUT_DIR\"), \"/{lower}.usual.gz\")),"
    );
    let _ = writeln!(
        s,
        "    usual_brotli: include_bytes!(concat!(env!(\"OUT_DIR\"), \"/{lower}.usual.br\")),"
    );
    let _ = writeln!(s, "}};");
}

/// The catalog packed for the matcher-only build (`catalog::patterns`
/// unpacks it): `PACKED_TEXT` holds each pattern's id (empty when it is
/// the one its text spells: `packed_id::spelled_id`), text, Rust regex
/// (empty for a substring, and for a regex with literals: translated when
/// first compiled), regex literals (empty when none) and tags (one
/// letter each, `'A'` + its index: most patterns have one or two, so this
/// is cheaper than a 64-bit mask each) separated by NUL, and `PACKED_META`
/// per pattern
/// its category's index (bit 3: a regex) and its confidence in hundredths,
/// which is exact: the check below proves `percent / 100` is the same f64.
fn compact(s: &mut String, patterns: &[Checked]) {
    let mut text = String::new();
    let mut meta = Vec::new();
    for p in patterns {
        let e = &p.entry;
        let literals = p.literals.as_deref().unwrap_or("");
        // A regex with literals is compiled only when a text holds one, so
        // the matcher translates it then (`LazyRegex`): its Rust spelling,
        // a tenth of the packed text, is not shipped. A regex without
        // literals runs in the matcher's `RegexSet` from the start, so it keeps it.
        let regex = if literals.is_empty() {
            p.regex.as_deref().unwrap_or("")
        } else {
            ""
        };
        let tags: String = (0..64u8)
            .filter(|i| p.tags & (1 << i) != 0)
            .map(|i| char::from(b'A' + i))
            .collect();
        let id = if packed_id::spelled_id(&e.pattern) == e.id {
            ""
        } else {
            &e.id
        };
        for part in [id, &e.pattern, regex, literals, &tags] {
            assert!(!part.contains('\0'), "{}: a NUL cannot be packed", e.id);
            text.push_str(part);
            text.push('\0');
        }
        let percent = (e.confidence * 100.0).round();
        assert!(
            (0.0..=100.0).contains(&percent) && percent / 100.0 == e.confidence,
            "{}: confidence {} is not a whole number of hundredths",
            e.id,
            e.confidence
        );
        let tag = p.category as u8 | if p.regex.is_some() { 8 } else { 0 };
        meta.push((tag, percent as u8));
    }
    // `{:?}` writes NUL as `\0`, which a digit may follow (not an octal
    // escape in Rust, but clippy asks).
    let _ = writeln!(s, "#[allow(clippy::octal_escapes)]");
    let _ = writeln!(s, "pub(crate) static PACKED_TEXT: &str = {text:?};");
    let _ = writeln!(
        s,
        "pub(crate) static PACKED_META: [(u8, u8); {}] = {meta:?};",
        meta.len()
    );
}

/// Pre-renders one variant (`wire::render_catalog`, which the core also
/// uses when it renders at first use instead).
fn render(
    variant: &str,
    names: &[&str; 6],
    patterns: &[Checked],
) -> (String, Vec<(u32, f64)>, [u32; 7]) {
    let listed: Vec<wire::Listed<'_>> = patterns
        .iter()
        .map(|p| wire::Listed {
            id: &p.entry.id,
            pattern: &p.entry.pattern,
            regex: p.regex.is_some(),
            category: p.category,
            confidence: p.entry.confidence,
            source: &p.entry.source,
        })
        .collect();
    wire::render_catalog(variant == "A", names, &listed)
}
