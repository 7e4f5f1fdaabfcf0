//! An account's custom patterns: validation and the stored record.
//!
//! All of an account's patterns live in one record (`account/<a>/patterns`),
//! so an add, remove or import is one write: it lands whole or not at all.
//! Every change goes through [`CustomPatterns`], which validates first and
//! changes nothing on refusal.
//!
//! **The record is stored pre-rendered.** Every request runs in a fresh
//! instance, and parsing then re-rendering 20 patterns as JSON cost more than
//! copying the whole 94 KB built-in catalog (measured: 15.6 µs against
//! 2.7 µs). So the record is written in a serving layout, text, one line per
//! pattern with its JSON for both variants already rendered:
//!
//! ```text
//! nf-custom-patterns 1
//! changed 2026-11-22
//! next-id 3
//! <category 0-5, or 6 for none>\t<confidence>\t<s|r>\t<Variant A JSON>\t<Variant B JSON>
//! ```
//!
//! Compact JSON never holds a raw tab or newline (serde_json escapes them), so
//! a request splits lines and tabs and copies bytes; only the admin tool
//! parses the JSON back ([`CustomPatterns::decode`]). A record holding a JSON
//! document ([`CustomPatterns::to_json`]) is read too, on a slower path.
//!
//! **Exclusions and ends: version 2.** The record also holds the account's
//! exclusions of built-ins (`exclusion.rs`) and a pattern's end
//! (`until`). A record with neither keeps exactly the bytes above, as one
//! without retired ids never has a `retired` line; one with either is
//! written as version 2, which a core before it refuses to read (a 500,
//! never an answer that ignores what the account excluded):
//!
//! ```text
//! nf-custom-patterns 2
//! changed 2026-11-22
//! next-id 3
//! exclusions-changed 2026-11-23
//! exclude id:googlebot -
//! exclude category:network-issue 1798675200000
//! <category>\t<confidence>\t<s|r>\t<end: ms since the epoch, or ->\t<Variant A JSON>\t<Variant B JSON>
//! ```

use serde::{Deserialize, Serialize};

use crate::exclusion::{Excluded, Exclusion, InvalidExclusion, MAX_EXCLUSIONS, NewExclusion};
use crate::pattern::{CUSTOM_CATEGORY_A, Category, Kind, MatcherPattern, Variant};
use crate::rate::UnixMillis;
use crate::syntax;
use crate::until::Until;

/// Most custom patterns one account may have.
pub(crate) const MAX_CUSTOM_PATTERNS: usize = 500;
/// Longest custom pattern text, in bytes.
pub(crate) const MAX_PATTERN_LEN: usize = syntax::MAX_REGEX_LEN;
/// Shortest substring pattern, in characters: shorter ones match nearly
/// every event.
pub(crate) const MIN_STRING_PATTERN_CHARS: usize = 3;
/// Longest `source`, in characters.
pub(crate) const MAX_SOURCE_CHARS: usize = 200;
/// Prefix of every custom pattern id; built-in ids never start with it.
pub(crate) const CUSTOM_ID_PREFIX: &str = "custom-";
/// Ids of removed patterns an account chose by hand that its record keeps,
/// so none comes back with another meaning; past this many, the oldest is
/// forgotten (a record stays bounded however many patterns come and go).
pub(crate) const MAX_RETIRED_IDS: usize = 1000;
/// `confidence` of a custom pattern added without one: the account says it
/// is noise.
pub(crate) const DEFAULT_CUSTOM_CONFIDENCE: f64 = 1.0;
/// `source` of a custom pattern added without one.
pub(crate) const DEFAULT_CUSTOM_SOURCE: &str = "Custom pattern of this account";

/// A custom pattern as stored and served.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CustomPattern {
    /// `custom-<n>` or an id the account chose, unique within the account.
    pub id: String,
    /// The pattern text.
    pub pattern: String,
    /// Substring or regex.
    #[serde(rename = "type")]
    pub kind: Kind,
    /// One of the six categories, or `None`: shown as `custom` (A) / `OTHER` (B).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<Category>,
    /// 0 to 1.
    pub confidence: f64,
    /// Where it comes from.
    pub source: String,
    /// When it stops being served (`None`: until removed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<Until>,
}

/// A custom pattern as an account submits it (admin CLI, import file).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NewPattern {
    /// An id of the account's choosing (`custom-…`); assigned when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The pattern text.
    pub pattern: String,
    /// `string` (default) or `regex`.
    #[serde(rename = "type", default = "default_kind")]
    pub kind: Kind,
    /// A category in either variant's spelling, or `custom`; absent: `custom`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub category: Option<String>,
    /// 0 to 1; absent: [`DEFAULT_CUSTOM_CONFIDENCE`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    /// Where it comes from; absent: [`DEFAULT_CUSTOM_SOURCE`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// When it stops being served: a date (`2026-12-31`, that day's start,
    /// UTC) or an RFC 3339 time; absent: until removed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
}

fn default_kind() -> Kind {
    Kind::String
}

pub(crate) use crate::pattern::InvalidPattern;

fn invalid<T>(msg: impl Into<String>) -> Result<T, InvalidPattern> {
    Err(InvalidPattern(msg.into()))
}

impl NewPattern {
    /// A substring pattern with defaults for everything else.
    pub fn string(pattern: &str) -> NewPattern {
        NewPattern {
            id: None,
            pattern: pattern.to_owned(),
            kind: Kind::String,
            category: None,
            confidence: None,
            source: None,
            until: None,
        }
    }

    /// Validates and turns this into a stored pattern with `id`.
    pub fn validate(self, id: String) -> Result<CustomPattern, InvalidPattern> {
        let category = match self.category.as_deref() {
            None => None,
            Some(c) if c == CUSTOM_CATEGORY_A => None,
            Some(c) => {
                match Category::parse(c, Variant::A).or_else(|| Category::parse(c, Variant::B)) {
                    Some(category) => Some(category),
                    None => {
                        return invalid(format!(
                            "unknown category {:?}: use one of browser-extension, \
                         third-party-script, bot-traffic, network-issue, known-library, other, \
                         custom",
                            cut(c)
                        ));
                    }
                }
            }
        };
        let until = match self.until.as_deref() {
            None => None,
            Some(text) => {
                Some(Until::parse(text).map_err(|e| InvalidPattern(format!("until: {e}")))?)
            }
        };
        let pattern = CustomPattern {
            id,
            pattern: self.pattern,
            kind: self.kind,
            category,
            confidence: self.confidence.unwrap_or(DEFAULT_CUSTOM_CONFIDENCE),
            source: self
                .source
                .unwrap_or_else(|| DEFAULT_CUSTOM_SOURCE.to_owned()),
            until,
        };
        pattern.check()?;
        Ok(pattern)
    }
}

impl CustomPattern {
    /// Checks every bound a stored custom pattern must meet.
    pub fn check(&self) -> Result<(), InvalidPattern> {
        check_id(&self.id)?;
        if self.pattern.len() > MAX_PATTERN_LEN {
            return invalid(format!(
                "pattern is {} bytes long; at most {MAX_PATTERN_LEN} are accepted",
                self.pattern.len()
            ));
        }
        if self.pattern.chars().any(char::is_control) {
            return invalid("pattern contains a control character");
        }
        match self.kind {
            Kind::String => {
                if self.pattern.trim().chars().count() < MIN_STRING_PATTERN_CHARS {
                    return invalid(format!(
                        "a string pattern needs at least {MIN_STRING_PATTERN_CHARS} visible \
                         characters; a shorter one matches nearly every event"
                    ));
                }
            }
            Kind::Regex => {
                syntax::validate_regex(&self.pattern).map_err(|e| InvalidPattern(e.0))?;
            }
        }
        if !(0.0..=1.0).contains(&self.confidence) {
            return invalid("confidence must be a number from 0 to 1");
        }
        if self.source.chars().count() > MAX_SOURCE_CHARS
            || self.source.chars().any(char::is_control)
        {
            return invalid(format!(
                "source must be at most {MAX_SOURCE_CHARS} characters, without control characters"
            ));
        }
        Ok(())
    }

    /// The category as `variant` spells it.
    pub fn category_name(&self, variant: Variant) -> &'static str {
        match (self.category, variant) {
            (Some(c), v) => c.name(v),
            (None, Variant::A) => CUSTOM_CATEGORY_A,
            (None, Variant::B) => Category::Other.name(Variant::B),
        }
    }
}

fn check_id(id: &str) -> Result<(), InvalidPattern> {
    let slug = id.strip_prefix(CUSTOM_ID_PREFIX).unwrap_or("");
    let ok = (1..=56).contains(&slug.len())
        && slug
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if ok {
        Ok(())
    } else {
        invalid(format!(
            "invalid id {:?}: custom ids are {CUSTOM_ID_PREFIX} followed by 1 to 56 of a-z, 0-9, '-'",
            cut(id)
        ))
    }
}

/// Whether `id` has the form of an assigned id, `custom-<digits>`.
fn is_assigned_form(id: &str) -> bool {
    id.strip_prefix(CUSTOM_ID_PREFIX)
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

fn cut(s: &str) -> String {
    s.chars().take(64).collect()
}

/// All custom patterns of one account, as stored.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CustomPatterns {
    /// Date (UTC) of the latest add or remove; Variant A's `version` uses it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changed: Option<String>,
    /// Next number for an assigned `custom-<n>` id: it only grows, so an
    /// assigned id is never given twice.
    #[serde(default = "one")]
    pub next_id: u64,
    /// Ids an account chose by hand for patterns it has removed since, oldest
    /// first (at most 1000): refused if given again, so a
    /// client that mutes or counts by id never applies it to another
    /// pattern.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub retired: Vec<String>,
    /// In the order they were added; responses list them in this order.
    #[serde(default)]
    pub patterns: Vec<CustomPattern>,
    /// Built-in patterns the account turned off, in the order they were
    /// added (`exclusion.rs`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclusions: Vec<Exclusion>,
    /// Date (UTC) of the latest change to the exclusions; Variant A's
    /// `version` uses it, whatever `includeCustom` says. Absent: the account
    /// never had one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exclusions_changed: Option<String>,
}

fn one() -> u64 {
    1
}

impl CustomPatterns {
    /// An account with no custom patterns yet.
    pub fn new() -> CustomPatterns {
        CustomPatterns {
            changed: None,
            next_id: 1,
            retired: Vec::new(),
            patterns: Vec::new(),
            exclusions: Vec::new(),
            exclusions_changed: None,
        }
    }

    /// Reads the stored document.
    pub fn from_json(bytes: &[u8]) -> Option<CustomPatterns> {
        serde_json::from_slice(bytes).ok()
    }

    /// The document as stored.
    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("plain struct serializes")
    }

    /// Adds one pattern; returns its id. Nothing changes on refusal.
    pub fn add(&mut self, new: NewPattern, now: UnixMillis) -> Result<String, InvalidPattern> {
        let mut ids = self.add_many(vec![new], now, false)?;
        Ok(ids.remove(0))
    }

    /// Adds several patterns, all or none (an import). Returns their ids.
    pub fn add_all(
        &mut self,
        news: Vec<NewPattern>,
        now: UnixMillis,
    ) -> Result<Vec<String>, InvalidPattern> {
        self.add_many(news, now, true)
    }

    /// Adds patterns all or none; `numbered`: refusals say which one (an
    /// import), else they speak of the one pattern.
    fn add_many(
        &mut self,
        news: Vec<NewPattern>,
        now: UnixMillis,
        numbered: bool,
    ) -> Result<Vec<String>, InvalidPattern> {
        let which = |n: usize| {
            if numbered {
                format!("pattern {n}: ")
            } else {
                String::new()
            }
        };
        if self.patterns.len() + news.len() > MAX_CUSTOM_PATTERNS {
            return invalid(format!(
                "an account may have at most {MAX_CUSTOM_PATTERNS} custom patterns; it has {} \
                 and {} more were given",
                self.patterns.len(),
                news.len()
            ));
        }
        let mut next = self.clone();
        let mut ids = Vec::with_capacity(news.len());
        for (n, new) in news.into_iter().enumerate() {
            let id = match &new.id {
                Some(id) => {
                    if is_assigned_form(id) {
                        return invalid(format!(
                            "{}id {id:?} has the form of an id the service assigns \
                             ({CUSTOM_ID_PREFIX}<number>); choose one with a letter, or \
                             leave the id out",
                            which(n + 1)
                        ));
                    }
                    if next.retired.contains(id) {
                        return invalid(format!(
                            "{}id {id:?} belonged to a pattern removed before; ids are never \
                             reused: choose another",
                            which(n + 1)
                        ));
                    }
                    id.clone()
                }
                None => {
                    // Skip numbers an account already chose by hand.
                    while next.contains(&format!("{CUSTOM_ID_PREFIX}{}", next.next_id)) {
                        next.next_id += 1;
                    }
                    let id = format!("{CUSTOM_ID_PREFIX}{}", next.next_id);
                    next.next_id += 1;
                    id
                }
            };
            if next.contains(&id) {
                return invalid(format!("{}id {id:?} is already in use", which(n + 1)));
            }
            let pattern = new
                .validate(id.clone())
                .map_err(|e| InvalidPattern(format!("{}{e}", which(n + 1))))?;
            next.patterns.push(pattern);
            ids.push(id);
        }
        next.changed = Some(crate::store::date(now));
        *self = next;
        Ok(ids)
    }

    /// Removes the pattern `id`; returns whether it was there. An id the
    /// account chose is retired with it (an assigned one never comes back:
    /// [`CustomPatterns::next_id`] only grows).
    pub fn remove(&mut self, id: &str, now: UnixMillis) -> bool {
        let before = self.patterns.len();
        self.patterns.retain(|p| p.id != id);
        let removed = self.patterns.len() != before;
        if removed {
            self.changed = Some(crate::store::date(now));
            if !is_assigned_form(id) {
                if self.retired.len() >= MAX_RETIRED_IDS {
                    self.retired.remove(0);
                }
                self.retired.push(id.to_owned());
            }
        }
        removed
    }

    fn contains(&self, id: &str) -> bool {
        self.patterns.iter().any(|p| p.id == id)
    }

    /// Adds exclusions, all or none: each is checked (an id must be a
    /// built-in's of this catalog), and one of something already excluded
    /// replaces it (a new end, or none). Returns them as stored.
    pub fn exclude(
        &mut self,
        news: Vec<NewExclusion>,
        now: UnixMillis,
    ) -> Result<Vec<Exclusion>, InvalidExclusion> {
        if news.is_empty() {
            return Err(InvalidExclusion("no exclusion was given".into()));
        }
        let numbered = news.len() > 1;
        let mut next = self.exclusions.clone();
        let mut added = Vec::with_capacity(news.len());
        for (n, new) in news.into_iter().enumerate() {
            let exclusion = new.validate().map_err(|e| {
                InvalidExclusion(if numbered {
                    format!("exclusion {}: {e}", n + 1)
                } else {
                    e.0
                })
            })?;
            match next.iter_mut().find(|e| e.excluded == exclusion.excluded) {
                Some(same) => same.until = exclusion.until,
                None => next.push(exclusion.clone()),
            }
            added.push(exclusion);
        }
        if next.len() > MAX_EXCLUSIONS {
            return Err(InvalidExclusion(format!(
                "an account may have at most {MAX_EXCLUSIONS} exclusions; it would have {}",
                next.len()
            )));
        }
        self.exclusions = next;
        self.exclusions_changed = Some(crate::store::date(now));
        Ok(added)
    }

    /// Removes the exclusion of `excluded`; returns whether there was one.
    pub fn remove_exclusion(&mut self, excluded: &Excluded, now: UnixMillis) -> bool {
        let before = self.exclusions.len();
        self.exclusions.retain(|e| e.excluded != *excluded);
        let removed = self.exclusions.len() != before;
        if removed {
            self.exclusions_changed = Some(crate::store::date(now));
        }
        removed
    }

    /// Whether the record needs the layout of version 2: it has (or had)
    /// exclusions, or a pattern that ends.
    fn second_version(&self) -> bool {
        self.exclusions_changed.is_some()
            || !self.exclusions.is_empty()
            || self.patterns.iter().any(|p| p.until.is_some())
    }

    /// The record as stored: the serving layout (module docs).
    pub fn encode(&self) -> Vec<u8> {
        let v2 = self.second_version();
        let mut out = format!(
            "{}\nchanged {}\nnext-id {}\n",
            if v2 { MAGIC_2 } else { MAGIC },
            self.changed.as_deref().unwrap_or("-"),
            self.next_id
        )
        .into_bytes();
        // Written only when there is one: a record without retired ids
        // keeps the bytes it always had.
        if !self.retired.is_empty() {
            out.extend_from_slice(format!("retired {}\n", self.retired.join(" ")).as_bytes());
        }
        if v2 {
            if let Some(changed) = &self.exclusions_changed {
                out.extend_from_slice(format!("exclusions-changed {changed}\n").as_bytes());
            }
            for e in &self.exclusions {
                let until = e.until.map_or_else(|| "-".to_owned(), Until::stored);
                out.extend_from_slice(
                    format!("exclude {} {until}\n", e.excluded.stored()).as_bytes(),
                );
            }
        }
        for p in &self.patterns {
            let category = p.category.map_or(6, Category::index);
            let kind = match p.kind {
                Kind::String => 's',
                Kind::Regex => 'r',
            };
            out.extend_from_slice(format!("{category}\t{}\t{kind}\t", p.confidence).as_bytes());
            if v2 {
                let until = p.until.map_or_else(|| "-".to_owned(), Until::stored);
                out.extend_from_slice(format!("{until}\t").as_bytes());
            }
            p.render(Variant::A, &mut out);
            out.push(b'\t');
            if p.kind == Kind::String {
                p.render(Variant::B, &mut out);
            }
            out.push(b'\n');
        }
        out
    }

    /// Reads a stored record (serving layout or JSON document).
    pub fn decode(bytes: &[u8]) -> Option<CustomPatterns> {
        if bytes.first() == Some(&b'{') {
            return CustomPatterns::from_json(bytes);
        }
        let view = ServingView::parse(bytes)?;
        let mut patterns = Vec::with_capacity(view.entries.len());
        for entry in &view.entries {
            let wire: WirePatternA = serde_json::from_slice(&entry.a).ok()?;
            patterns.push(CustomPattern {
                id: wire.id,
                pattern: wire.pattern,
                kind: wire.kind,
                category: entry.category,
                // The line's own number, parsed exactly by std.
                confidence: entry.confidence,
                source: wire.source,
                until: entry.until,
            });
        }
        let mut exclusions = Vec::with_capacity(view.exclusions.len());
        for (stored, until) in &view.exclusions {
            let (kind, value) = stored.split_once(':')?;
            exclusions.push(Exclusion {
                excluded: Excluded::named(kind, value).ok()?,
                until: *until,
            });
        }
        Some(CustomPatterns {
            changed: view.changed().map(str::to_owned),
            next_id: view.next_id,
            retired: view
                .retired
                .split(' ')
                .filter(|id| !id.is_empty())
                .map(str::to_owned)
                .collect(),
            patterns,
            exclusions,
            exclusions_changed: view.exclusions_changed().map(str::to_owned),
        })
    }
}

impl CustomPattern {
    /// Appends this pattern's JSON as `variant` lists it.
    fn render(&self, variant: Variant, out: &mut Vec<u8>) {
        let category = self.category_name(variant);
        let written = match variant {
            Variant::A => serde_json::to_writer(
                &mut *out,
                &crate::wire::PatternA {
                    id: &self.id,
                    pattern: &self.pattern,
                    kind: self.kind.name(),
                    category,
                    confidence: self.confidence,
                    source: &self.source,
                },
            ),
            Variant::B => serde_json::to_writer(
                &mut *out,
                &crate::wire::PatternB {
                    id: &self.id,
                    pattern: &self.pattern,
                    category,
                    confidence: self.confidence,
                },
            ),
        };
        written.expect("writing to a Vec cannot fail");
    }
}

const MAGIC: &str = "nf-custom-patterns 1";
const MAGIC_2: &str = "nf-custom-patterns 2";

#[derive(Deserialize)]
struct WirePatternA {
    id: String,
    pattern: String,
    #[serde(rename = "type")]
    kind: Kind,
    source: String,
}

/// One custom pattern as a request needs it: what to filter on, and its
/// rendered JSON per variant (empty `b` for a regex, which B leaves out).
#[derive(Debug, Clone)]
pub(crate) struct ServingEntry<'a> {
    /// Its category, `None` for none of its own.
    pub category: Option<Category>,
    /// Its confidence.
    pub confidence: f64,
    /// When it stops being served, if it does.
    pub until: Option<Until>,
    /// Its JSON in Variant A.
    pub a: std::borrow::Cow<'a, [u8]>,
    /// Its JSON in Variant B (empty: not listed in B).
    pub b: std::borrow::Cow<'a, [u8]>,
}

/// A stored record read for serving, borrowing the record's bytes.
#[derive(Debug, Clone)]
pub(crate) struct ServingView<'a> {
    /// Date of the latest change.
    pub changed: Option<&'a str>,
    /// Next id number (kept for [`CustomPatterns::decode`]).
    pub next_id: u64,
    /// Retired ids, space-separated as stored (kept for
    /// [`CustomPatterns::decode`]; a request never splits them).
    pub retired: &'a str,
    /// Date of the latest change to the exclusions.
    pub exclusions_changed: Option<&'a str>,
    /// The exclusions, as stored (`id:<id>`, `category:<name>`), each with
    /// its end.
    pub exclusions: Vec<(std::borrow::Cow<'a, str>, Option<Until>)>,
    /// The patterns in order.
    pub entries: Vec<ServingEntry<'a>>,
    /// Owned dates when read from a JSON document.
    owned_changed: Option<String>,
    owned_exclusions_changed: Option<String>,
}

impl<'a> ServingView<'a> {
    /// Splits a stored record for a request that wants its `patterns` or
    /// not: one that does not (`includeCustom=false`) needs only the lines
    /// before them, the exclusions, and reads no further (a record of 20
    /// patterns cost such a request as much again as the rest of it,
    /// docs/BENCHMARKS.md). `None`: not a record this core wrote.
    pub(crate) fn parse_for(bytes: &'a [u8], patterns: bool) -> Option<ServingView<'a>> {
        if patterns || bytes.first() == Some(&b'{') {
            return Self::parse(bytes);
        }
        // Every line before the patterns starts with a word; a pattern's
        // with its category's digit.
        let mut at = 0;
        while let Some(&first) = bytes.get(at) {
            if first.is_ascii_digit() {
                break;
            }
            match bytes[at..].iter().position(|b| *b == b'\n') {
                Some(end) => at += end + 1,
                None => at = bytes.len(),
            }
        }
        Self::parse(&bytes[..at])
    }

    /// Splits a stored record. `None`: not a record this core wrote.
    pub(crate) fn parse(bytes: &'a [u8]) -> Option<ServingView<'a>> {
        if bytes.first() == Some(&b'{') {
            return Self::from_document(&CustomPatterns::from_json(bytes)?);
        }
        let text = std::str::from_utf8(bytes).ok()?;
        let mut lines = text.split_terminator('\n');
        let v2 = match lines.next()? {
            MAGIC => false,
            MAGIC_2 => true,
            _ => return None,
        };
        let changed = lines.next()?.strip_prefix("changed ")?;
        let changed = (changed != "-").then_some(changed);
        let next_id = lines.next()?.strip_prefix("next-id ")?.parse().ok()?;
        let mut lines = lines.peekable();
        let retired = lines
            .next_if(|line| line.starts_with("retired "))
            .map_or("", |line| &line["retired ".len()..]);
        let (mut exclusions_changed, mut exclusions) = (None, Vec::new());
        if v2 {
            exclusions_changed = lines
                .next_if(|line| line.starts_with("exclusions-changed "))
                .map(|line| &line["exclusions-changed ".len()..]);
            while let Some(line) = lines.next_if(|line| line.starts_with("exclude ")) {
                let (target, until) = line["exclude ".len()..].split_once(' ')?;
                exclusions.push((target.into(), end(until)?));
            }
        }
        let mut entries = Vec::new();
        for line in lines {
            let mut fields = line.splitn(if v2 { 6 } else { 5 }, '\t');
            let category = match fields.next()? {
                "6" => None,
                c => Some(*Category::ALL.get(c.parse::<usize>().ok()?)?),
            };
            let confidence: f64 = fields.next()?.parse().ok()?;
            let kind = fields.next()?;
            let until = if v2 { end(fields.next()?)? } else { None };
            let a = fields.next()?.as_bytes();
            let b = fields.next()?.as_bytes();
            if !a.starts_with(b"{") || (kind == "s") == b.is_empty() {
                return None;
            }
            entries.push(ServingEntry {
                category,
                confidence,
                until,
                a: a.into(),
                b: b.into(),
            });
        }
        Some(ServingView {
            changed,
            next_id,
            retired,
            exclusions_changed,
            exclusions,
            entries,
            owned_changed: None,
            owned_exclusions_changed: None,
        })
    }

    fn from_document(doc: &CustomPatterns) -> Option<ServingView<'a>> {
        let entries = doc
            .patterns
            .iter()
            .map(|p| {
                let (mut a, mut b) = (Vec::new(), Vec::new());
                p.render(Variant::A, &mut a);
                if p.kind == Kind::String {
                    p.render(Variant::B, &mut b);
                }
                ServingEntry {
                    category: p.category,
                    confidence: p.confidence,
                    until: p.until,
                    a: a.into(),
                    b: b.into(),
                }
            })
            .collect();
        Some(ServingView {
            changed: None,
            next_id: doc.next_id,
            retired: "",
            exclusions_changed: None,
            exclusions: doc
                .exclusions
                .iter()
                .map(|e| (e.excluded.stored().into(), e.until))
                .collect(),
            entries,
            owned_changed: doc.changed.clone(),
            owned_exclusions_changed: doc.exclusions_changed.clone(),
        })
    }

    /// Date of the latest change, from either layout.
    pub(crate) fn changed(&self) -> Option<&str> {
        self.changed.or(self.owned_changed.as_deref())
    }

    /// Date of the latest change to the exclusions, from either layout.
    pub(crate) fn exclusions_changed(&self) -> Option<&str> {
        self.exclusions_changed
            .or(self.owned_exclusions_changed.as_deref())
    }
}

/// A stored end: `-` for none, else milliseconds since the epoch. `None`:
/// neither (not a record this core wrote).
fn end(text: &str) -> Option<Option<Until>> {
    match text {
        "-" => Some(None),
        ms => Until::from_stored(ms).map(Some),
    }
}

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

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests state their expectations by unwrapping
mod tests {
    use super::*;

    /// Without its patterns, a record reads to the same exclusions and dates
    /// as whole, in both versions, and to no pattern.
    #[test]
    fn a_record_read_without_its_patterns_keeps_everything_before_them() {
        let now = UnixMillis(1_799_582_400_000);
        let mut record = CustomPatterns::new();
        let news = ["first noise", "second noise"]
            .map(NewPattern::string)
            .to_vec();
        record.add_all(news, now).unwrap();
        let v1 = record.encode();
        record
            .exclude(
                vec![NewExclusion {
                    id: Some("googlebot".into()),
                    until: Some("2027-02-01".into()),
                    ..NewExclusion::default()
                }],
                now,
            )
            .unwrap();
        let v2 = record.encode();
        for bytes in [&v1, &v2, &record.to_json()] {
            let whole = ServingView::parse(bytes).unwrap();
            let head = ServingView::parse_for(bytes, false).unwrap();
            assert_eq!(head.exclusions, whole.exclusions);
            assert_eq!(head.changed(), whole.changed());
            assert_eq!(head.exclusions_changed(), whole.exclusions_changed());
            assert_eq!(whole.entries.len(), 2);
            let json = bytes.first() == Some(&b'{');
            assert_eq!(head.entries.len(), if json { 2 } else { 0 });
            assert_eq!(
                ServingView::parse_for(bytes, true).unwrap().entries.len(),
                2
            );
        }
        assert_eq!(ServingView::parse(&v2).unwrap().exclusions.len(), 1);
        assert!(ServingView::parse_for(b"garbage", false).is_none());
    }
}
