//! The matcher: applies a compiled pattern set to an error event.
//!
//! A pattern applies to every text of an event (docs/CONTRACT.md): the message as
//! `Type: value`, each stack-frame URL, and the user agent. Matching is
//! case-insensitive: a `string` pattern matches when the lowercased text
//! contains the lowercased pattern (`text.toLowerCase().includes(…)`), a
//! `regex` as `new RegExp(pattern, "i")` would (see [`crate::syntax`]).
//!
//! **Cost.** Everything is compiled once ([`Matcher::new`]). Classifying a
//! text is one pass of one Aho-Corasick automaton holding every substring
//! pattern *and* the literals every match of each regex must contain
//! (extracted with `regex-syntax`). A regex runs only when its literal was
//! seen; the few regexes without a usable literal run as one `RegexSet`. A
//! clean event therefore costs one automaton pass per text (plus the
//! literal-free set, empty in the built-in catalog). Literals with non-ASCII
//! letters have an automaton of their own, searched only in non-ASCII texts
//! (see [`Literals`]).

use std::borrow::Cow;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, MatchKind};
use regex::{Regex, RegexBuilder, RegexSet, RegexSetBuilder};
use regex_syntax::hir::literal::{ExtractKind, Extractor};
use regex_syntax::hir::{ClassUnicode, ClassUnicodeRange};
use serde::{Deserialize, Serialize};

use crate::catalog::{self, BuiltinPattern};
#[cfg(feature = "endpoint")]
use crate::custom::CustomPattern;
use crate::pattern::{InvalidPattern, Kind, Variant};
use crate::pattern_list;
use crate::syntax;

/// One pattern as the matcher takes it: from the catalog, an account's
/// custom patterns, or a response body of either variant.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MatcherPattern {
    /// The pattern's id.
    pub id: String,
    /// Its text.
    pub pattern: String,
    /// Substring or regex (absent in Variant B bodies: substring).
    #[serde(rename = "type")]
    pub kind: Kind,
    /// Its category, as the source spelled it.
    pub category: String,
    /// Its confidence (absent: 1).
    pub confidence: f64,
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

#[cfg(feature = "endpoint")]
impl From<&CustomPattern> for MatcherPattern {
    fn from(p: &CustomPattern) -> Self {
        MatcherPattern {
            id: p.id.clone(),
            pattern: p.pattern.clone(),
            kind: p.kind,
            category: p.category_name(Variant::A).to_owned(),
            confidence: p.confidence,
        }
    }
}

/// An error event, as far as matching is concerned.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    /// The exception type (`TypeError`), if known.
    #[serde(default, rename = "type")]
    pub exception_type: Option<String>,
    /// The message or exception value.
    #[serde(default)]
    pub message: Option<String>,
    /// Stack-frame URLs (file names), outermost first or last: order is kept.
    #[serde(default)]
    pub frames: Vec<String>,
    /// The user agent of the browser or client that reported it.
    #[serde(default)]
    pub user_agent: Option<String>,
}

impl Event {
    /// The message text patterns see: `Type: value`, or whichever is present.
    pub fn message_text(&self) -> Option<String> {
        message_text(self.exception_type.as_deref(), self.message.as_deref()).map(Cow::into_owned)
    }
}

/// [`Event::message_text`] of borrowed parts (borrowed unless both are there).
fn message_text<'a>(
    exception_type: Option<&'a str>,
    message: Option<&'a str>,
) -> Option<Cow<'a, str>> {
    match (exception_type, message) {
        (Some(t), Some(m)) if !t.is_empty() => Some(Cow::Owned(format!("{t}: {m}"))),
        (Some(t), None) => Some(Cow::Borrowed(t)),
        (_, Some(m)) => Some(Cow::Borrowed(m)),
        (None, None) => None,
    }
}

/// One event of a batch given as JSON ([`Matcher::is_noise_json`]):
/// [`Event`]'s shape, with a misspelt field refused
/// rather than silently unmatched.
#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct EventJson {
    #[serde(default, rename = "type")]
    exception_type: Option<String>,
    #[serde(default)]
    message: Option<String>,
    #[serde(default)]
    frames: Vec<String>,
    #[serde(default)]
    user_agent: Option<String>,
}

/// A batch of events that is not a JSON array of events; says where and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidEvents(pub String);

impl std::fmt::Display for InvalidEvents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for InvalidEvents {}

/// Which text of the event a pattern matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "field", content = "index")]
pub enum Field {
    /// The message (`Type: value`).
    Message,
    /// The stack-frame URL at this index of [`Event::frames`].
    Frame(usize),
    /// The user agent.
    UserAgent,
}

/// One pattern that matched one text.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Match<'m> {
    /// The pattern's index in [`Matcher::patterns`]. Not serialized: a
    /// verdict's JSON names patterns by id (and `index` is a frame's).
    #[serde(skip)]
    pub index: usize,
    /// The pattern's id.
    pub id: &'m str,
    /// Its category.
    pub category: &'m str,
    /// Its confidence.
    pub confidence: f64,
    /// The text it matched.
    #[serde(flatten)]
    pub field: Field,
}

/// The matcher's answer for one event.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Verdict<'m> {
    /// Whether any pattern matched: the event is noise.
    pub noise: bool,
    /// Every match, by text (message, frames, user agent), then pattern order.
    pub matches: Vec<Match<'m>>,
}

/// What an automaton hit stands for.
#[derive(Debug, Clone, Copy)]
enum Hit {
    /// The substring pattern with this index matched.
    Pattern(usize),
    /// A literal of the regex with this index in `regexes` was seen.
    Candidate(usize),
}

/// A compiled pattern set.
#[derive(Debug, Clone)]
pub struct Matcher {
    patterns: Vec<MatcherPattern>,
    /// Substring patterns and regex literals, lowercased.
    literals: Literals,
    /// Every regex, with the index of its pattern.
    regexes: Vec<(usize, Regex)>,
    /// Regexes with no literal every match contains: run on every text.
    unfiltered: Option<(RegexSet, Vec<usize>)>,
}

impl Matcher {
    /// The built-in catalog at or above `min_confidence`.
    pub fn builtin(min_confidence: f64) -> Matcher {
        let patterns = catalog::patterns()
            .iter()
            .filter(|p| p.confidence >= min_confidence);
        Matcher::new(patterns.map(MatcherPattern::from))
            .expect("the catalog is validated at build time")
    }

    /// Compiles `patterns`. Regexes must be in the shared subset.
    pub fn new(
        patterns: impl IntoIterator<Item = MatcherPattern>,
    ) -> Result<Matcher, InvalidPattern> {
        let patterns: Vec<MatcherPattern> = patterns.into_iter().collect();
        let mut literals = Literals::default();
        let mut regexes = Vec::new();
        let mut unfiltered = Vec::new();
        for (index, p) in patterns.iter().enumerate() {
            match p.kind {
                Kind::String => {
                    if p.pattern.is_empty() {
                        return Err(InvalidPattern(format!("pattern {}: empty", p.id)));
                    }
                    literals.add(p.pattern.to_lowercase(), Hit::Pattern(index));
                }
                Kind::Regex => {
                    let rust = builtin_translation(&p.pattern)
                        .map_or_else(|| syntax::translate(&p.pattern), |t| Ok(t.to_owned()));
                    let rust =
                        rust.map_err(|e| InvalidPattern(format!("pattern {}: {e}", p.id)))?;
                    let regex = compile(&rust)
                        .map_err(|e| InvalidPattern(format!("pattern {}: {e}", p.id)))?;
                    let slot = regexes.len();
                    regexes.push((index, regex));
                    match required_literals(&rust) {
                        Some(found) => {
                            for literal in found {
                                literals.add(literal, Hit::Candidate(slot));
                            }
                        }
                        None => unfiltered.push(slot),
                    }
                }
            }
        }
        let literals = literals.build()?;
        let unfiltered = if unfiltered.is_empty() {
            None
        } else {
            let sources = unfiltered
                .iter()
                .map(|&slot: &usize| regexes[slot].1.as_str());
            let set = RegexSetBuilder::new(sources)
                .case_insensitive(true)
                .size_limit(syntax::REGEX_SIZE_LIMIT * 8)
                .build()
                .map_err(|e| InvalidPattern(format!("pattern set too large: {e}")))?;
            Some((set, unfiltered))
        };
        Ok(Matcher {
            patterns,
            literals,
            regexes,
            unfiltered,
        })
    }

    /// Compiles the patterns of a response body of either variant, as fetched
    /// from any deployment (`{"patterns": [...]}`; Variant A's `type` is read,
    /// Variant B's patterns are all substrings), read as the npm package
    /// reads them ([`crate::pattern_list`]).
    pub fn from_response(body: &[u8]) -> Result<Matcher, InvalidPattern> {
        let body: serde_json::Value =
            serde_json::from_slice(body).map_err(pattern_list::not_json)?;
        Matcher::new(pattern_list::read_response(&Some(&body))?)
    }

    /// The patterns, in the order they were given.
    pub fn patterns(&self) -> &[MatcherPattern] {
        &self.patterns
    }

    /// Classifies one event.
    pub fn classify(&self, event: &Event) -> Verdict<'_> {
        let mut matches = Vec::new();
        let mut scratch = Scratch::default();
        if let Some(message) = event.message_text() {
            self.match_text(&message, Field::Message, &mut scratch, &mut matches);
        }
        for (i, frame) in event.frames.iter().enumerate() {
            self.match_text(frame, Field::Frame(i), &mut scratch, &mut matches);
        }
        if let Some(agent) = &event.user_agent {
            self.match_text(agent, Field::UserAgent, &mut scratch, &mut matches);
        }
        Verdict {
            noise: !matches.is_empty(),
            matches,
        }
    }

    /// Whether `text` matches any pattern (one text, no details).
    pub fn is_match(&self, text: &str) -> bool {
        self.any_match(text, &mut Vec::new())
    }

    /// Whether the event is noise: `classify(event).noise`, but stopping at
    /// the first match and listing none.
    pub fn is_noise(&self, event: &Event) -> bool {
        self.is_noise_texts(
            event.exception_type.as_deref(),
            event.message.as_deref(),
            event.frames.iter().map(String::as_str),
            event.user_agent.as_deref(),
        )
    }

    /// [`Matcher::is_noise`] of an event given as borrowed texts: the
    /// exception type, the message, the frame URLs, the user agent.
    pub fn is_noise_texts<'t>(
        &self,
        exception_type: Option<&str>,
        message: Option<&str>,
        frames: impl IntoIterator<Item = &'t str>,
        user_agent: Option<&str>,
    ) -> bool {
        let mut tried = Vec::new();
        message_text(exception_type, message).is_some_and(|text| self.any_match(&text, &mut tried))
            || frames
                .into_iter()
                .any(|frame| self.any_match(frame, &mut tried))
            || user_agent.is_some_and(|agent| self.any_match(agent, &mut tried))
    }

    /// [`Matcher::is_noise`] of every event of `events`, a JSON array of
    /// events in [`Event`]'s JSON shape (`type`, `message`, `frames`,
    /// `userAgent`, each optional; no other field), in order.
    ///
    /// For embedders that cross into the core at a cost per value (the
    /// component under wasmtime-py): one text for a whole batch.
    pub fn is_noise_json(&self, events: &str) -> Result<Vec<bool>, InvalidEvents> {
        let events: Vec<EventJson> =
            serde_json::from_str(events).map_err(|e| InvalidEvents(format!("events: {e}")))?;
        Ok(events
            .iter()
            .map(|e| {
                self.is_noise_texts(
                    e.exception_type.as_deref(),
                    e.message.as_deref(),
                    e.frames.iter().map(String::as_str),
                    e.user_agent.as_deref(),
                )
            })
            .collect())
    }

    /// Whether any pattern matches `text`; returns at the first match.
    /// `tried` is scratch space (regexes already run on this text).
    fn any_match(&self, text: &str, tried: &mut Vec<usize>) -> bool {
        tried.clear();
        let found = self.literals.seen_in(text, |hit| match hit {
            Hit::Pattern(_) => true,
            Hit::Candidate(slot) => {
                if tried.contains(&slot) {
                    return false;
                }
                tried.push(slot);
                self.regexes[slot].1.is_match(text)
            }
        });
        if found {
            return true;
        }
        self.unfiltered
            .as_ref()
            .is_some_and(|(set, _)| set.is_match(text))
    }

    fn match_text<'m>(
        &'m self,
        text: &str,
        field: Field,
        scratch: &mut Scratch,
        out: &mut Vec<Match<'m>>,
    ) {
        let Scratch { hits, candidates } = scratch;
        hits.clear();
        candidates.clear();
        self.literals.seen_in(text, |hit| {
            match hit {
                Hit::Pattern(index) => hits.push(index),
                Hit::Candidate(slot) => candidates.push(slot),
            }
            false
        });
        candidates.sort_unstable();
        candidates.dedup();
        for &slot in candidates.iter() {
            let (index, regex) = &self.regexes[slot];
            if regex.is_match(text) {
                hits.push(*index);
            }
        }
        if let Some((set, slots)) = &self.unfiltered {
            hits.extend(set.matches(text).iter().map(|i| self.regexes[slots[i]].0));
        }
        // Pattern order; a substring seen twice in one text counts once.
        hits.sort_unstable();
        hits.dedup();
        for &index in hits.iter() {
            let p = &self.patterns[index];
            out.push(Match {
                index,
                id: &p.id,
                category: &p.category,
                confidence: p.confidence,
                field,
            });
        }
    }
}

/// The automata of a pattern set's literals, with what each literal stands
/// for.
///
/// Literals with a non-ASCII character live in an automaton of their own,
/// searched only in non-ASCII texts (the only texts that can hold them, once
/// lowercased). In the one automaton, the few such literals multiplied the
/// automaton's alphabet, and with it the memory every text's scan walks: the
/// table doubled (7.6 to 15.4 MB with catalog 2026-12-01) and every event
/// got slower.
#[derive(Debug, Clone, Default)]
struct Literals {
    ascii: Searcher,
    unicode: Searcher,
}

impl Literals {
    fn add(&mut self, literal: String, hit: Hit) {
        let searcher = if literal.is_ascii() {
            &mut self.ascii
        } else {
            &mut self.unicode
        };
        searcher.literals.push(literal);
        searcher.hits.push(hit);
    }

    fn build(mut self) -> Result<Literals, InvalidPattern> {
        self.ascii.build()?;
        self.unicode.build()?;
        Ok(self)
    }

    /// Calls `on_hit` for every literal occurrence in `text` (overlapping,
    /// in order of where they end) until it returns true; returns whether
    /// one did.
    fn seen_in(&self, text: &str, mut on_hit: impl FnMut(Hit) -> bool) -> bool {
        let haystack = haystack(text);
        // `haystack` lowercased a copy exactly when the text is not ASCII.
        let ascii = matches!(haystack, Cow::Borrowed(_));
        self.ascii.seen_in(&haystack, &mut on_hit)
            || (!ascii && self.unicode.seen_in(&haystack, &mut on_hit))
    }
}

/// One Aho-Corasick automaton, ASCII-case-insensitive, over lowercased
/// literals.
#[derive(Debug, Clone, Default)]
struct Searcher {
    literals: Vec<String>,
    hits: Vec<Hit>,
    automaton: Option<AhoCorasick>,
}

impl Searcher {
    fn build(&mut self) -> Result<(), InvalidPattern> {
        if self.literals.is_empty() {
            return Ok(());
        }
        let automaton = AhoCorasickBuilder::new()
            // A DFA: the fastest scan, worth its build time (a few ms, once)
            // since every text of every event goes through.
            .kind(Some(AhoCorasickKind::DFA))
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .build(&self.literals)
            .map_err(|e| InvalidPattern(format!("pattern set too large: {e}")))?;
        self.automaton = Some(automaton);
        self.literals = Vec::new();
        Ok(())
    }

    fn seen_in(&self, haystack: &str, on_hit: &mut impl FnMut(Hit) -> bool) -> bool {
        let Some(automaton) = &self.automaton else {
            return false;
        };
        automaton
            .find_overlapping_iter(haystack)
            .any(|found| on_hit(self.hits[found.pattern().as_usize()]))
    }
}

/// Buffers reused across the texts of one event.
#[derive(Default)]
struct Scratch {
    /// Indices of matched patterns.
    hits: Vec<usize>,
    /// Regexes whose literal was seen.
    candidates: Vec<usize>,
}

/// The build-time translation of a built-in regex, to skip translating again.
fn builtin_translation(pattern: &str) -> Option<&'static str> {
    catalog::patterns()
        .iter()
        .find(|p| p.kind == Kind::Regex && p.pattern == pattern)
        .and_then(|p| p.rust_regex)
}

fn compile(rust: &str) -> Result<Regex, regex::Error> {
    RegexBuilder::new(rust)
        .case_insensitive(true)
        .size_limit(syntax::REGEX_SIZE_LIMIT)
        .nest_limit(syntax::REGEX_NEST_LIMIT)
        .build()
}

/// Literals one of which every match of `rust` contains, lowercased, or
/// `None` when there is no usable set (too many, too short, or holding a
/// character whose case the automaton cannot fold as the regex does).
fn required_literals(rust: &str) -> Option<Vec<String>> {
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
/// case-insensitive regex matches it in holds it in [`haystack`]'s form.
///
/// ASCII letters are folded by the automaton. Any other character is
/// searched for in the lowercased text, so it is usable only when every
/// character the regex treats as the same (its simple case-fold orbit)
/// lowercases to it: true of `é` (É) and of caseless scripts (キ, 취, 已),
/// false of `σ` (final `ς` stays itself) or `ſ` (its orbit holds ASCII `s`).
/// Without this, a regex such as `^(annulé|キャンセルしました)$` would have no
/// literal and run on every text of every event.
fn foldable_literal(literal: &str) -> Option<String> {
    if literal.len() < 3 {
        return None;
    }
    let lowered = literal.to_lowercase();
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
                .all(|other| other.to_lowercase().eq([c]))
        })
        .then_some(lowered)
}

/// The text the automaton searches: it folds ASCII case itself; other text
/// is lowercased first, exactly as `toLowerCase()` would.
fn haystack(text: &str) -> Cow<'_, str> {
    if text.is_ascii() {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(text.to_lowercase())
    }
}
