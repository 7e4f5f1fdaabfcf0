//! The regex engine of a core built with `host-regex`: the shell's own
//! (the JavaScript engine's `RegExp`, in the npm package's matcher-only
//! wasm), so that the wasm carries no regex engine of its own
//! (docs/NPM.md, "Two wasms").
//!
//! The core still decides everything: which regexes a matcher holds, the
//! subset they must be in ([`crate::syntax`]), the literals that put each
//! behind the matcher's automaton, which regex runs on which text, and the
//! verdict. The shell only runs one regex, which the core wrote, on one text.
//!
//! **Same verdicts as Rust's `regex`.** The regex the engine is given is not
//! the pattern's ECMAScript text with the `i` flag: ECMAScript folds case
//! with `toUpperCase` (without `u`) or its own word set (`\b` with `iu`
//! counts U+017F and U+212A as word characters), and Rust with Unicode's
//! simple case folding. It is the regex exactly as Rust's `regex` compiles
//! it: the Rust spelling ([`crate::syntax`]) parsed, case-insensitively, by
//! `regex-syntax` into its high-level form, where every letter is already
//! the class of the characters it folds with (`k` is `[Kk\u{212A}]`);
//! printed back as an ECMAScript regex that needs no `i` flag ([`ecma`]),
//! run with the `u` flag, so that it reads code points as Rust does. What
//! it matches is then what the Rust engine matches, character for
//! character; the npm suite compares the two wasms' verdicts
//! (`npm/test/node/regex-engine.test.mjs`).

use std::fmt::Write as _;
use std::sync::OnceLock;

use regex_syntax::hir::{Class, Hir, HirKind, Look};

use crate::syntax::{SyntaxError, parse_for_engine};

/// The flags the engine compiles every regex with: code points, no case
/// folding of its own ([`ecma`] folded it).
pub const REGEX_FLAGS: &str = "u";

/// The shell's regex engine: two functions, given once
/// ([`use_regex_engine`]) before any matcher is built.
#[derive(Debug, Clone, Copy)]
pub struct RegexEngine {
    /// Compiles an ECMAScript regex source with [`REGEX_FLAGS`]; a handle
    /// for `is_match`, or `None` when the engine refuses it.
    pub compile: fn(source: &str) -> Option<u32>,
    /// Whether the regex `handle` matches somewhere in `text`.
    pub is_match: fn(handle: u32, text: &str) -> bool,
    /// `text.toLowerCase()`: how the matcher's contract lowercases a text
    /// (substring patterns, the automaton's non-ASCII texts), the engine's
    /// own, so that the wasm carries no Unicode lowercase tables either.
    pub lowercase: fn(text: &str) -> String,
}

static ENGINE: OnceLock<RegexEngine> = OnceLock::new();

/// Gives the core its regex engine. The first call counts; later calls
/// (each of the shell's entry points makes it) change nothing.
pub fn use_regex_engine(engine: RegexEngine) {
    let _ = ENGINE.set(engine);
}

/// A regex compiled by the shell's engine.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Regex {
    handle: u32,
    is_match: fn(u32, &str) -> bool,
}

impl Regex {
    pub(crate) fn is_match(&self, text: &str) -> bool {
        (self.is_match)(self.handle, text)
    }
}

/// A text lowercased by the engine ([`RegexEngine::lowercase`]); before an
/// engine is given (no shell's build reaches this: each gives it as it
/// starts), its ASCII letters only.
pub(crate) fn lowercase(text: &str) -> String {
    match ENGINE.get() {
        Some(engine) => (engine.lowercase)(text),
        None => text.to_ascii_lowercase(),
    }
}

/// Compiles a translated regex (its Rust spelling) as the matcher runs it:
/// parsed as Rust's `regex` parses it (so a refusal reads the same), then
/// handed to the engine.
pub(crate) fn compile(rust: &str) -> Result<Regex, SyntaxError> {
    compile_parsed(rust, &parse_for_engine(rust)?)
}

/// [`compile`] of a regex already parsed (`hir`, from `rust`): the engine
/// runs the ECMAScript regex written from that form.
pub(crate) fn compile_parsed(_rust: &str, hir: &Hir) -> Result<Regex, SyntaxError> {
    let source = ecma(hir)?;
    let engine = ENGINE
        .get()
        .ok_or_else(|| SyntaxError("no regex engine was given to the core".into()))?;
    let handle = (engine.compile)(&source)
        .ok_or_else(|| SyntaxError("regex does not compile in this JavaScript engine".into()))?;
    Ok(Regex {
        handle,
        is_match: engine.is_match,
    })
}

/// Compiles the regexes the matcher runs on every text: each on its own.
pub(crate) fn compile_set<'r>(
    rust: impl IntoIterator<Item = &'r str>,
) -> Result<RegexSet, SyntaxError> {
    RegexSet::new(rust)
}

/// Several regexes, each run in turn: the `RegexSet` of the Rust build.
#[derive(Debug, Clone)]
pub(crate) struct RegexSet(Vec<Regex>);

impl RegexSet {
    pub(crate) fn new<'r>(sources: impl IntoIterator<Item = &'r str>) -> Result<Self, SyntaxError> {
        sources
            .into_iter()
            .map(compile)
            .collect::<Result<_, _>>()
            .map(RegexSet)
    }

    pub(crate) fn is_match(&self, text: &str) -> bool {
        self.0.iter().any(|r| r.is_match(text))
    }

    /// The indices of the regexes that match `text`, in order (a list, as
    /// `regex`'s `SetMatches` is one).
    pub(crate) fn matches(&self, text: &str) -> Vec<usize> {
        (0..self.0.len())
            .filter(|&i| self.0[i].is_match(text))
            .collect()
    }
}

/// `hir` as an ECMAScript regex source for the flags [`REGEX_FLAGS`] that
/// matches exactly the texts it matches: literals and classes as the code
/// points they hold, `^ $` as the ends of the text, `\b \B` (ASCII, as
/// ECMAScript's without `i`), groups non-capturing.
pub(crate) fn ecma(hir: &Hir) -> Result<String, SyntaxError> {
    let mut out = String::new();
    write_ecma(hir, &mut out)?;
    Ok(out)
}

fn write_ecma(hir: &Hir, out: &mut String) -> Result<(), SyntaxError> {
    match hir.kind() {
        HirKind::Empty => out.push_str("(?:)"),
        HirKind::Literal(literal) => {
            let text = std::str::from_utf8(&literal.0).map_err(|_| not_runnable())?;
            text.chars().for_each(|c| push_code_point(c, out));
        }
        HirKind::Class(Class::Unicode(class)) => {
            out.push('[');
            for range in class.ranges() {
                push_code_point(range.start(), out);
                if range.end() != range.start() {
                    out.push('-');
                    push_code_point(range.end(), out);
                }
            }
            out.push(']');
        }
        HirKind::Class(Class::Bytes(class)) => {
            // Only ASCII bytes are code points of their own.
            out.push('[');
            for range in class.ranges() {
                if !range.end().is_ascii() {
                    return Err(not_runnable());
                }
                push_code_point(char::from(range.start()), out);
                out.push('-');
                push_code_point(char::from(range.end()), out);
            }
            out.push(']');
        }
        HirKind::Look(look) => out.push_str(match look {
            Look::Start => "^",
            Look::End => "$",
            Look::WordAscii => r"\b",
            Look::WordAsciiNegate => r"\B",
            // The subset's translation writes no other assertion.
            _ => return Err(not_runnable()),
        }),
        HirKind::Repetition(rep) => {
            out.push_str("(?:");
            write_ecma(&rep.sub, out)?;
            out.push(')');
            let _ = match rep.max {
                Some(max) => write!(out, "{{{},{max}}}", rep.min),
                None => write!(out, "{{{},}}", rep.min),
            };
            if !rep.greedy {
                out.push('?');
            }
        }
        HirKind::Capture(capture) => {
            out.push_str("(?:");
            write_ecma(&capture.sub, out)?;
            out.push(')');
        }
        HirKind::Concat(parts) => {
            for part in parts {
                write_ecma(part, out)?;
            }
        }
        HirKind::Alternation(branches) => {
            out.push_str("(?:");
            for (i, branch) in branches.iter().enumerate() {
                if i > 0 {
                    out.push('|');
                }
                write_ecma(branch, out)?;
            }
            out.push(')');
        }
    }
    Ok(())
}

/// A code point as itself when it is an ASCII letter or digit, else as
/// `\u{…}` (which the `u` flag reads the same in and out of a class).
fn push_code_point(c: char, out: &mut String) {
    if c.is_ascii_alphanumeric() {
        out.push(c);
    } else {
        let _ = write!(out, "\\u{{{:X}}}", u32::from(c));
    }
}

fn not_runnable() -> SyntaxError {
    SyntaxError("regex cannot be run by the JavaScript engine".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ecma_of(rust: &str) -> String {
        let hir = regex_syntax::ParserBuilder::new()
            .case_insensitive(true)
            .build()
            .parse(rust)
            .expect("a regex in Rust's syntax");
        ecma(&hir).expect("printable for the engine")
    }

    /// Letters carry their case folding (Kelvin sign, long s); the ASCII
    /// `\b` stays ECMAScript's `\b`; groups do not capture.
    #[test]
    fn prints_rusts_case_folding_for_an_engine_without_it() {
        assert_eq!(ecma_of("k"), r"[Kk\u{212A}]");
        assert_eq!(ecma_of("s"), r"[Ss\u{17F}]");
        assert_eq!(ecma_of(r"(?-u:\b)1(?:2|x)+"), r"\b1(?:(?:2|[Xx])){1,}");
        assert_eq!(ecma_of("^é$"), r"^[\u{C9}\u{E9}]$");
    }
}
