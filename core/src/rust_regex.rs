//! The matcher's regex engine by default: Rust's `regex` (linear time).
//! Without it (feature `host-regex`) the shell's engine runs the regexes
//! (`host_regex.rs`).
//!
//! This file is compiled twice: into the crate, and into `build.rs`
//! through `#[path]`, which compiles every built-in regex with it whatever
//! the features. It may only use `regex` (and regex-syntax's parsed form,
//! which callers hand it).

pub(crate) use regex::{Regex, RegexSet};

use crate::syntax::{REGEX_NEST_LIMIT, REGEX_SIZE_LIMIT, SyntaxError};

/// Compiles a translated regex as the matcher runs it: case-insensitive,
/// within the size and nesting bounds.
pub(crate) fn compile(rust: &str) -> Result<Regex, SyntaxError> {
    regex::RegexBuilder::new(rust)
        .case_insensitive(true)
        .size_limit(REGEX_SIZE_LIMIT)
        .nest_limit(REGEX_NEST_LIMIT)
        .build()
        .map_err(|e| match e {
            regex::Error::CompiledTooBig(_) => {
                SyntaxError("regex is too large once compiled; simplify its repetitions".into())
            }
            other => SyntaxError(format!("regex does not compile: {other}")),
        })
}

/// A text lowercased as JavaScript's `toLowerCase()` does it (Unicode's
/// default lowercase mapping, the final sigma included), as the matcher
/// compares texts: Rust's own.
pub(crate) fn lowercase(text: &str) -> String {
    text.to_lowercase()
}

/// [`compile`] of a regex the caller has also parsed: `regex` parses its
/// spelling itself, so the parsed form is not needed here.
pub(crate) fn compile_parsed(
    rust: &str,
    _hir: &regex_syntax::hir::Hir,
) -> Result<Regex, SyntaxError> {
    compile(rust)
}

/// Compiles the regexes the matcher runs on every text, together (a larger
/// bound: a set holds several).
pub(crate) fn compile_set<'r>(
    rust: impl IntoIterator<Item = &'r str>,
) -> Result<RegexSet, SyntaxError> {
    regex::RegexSetBuilder::new(rust)
        .case_insensitive(true)
        .size_limit(REGEX_SIZE_LIMIT * 8)
        .build()
        .map_err(|e| SyntaxError(e.to_string()))
}
