//! The literals a regex's every match contains: what puts a regex behind the
//! matcher's automaton, so that it runs only on texts holding one of them.
//!
//! This file is compiled twice: into the crate (for patterns that arrive at
//! run time), and into `build.rs` through `#[path]`, which extracts the
//! built-in regexes' literals once so that building the matcher from the
//! catalog parses no regex (docs/NPM.md, "Ready at page start"). It may only
//! use `regex-syntax` (and the lowercasing `syntax.rs` names).

use regex_syntax::hir::literal::{ExtractKind, Extractor};
use regex_syntax::hir::{ClassUnicode, ClassUnicodeRange};

/// Separates the literals of one regex when they are stored as one text
/// (the catalog's static data). `build.rs` refuses a literal holding it.
pub const SEPARATOR: char = '\u{1}';

/// Literals one of which every match of `rust` (a regex in its Rust spelling,
/// matched case-insensitively) contains, lowercased, sorted and unique; or
/// `None` when there is no usable set (too many, too short, or holding a
/// character whose case the automaton cannot fold as the regex does).
pub fn required_literals(rust: &str) -> Option<Vec<String>> {
    // Extract from the case-sensitive form: the automaton folds case itself,
    // and a case-insensitive extraction would explode into every casing.
    let hir = regex_syntax::ParserBuilder::new()
        .build()
        .parse(rust)
        .ok()?;
    for kind in [ExtractKind::Prefix, ExtractKind::Suffix] {
        let mut extractor = Extractor::new();
        extractor.kind(kind).limit_total(64);
        let seq = extractor.extract(&hir);
        let Some(literals) = seq.literals() else {
            continue;
        };
        let out: Option<Vec<String>> = literals
            .iter()
            .map(|l| {
                std::str::from_utf8(l.as_bytes())
                    .ok()
                    .and_then(foldable_literal)
            })
            .collect();
        if let Some(mut out) = out.filter(|out| !out.is_empty()) {
            out.sort();
            out.dedup();
            return Some(out);
        }
    }
    None
}

/// `literal` lowercased as the automaton searches for it, if every text the
/// case-insensitive regex matches it in holds it in the matcher's haystack
/// form (ASCII as it is, anything else lowercased).
///
/// ASCII letters are folded by the automaton. Any other character is
/// searched for in the lowercased text, so it is usable only when every
/// character the regex treats as the same (its simple case-fold orbit)
/// lowercases to it: true of `é` (É) and of caseless scripts (キ, 취, 已),
/// false of `σ` (final `ς` stays itself) or `ſ` (its orbit holds ASCII `s`).
/// Without this, a regex such as `^(annulé|キャンセルしました)$` would have no
/// literal and run on every text of every event.
pub fn foldable_literal(literal: &str) -> Option<String> {
    if literal.len() < 3 {
        return None;
    }
    let lowered = crate::syntax::lowercase(literal);
    lowered
        .chars()
        .filter(|c| !c.is_ascii())
        .all(|c| {
            let mut orbit = ClassUnicode::new([ClassUnicodeRange::new(c, c)]);
            orbit.case_fold_simple();
            orbit
                .ranges()
                .iter()
                .flat_map(|r| r.start()..=r.end())
                .all(|other| {
                    crate::syntax::lowercase(other.encode_utf8(&mut [0; 4]))
                        .chars()
                        .eq([c])
                })
        })
        .then_some(lowered)
}
