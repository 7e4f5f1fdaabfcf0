//! What a report found: the value every output renders (`--json` is this,
//! serialised; docs/REPORT.md, "JSON").
//!
//! Counts are events (a Discover row with `count` stands for that many).
//! A count that could not be computed (the export has no such field) is
//! `null`, and [`Summary::missing`] says why; an estimated one (distinct
//! users or issues past the exact limit) has `estimated: true`.

use serde::Serialize;

/// The report: every section.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    /// The JSON format's version.
    pub report: u32,
    /// What was read.
    pub input: InputSummary,
    /// The pattern list.
    pub patterns: ListSummary,
    /// Noise overall.
    pub noise: NoiseShare,
    /// Noise per category, by events.
    pub categories: Vec<CategoryRow>,
    /// Noise over time (`null` without timestamps).
    pub time: Option<TimeSummary>,
    /// Every pattern that matched, by events.
    pub matched: Vec<PatternRow>,
    /// The patterns that matched nothing.
    pub silent: Vec<SilentPattern>,
    /// The events no pattern matched, by message.
    pub unmatched: UnmatchedSummary,
    /// The `--pattern` candidates.
    pub candidates: Vec<CandidateRow>,
    /// `--first-party`: noise on events whose frames are all first-party.
    pub first_party: Option<FirstPartySummary>,
    /// Noise by browser (`null` without a browser field).
    pub browsers: Option<Vec<BrowserRow>>,
    /// What could not be computed, and why.
    pub missing: Vec<String>,
    /// The command's options that shape the outputs.
    pub options: OptionsSummary,
}

/// What was read.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InputSummary {
    /// The file, as named.
    pub name: String,
    /// Bytes read (decompressed).
    pub bytes: u64,
    /// Records read as events, per shape (`sentry-api`, `sentry-event`,
    /// `matcher-event`, `discover-csv`).
    pub shapes: Vec<ShapeCount>,
    /// Records read as events.
    pub records: u64,
    /// Events (rows weighted by `count`).
    pub events: u64,
    /// Records not counted, and why (transactions).
    pub skipped: Vec<Reason>,
    /// Malformed records.
    pub malformed: u64,
    /// The first of them, with their line.
    pub malformed_first: Vec<Malformed>,
    /// How many events carry each field the report counts by.
    pub coverage: Coverage,
    /// A CSV export's columns: `(name, read)`.
    pub columns: Option<Vec<ColumnUse>>,
}

/// Records of one shape.
#[derive(Debug, Clone, Serialize)]
pub struct ShapeCount {
    /// The shape's name.
    pub shape: &'static str,
    /// Records read in it.
    pub records: u64,
}

/// A reason and how often it applied.
#[derive(Debug, Clone, Serialize)]
pub struct Reason {
    /// Why.
    pub why: String,
    /// How many records.
    pub count: u64,
}

/// A malformed record.
#[derive(Debug, Clone, Serialize)]
pub struct Malformed {
    /// The line it starts on (1-based).
    pub line: u64,
    /// Why it was not read.
    pub why: String,
}

/// A CSV column, and whether the report read it.
#[derive(Debug, Clone, Serialize)]
pub struct ColumnUse {
    /// The header's name.
    pub name: String,
    /// Read by the report.
    pub read: bool,
}

/// Events carrying each field.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Coverage {
    /// A timestamp.
    pub time: u64,
    /// An issue.
    pub issue: u64,
    /// A user.
    pub user: u64,
    /// A browser.
    pub browser: u64,
}

/// The pattern list.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ListSummary {
    /// `builtin`, `file` or `url`.
    pub source: &'static str,
    /// The catalog's release, the file or the address.
    pub name: String,
    /// Patterns in the list at the threshold.
    pub count: usize,
    /// The threshold.
    pub min_confidence: f64,
}

/// A count of noise against a total.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Share {
    /// Noise.
    pub noise: u64,
    /// All.
    pub total: u64,
    /// Estimated (distinct counts past the exact limit).
    pub estimated: bool,
}

impl Share {
    /// Noise as a fraction of the total (0 when there is none).
    pub fn fraction(&self) -> f64 {
        if self.total == 0 {
            0.0
        } else {
            self.noise as f64 / self.total as f64
        }
    }
}

/// Noise overall: an issue or a user counts as noise when at least one of
/// its events is.
#[derive(Debug, Clone, Serialize)]
pub struct NoiseShare {
    /// Events.
    pub events: Share,
    /// Distinct issues (`null`: the export has none).
    pub issues: Option<Share>,
    /// Distinct users (`null`: the export has none).
    pub users: Option<Share>,
}

/// Noise of one category: events any of its patterns matched (an event
/// matched in two categories counts in both).
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CategoryRow {
    /// The category, as the list spells it.
    pub category: String,
    /// Events.
    pub events: u64,
    /// Distinct issues.
    pub issues: Option<u64>,
    /// Distinct users.
    pub users: Option<u64>,
    /// Whether issues or users are estimates.
    pub estimated: bool,
    /// Patterns of the category that matched.
    pub patterns: usize,
}

/// Noise over time, UTC.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TimeSummary {
    /// The earliest event.
    pub first: String,
    /// The latest.
    pub last: String,
    /// Days between them (at least 1: a shorter span is counted as a day).
    pub days: f64,
    /// The buckets' size: `day`, `week` (from Monday), `month` or `year`.
    pub bucket: &'static str,
    /// Events and noise per bucket (buckets without events included).
    pub series: Vec<Bucket>,
    /// Events and noise per calendar month.
    pub months: Vec<Bucket>,
    /// At the export's rate, per 30 days: events and noise (what the list
    /// would drop).
    pub per_month: PerMonth,
}

/// One bucket of time.
#[derive(Debug, Clone, Serialize)]
pub struct Bucket {
    /// Its first day (`YYYY-MM-DD`).
    pub start: String,
    /// Events.
    pub events: u64,
    /// Noise.
    pub noise: u64,
}

/// Events and noise per 30 days.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct PerMonth {
    /// Events.
    pub events: f64,
    /// Noise: what the list would drop.
    pub noise: f64,
}

/// One pattern that matched.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PatternRow {
    /// Its id.
    pub id: String,
    /// Its category.
    pub category: String,
    /// `string` or `regex`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Its text.
    pub pattern: String,
    /// Events it matched.
    pub events: u64,
    /// Events no other pattern matched.
    pub only: u64,
    /// Distinct issues.
    pub issues: Option<u64>,
    /// Distinct users.
    pub users: Option<u64>,
    /// Whether issues or users are estimates.
    pub estimated: bool,
    /// The earliest event it matched.
    pub first_seen: Option<String>,
    /// The latest.
    pub last_seen: Option<String>,
    /// Events it matched, by the text matched (an event can count in
    /// several).
    pub fields: FieldCounts,
    /// Of its events, those whose frames are all first-party
    /// (`--first-party`).
    pub first_party: u64,
}

/// Events by the text a pattern matched.
#[derive(Debug, Clone, Copy, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FieldCounts {
    /// The message.
    pub message: u64,
    /// A frame's URL.
    pub frame: u64,
    /// The user agent.
    pub user_agent: u64,
}

/// A pattern that matched nothing.
#[derive(Debug, Clone, Serialize)]
pub struct SilentPattern {
    /// Its id.
    pub id: String,
    /// Its category.
    pub category: String,
}

/// The events no pattern matched.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct UnmatchedSummary {
    /// Events.
    pub events: u64,
    /// Distinct normalised messages among all events (matched or not)
    /// seen, and kept.
    pub messages: u64,
    /// Events of messages dropped from the table when it was full.
    pub untracked_events: u64,
    /// The most events a kept message may be counted short by (it was
    /// dropped and seen again); 0 when the table never filled.
    pub max_undercount: u64,
    /// The messages with most unmatched events, ranked.
    pub top: Vec<MessageRow>,
}

/// One normalised message.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MessageRow {
    /// Its rank (what `--accept` names).
    pub rank: usize,
    /// The normalised message.
    pub message: String,
    /// The first message seen in the group, as it was.
    pub sample: String,
    /// Events no pattern matched.
    pub events: u64,
    /// Distinct users of those events.
    pub users: Option<u64>,
    /// Whether `users` is an estimate.
    pub estimated: bool,
    /// Events of the same message some pattern matched (by another text).
    pub matched_events: u64,
    /// Events it may be counted short by.
    pub undercount: u64,
    /// The earliest and latest unmatched event.
    pub first_seen: Option<String>,
    /// The latest.
    pub last_seen: Option<String>,
    /// The suggested pattern, when one is specific enough.
    pub suggestion: Option<Suggestion>,
}

/// A suggested pattern and what it would match in the same export.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Suggestion {
    /// Its text.
    pub pattern: String,
    /// `string` or `regex`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Unmatched events it would match: what it adds.
    pub adds: u64,
    /// Distinct users of those.
    pub users: Option<u64>,
    /// Whether `users` is an estimate.
    pub estimated: bool,
    /// Events it would match that the list matched already.
    pub already_noise: u64,
    /// Normalised messages it would match.
    pub messages: u64,
}

/// A `--pattern` candidate's preview, over every text of every event.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CandidateRow {
    /// As given (`re:` before a regex).
    pub given: String,
    /// Its text.
    pub pattern: String,
    /// `string` or `regex`.
    #[serde(rename = "type")]
    pub kind: &'static str,
    /// Events it matches.
    pub events: u64,
    /// Of those, events the list does not match: what it would add.
    pub adds: u64,
    /// Distinct issues of the events it adds.
    pub issues: Option<u64>,
    /// Distinct users of the events it adds.
    pub users: Option<u64>,
    /// Whether issues or users are estimates.
    pub estimated: bool,
    /// Events it matches, by the text matched.
    pub fields: FieldCounts,
    /// The first events it would add (or match, when it adds none).
    pub samples: Vec<Sample>,
}

/// An event shown as an example.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Sample {
    /// The line its record starts on.
    pub line: u64,
    /// Its id, when the export has one.
    pub id: Option<String>,
    /// Its message text (`Type: value`), cut.
    pub message: Option<String>,
    /// The text matched: `message`, `frame`, `userAgent`.
    pub field: &'static str,
    /// That text, cut.
    pub text: String,
    /// The page, when the export says.
    pub url: Option<String>,
}

/// `--first-party`: suspected false positives.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FirstPartySummary {
    /// The origins given.
    pub origins: Vec<String>,
    /// Noise events whose frames are all first-party (at least one).
    pub events: u64,
    /// Events with at least one frame (what could be judged).
    pub judged: u64,
    /// The first of them.
    pub samples: Vec<Sample>,
}

/// Noise of one browser.
#[derive(Debug, Clone, Serialize)]
pub struct BrowserRow {
    /// The browser's name as the export says.
    pub browser: String,
    /// Events.
    pub events: u64,
    /// Noise.
    pub noise: u64,
}

/// The options that shape the outputs.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OptionsSummary {
    /// Rows per table of the summary.
    pub top: usize,
    /// The suggestions `--emit` writes (ranks).
    pub accept: Vec<usize>,
    /// Distinct messages kept.
    pub max_messages: usize,
}

impl Summary {
    /// The report as JSON (`--json`): one line, then a line break.
    pub fn json(&self) -> String {
        let mut text = serde_json::to_string(self).unwrap_or_default();
        text.push('\n');
        text
    }

    /// The summary, readable at 80 columns.
    pub fn text(&self) -> String {
        super::text::render(self)
    }

    /// The report as one self-contained HTML page.
    pub fn html(&self) -> String {
        super::html::render(self)
    }

    /// The `--pattern` candidates and the accepted suggestions as a file
    /// `noise-filter patterns import` takes.
    pub fn emit_patterns(&self) -> Result<String, String> {
        super::emit::patterns(self)
    }

    /// Sentry's filters for what matched, the candidates and the accepted
    /// suggestions.
    pub fn emit_sentry(&self) -> Result<String, String> {
        super::emit::sentry(self)
    }
}
