//! The noise report: an export of a team's events read through a pattern
//! list, summed up (feature `report`; docs/REPORT.md).
//!
//! Everything a shell's `report` command decides is here, so the CLI
//! (`noise-filter report`, host/src/report.rs) and the npm command (`npx
//! noise-filter report`, npm/src/cli.js over the main wasm) give the same
//! bytes for the same file: the command line ([`plan`], [`USAGE`]), the
//! pattern list's reading, the export's reading (formats, records,
//! malformed ones), the matching, the counting, the suggestions and every
//! output (the summary, JSON, the HTML page, the emitted files). A shell
//! reads the file (decompressing gzip), fetches the list for `--url`,
//! feeds the bytes in chunks, shows progress, and writes what it is given.
//!
//! ```
//! use noise_filter_core::report::{plan, Stdout};
//!
//! let plan = plan(&["events.jsonl".into(), "--json".into()], None).unwrap();
//! assert_eq!(plan.stdout, Stdout::Json);
//! let mut report = plan.start(None).unwrap();
//! report
//!     .feed(b"{\"message\":\"ResizeObserver loop limit exceeded\"}\n{\"message\":\"Checkout failed\"}\n")
//!     .unwrap();
//! let summary = report.finish().unwrap();
//! assert_eq!((summary.noise.events.noise, summary.noise.events.total), (1, 2));
//! assert!(summary.text().contains("Checkout failed"));
//! ```
//!
//! **Memory** is bounded whatever the export's size: one record at a time,
//! distinct users and issues counted exactly up to a limit and estimated
//! past it ([`distinct`]), at most `--max-messages` message groups (pruned
//! of the smallest when full, the undercount said), and time by day.

mod aggregate;
mod csv;
mod distinct;
mod emit;
mod html;
mod input;
mod normalize;
mod read;
mod summary;
mod text;
mod time;

use crate::matcher::Matcher;
use crate::pattern::Kind;
use crate::pattern::MatcherPattern;
use crate::pattern_list;

pub use summary::*;

/// How the command is used (`report --help`).
pub const USAGE: &str = "\
Usage: noise-filter report [OPTIONS] FILE

Read an export of error events and say how much of it is noise: per
category, over time, per pattern; the biggest messages no pattern catches,
with a suggested pattern each; what candidate patterns would add. Nothing
is sent anywhere: the file is read here (with --url only the pattern list
is fetched).

FILE  Sentry API events (a JSON array or JSON lines, with `entries`),
      Sentry's per-event JSON, a Discover CSV export, or the matcher's
      events as JSON lines; gzip'd or not; `-` reads standard input.

Patterns (default: the built-in catalog):
  --patterns FILE        a saved pattern list: a /v1/filters response of
                         either variant, or a list of patterns
  --url URL              an account's list from a deployment
                         (GET URL/v1/filters), with --key KEY or the
                         NOISE_FILTER_KEY environment variable
  --min-confidence X     patterns at or above X (default 0.5)
  --pattern P            a candidate pattern to preview (repeatable;
                         `re:` before a regex)
  --first-party ORIGIN…  your own script origins (https://app.example):
                         noise matches on events whose frames are all
                         there are shown as suspected false positives

Output (the summary on standard output by default):
  --top N                rows per table of the summary (default 10)
  --html FILE            also write the report as one self-contained page
  --json                 the whole report as JSON instead of the summary
  --emit patterns        a file `noise-filter patterns import` takes: the
                         --pattern candidates and the suggestions --accept
                         names
  --emit sentry          Sentry inbound-filter globs, ignoreErrors and
                         denyUrls for the patterns that matched
  --accept RANKS         suggestions to emit, by rank (1,3,4) or `all`
  --max-messages N       distinct messages kept for ranking (default
                         100000)
  -h, --help             this text
";

/// What standard output carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stdout {
    /// The summary, readable at 80 columns.
    Summary,
    /// The report as JSON.
    Json,
    /// A file `noise-filter patterns import` takes.
    EmitPatterns,
    /// Sentry filters, as JSON.
    EmitSentry,
}

/// Where the patterns come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListSource {
    /// The built-in catalog.
    Builtin,
    /// A saved list or response, read by the shell (`--patterns FILE`).
    File(String),
    /// A deployment's list: the shell sends one GET to `url` with
    /// `Authorization: Bearer <key>` and nothing else.
    Url {
        /// The list's address (`…/v1/filters?minConfidence=…`).
        url: String,
        /// The API key (`--key` or `NOISE_FILTER_KEY`).
        key: String,
    },
}

/// Which suggestions `--emit` writes.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Accept {
    /// None (the default).
    #[default]
    None,
    /// Every one listed.
    All,
    /// These ranks (1-based).
    Ranks(Vec<usize>),
}

/// A report command, read from its arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// `--help`: print [`USAGE`] and do nothing else.
    pub help: bool,
    /// The export's path, or `-` for standard input.
    pub input: String,
    /// Where the patterns come from.
    pub list: ListSource,
    /// `--html FILE`.
    pub html: Option<String>,
    /// What standard output carries.
    pub stdout: Stdout,
    /// `--min-confidence`.
    pub min_confidence: f64,
    /// `--pattern`, as given.
    pub candidates: Vec<String>,
    /// `--first-party`, as given.
    pub first_party: Vec<String>,
    /// `--top`.
    pub top: usize,
    /// `--accept`.
    pub accept: Accept,
    /// `--max-messages`.
    pub max_messages: usize,
}

/// A command line that cannot run; the text says why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// The default of `--top`.
pub const DEFAULT_TOP: usize = 10;
/// The default of `--max-messages`.
pub const DEFAULT_MAX_MESSAGES: usize = 100_000;

/// Reads the report command's arguments (those after `report`);
/// `env_key` is `NOISE_FILTER_KEY`, which the shell reads.
pub fn plan(args: &[String], env_key: Option<&str>) -> Result<Plan, UsageError> {
    let usage = |text: String| UsageError(format!("{text} (see --help)"));
    let mut plan = Plan {
        help: false,
        input: String::new(),
        list: ListSource::Builtin,
        html: None,
        stdout: Stdout::Summary,
        min_confidence: crate::DEFAULT_MIN_CONFIDENCE,
        candidates: Vec::new(),
        first_party: Vec::new(),
        top: DEFAULT_TOP,
        accept: Accept::None,
        max_messages: DEFAULT_MAX_MESSAGES,
    };
    let (mut patterns, mut url, mut key) = (None, None, None);
    let mut inputs = Vec::new();
    let mut args = args.iter().peekable();
    while let Some(arg) = args.next() {
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) if arg.starts_with("--") => (flag, Some(value.to_owned())),
            _ => (arg.as_str(), None),
        };
        let mut value = |name: &str| -> Result<String, UsageError> {
            match inline.clone() {
                Some(v) => Ok(v),
                None => args
                    .next()
                    .cloned()
                    .ok_or_else(|| usage(format!("{name} needs a value"))),
            }
        };
        match flag {
            "-h" | "--help" => plan.help = true,
            "--patterns" => patterns = Some(value("--patterns")?),
            "--url" => url = Some(value("--url")?),
            "--key" => key = Some(value("--key")?),
            "--min-confidence" => {
                let text = value("--min-confidence")?;
                plan.min_confidence = text
                    .parse::<f64>()
                    .ok()
                    .filter(|x| (0.0..=1.0).contains(x))
                    .ok_or_else(|| {
                        usage(format!("--min-confidence {text:?}: a number from 0 to 1"))
                    })?;
            }
            "--pattern" => plan.candidates.push(value("--pattern")?),
            "--first-party" => {
                let first = value("--first-party")?;
                plan.first_party.push(origin(&first).map_err(usage)?);
                if inline.is_none() {
                    while let Some(next) = args.peek() {
                        if next.starts_with("--") || !next.contains("://") {
                            break;
                        }
                        plan.first_party.push(origin(next).map_err(usage)?);
                        args.next();
                    }
                }
            }
            "--top" => {
                let text = value("--top")?;
                plan.top = text
                    .parse::<usize>()
                    .ok()
                    .filter(|n| (1..=1000).contains(n))
                    .ok_or_else(|| {
                        usage(format!("--top {text:?}: a whole number from 1 to 1000"))
                    })?;
            }
            "--max-messages" => {
                let text = value("--max-messages")?;
                plan.max_messages = text
                    .parse::<usize>()
                    .ok()
                    .filter(|n| (10..=10_000_000).contains(n))
                    .ok_or_else(|| {
                        usage(format!(
                            "--max-messages {text:?}: a whole number from 10 to 10000000"
                        ))
                    })?;
            }
            "--accept" => {
                let text = value("--accept")?;
                plan.accept = if text == "all" {
                    Accept::All
                } else {
                    let ranks = text
                        .split(',')
                        .map(|r| r.trim().parse::<usize>().ok().filter(|&r| r >= 1))
                        .collect::<Option<Vec<_>>>()
                        .ok_or_else(|| {
                            usage(format!("--accept {text:?}: ranks such as 1,3,4, or all"))
                        })?;
                    Accept::Ranks(ranks)
                };
            }
            "--html" => plan.html = Some(value("--html")?),
            "--json" => set_stdout(&mut plan.stdout, Stdout::Json, "--json").map_err(usage)?,
            "--emit" => {
                let kind = value("--emit")?;
                let stdout = match kind.as_str() {
                    "patterns" => Stdout::EmitPatterns,
                    "sentry" => Stdout::EmitSentry,
                    _ => return Err(usage(format!("--emit {kind:?}: patterns or sentry"))),
                };
                set_stdout(&mut plan.stdout, stdout, "--emit").map_err(usage)?;
            }
            "-" => inputs.push(arg.clone()),
            _ if flag.starts_with('-') => return Err(usage(format!("unknown option {flag}"))),
            _ => inputs.push(arg.clone()),
        }
    }
    if plan.help {
        return Ok(plan);
    }
    plan.input = match inputs.len() {
        1 => inputs.remove(0),
        0 => {
            return Err(usage(
                "no export given: name a FILE, or - for standard input".into(),
            ));
        }
        _ => {
            return Err(usage(format!(
                "one export at a time, {} given",
                inputs.len()
            )));
        }
    };
    let key_flag = key.is_some();
    let key = key.or_else(|| env_key.filter(|k| !k.is_empty()).map(str::to_owned));
    plan.list = match (patterns, url, key) {
        (Some(_), Some(_), _) => {
            return Err(usage("--patterns and --url: give one list".into()));
        }
        (Some(file), None, _) => ListSource::File(file),
        (None, Some(url), Some(key)) => ListSource::Url {
            url: list_url(&url, plan.min_confidence).map_err(usage)?,
            key,
        },
        (None, Some(_), None) => {
            return Err(usage(
                "--url needs an API key: --key KEY or NOISE_FILTER_KEY".into(),
            ));
        }
        (None, None, Some(_)) if key_flag => {
            return Err(usage("--key is for --url".into()));
        }
        (None, None, _) => ListSource::Builtin,
    };
    if plan.accept != Accept::None
        && !matches!(plan.stdout, Stdout::EmitPatterns | Stdout::EmitSentry)
    {
        return Err(usage(
            "--accept chooses what --emit writes: add --emit".into(),
        ));
    }
    Ok(plan)
}

fn set_stdout(slot: &mut Stdout, wanted: Stdout, flag: &str) -> Result<(), String> {
    if *slot != Stdout::Summary && *slot != wanted {
        return Err(format!(
            "{flag}: standard output carries one of --json, --emit"
        ));
    }
    *slot = wanted;
    Ok(())
}

/// An origin as `--first-party` takes it: `scheme://host[:port]`, any path
/// cut off, lowercased.
fn origin(text: &str) -> Result<String, String> {
    let Some((scheme, rest)) = text.split_once("://") else {
        return Err(format!(
            "--first-party {text:?}: an origin such as https://app.example"
        ));
    };
    let host = rest.split('/').next().unwrap_or_default();
    if scheme.is_empty() || host.is_empty() {
        return Err(format!(
            "--first-party {text:?}: an origin such as https://app.example"
        ));
    }
    Ok(format!("{scheme}://{host}").to_ascii_lowercase())
}

/// The address of a deployment's Variant A list for `--url`: the base
/// address with `/v1/filters` (unless it ends with it already) and
/// `minConfidence`.
pub fn list_url(base: &str, min_confidence: f64) -> Result<String, String> {
    let base = base.trim();
    if !(base.starts_with("http://") || base.starts_with("https://")) {
        return Err(format!("--url {base:?}: an http:// or https:// address"));
    }
    if base.contains('?') || base.contains('#') {
        return Err(format!(
            "--url {base:?}: the deployment's address, without a query"
        ));
    }
    let base = base.trim_end_matches('/');
    let path = if base.ends_with("/v1/filters") {
        base.to_owned()
    } else {
        format!("{base}/v1/filters")
    };
    Ok(format!("{path}?minConfidence={min_confidence}"))
}

/// Why a `--url` fetch failed: the status and the service's `error` text.
pub fn fetch_refusal(url: &str, status: u16, body: &[u8]) -> String {
    let error = serde_json::from_slice::<serde_json::Value>(body)
        .ok()
        .and_then(|v| v.get("error").and_then(|e| e.as_str()).map(str::to_owned));
    match error {
        Some(error) => format!("GET {url} answered {status}: {error}"),
        None => format!("GET {url} answered {status}"),
    }
}

/// The patterns of a saved list: a response body of either variant
/// (`{"patterns": [...]}`) or a list of pattern objects.
pub fn read_list(bytes: &[u8]) -> Result<Vec<MatcherPattern>, String> {
    let value: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| pattern_list::not_json(e).0)?;
    let value = Some(&value);
    let read = if matches!(value, Some(serde_json::Value::Array(_))) {
        pattern_list::read_patterns(&value)
    } else {
        pattern_list::read_response(&value)
    };
    read.map_err(|e| e.0)
}

/// A `--pattern` candidate: `re:` then a regex, else a substring; checked
/// as a custom pattern is when it is added (it is one about to be saved).
pub fn candidate(text: &str, index: usize) -> Result<MatcherPattern, String> {
    let (pattern, kind) = match text.strip_prefix("re:") {
        Some(regex) => (regex, Kind::Regex),
        None => (text, Kind::String),
    };
    let new = crate::NewPattern {
        kind,
        ..crate::NewPattern::string(pattern)
    };
    new.validate(format!("custom-candidate-{}", index + 1))
        .map_err(|e| format!("--pattern {text:?}: {}", e.0))?;
    Ok(MatcherPattern {
        id: format!("candidate-{}", index + 1),
        pattern: pattern.to_owned(),
        kind,
        category: crate::CUSTOM_CATEGORY_A.to_owned(),
        confidence: 1.0,
    })
}

/// The texts the report reads from one JSON record of an export (a Sentry
/// event of either shape, or the matcher's event): `Ok(None)` for an event
/// it does not count (a transaction), `Err` for a malformed record. The
/// Sentry shapes follow docs/CONTRACT.md ("Reading a tracker's event"), as
/// npm's `toEvent` and Python's `to_event` do.
pub fn read_event(json: &[u8]) -> Result<Option<crate::Event>, String> {
    match read::record(json) {
        Ok(read::Read::Event(_, e)) => Ok(Some(crate::Event {
            exception_type: e.exception_type.map(|t| t.into_owned()),
            message: e.message.map(|m| m.into_owned()),
            frames: e.frames.into_iter().map(|f| f.into_owned()).collect(),
            user_agent: e.user_agent.map(|u| u.into_owned()),
        })),
        Ok(read::Read::Skipped(_)) => Ok(None),
        Ok(read::Read::Malformed(why)) | Err((why, _)) => Err(why),
    }
}

impl Plan {
    /// The report this plan runs, over the built-in catalog or `list` (the
    /// bytes of `--patterns FILE`, or the body `--url` answered).
    pub fn start(&self, list: Option<&[u8]>) -> Result<Report, String> {
        let (matcher, source) = match (&self.list, list) {
            (ListSource::Builtin, _) => (
                Matcher::builtin(self.min_confidence),
                PatternSource {
                    kind: "builtin",
                    name: format!("built-in catalog {}", crate::catalog_release()),
                },
            ),
            (ListSource::File(_) | ListSource::Url { .. }, None) => {
                return Err("the pattern list's bytes are missing".into());
            }
            (other, Some(bytes)) => {
                let patterns = read_list(bytes)?;
                let kept = patterns
                    .into_iter()
                    .filter(|p| p.confidence >= self.min_confidence);
                let matcher = Matcher::new(kept).map_err(|e| e.0)?;
                let (kind, name) = match other {
                    ListSource::File(path) => ("file", path.clone()),
                    ListSource::Url { url, .. } => ("url", url.clone()),
                    ListSource::Builtin => ("builtin", String::new()),
                };
                (matcher, PatternSource { kind, name })
            }
        };
        let candidates = self
            .candidates
            .iter()
            .enumerate()
            .map(|(i, c)| candidate(c, i))
            .collect::<Result<Vec<_>, _>>()?;
        Report::new(self, matcher, source, candidates)
    }

    /// The export's name as the summary shows it.
    fn input_name(&self) -> String {
        if self.input == "-" {
            "standard input".to_owned()
        } else {
            self.input.clone()
        }
    }
}

/// Where the patterns came from, for the summary.
#[derive(Debug, Clone)]
pub(crate) struct PatternSource {
    kind: &'static str,
    name: String,
}

/// A report being read: feed it the export's bytes, then finish it.
#[derive(Debug)]
pub struct Report {
    splitter: input::Splitter,
    columns: Option<csv::Columns>,
    aggregate: aggregate::Aggregate,
}

impl Report {
    fn new(
        plan: &Plan,
        matcher: Matcher,
        source: PatternSource,
        candidates: Vec<MatcherPattern>,
    ) -> Result<Report, String> {
        let aggregate = aggregate::Aggregate::new(plan, matcher, source, candidates)?;
        Ok(Report {
            splitter: input::Splitter::new(),
            columns: None,
            aggregate,
        })
    }

    /// Reads the next bytes of the export. An error is fatal: the input is
    /// in no format the report reads (said with what was expected).
    pub fn feed(&mut self, chunk: &[u8]) -> Result<(), String> {
        let Report {
            splitter,
            columns,
            aggregate,
        } = self;
        let mut refused = None;
        let mut found = |f: input::Found<'_>| take(f, columns, aggregate, &mut refused);
        splitter.feed(chunk, &mut found).map_err(|e| e.0)?;
        match refused {
            Some(why) => Err(why),
            None => Ok(()),
        }
    }

    /// Bytes read so far.
    pub fn bytes(&self) -> u64 {
        self.splitter.bytes()
    }

    /// Events counted so far.
    pub fn events(&self) -> u64 {
        self.aggregate.events()
    }

    /// The end of the export: the summary.
    pub fn finish(mut self) -> Result<Summary, String> {
        let Report {
            splitter,
            columns,
            aggregate,
        } = &mut self;
        let mut refused = None;
        let mut found = |f: input::Found<'_>| take(f, columns, aggregate, &mut refused);
        splitter.finish(&mut found).map_err(|e| e.0)?;
        if let Some(why) = refused {
            return Err(why);
        }
        let bytes = self.splitter.bytes();
        let summary = self.aggregate.summary(self.columns.as_ref(), bytes);
        // Nothing but malformed records: the wrong file, not a report.
        if summary.input.records == 0 && summary.input.malformed > 0 {
            let first = &summary.input.malformed_first[0];
            return Err(format!(
                "no event could be read: {} malformed record{}; the first, line {}: {}",
                summary.input.malformed,
                if summary.input.malformed == 1 {
                    ""
                } else {
                    "s"
                },
                first.line,
                first.why
            ));
        }
        Ok(summary)
    }
}

/// Hands a record found by the splitter to the reader and the counts.
fn take(
    found: input::Found<'_>,
    columns: &mut Option<csv::Columns>,
    aggregate: &mut aggregate::Aggregate,
    refused: &mut Option<String>,
) {
    match found {
        input::Found::Json { bytes, line } => match read::record(bytes) {
            Ok(read::Read::Event(shape, event)) => aggregate.event(shape, &event, line),
            Ok(read::Read::Skipped(why)) => aggregate.skipped(why),
            Ok(read::Read::Malformed(why)) => aggregate.malformed(line, why),
            Err((why, at)) => aggregate.malformed(line + at.saturating_sub(1), why),
        },
        input::Found::CsvHeader { bytes } => match csv::Columns::of(bytes) {
            Ok(c) => *columns = Some(c),
            Err(names) => {
                if refused.is_none() {
                    *refused = Some(input::unknown(csv::no_message_column(&names)).0);
                }
            }
        },
        input::Found::CsvRow { bytes, line } => {
            let Some(c) = columns.as_ref() else {
                return;
            };
            match c.row(bytes) {
                Ok(Some(event)) => aggregate.event(read::Shape::DiscoverCsv, &event, line),
                Ok(None) => aggregate.skipped("a row with a count of 0"),
                Err(why) => aggregate.malformed(line, why),
            }
        }
        input::Found::Broken { line, why } => aggregate.malformed(line, why.to_owned()),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn command_lines() {
        let p = plan(
            &args(&[
                "x.json",
                "--pattern",
                "re:^Foo \\d+",
                "--first-party",
                "https://App.example/path",
                "http://cdn.example:8080",
                "--top=5",
            ]),
            None,
        )
        .unwrap();
        assert_eq!(p.input, "x.json");
        assert_eq!(
            p.first_party,
            ["https://app.example", "http://cdn.example:8080"]
        );
        assert_eq!(p.top, 5);
        let p = plan(&args(&["--url", "https://f.example/", "-"]), Some("nf_k")).unwrap();
        assert_eq!(
            p.list,
            ListSource::Url {
                url: "https://f.example/v1/filters?minConfidence=0.5".into(),
                key: "nf_k".into()
            }
        );
        for (bad, why) in [
            (&["a", "b"][..], "one export at a time"),
            (&[][..], "no export given"),
            (&["a", "--url", "https://x"][..], "needs an API key"),
            (
                &["a", "--json", "--emit", "sentry"][..],
                "one of --json, --emit",
            ),
            (&["a", "--accept", "1"][..], "add --emit"),
            (&["a", "--min-confidence", "2"][..], "from 0 to 1"),
            (&["a", "--frobnicate"][..], "unknown option"),
            (&["a", "--first-party", "app.example"][..], "an origin"),
        ] {
            let e = plan(&args(bad), None).unwrap_err();
            assert!(e.0.contains(why), "{bad:?}: {e}");
        }
    }

    #[test]
    fn candidates_are_checked_as_custom_patterns() {
        assert!(candidate("re:^Foo \\d+", 0).is_ok());
        assert!(candidate("ab", 0).unwrap_err().contains("at least 3"));
        assert!(candidate("re:(a+)+", 0).is_err());
    }
}
