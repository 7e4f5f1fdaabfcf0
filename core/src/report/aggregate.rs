//! The counting: every event read is matched once against the list (and
//! the candidates) and added to the counts; at the end the counts become a
//! [`Summary`], with the suggestions.
//!
//! A per-pattern count is kept by pattern index, and a per-category one by
//! the category a match carries; a further view of the matches (a tag of
//! the verdict's `Match`) is one more map filled in `count_matches`.

use std::collections::{BTreeMap, HashMap};
use std::hash::BuildHasherDefault;

use crate::event::{Event, Field};
use crate::matcher::Matcher;
use crate::pattern::MatcherPattern;

use super::distinct::{self, Distinct, Prehashed, key_hash};
use super::normalize;
use super::read::{EventRecord, Shape};
use super::summary::*;
use super::time::{self, Millis};
use super::{Accept, PatternSource, Plan};

/// Malformed records listed (all are counted).
const MALFORMED_LISTED: usize = 20;
/// Samples kept per candidate and for first-party matches.
const SAMPLES: usize = 5;
/// Normalised messages ranked in the JSON and the page (the summary shows
/// `--top`).
const RANKED: usize = 100;
/// Distinct browsers counted (the rest as one row).
const BROWSERS: usize = 1000;
/// Characters of a text kept in a sample.
const SAMPLE_CHARS: usize = 200;
/// Buckets of a time series at most.
const MAX_BUCKETS: i64 = 120;

#[derive(Debug)]
pub(crate) struct Aggregate {
    matcher: Matcher,
    source: PatternSource,
    min_confidence: f64,
    candidates: Option<Matcher>,
    candidate_given: Vec<String>,
    candidate_counts: Vec<CandidateCounts>,
    first_party: Vec<String>,
    input_name: String,
    top: usize,
    accept: Accept,
    max_messages: usize,

    shapes: BTreeMap<Shape, u64>,
    records: u64,
    events: u64,
    noise: u64,
    skipped: BTreeMap<&'static str, u64>,
    malformed: u64,
    malformed_first: Vec<Malformed>,
    coverage: Coverage,
    issues: Distinct,
    noise_issues: Distinct,
    users: Distinct,
    noise_users: Distinct,
    categories: BTreeMap<String, CategoryCounts>,
    patterns: Vec<Option<Box<PatternCounts>>>,
    days: BTreeMap<i64, (u64, u64)>,
    first_time: Option<Millis>,
    last_time: Option<Millis>,
    groups: Groups,
    first_party_events: u64,
    first_party_judged: u64,
    first_party_samples: Vec<Sample>,
    browsers: BTreeMap<String, (u64, u64)>,
    /// Scratch, reused: the distinct patterns of one verdict.
    matched: Vec<(usize, u8)>,
}

#[derive(Debug)]
struct CategoryCounts {
    events: u64,
    issues: Distinct,
    users: Distinct,
}

#[derive(Debug)]
struct PatternCounts {
    events: u64,
    only: u64,
    issues: Distinct,
    users: Distinct,
    first: Option<Millis>,
    last: Option<Millis>,
    fields: FieldCounts,
    first_party: u64,
}

#[derive(Debug)]
struct CandidateCounts {
    events: u64,
    adds: u64,
    issues: Distinct,
    users: Distinct,
    fields: FieldCounts,
    samples: Vec<Sample>,
    matched_samples: Vec<Sample>,
}

/// Which texts a pattern matched in one event.
const MESSAGE: u8 = 1;
const FRAME: u8 = 2;
const USER_AGENT: u8 = 4;

fn field_bit(field: Field) -> u8 {
    match field {
        Field::Message => MESSAGE,
        Field::Frame(_) => FRAME,
        Field::UserAgent => USER_AGENT,
    }
}

fn add_fields(counts: &mut FieldCounts, bits: u8, weight: u64) {
    if bits & MESSAGE != 0 {
        counts.message += weight;
    }
    if bits & FRAME != 0 {
        counts.frame += weight;
    }
    if bits & USER_AGENT != 0 {
        counts.user_agent += weight;
    }
}

impl Aggregate {
    pub(crate) fn new(
        plan: &Plan,
        matcher: Matcher,
        source: PatternSource,
        candidates: Vec<MatcherPattern>,
    ) -> Result<Aggregate, String> {
        let candidate_given = plan.candidates.clone();
        let candidate_counts = candidates
            .iter()
            .map(|_| CandidateCounts {
                events: 0,
                adds: 0,
                issues: Distinct::new(distinct::WIDE),
                users: Distinct::new(distinct::WIDE),
                fields: FieldCounts::default(),
                samples: Vec::new(),
                matched_samples: Vec::new(),
            })
            .collect();
        let candidates = if candidates.is_empty() {
            None
        } else {
            Some(Matcher::new(candidates).map_err(|e| e.0)?)
        };
        let patterns = (0..matcher.patterns().len()).map(|_| None).collect();
        Ok(Aggregate {
            matcher,
            source,
            min_confidence: plan.min_confidence,
            candidates,
            candidate_given,
            candidate_counts,
            first_party: plan.first_party.clone(),
            input_name: plan.input_name(),
            top: plan.top,
            accept: plan.accept.clone(),
            max_messages: plan.max_messages,
            shapes: BTreeMap::new(),
            records: 0,
            events: 0,
            noise: 0,
            skipped: BTreeMap::new(),
            malformed: 0,
            malformed_first: Vec::new(),
            coverage: Coverage {
                time: 0,
                issue: 0,
                user: 0,
                browser: 0,
            },
            issues: Distinct::new(distinct::WIDE),
            noise_issues: Distinct::new(distinct::WIDE),
            users: Distinct::new(distinct::WIDE),
            noise_users: Distinct::new(distinct::WIDE),
            categories: BTreeMap::new(),
            patterns,
            days: BTreeMap::new(),
            first_time: None,
            last_time: None,
            groups: Groups::new(plan.max_messages),
            first_party_events: 0,
            first_party_judged: 0,
            first_party_samples: Vec::new(),
            browsers: BTreeMap::new(),
            matched: Vec::new(),
        })
    }

    pub(crate) fn events(&self) -> u64 {
        self.events
    }

    pub(crate) fn skipped(&mut self, why: &'static str) {
        *self.skipped.entry(why).or_default() += 1;
    }

    pub(crate) fn malformed(&mut self, line: u64, why: String) {
        self.malformed += 1;
        if self.malformed_first.len() < MALFORMED_LISTED {
            self.malformed_first.push(Malformed { line, why });
        }
    }

    pub(crate) fn event(&mut self, shape: Shape, record: &EventRecord<'_>, line: u64) {
        let w = record.weight;
        *self.shapes.entry(shape).or_default() += 1;
        self.records += 1;
        self.events += w;
        let event = Event {
            exception_type: record.exception_type.as_deref().map(str::to_owned),
            message: record.message.as_deref().map(str::to_owned),
            frames: record.frames.iter().map(|f| f.to_string()).collect(),
            user_agent: record.user_agent.as_deref().map(str::to_owned),
        };
        let verdict = self.matcher.classify(&event);
        let noise = verdict.noise;
        // The distinct patterns matched, with the texts each matched.
        self.matched.clear();
        for m in &verdict.matches {
            let bit = field_bit(m.field);
            match self.matched.iter_mut().find(|(i, _)| *i == m.index) {
                Some((_, bits)) => *bits |= bit,
                None => self.matched.push((m.index, bit)),
            }
        }
        drop(verdict);
        let user = record.user.as_deref().map(key_hash);
        let issue = record.issue.as_deref().map(key_hash);
        if noise {
            self.noise += w;
        }
        if let Some(u) = user {
            self.coverage.user += w;
            self.users.insert(u);
            if noise {
                self.noise_users.insert(u);
            }
        }
        if let Some(i) = issue {
            self.coverage.issue += w;
            self.issues.insert(i);
            if noise {
                self.noise_issues.insert(i);
            }
        }
        let first_party = self.first_party_judgement(record);
        if let Some(all_first) = first_party {
            self.first_party_judged += w;
            if noise && all_first {
                self.first_party_events += w;
                if self.first_party_samples.len() < SAMPLES {
                    let (field, text) = self.first_match_text(&event);
                    self.first_party_samples
                        .push(sample(record, &event, line, field, text));
                }
            }
        }
        self.count_matches(record, user, issue, first_party == Some(true));
        if let Some(t) = record.time {
            self.coverage.time += w;
            let day = time::day_of(t);
            let slot = self.days.entry(day).or_default();
            slot.0 += w;
            if noise {
                slot.1 += w;
            }
            self.first_time = Some(self.first_time.map_or(t, |f| f.min(t)));
            self.last_time = Some(self.last_time.map_or(t, |l| l.max(t)));
        }
        if let Some(browser) = record.browser.as_deref() {
            self.coverage.browser += w;
            let key = if self.browsers.len() < BROWSERS || self.browsers.contains_key(browser) {
                browser.to_owned()
            } else {
                "(other browsers)".to_owned()
            };
            let slot = self.browsers.entry(key).or_default();
            slot.0 += w;
            if noise {
                slot.1 += w;
            }
        }
        let message = event.message_text().unwrap_or_default();
        self.groups.add(
            &message,
            w,
            noise,
            if noise { None } else { user },
            record.time,
        );
        if let Some(candidates) = &self.candidates {
            let verdict = candidates.classify(&event);
            let mut seen: Vec<(usize, u8, Field)> = Vec::new();
            for m in &verdict.matches {
                match seen.iter_mut().find(|(i, _, _)| *i == m.index) {
                    Some((_, bits, _)) => *bits |= field_bit(m.field),
                    None => seen.push((m.index, field_bit(m.field), m.field)),
                }
            }
            for (index, bits, field) in seen {
                let c = &mut self.candidate_counts[index];
                c.events += w;
                add_fields(&mut c.fields, bits, w);
                let text = || text_of(&event, field);
                if noise {
                    if c.matched_samples.len() < SAMPLES {
                        c.matched_samples.push(sample(
                            record,
                            &event,
                            line,
                            field_name(field),
                            text(),
                        ));
                    }
                    continue;
                }
                c.adds += w;
                if let Some(u) = user {
                    c.users.insert(u);
                }
                if let Some(i) = issue {
                    c.issues.insert(i);
                }
                if c.samples.len() < SAMPLES {
                    c.samples
                        .push(sample(record, &event, line, field_name(field), text()));
                }
            }
        }
    }

    /// The per-pattern and per-category counts of one event's matches.
    fn count_matches(
        &mut self,
        record: &EventRecord<'_>,
        user: Option<u64>,
        issue: Option<u64>,
        first_party: bool,
    ) {
        let w = record.weight;
        let only = self.matched.len() == 1;
        let mut categories: Vec<&str> = Vec::new();
        for &(index, bits) in &self.matched {
            let p = self.patterns[index].get_or_insert_with(|| {
                Box::new(PatternCounts {
                    events: 0,
                    only: 0,
                    issues: Distinct::new(distinct::PATTERN),
                    users: Distinct::new(distinct::PATTERN),
                    first: None,
                    last: None,
                    fields: FieldCounts::default(),
                    first_party: 0,
                })
            });
            p.events += w;
            if only {
                p.only += w;
            }
            if first_party {
                p.first_party += w;
            }
            add_fields(&mut p.fields, bits, w);
            if let Some(u) = user {
                p.users.insert(u);
            }
            if let Some(i) = issue {
                p.issues.insert(i);
            }
            if let Some(t) = record.time {
                p.first = Some(p.first.map_or(t, |f| f.min(t)));
                p.last = Some(p.last.map_or(t, |l| l.max(t)));
            }
            let category = self.matcher.patterns()[index].category.as_str();
            if !categories.contains(&category) {
                categories.push(category);
            }
        }
        for category in categories {
            let c = match self.categories.get_mut(category) {
                Some(c) => c,
                None => self
                    .categories
                    .entry(category.to_owned())
                    .or_insert_with(|| CategoryCounts {
                        events: 0,
                        issues: Distinct::new(distinct::PATTERN),
                        users: Distinct::new(distinct::PATTERN),
                    }),
            };
            c.events += w;
            if let Some(u) = user {
                c.users.insert(u);
            }
            if let Some(i) = issue {
                c.issues.insert(i);
            }
        }
    }

    /// `Some(all first-party)` for an event with frames, with
    /// `--first-party` given; `None` otherwise.
    fn first_party_judgement(&self, record: &EventRecord<'_>) -> Option<bool> {
        if self.first_party.is_empty() {
            return None;
        }
        let mut frames = record.frames.iter().chain(&record.raw_frames).peekable();
        frames.peek()?;
        Some(frames.all(|url| self.first_party.iter().any(|o| under_origin(url, o))))
    }

    /// The text of the event's first match, for a sample.
    fn first_match_text(&self, event: &Event) -> (&'static str, String) {
        let verdict = self.matcher.classify(event);
        match verdict.matches.first() {
            Some(m) => (field_name(m.field), text_of(event, m.field)),
            None => ("message", String::new()),
        }
    }

    pub(crate) fn summary(&mut self, columns: Option<&super::csv::Columns>, bytes: u64) -> Summary {
        let mut missing = Vec::new();
        let partial = |what: &str, have: u64, events: u64, missing: &mut Vec<String>| {
            if have > 0 && have < events {
                missing.push(format!(
                    "{what}: {} of {events} events carry none; {what} count only those that do",
                    events - have
                ));
            }
        };
        let share = |noise: &Distinct, all: &Distinct| {
            let (n, ne) = noise.count();
            let (t, te) = all.count();
            Share {
                noise: n,
                total: t,
                estimated: ne || te,
            }
        };
        let has_issues = self.coverage.issue > 0;
        let has_users = self.coverage.user > 0;
        if self.events > 0 {
            if !has_issues {
                missing.push(
                    "issues: the export has no issue (the API's `groupID`, a CSV `issue` or \
                     `issue.id` column, the matcher's `issue`; Sentry's per-event JSON has \
                     none)"
                        .to_owned(),
                );
            }
            if !has_users {
                missing.push(
                    "users: the export has no user (Sentry's `user` or a `user` tag; a CSV \
                     `user`, `user.id`, `user.email`, `user.username`, `user.ip` or \
                     `user.display` column; the matcher's `user`)"
                        .to_owned(),
                );
            }
            if self.coverage.time == 0 {
                missing.push(
                    "over time and per month: the export has no timestamps (the API's \
                     `dateCreated`, Sentry's `timestamp`, a CSV `timestamp` column)"
                        .to_owned(),
                );
            }
        }
        partial("issues", self.coverage.issue, self.events, &mut missing);
        partial("users", self.coverage.user, self.events, &mut missing);
        partial(
            "over time and per month",
            self.coverage.time,
            self.events,
            &mut missing,
        );
        let noise = NoiseShare {
            events: Share {
                noise: self.noise,
                total: self.events,
                estimated: false,
            },
            issues: has_issues.then(|| share(&self.noise_issues, &self.issues)),
            users: has_users.then(|| share(&self.noise_users, &self.users)),
        };
        let list = self.matcher.patterns();
        let mut categories: Vec<CategoryRow> = self
            .categories
            .iter()
            .map(|(category, c)| {
                let (issues, ie) = c.issues.count();
                let (users, ue) = c.users.count();
                CategoryRow {
                    category: category.clone(),
                    events: c.events,
                    issues: has_issues.then_some(issues),
                    users: has_users.then_some(users),
                    estimated: (has_issues && ie) || (has_users && ue),
                    patterns: self
                        .patterns
                        .iter()
                        .zip(list)
                        .filter(|(c, p)| c.is_some() && p.category == *category)
                        .count(),
                }
            })
            .collect();
        categories.sort_by(|a, b| b.events.cmp(&a.events).then(a.category.cmp(&b.category)));
        let mut matched = Vec::new();
        let mut silent = Vec::new();
        for (counts, p) in self.patterns.iter().zip(list) {
            match counts {
                None => silent.push(SilentPattern {
                    id: p.id.clone(),
                    category: p.category.clone(),
                }),
                Some(c) => {
                    let (issues, ie) = c.issues.count();
                    let (users, ue) = c.users.count();
                    matched.push(PatternRow {
                        id: p.id.clone(),
                        category: p.category.clone(),
                        kind: p.kind.name(),
                        pattern: p.pattern.clone(),
                        events: c.events,
                        only: c.only,
                        issues: has_issues.then_some(issues),
                        users: has_users.then_some(users),
                        estimated: (has_issues && ie) || (has_users && ue),
                        first_seen: c.first.map(time::instant),
                        last_seen: c.last.map(time::instant),
                        fields: c.fields,
                        first_party: c.first_party,
                    });
                }
            }
        }
        matched.sort_by(|a, b| b.events.cmp(&a.events).then(a.id.cmp(&b.id)));
        let candidates = self
            .candidate_counts
            .iter_mut()
            .zip(&self.candidate_given)
            .zip(self.candidates.iter().flat_map(|m| m.patterns()))
            .map(|((c, given), p)| {
                let (issues, ie) = c.issues.count();
                let (users, ue) = c.users.count();
                let samples = if c.samples.is_empty() {
                    std::mem::take(&mut c.matched_samples)
                } else {
                    std::mem::take(&mut c.samples)
                };
                CandidateRow {
                    given: given.clone(),
                    pattern: p.pattern.clone(),
                    kind: p.kind.name(),
                    events: c.events,
                    adds: c.adds,
                    issues: has_issues.then_some(issues),
                    users: has_users.then_some(users),
                    estimated: (has_issues && ie) || (has_users && ue),
                    fields: c.fields,
                    samples,
                }
            })
            .collect();
        let first_party = (!self.first_party.is_empty()).then(|| {
            if self.first_party_judged == 0 && self.events > 0 {
                missing.push(
                    "first-party: no event has frames to judge (a stack trace's URLs)".to_owned(),
                );
            }
            FirstPartySummary {
                origins: self.first_party.clone(),
                events: self.first_party_events,
                judged: self.first_party_judged,
                samples: std::mem::take(&mut self.first_party_samples),
            }
        });
        let browsers = (self.coverage.browser > 0).then(|| {
            let mut rows: Vec<BrowserRow> = self
                .browsers
                .iter()
                .map(|(b, &(events, noise))| BrowserRow {
                    browser: b.clone(),
                    events,
                    noise,
                })
                .collect();
            rows.sort_by(|a, b| b.events.cmp(&a.events).then(a.browser.cmp(&b.browser)));
            rows
        });
        let unmatched = self.groups.summary(self.events - self.noise, has_users);
        let accept = match &self.accept {
            Accept::None => Vec::new(),
            Accept::All => unmatched
                .top
                .iter()
                .filter(|m| m.suggestion.is_some())
                .map(|m| m.rank)
                .collect(),
            Accept::Ranks(ranks) => ranks.clone(),
        };
        Summary {
            report: 1,
            input: InputSummary {
                name: self.input_name.clone(),
                bytes,
                shapes: self
                    .shapes
                    .iter()
                    .map(|(s, &records)| ShapeCount {
                        shape: s.name(),
                        records,
                    })
                    .collect(),
                records: self.records,
                events: self.events,
                skipped: self
                    .skipped
                    .iter()
                    .map(|(why, &count)| Reason {
                        why: (*why).to_owned(),
                        count,
                    })
                    .collect(),
                malformed: self.malformed,
                malformed_first: std::mem::take(&mut self.malformed_first),
                coverage: self.coverage.clone(),
                columns: columns.map(|c| {
                    c.names
                        .iter()
                        .map(|(name, read)| ColumnUse {
                            name: name.clone(),
                            read: *read,
                        })
                        .collect()
                }),
            },
            patterns: ListSummary {
                source: self.source.kind,
                name: self.source.name.clone(),
                count: list.len(),
                min_confidence: self.min_confidence,
            },
            noise,
            categories,
            time: self.time_summary(),
            matched,
            silent,
            unmatched,
            candidates,
            first_party,
            browsers,
            missing,
            options: OptionsSummary {
                top: self.top,
                accept,
                max_messages: self.max_messages,
            },
        }
    }

    fn time_summary(&self) -> Option<TimeSummary> {
        let (first, last) = (self.first_time?, self.last_time?);
        let (first_day, last_day) = (time::day_of(first), time::day_of(last));
        let span = last_day - first_day + 1;
        let (bucket, start_of): (&'static str, fn(i64) -> i64) = if span <= MAX_BUCKETS {
            ("day", |d| d)
        } else if span <= MAX_BUCKETS * 7 {
            ("week", time::week_start)
        } else if span <= MAX_BUCKETS * 30 {
            ("month", time::month_start)
        } else {
            ("year", time::year_start)
        };
        let series = buckets(&self.days, first_day, last_day, start_of);
        let months = buckets(&self.days, first_day, last_day, time::month_start);
        let days = ((last - first) as f64 / time::DAY_MS).max(1.0);
        let (events, noise) = self
            .days
            .values()
            .fold((0, 0), |(e, n), &(de, dn)| (e + de, n + dn));
        let per = |count: u64| (count as f64 * 30.0 / days * 10.0).round() / 10.0;
        Some(TimeSummary {
            first: time::instant(first),
            last: time::instant(last),
            days: (days * 100.0).round() / 100.0,
            bucket,
            series,
            months,
            per_month: PerMonth {
                events: per(events),
                noise: per(noise),
            },
        })
    }
}

/// The buckets from the one holding `first` to the one holding `last`,
/// empty ones included.
fn buckets(
    days: &BTreeMap<i64, (u64, u64)>,
    first: i64,
    last: i64,
    start_of: fn(i64) -> i64,
) -> Vec<Bucket> {
    let mut out: Vec<(i64, u64, u64)> = Vec::new();
    for day in first..=last {
        let start = start_of(day);
        if out.last().is_none_or(|b| b.0 != start) {
            out.push((start, 0, 0));
        }
    }
    for (&d, &(events, noise)) in days {
        let start = start_of(d);
        if let Ok(i) = out.binary_search_by(|b| b.0.cmp(&start)) {
            out[i].1 += events;
            out[i].2 += noise;
        }
    }
    out.into_iter()
        .map(|(d, events, noise)| Bucket {
            start: time::date(d),
            events,
            noise,
        })
        .collect()
}

fn field_name(field: Field) -> &'static str {
    match field {
        Field::Message => "message",
        Field::Frame(_) => "frame",
        Field::UserAgent => "userAgent",
    }
}

fn text_of(event: &Event, field: Field) -> String {
    let text = match field {
        Field::Message => event.message_text().unwrap_or_default(),
        Field::Frame(i) => event.frames.get(i).cloned().unwrap_or_default(),
        Field::UserAgent => event.user_agent.clone().unwrap_or_default(),
    };
    cut(&text, SAMPLE_CHARS)
}

pub(crate) fn cut(text: &str, most: usize) -> String {
    match text.char_indices().nth(most) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_owned(),
    }
}

fn sample(
    record: &EventRecord<'_>,
    event: &Event,
    line: u64,
    field: &'static str,
    text: String,
) -> Sample {
    Sample {
        line,
        id: record.id.as_deref().map(str::to_owned),
        message: event.message_text().map(|m| cut(&m, SAMPLE_CHARS)),
        field,
        text,
        url: record.url.as_deref().map(|u| cut(u, SAMPLE_CHARS)),
    }
}

/// Whether `url` is under `origin` (`https://app.example` holds
/// `https://app.example/x.js`, not `https://app.example.evil/x.js`).
fn under_origin(url: &str, origin: &str) -> bool {
    url.len() >= origin.len()
        && url.as_bytes()[..origin.len()].eq_ignore_ascii_case(origin.as_bytes())
        && matches!(
            url.as_bytes().get(origin.len()),
            None | Some(b'/' | b'?' | b'#')
        )
}

/// The table of normalised messages.
#[derive(Debug)]
struct Groups {
    index: HashMap<u64, u32, BuildHasherDefault<Prehashed>>,
    list: Vec<Group>,
    capacity: usize,
    /// Groups with at most this many events were dropped when the table
    /// filled; a group added since may be short by as many.
    floor: u64,
    untracked_events: u64,
}

#[derive(Debug)]
struct Group {
    key: Box<str>,
    sample: Box<str>,
    events: u64,
    unmatched: u64,
    users: Distinct,
    first: Option<Millis>,
    last: Option<Millis>,
    undercount: u64,
}

impl Groups {
    fn new(capacity: usize) -> Groups {
        Groups {
            index: HashMap::default(),
            list: Vec::new(),
            capacity,
            floor: 0,
            untracked_events: 0,
        }
    }

    fn add(&mut self, message: &str, w: u64, noise: bool, user: Option<u64>, at: Option<Millis>) {
        let key = normalize::key(message);
        let at_index = match self.find(&key) {
            Ok(i) => i,
            Err(hash) => {
                let hash = if self.list.len() >= self.capacity {
                    self.prune();
                    match self.find(&key) {
                        Err(hash) => hash,
                        Ok(_) => unreachable!("a new key is still new after pruning"),
                    }
                } else {
                    hash
                };
                self.index.insert(hash, self.list.len() as u32);
                self.list.push(Group {
                    key: key.into_boxed_str(),
                    sample: normalize_sample(message),
                    events: 0,
                    unmatched: 0,
                    users: Distinct::new(distinct::MESSAGE),
                    first: None,
                    last: None,
                    undercount: self.floor,
                });
                self.list.len() - 1
            }
        };
        let g = &mut self.list[at_index];
        g.events += w;
        if !noise {
            g.unmatched += w;
            if let Some(u) = user {
                g.users.insert(u);
            }
            if let Some(t) = at {
                g.first = Some(g.first.map_or(t, |f| f.min(t)));
                g.last = Some(g.last.map_or(t, |l| l.max(t)));
            }
        }
    }

    /// The group of `key`, or the free slot of the index to put it at.
    fn find(&self, key: &str) -> Result<usize, u64> {
        let mut hash = key_hash(key);
        loop {
            match self.index.get(&hash) {
                Some(&i) if *self.list[i as usize].key == *key => return Ok(i as usize),
                // Another key with this hash: the next slot.
                Some(_) => hash = hash.wrapping_add(0x9e37_79b9_7f4a_7c15),
                None => return Err(hash),
            }
        }
    }

    /// Drops the smallest groups, a tenth of the table or more.
    fn prune(&mut self) {
        let mut counts: Vec<u64> = self.list.iter().map(|g| g.events).collect();
        let nth = ((self.capacity / 10).max(1) - 1).min(counts.len() - 1);
        let (_, &mut at_nth, _) = counts.select_nth_unstable(nth);
        self.floor = self.floor.max(at_nth).max(self.floor + 1);
        let floor = self.floor;
        let mut untracked = 0;
        self.list.retain(|g| {
            let keep = g.events > floor;
            if !keep {
                untracked += g.events;
            }
            keep
        });
        self.untracked_events += untracked;
        self.index.clear();
        for i in 0..self.list.len() {
            let mut hash = key_hash(&self.list[i].key);
            while self.index.contains_key(&hash) {
                hash = hash.wrapping_add(0x9e37_79b9_7f4a_7c15);
            }
            self.index.insert(hash, i as u32);
        }
    }

    fn summary(&self, unmatched_events: u64, has_users: bool) -> UnmatchedSummary {
        let mut ranked: Vec<&Group> = self.list.iter().filter(|g| g.unmatched > 0).collect();
        let users = |g: &Group| g.users.count().0;
        ranked.sort_by(|a, b| {
            b.unmatched
                .cmp(&a.unmatched)
                .then_with(|| users(b).cmp(&users(a)))
                .then_with(|| a.key.cmp(&b.key))
        });
        ranked.truncate(RANKED);
        let mut top: Vec<MessageRow> = ranked
            .iter()
            .enumerate()
            .map(|(i, g)| {
                let (u, estimated) = g.users.count();
                MessageRow {
                    rank: i + 1,
                    message: g.key.to_string(),
                    sample: g.sample.to_string(),
                    events: g.unmatched,
                    users: has_users.then_some(u),
                    estimated: has_users && estimated,
                    matched_events: g.events - g.unmatched,
                    undercount: g.undercount,
                    first_seen: g.first.map(time::instant),
                    last_seen: g.last.map(time::instant),
                    suggestion: None,
                }
            })
            .collect();
        self.suggest(&mut top, has_users);
        UnmatchedSummary {
            events: unmatched_events,
            messages: self.list.len() as u64,
            untracked_events: self.untracked_events,
            max_undercount: self.floor,
            top,
        }
    }

    /// Suggests a pattern for each ranked message, and counts what each
    /// would match over every group's sample (one message text each: the
    /// group's members differ only where a suggestion matches by class).
    fn suggest(&self, top: &mut [MessageRow], has_users: bool) {
        let mut suggested: Vec<(usize, MatcherPattern)> = Vec::new();
        for (i, row) in top.iter().enumerate() {
            if let Some(p) = suggestion_for(&row.sample, i) {
                suggested.push((i, p));
            }
        }
        if suggested.is_empty() {
            return;
        }
        let Ok(matcher) = Matcher::new(suggested.iter().map(|(_, p)| p.clone())) else {
            return;
        };
        struct Would {
            adds: u64,
            already: u64,
            messages: u64,
            users: Distinct,
        }
        let mut would: Vec<Would> = suggested
            .iter()
            .map(|_| Would {
                adds: 0,
                already: 0,
                messages: 0,
                users: Distinct::new(distinct::MESSAGE),
            })
            .collect();
        let mut hits = Vec::new();
        for g in &self.list {
            let event = Event {
                message: Some(g.sample.to_string()),
                ..Event::default()
            };
            hits.clear();
            hits.extend(matcher.classify(&event).matches.iter().map(|m| m.index));
            hits.dedup();
            for &s in &hits {
                let w = &mut would[s];
                w.adds += g.unmatched;
                w.already += g.events - g.unmatched;
                w.messages += 1;
                w.users.merge(&g.users);
            }
        }
        for ((row_index, p), w) in suggested.into_iter().zip(would) {
            // A suggestion that does not match its own message is dropped.
            if w.messages == 0 {
                continue;
            }
            let (users, estimated) = w.users.count();
            top[row_index].suggestion = Some(Suggestion {
                pattern: p.pattern,
                kind: p.kind.name(),
                adds: w.adds,
                users: has_users.then_some(users),
                estimated: has_users && estimated,
                already_noise: w.already,
                messages: w.messages,
            });
        }
    }
}

/// A group's sample: the message as it was, cut.
fn normalize_sample(message: &str) -> Box<str> {
    cut(message, normalize::KEY_CHARS).into_boxed_str()
}

/// The suggested pattern for a message, checked as a custom pattern is.
fn suggestion_for(sample: &str, index: usize) -> Option<MatcherPattern> {
    let pieces = normalize::pieces(sample.trim_end_matches('…'));
    let (first, fallback) = normalize::suggest(&pieces);
    [first, fallback].into_iter().flatten().find_map(|s| {
        let new = crate::NewPattern {
            kind: s.kind,
            ..crate::NewPattern::string(&s.pattern)
        };
        new.validate("custom-suggestion".to_owned()).ok()?;
        Some(MatcherPattern {
            id: format!("suggestion-{}", index + 1),
            pattern: s.pattern,
            kind: s.kind,
            category: crate::CUSTOM_CATEGORY_A.to_owned(),
            confidence: 1.0,
        })
    })
}
