//! The core's own bound on how large a regex is once compiled
//! ([`REGEX_SIZE_LIMIT`]): refuses `(a{100}){100}` and its kind, the same
//! way in every build (Rust's `regex` or the shell's engine running the
//! regexes) and on every machine.
//!
//! This file is compiled twice: into the crate, and into `build.rs`
//! through `#[path]`, which validates every built-in regex with it. It may
//! only use `regex-syntax`.

use regex_syntax::hir::{Class, Hir, HirKind};

use crate::syntax::{REGEX_SIZE_LIMIT, SyntaxError};

/// Refuses a regex (its Rust spelling, parsed as the engine reads it:
/// `syntax::parse_for_engine`) whose compiled form could exceed
/// [`REGEX_SIZE_LIMIT`]. The bound is the core's own, computed on the
/// regex's parsed form ([`compiled_size`]), rather than `regex`'s refusal:
/// that one counts the memory of its NFA as the machine lays it out (a
/// 32-bit wasm counts half a 64-bit server's), so the same custom pattern
/// could be accepted by one shell and refused by another; and a build whose
/// regexes the JavaScript engine runs (`host-regex`) would have to carry
/// `regex`'s NFA compiler only to refuse the same patterns.
pub(crate) fn check(hir: &Hir) -> Result<(), SyntaxError> {
    if compiled_size(hir) > REGEX_SIZE_LIMIT {
        return Err(SyntaxError(
            "regex is too large once compiled; simplify its repetitions".into(),
        ));
    }
    Ok(())
}

/// What one state of `regex`'s NFA builder takes on a 64-bit machine, one
/// byte-range transition of a state, one alternative of a union state.
const NFA_STATE: usize = 32;
const NFA_TRANSITION: usize = 8;
const NFA_ALTERNATE: usize = 4;
/// The states every compiled regex has whatever it is: the unanchored
/// prefix, the whole match's capture, the match state (with room to spare).
const NFA_FIXED: usize = 16 * NFA_STATE;

/// An upper bound on the bytes of the Thompson NFA that Rust's `regex`
/// builds for `hir`, forward or reverse, on a 64-bit machine (and so on a
/// 32-bit one, whose states are half as large), following how
/// regex-automata compiles each kind of node: a literal byte is a state; a
/// class is two states and its transitions, or, past ASCII, at most a state
/// and a transition for each byte range of its UTF-8 sequences; a counted
/// repetition is its body that many times, with a union state each; an
/// alternation of literals becomes a trie. Never below the real figure
/// (the tests below compare the two on generated regexes), so a regex
/// within the bound always compiles; at most a few times above it.
/// Saturating, so that nested repetitions cannot overflow.
fn compiled_size(hir: &Hir) -> usize {
    NFA_FIXED.saturating_add(node_size(hir))
}

fn node_size(hir: &Hir) -> usize {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => NFA_STATE,
        HirKind::Literal(literal) => literal.0.len().saturating_mul(NFA_STATE),
        HirKind::Class(Class::Bytes(class)) => {
            2 * NFA_STATE + class.ranges().len() * NFA_TRANSITION
        }
        HirKind::Class(Class::Unicode(class)) if class.is_ascii() => {
            2 * NFA_STATE + class.ranges().len() * NFA_TRANSITION
        }
        HirKind::Class(Class::Unicode(class)) => {
            let byte_ranges: usize = class
                .iter()
                .flat_map(|range| {
                    regex_syntax::utf8::Utf8Sequences::new(range.start(), range.end())
                })
                .map(|sequence| sequence.len())
                .sum();
            2 * NFA_STATE + byte_ranges * (NFA_STATE + NFA_TRANSITION)
        }
        HirKind::Capture(capture) => node_size(&capture.sub).saturating_add(2 * NFA_STATE),
        HirKind::Concat(parts) => parts
            .iter()
            .fold(NFA_STATE, |size, part| size.saturating_add(node_size(part))),
        HirKind::Alternation(alternatives) => {
            let literal_bytes = alternatives
                .iter()
                .try_fold(0usize, |bytes, a| match a.kind() {
                    HirKind::Literal(literal) => Some(bytes + literal.0.len()),
                    _ => None,
                });
            match literal_bytes {
                // A trie: per byte a node, a chunk and the union over its
                // chunks, a transition and the union's alternatives.
                Some(bytes) => (5 * NFA_STATE).saturating_add(
                    bytes.saturating_mul(3 * NFA_STATE + NFA_TRANSITION + 4 * NFA_ALTERNATE),
                ),
                None => alternatives.iter().fold(2 * NFA_STATE, |size, a| {
                    size.saturating_add(node_size(a))
                        .saturating_add(2 * NFA_ALTERNATE)
                }),
            }
        }
        HirKind::Repetition(repetition) => {
            let copies = repetition
                .max
                .unwrap_or(repetition.min)
                .max(repetition.min)
                .max(1) as usize;
            let body = node_size(&repetition.sub).saturating_add(NFA_STATE + 2 * NFA_ALTERNATE);
            copies.saturating_mul(body).saturating_add(4 * NFA_STATE)
        }
    }
}

/// The bound against the NFAs Rust's `regex` really builds (forward with
/// captures, then reverse without, as `regex` does before it can match),
/// on regexes of every construct of the subset with counted repetitions up
/// to the hundreds: a regex the core accepts always compiles within
/// `regex`'s bound (on a 64-bit machine, where its states are largest), so
/// no shell refuses a pattern another accepts; and a regex whose real NFAs
/// are a quarter of the bound or less is never refused.
#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use regex_automata::nfa::thompson::{Compiler, Config, WhichCaptures};

    use super::*;

    /// Whether `regex` builds both NFAs of `hir` within `limit` bytes.
    fn nfa_within(hir: &Hir, limit: usize) -> bool {
        let forward = Config::new()
            .utf8(true)
            .nfa_size_limit(Some(limit))
            .shrink(false);
        let reverse = forward
            .clone()
            .which_captures(WhichCaptures::None)
            .reverse(true);
        [forward, reverse].into_iter().all(|config| {
            Compiler::new()
                .configure(config)
                .build_from_hir(hir)
                .is_ok()
        })
    }

    /// A regex as the core writes it for the engine: the subset's
    /// translation, parsed case-insensitively.
    fn translated(source: &str) -> Option<Hir> {
        let rust = crate::syntax::rust_spelling(source).ok()?;
        crate::syntax::parse_for_engine(&rust).ok()
    }

    fn atom() -> impl Strategy<Value = String> {
        prop_oneof![
            "[a-z]{1,6}",
            Just("é".to_owned()),
            Just("k".to_owned()),
            Just(r"\d".to_owned()),
            Just(r"\w".to_owned()),
            Just(r"\s".to_owned()),
            Just(r"\S".to_owned()),
            Just(".".to_owned()),
            Just("[a-f0-9]".to_owned()),
            Just("[^/]".to_owned()),
            Just(r"[\u00e0-\u024f]".to_owned()),
            Just(r"[\u0400-\u04ff\u4e00-\u9fff]".to_owned()),
            Just(r"\bx".to_owned()),
        ]
    }

    fn quantifier() -> impl Strategy<Value = String> {
        prop_oneof![
            Just(String::new()),
            Just("?".to_owned()),
            Just("+".to_owned()),
            Just("*".to_owned()),
            (1u32..300).prop_map(|n| format!("{{{n}}}")),
            (0u32..60, 1u32..200).prop_map(|(n, m)| format!("{{{n},{}}}", n + m)),
            (2u32..200).prop_map(|n| format!("{{{n},}}")),
        ]
    }

    fn regex() -> impl Strategy<Value = String> {
        let leaf = (atom(), quantifier()).prop_map(|(a, q)| format!("{a}{q}"));
        leaf.prop_recursive(4, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 1..4).prop_map(|parts| parts.concat()),
                (prop::collection::vec(inner.clone(), 2..4), quantifier())
                    .prop_map(|(alts, q)| format!("(?:{}){q}", alts.join("|"))),
                (prop::collection::vec("[a-z]{1,8}", 2..6), quantifier())
                    .prop_map(|(words, q)| format!("(?:{}){q}", words.join("|"))),
                (inner, quantifier()).prop_map(|(r, q)| format!("({r}){q}")),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]

        #[test]
        fn accepted_means_within_the_bound_and_small_means_accepted(source in regex()) {
            let Some(hir) = translated(&source) else { return Ok(()) };
            if compiled_size(&hir) <= REGEX_SIZE_LIMIT {
                prop_assert!(
                    nfa_within(&hir, REGEX_SIZE_LIMIT),
                    "{source:?} is accepted, its NFA over {REGEX_SIZE_LIMIT} bytes"
                );
            } else {
                prop_assert!(
                    !nfa_within(&hir, REGEX_SIZE_LIMIT / 4),
                    "{source:?} is refused, its NFA within {} bytes",
                    REGEX_SIZE_LIMIT / 4
                );
            }
        }
    }

    #[test]
    fn the_refusal_names_the_fix() {
        let e = crate::syntax::translate_regex("(a{100}){100}").expect_err("refused");
        assert_eq!(
            e.0,
            "regex is too large once compiled; simplify its repetitions"
        );
        assert!(crate::syntax::translate_regex("a{100}").is_ok());
    }
}
