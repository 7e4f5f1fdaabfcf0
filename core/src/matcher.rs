//! The matcher: applies a compiled pattern set to an error event.
//!
//! A pattern applies to every text of an event (docs/CONTRACT.md): the message as
//! `Type: value`, each stack-frame URL, and the user agent. Matching is
//! case-insensitive: a `string` pattern matches when the lowercased text
//! contains the lowercased pattern (`text.toLowerCase().includes(…)`), a
//! `regex` as `new RegExp(pattern, "i")` would (see [`crate::syntax`]).
//!
//! **Cost.** Classifying a text is one pass of one Aho-Corasick automaton
//! holding the prefixes of every substring pattern *and* of the literals
//! every match of each regex must contain (extracted with `regex-syntax`,
//! for the built-in regexes once by `build.rs`); an occurrence of a prefix
//! is checked against the few literals that share it ([`Searcher`]). A regex
//! runs only when its literal was seen; the few regexes without a usable
//! literal run as one `RegexSet`. A clean event therefore costs one
//! automaton pass per text (plus the literal-free set, empty in the
//! built-in catalog). Literals with non-ASCII letters have an automaton of
//! their own, searched only in non-ASCII texts (see [`Literals`]).
//!
//! **Ready at once.** [`Matcher::builtin`] is what a page builds before it
//! can filter its first error, so it parses and compiles no regex: the
//! catalog's literals (and translations, but for the packed catalog of the
//! npm matcher-only wasm) come from `build.rs`, and each regex is translated
//! if need be and compiled when a text first holds one of its literals
//! ([`LazyRegex`]).
//! Patterns given at run time are validated, and so compiled, at once.
//!
//! **The engine.** Rust's `regex` runs the regexes, or, with the feature
//! `host-regex` (the npm matcher-only wasm), the shell's own engine, each
//! regex written by the core for it (`host_regex.rs`); the set of
//! literal-free regexes then runs one regex after another. Everything
//! above is the core's either way.

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::OnceLock;

use aho_corasick::automaton::Automaton;
use aho_corasick::dfa::DFA;
use aho_corasick::{Anchored, MatchKind, StartKind};

use crate::catalog::{self, BuiltinPattern};
use crate::event::{Event, EventJson, Field, InvalidEvents, Match, Verdict, message_text};
use crate::first_party::{
    FIRST_PARTY_CATEGORY, FIRST_PARTY_CONFIDENCE, FIRST_PARTY_RULE_ID, FirstParty, Seen,
};
use crate::literals;
use crate::pattern::{DEFAULT_MIN_CONFIDENCE, InvalidPattern, Kind, MatcherPattern};
use crate::pattern_list;
use crate::syntax::{self, Regex, RegexSet};
use crate::tags::Tags;

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
    /// Each pattern's tags, in the same order.
    tags: Vec<Tags>,
    /// Substring patterns and regex literals, lowercased.
    literals: Literals,
    /// Every regex, with the index of its pattern.
    regexes: Vec<LazyRegex>,
    /// Regexes with no literal every match contains: run on every text.
    unfiltered: Option<(RegexSet, Vec<usize>)>,
    /// The "not our code" rule, when given ([`Matcher::with_first_party`]).
    pub(crate) first_party: Option<Arc<FirstParty>>,
}

/// One regex of a pattern set, compiled when a text first needs it.
///
/// A built-in regex was translated and compiled by `build.rs` (with the
/// bounds the matcher uses), so it cannot fail here, and most of the
/// catalog's regexes run only on the rare texts that hold one of their
/// literals: compiling all 64 up front was a quarter of the cost of
/// [`Matcher::builtin`] (docs/BENCHMARKS.md, "npm: ready at page start").
/// Any other regex is compiled at once, by its validation.
#[derive(Debug, Clone)]
struct LazyRegex {
    /// The index of its pattern.
    index: usize,
    /// Its Rust spelling; empty for a built-in regex whose translation the
    /// packed catalog leaves out (`build.rs`, `compact`).
    rust: Cow<'static, str>,
    /// Its ECMAScript text, translated here when `rust` is empty.
    ecma: &'static str,
    /// `None`: it did not compile (not reached: see `is_match`).
    compiled: OnceLock<Option<Regex>>,
}

impl LazyRegex {
    /// Whether the regex matches `text`. A built-in regex that does not
    /// compile (none with Rust's `regex`: `build.rs` compiled each; with
    /// the shell's engine, one it would refuse) matches nothing rather than
    /// panicking.
    fn is_match(&self, text: &str) -> bool {
        self.compiled
            .get_or_init(|| {
                if self.rust.is_empty() {
                    // Translated and compiled in one go (once, not twice).
                    syntax::translate_and_compile(self.ecma)
                        .ok()
                        .map(|(_, regex)| regex)
                } else {
                    syntax::compile(&self.rust).ok()
                }
            })
            .as_ref()
            .is_some_and(|regex| regex.is_match(text))
    }
}

/// A regex pattern made ready for the matcher: its Rust spelling, its
/// literals, and its compiled form when validating it compiled it.
struct PreparedRegex {
    /// Empty when `ecma` is to be translated at first compile.
    rust: Cow<'static, str>,
    ecma: &'static str,
    literals: Option<Vec<Cow<'static, str>>>,
    compiled: OnceLock<Regex>,
}

impl PreparedRegex {
    /// A regex of the built-in catalog (the same text, as a fetched Variant A
    /// body lists it) takes what `build.rs` computed; any other is translated
    /// into the shared subset, compiled and searched for literals now.
    fn of(pattern: &MatcherPattern) -> Result<PreparedRegex, InvalidPattern> {
        if let Some(builtin) = builtin_regex(&pattern.pattern) {
            return Ok(PreparedRegex::builtin(builtin));
        }
        let refuse =
            |e: &dyn std::fmt::Display| InvalidPattern(format!("pattern {}: {e}", pattern.id));
        let (rust, regex) =
            syntax::translate_and_compile(&pattern.pattern).map_err(|e| refuse(&e))?;
        let literals = literals::required_literals(&rust)
            .map(|found| found.into_iter().map(Cow::Owned).collect());
        Ok(PreparedRegex {
            rust: Cow::Owned(rust),
            ecma: "",
            literals,
            compiled: OnceLock::from(regex),
        })
    }

    fn builtin(p: &'static BuiltinPattern) -> PreparedRegex {
        PreparedRegex {
            rust: Cow::Borrowed(p.rust_regex.unwrap_or_default()),
            ecma: p.pattern,
            literals: p
                .required_literals()
                .map(|found| found.map(Cow::Borrowed).collect()),
            compiled: OnceLock::new(),
        }
    }
}

impl Matcher {
    /// The built-in catalog at or above `min_confidence`.
    pub fn builtin(min_confidence: f64) -> Matcher {
        let patterns = catalog::builtin_patterns()
            .iter()
            .filter(|p| p.confidence >= min_confidence);
        // Collected: `build` is generic over its iterator, and the `Vec`
        // is the type `Matcher::new` gives it, so the page's wasm holds one
        // copy of `build` (2.2 KB before `wasm-opt`) rather than two.
        let prepared: Vec<_> = patterns
            .map(|p| {
                let prepared = (p.kind == Kind::Regex).then(|| PreparedRegex::builtin(p));
                (MatcherPattern::from(p), prepared, p.tags)
            })
            .collect();
        Matcher::build(prepared).expect("the catalog is validated at build time")
    }

    /// The built-in catalog at [`DEFAULT_MIN_CONFIDENCE`]: the built-in
    /// patterns the endpoint lists when a request gives no `minConfidence`.
    /// What every binding's `builtin` gives when no threshold is passed, so a
    /// matcher built in JavaScript, Python or Rust holds the set the service
    /// serves by default.
    pub fn builtin_default() -> Matcher {
        Matcher::builtin(DEFAULT_MIN_CONFIDENCE)
    }

    /// Compiles `patterns`. Regexes must be in the shared subset. A
    /// pattern with a built-in pattern's id and text (a fetched response
    /// lists the built-ins so) gets that pattern's tags.
    pub fn new(
        patterns: impl IntoIterator<Item = MatcherPattern>,
    ) -> Result<Matcher, InvalidPattern> {
        let mut cursor = 0;
        let prepared = patterns
            .into_iter()
            .map(|p| {
                let tags = builtin_tags(&p, &mut cursor);
                match p.kind {
                    Kind::String if p.pattern.is_empty() => {
                        Err(InvalidPattern(format!("pattern {}: empty", p.id)))
                    }
                    Kind::String => Ok((p, None, tags)),
                    Kind::Regex => PreparedRegex::of(&p).map(|regex| (p, Some(regex), tags)),
                }
            })
            .collect::<Result<Vec<_>, _>>()?;
        Matcher::build(prepared)
    }

    /// Each pattern's tags, in the order of [`Matcher::patterns`].
    pub fn tags(&self) -> &[Tags] {
        &self.tags
    }

    /// The set of `patterns`, each substring already checked and each
    /// regex prepared, with its tags.
    fn build(
        patterns: impl IntoIterator<Item = (MatcherPattern, Option<PreparedRegex>, Tags)>,
    ) -> Result<Matcher, InvalidPattern> {
        let mut kept = Vec::new();
        let mut tags = Vec::new();
        let mut literals = Literals::default();
        let mut regexes = Vec::new();
        let mut unfiltered = Vec::new();
        for (index, (p, regex, its_tags)) in patterns.into_iter().enumerate() {
            tags.push(its_tags);
            match regex {
                None => {
                    literals.add(
                        Cow::Owned(syntax::lowercase(&p.pattern)),
                        Hit::Pattern(index),
                    );
                }
                Some(PreparedRegex {
                    rust,
                    ecma,
                    literals: found,
                    compiled,
                }) => {
                    let slot = regexes.len();
                    regexes.push(LazyRegex {
                        index,
                        rust,
                        ecma,
                        compiled: compiled
                            .into_inner()
                            .map_or_else(OnceLock::new, |regex| OnceLock::from(Some(regex))),
                    });
                    match found {
                        Some(found) => {
                            for literal in found {
                                literals.add(literal, Hit::Candidate(slot));
                            }
                        }
                        None => unfiltered.push(slot),
                    }
                }
            }
            kept.push(p);
        }
        let literals = literals.build()?;
        let unfiltered = if unfiltered.is_empty() {
            None
        } else {
            let sources = unfiltered
                .iter()
                .map(|&slot: &usize| regexes[slot].rust.as_ref());
            let set = syntax::compile_set(sources)
                .map_err(|e| InvalidPattern(format!("pattern set too large: {e}")))?;
            Some((set, unfiltered))
        };
        Ok(Matcher {
            patterns: kept,
            tags,
            literals,
            regexes,
            unfiltered,
            first_party: None,
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

    /// A new matcher: this one's patterns followed by `added`, its
    /// first-party rule kept.
    pub fn with_patterns(&self, added: Vec<MatcherPattern>) -> Result<Matcher, InvalidPattern> {
        // A `Vec`, as the other callers pass: `Matcher::new` is generic over
        // its iterator, and each other iterator type is another copy of it.
        let mut all = self.patterns.clone();
        all.extend(added);
        let mut grown = Matcher::new(all)?;
        grown.first_party = self.first_party.clone();
        Ok(grown)
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
        if let Some(frame) = self.elsewhere(event.frames.iter().map(String::as_str)) {
            matches.push(self.first_party_match(frame));
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
        // The first-party rule reads the frames in the same pass.
        let mut seen = Seen::Nothing;
        message_text(exception_type, message).is_some_and(|text| self.any_match(&text, &mut tried))
            || frames.into_iter().enumerate().any(|(i, frame)| {
                // A pattern's match ends it: the rule is read only while
                // no pattern has matched.
                self.any_match(frame, &mut tried) || {
                    if let Some(rule) = &self.first_party {
                        rule.see(&mut seen, i, frame);
                    }
                    false
                }
            })
            || user_agent.is_some_and(|agent| self.any_match(agent, &mut tried))
            || matches!(seen, Seen::Elsewhere(_))
    }

    /// The frame the first-party rule reports, when this matcher has the
    /// rule and it calls the event noise ([`FirstParty`]).
    fn elsewhere<'t>(&self, frames: impl IntoIterator<Item = &'t str>) -> Option<usize> {
        self.first_party.as_ref()?.elsewhere(frames)
    }

    /// The first-party rule's match, of frame `frame`: a verdict says so as
    /// it says a pattern's, with the index one past the patterns'.
    fn first_party_match(&self, frame: usize) -> Match<'_> {
        Match {
            index: self.patterns.len(),
            id: FIRST_PARTY_RULE_ID,
            category: FIRST_PARTY_CATEGORY,
            tags: Tags::NONE,
            confidence: FIRST_PARTY_CONFIDENCE,
            field: Field::Frame(frame),
        }
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
                self.regexes[slot].is_match(text)
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
            let regex = &self.regexes[slot];
            if regex.is_match(text) {
                hits.push(regex.index);
            }
        }
        if let Some((set, slots)) = &self.unfiltered {
            hits.extend(
                set.matches(text)
                    .into_iter()
                    .map(|i| self.regexes[slots[i]].index),
            );
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
                tags: self.tags[index],
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
/// automaton's alphabet, and with it the memory every text's scan walks (a
/// DFA of the catalog's whole literals doubled, 7.6 to 15.4 MB, and every
/// event got slower).
#[derive(Debug, Clone, Default)]
struct Literals {
    ascii: Searcher,
    unicode: Searcher,
}

impl Literals {
    fn add(&mut self, literal: Cow<'static, str>, hit: Hit) {
        let searcher = if literal.is_ascii() {
            &mut self.ascii
        } else {
            &mut self.unicode
        };
        searcher.add(literal, hit);
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

/// Literals found through one Aho-Corasick automaton of their prefixes,
/// each occurrence of a prefix then checked against the few literals that
/// share it. The automaton holds the prefixes lowercased, and the scan
/// lowercases each ASCII byte as it reads it ([`LOWER`]): an automaton that
/// folds case itself has two transitions for every letter, and building it
/// took a quarter more (callgrind), for a larger table to scan.
///
/// Why prefixes: building the automaton costs in proportion to its states,
/// one a byte of every distinct literal, and every page pays it before it
/// can filter its first error. A DFA of the whole literals of the built-in
/// catalog (1,280 of them, 22.5 KB) was 7.6 MB and most of
/// [`Matcher::builtin`]; cut to prefixes of [`PREFIX_LEN`] bytes (longer
/// only where more than [`MAX_SHARING`] literals would share one: 983 of
/// them) it is 0.6 MB, built in an eighth of the instructions, and an
/// event's scan costs about the same: the table stays in cache, and an
/// occurrence of a prefix is one short comparison (docs/BENCHMARKS.md,
/// "npm: ready at page start").
#[derive(Debug, Clone, Default)]
struct Searcher {
    /// What the searcher is built from: each literal, lowercased, with
    /// what it stands for (emptied by `build`).
    pending: Vec<(Cow<'static, str>, Hit)>,
    automaton: Option<DFA>,
    /// For each prefix in the automaton: its length, and the range of
    /// `literals` that start with it.
    prefixes: Vec<(usize, std::ops::Range<usize>)>,
    /// Every literal, grouped by prefix, with what it stands for.
    literals: Vec<(Box<[u8]>, Hit)>,
}

/// The shortest prefix put in the automaton: long enough that a prefix
/// seldom occurs in a text without its literal (a check each time), short
/// enough that the catalog's 1,280 literals have ~640 of them.
const PREFIX_LEN: usize = 4;
/// The most literals one prefix stands for: a longer prefix is taken
/// wherever more share one (32 of the catalog's begin with `goog`), so an
/// occurrence costs at most this many comparisons.
const MAX_SHARING: usize = 4;

impl Searcher {
    fn add(&mut self, literal: Cow<'static, str>, hit: Hit) {
        self.pending.push((literal, hit));
    }

    fn build(&mut self) -> Result<(), InvalidPattern> {
        let mut pending = std::mem::take(&mut self.pending);
        if pending.is_empty() {
            return Ok(());
        }
        sort_by_literal(&mut pending);
        self.literals = pending
            .into_iter()
            .map(|(literal, hit)| (Box::from(literal.as_bytes()), hit))
            .collect();
        self.prefixes.clear();
        group_by_prefix(&self.literals, 0, PREFIX_LEN, &mut self.prefixes);
        let literals = &self.literals;
        let prefixes = self
            .prefixes
            .iter()
            .map(|(len, group)| &literals[group.start].0[..*len]);
        let automaton = DFA::builder()
            .match_kind(MatchKind::Standard)
            .start_kind(StartKind::Unanchored)
            // `seen_in` walks the automaton itself, byte by byte.
            .prefilter(false)
            .build(prefixes)
            .map_err(|e| InvalidPattern(format!("pattern set too large: {e}")))?;
        self.automaton = Some(automaton);
        Ok(())
    }

    /// Walks the automaton over `haystack` with the crate's own low-level
    /// interface ([`Automaton`]) rather than its overlapping iterator: a
    /// prefix occurs a few times in most texts (`appl` of a crawler's name
    /// in every `AppleWebKit`), and the iterator's bookkeeping around each
    /// occurrence cost more than the scan (callgrind: ~250 instructions an
    /// occurrence, against ~20 here).
    fn seen_in(&self, haystack: &str, on_hit: &mut impl FnMut(Hit) -> bool) -> bool {
        let Some(dfa) = &self.automaton else {
            return false;
        };
        let Ok(mut state) = dfa.start_state(Anchored::No) else {
            return false;
        };
        let haystack = haystack.as_bytes();
        for (at, &byte) in haystack.iter().enumerate() {
            state = dfa.next_state(Anchored::No, state, LOWER[usize::from(byte)]);
            if !dfa.is_special(state) || !dfa.is_match(state) {
                continue;
            }
            // What follows the prefixes that end here.
            let rest = &haystack[at + 1..];
            for index in 0..dfa.match_len(state) {
                let (prefix, group) = &self.prefixes[dfa.match_pattern(state, index).as_usize()];
                for (literal, hit) in &self.literals[group.clone()] {
                    let tail = &literal[*prefix..];
                    if rest
                        .get(..tail.len())
                        .is_some_and(|text| text.eq_ignore_ascii_case(tail))
                        && on_hit(*hit)
                    {
                        return true;
                    }
                }
            }
        }
        false
    }
}

/// Each byte with ASCII letters lowercased: one load a byte in the scan.
static LOWER: [u8; 256] = {
    let mut table = [0; 256];
    let mut byte = 0;
    while byte < 256 {
        table[byte] = (byte as u8).to_ascii_lowercase();
        byte += 1;
    }
    table
};

/// Sorts `literals` by their text: a heap sort, in place. The standard
/// library's sort, instantiated for this one call, was 4.8 KB of the npm
/// page's wasm (before `wasm-opt`); this is a tenth of that. Its price:
/// building the built-in matcher takes 0.7 million more instructions
/// natively (~3 %), once per matcher (docs/BENCHMARKS.md, "npm: wasm sizes").
fn sort_by_literal(literals: &mut [(Cow<'static, str>, Hit)]) {
    fn sift_down(v: &mut [(Cow<'static, str>, Hit)], mut root: usize, end: usize) {
        loop {
            let mut child = 2 * root + 1;
            if child >= end {
                return;
            }
            if child + 1 < end && v[child].0 < v[child + 1].0 {
                child += 1;
            }
            if v[root].0 >= v[child].0 {
                return;
            }
            v.swap(root, child);
            root = child;
        }
    }
    let len = literals.len();
    for root in (0..len / 2).rev() {
        sift_down(literals, root, len);
    }
    for end in (1..len).rev() {
        literals.swap(0, end);
        sift_down(literals, 0, end);
    }
}

/// Splits `literals` (sorted, all sharing their first `len - 1` bytes)
/// into groups sharing a prefix of `len` bytes, or the whole literal when
/// it is shorter, taking a longer prefix for any group of more than
/// [`MAX_SHARING`]. Pushes each group's prefix length and range, as
/// indices of the whole list (`literals` starts at `offset` in it).
fn group_by_prefix(
    literals: &[(Box<[u8]>, Hit)],
    offset: usize,
    len: usize,
    out: &mut Vec<(usize, std::ops::Range<usize>)>,
) {
    let key = |literal: &[u8]| literal.len().min(len);
    let mut start = 0;
    while start < literals.len() {
        let first = &literals[start].0;
        let prefix = &first[..key(first)];
        let end = start
            + literals[start..]
                .iter()
                .take_while(|(l, _)| &l[..key(l)] == prefix)
                .count();
        let group = &literals[start..end];
        if group.len() > MAX_SHARING && group.iter().any(|(l, _)| l.len() > len) {
            group_by_prefix(group, offset + start, len + 1, out);
        } else {
            out.push((prefix.len(), offset + start..offset + end));
        }
        start = end;
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

/// The tags of the built-in pattern with `p`'s id and text (none for any
/// other pattern). Ids are never reused for another fact; the text is
/// compared too, so a list that reuses an id for its own pattern gets none.
///
/// A fetched response lists the built-ins in catalog order, so the pattern
/// sought is nearly always the one after the last found (`cursor`): the
/// whole list costs one pass, and no index of the catalog is built (a sort
/// of one cost the npm matcher wasm more bytes than its budget had left).
fn builtin_tags(p: &MatcherPattern, cursor: &mut usize) -> Tags {
    // Accounts' patterns cannot have a built-in id: skip the search.
    if p.id.starts_with("custom-") {
        return Tags::NONE;
    }
    let all = catalog::builtin_patterns();
    let at = match all.get(*cursor) {
        Some(next) if next.id == p.id => Some(*cursor),
        _ => all.iter().position(|b| b.id == p.id),
    };
    let Some(at) = at else {
        return Tags::NONE;
    };
    *cursor = at + 1;
    let b = &all[at];
    if b.pattern == p.pattern && b.kind == p.kind {
        b.tags
    } else {
        Tags::NONE
    }
}

/// The built-in regex whose ECMAScript text is `pattern`, if there is one.
fn builtin_regex(pattern: &str) -> Option<&'static BuiltinPattern> {
    catalog::builtin_patterns()
        .iter()
        .find(|p| p.kind == Kind::Regex && p.pattern == pattern)
}

/// The text the automaton searches: the scan folds ASCII case itself; other
/// text is lowercased first, exactly as `toLowerCase()` would.
fn haystack(text: &str) -> Cow<'_, str> {
    if text.is_ascii() {
        Cow::Borrowed(text)
    } else {
        Cow::Owned(syntax::lowercase(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A built-in regex that runs behind its literals: in the packed
    /// catalog (no `endpoint` feature) it has no stored translation and is
    /// translated at its first compile; either way it matches, and its
    /// verdict carries the pattern's tags.
    #[test]
    #[cfg_attr(
        feature = "host-regex",
        ignore = "its regexes need the shell's engine: the npm suites run them"
    )]
    fn builtin_regex_behind_literals_matches_and_tags() {
        let matcher = Matcher::builtin(0.5);
        let agent = "Mozilla/5.0 (compatible; Examplecrawler/2.1; +http://example.com/about)";
        let verdict = matcher.classify(&Event {
            user_agent: Some(agent.into()),
            ..Event::default()
        });
        let regex = verdict
            .matches
            .iter()
            .find(|m| matcher.patterns()[m.index].kind == Kind::Regex)
            .expect("a UA-grammar regex matches");
        assert_eq!(regex.category, "bot-traffic");
        assert!(regex.tags.contains("generic-bot"), "{:?}", regex.tags);
    }
}
