//! The summary on standard output: every line at most 80 characters, long
//! texts cut with `…`, estimates marked `≈`, and what could not be
//! computed said instead of a zero.

use std::fmt::Write as _;

use super::summary::*;
use super::time;

/// The widest line.
pub(crate) const WIDTH: usize = 80;

pub(crate) fn render(s: &Summary) -> String {
    let mut out = Out::default();
    header(&mut out, s);
    noise(&mut out, s);
    categories(&mut out, s);
    over_time(&mut out, s);
    patterns(&mut out, s);
    unmatched(&mut out, s);
    candidates(&mut out, s);
    first_party(&mut out, s);
    browsers(&mut out, s);
    if !s.missing.is_empty() {
        out.blank();
        out.line("Not computed");
        for why in &s.missing {
            out.wrap("  ", "  ", why);
        }
    }
    out.text
}

#[derive(Default)]
struct Out {
    text: String,
}

impl Out {
    fn line(&mut self, line: &str) {
        let line = fit(line.trim_end(), WIDTH);
        self.text.push_str(&line);
        self.text.push('\n');
    }

    fn blank(&mut self) {
        if !self.text.is_empty() && !self.text.ends_with("\n\n") {
            self.text.push('\n');
        }
    }

    /// `text` wrapped at word boundaries, the first line after `first`,
    /// the others after `rest`.
    fn wrap(&mut self, first: &str, rest: &str, text: &str) {
        let mut line = first.to_owned();
        let mut empty = true;
        for word in text.split_whitespace() {
            let wide = line.chars().count() + usize::from(!empty) + word.chars().count();
            if !empty && wide > WIDTH {
                self.line(&line);
                line = rest.to_owned();
                empty = true;
            }
            if !empty {
                line.push(' ');
            }
            line.push_str(word);
            empty = false;
        }
        if !empty {
            self.line(&line);
        }
    }
}

/// `text` cut to `width` characters, the last one `…` when cut.
pub(crate) fn fit(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(width.saturating_sub(1)).collect();
    cut.push('…');
    cut
}

/// Control characters would move the cursor: shown as `·`.
fn printable(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { '·' } else { c })
        .collect()
}

/// `12,345`.
pub(crate) fn count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A count, `≈` before an estimate.
fn approx(n: u64, estimated: bool) -> String {
    if estimated {
        format!("≈{}", count(n))
    } else {
        count(n)
    }
}

/// `35.0%`.
pub(crate) fn percent(part: u64, whole: u64) -> String {
    if whole == 0 {
        return "-".to_owned();
    }
    format!("{:.1}%", part as f64 * 100.0 / whole as f64)
}

/// Right-aligned to `width` characters.
fn right(text: &str, width: usize) -> String {
    let n = text.chars().count();
    if n >= width {
        text.to_owned()
    } else {
        format!("{}{text}", " ".repeat(width - n))
    }
}

/// Left-aligned in `width` characters (cut when longer).
fn left(text: &str, width: usize) -> String {
    let text = fit(text, width);
    let n = text.chars().count();
    format!("{text}{}", " ".repeat(width - n))
}

fn header(out: &mut Out, s: &Summary) {
    out.wrap(
        "",
        "  ",
        &format!("noise-filter report: {}", printable(&s.input.name)),
    );
    let shapes = s
        .input
        .shapes
        .iter()
        .map(|c| {
            let name = match c.shape {
                "sentry-api" => "Sentry API events",
                "sentry-event" => "Sentry events",
                "matcher-event" => "matcher events",
                _ => "Discover CSV rows",
            };
            if s.input.shapes.len() > 1 {
                format!("{} {name}", count(c.records))
            } else {
                name.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join(", ");
    let read = if s.input.events == s.input.records {
        format!("{} events", count(s.input.events))
    } else {
        format!(
            "{} events in {} rows",
            count(s.input.events),
            count(s.input.records)
        )
    };
    let read = if shapes.is_empty() {
        read
    } else {
        format!("{read} ({shapes})")
    };
    out.wrap("  read       ", "             ", &read);
    for skip in &s.input.skipped {
        out.wrap(
            "  skipped    ",
            "             ",
            &format!("{}: {}", count(skip.count), skip.why),
        );
    }
    if s.input.malformed > 0 {
        let first = &s.input.malformed_first[0];
        out.wrap(
            "  malformed  ",
            "             ",
            &format!(
                "{} record{}; the first, line {}: {}",
                count(s.input.malformed),
                if s.input.malformed == 1 { "" } else { "s" },
                first.line,
                printable(&fit(&first.why, 120))
            ),
        );
    }
    if let Some(columns) = &s.input.columns {
        let unread: Vec<&str> = columns
            .iter()
            .filter(|c| !c.read)
            .map(|c| c.name.as_str())
            .collect();
        if !unread.is_empty() {
            out.wrap(
                "  not read   ",
                "             ",
                &format!("columns {}", printable(&unread.join(", "))),
            );
        }
    }
    out.wrap(
        "  patterns   ",
        "             ",
        &format!(
            "{}: {} patterns at confidence ≥ {}",
            printable(&s.patterns.name),
            count(s.patterns.count as u64),
            s.patterns.min_confidence
        ),
    );
}

fn noise(out: &mut Out, s: &Summary) {
    out.blank();
    if s.input.events == 0 {
        out.line("No events were read.");
        return;
    }
    out.line(&format!(
        "{}{}{}{}",
        left("Noise", 20),
        right("noise", 12),
        right("total", 12),
        right("share", 9)
    ));
    let row = |out: &mut Out, name: &str, share: Option<&Share>| {
        let line = match share {
            Some(sh) => format!(
                "  {}{}{}{}",
                left(name, 18),
                right(&approx(sh.noise, sh.estimated), 12),
                right(&approx(sh.total, sh.estimated), 12),
                right(&percent(sh.noise, sh.total), 9)
            ),
            None => format!("  {}{}", left(name, 18), right("not in the export", 33)),
        };
        out.line(&line);
    };
    row(out, "events", Some(&s.noise.events));
    row(out, "issues", s.noise.issues.as_ref());
    row(out, "users", s.noise.users.as_ref());
    out.line("  (an issue or a user is noise when one of its events is)");
    if let Some(t) = &s.time {
        out.blank();
        out.wrap(
            "",
            "",
            &format!(
                "At this export's rate ({} days, {} to {}), the list would drop about {} \
                 events a month of {} ({}).",
                t.days,
                &t.first[..10],
                &t.last[..10],
                count(t.per_month.noise.round() as u64),
                count(t.per_month.events.round() as u64),
                percent(
                    t.per_month.noise.round() as u64,
                    t.per_month.events.round() as u64
                )
            ),
        );
    }
}

fn categories(out: &mut Out, s: &Summary) {
    if s.categories.is_empty() {
        return;
    }
    out.blank();
    out.line(&format!(
        "{}{}{}{}{}{}",
        left("By category", 22),
        right("events", 11),
        right("share", 8),
        right("issues", 10),
        right("users", 10),
        right("patterns", 10)
    ));
    let na = |v: Option<u64>, estimated: bool| v.map_or("-".to_owned(), |n| approx(n, estimated));
    for c in &s.categories {
        out.line(&format!(
            "  {}{}{}{}{}{}",
            left(&printable(&c.category), 20),
            right(&count(c.events), 11),
            right(&percent(c.events, s.input.events), 8),
            right(&na(c.issues, c.estimated), 10),
            right(&na(c.users, c.estimated), 10),
            right(&count(c.patterns as u64), 10)
        ));
    }
    out.line("  (an event matched in two categories counts in both)");
}

/// Buckets shown in the terminal at most; more are merged.
const TEXT_BUCKETS: usize = 16;

fn over_time(out: &mut Out, s: &Summary) {
    let Some(t) = &s.time else {
        return;
    };
    // Too many buckets for a terminal: weeks, months, else years.
    let weeks = if t.bucket == "day" {
        merge_weeks(&t.series)
    } else {
        Vec::new()
    };
    let (label, series) = if t.series.len() <= TEXT_BUCKETS {
        (t.bucket, t.series.clone())
    } else if !weeks.is_empty() && weeks.len() <= TEXT_BUCKETS {
        ("week", weeks)
    } else if t.months.len() <= TEXT_BUCKETS {
        ("month", t.months.clone())
    } else {
        ("year", merge_years(&t.months))
    };
    out.blank();
    out.line(&format!(
        "{}{}{}{}",
        left(&format!("Noise over time, by {label} (UTC)"), 50),
        right("noise", 11),
        right("events", 11),
        right("share", 8)
    ));
    const BAR: usize = 30;
    for b in &series {
        let filled = if b.events == 0 {
            0
        } else {
            ((b.noise as f64 / b.events as f64) * BAR as f64).round() as usize
        };
        let bar = if b.events == 0 {
            " ".repeat(BAR)
        } else {
            format!("{}{}", "█".repeat(filled), "░".repeat(BAR - filled))
        };
        out.line(&format!(
            "  {}  {}      {}{}{}",
            left(&b.start, 10),
            bar,
            right(&count(b.noise), 11),
            right(&count(b.events), 11),
            right(&percent(b.noise, b.events), 8)
        ));
    }
}

/// Day buckets merged into weeks from Monday.
fn merge_weeks(days: &[Bucket]) -> Vec<Bucket> {
    let mut out: Vec<Bucket> = Vec::new();
    for d in days {
        let b = d.start.as_bytes();
        let number = |from: usize, to: usize| -> i64 {
            b[from..to]
                .iter()
                .fold(0, |n, &c| n * 10 + i64::from(c.wrapping_sub(b'0')))
        };
        let day = time::days_from_civil(number(0, 4), number(5, 7), number(8, 10));
        let start = time::date(time::week_start(day));
        match out.last_mut() {
            Some(last) if last.start == start => {
                last.events += d.events;
                last.noise += d.noise;
            }
            _ => out.push(Bucket {
                start,
                events: d.events,
                noise: d.noise,
            }),
        }
    }
    out
}

fn merge_years(months: &[Bucket]) -> Vec<Bucket> {
    let mut out: Vec<Bucket> = Vec::new();
    for m in months {
        let year = &m.start[..4];
        match out.last_mut() {
            Some(last) if last.start.starts_with(year) => {
                last.events += m.events;
                last.noise += m.noise;
            }
            _ => out.push(Bucket {
                start: format!("{year}-01-01"),
                events: m.events,
                noise: m.noise,
            }),
        }
    }
    out
}

fn patterns(out: &mut Out, s: &Summary) {
    if s.input.events == 0 {
        return;
    }
    out.blank();
    let total = s.matched.len() + s.silent.len();
    if s.matched.is_empty() {
        out.wrap(
            "",
            "",
            &format!(
                "No pattern matched: all {} patterns matched nothing.",
                count(total as u64)
            ),
        );
        return;
    }
    out.wrap(
        "",
        "",
        &format!(
            "Top patterns ({} of {} that matched; {} matched nothing)",
            count(s.matched.len().min(s.options.top) as u64),
            count(s.matched.len() as u64),
            count(s.silent.len() as u64)
        ),
    );
    out.line(&format!(
        "{}{}{}{}{}{}",
        left("", 36),
        right("events", 9),
        right("only", 8),
        right("issues", 8),
        right("users", 8),
        right("last seen", 11)
    ));
    let na = |v: Option<u64>, estimated: bool| v.map_or("-".to_owned(), |n| approx(n, estimated));
    for p in s.matched.iter().take(s.options.top) {
        out.line(&format!(
            "  {}{}{}{}{}{}",
            left(&printable(&p.id), 34),
            right(&count(p.events), 9),
            right(&count(p.only), 8),
            right(&na(p.issues, p.estimated), 8),
            right(&na(p.users, p.estimated), 8),
            right(p.last_seen.as_deref().map_or("-", |t| &t[..10]), 11)
        ));
        let kind = if p.kind == "regex" { "re:" } else { "" };
        out.line(&format!(
            "    {} · {}{}",
            printable(&p.category),
            kind,
            printable(&p.pattern)
        ));
    }
    if s.matched.len() > s.options.top {
        out.line(&format!(
            "  … {} more (--top, --json or --html list them all)",
            count((s.matched.len() - s.options.top) as u64)
        ));
    }
}

fn unmatched(out: &mut Out, s: &Summary) {
    let u = &s.unmatched;
    out.blank();
    if u.events == 0 {
        if s.input.events > 0 {
            out.line("Every event matched a pattern.");
        }
        return;
    }
    out.wrap(
        "",
        "",
        &format!(
            "Top unmatched messages ({} events; {} distinct messages, normalised)",
            count(u.events),
            count(u.messages)
        ),
    );
    if u.untracked_events > 0 {
        out.wrap(
            "  ",
            "  ",
            &format!(
                "(the table of messages filled: {} events of rare messages were dropped, and a \
                 count below may be short by up to {})",
                count(u.untracked_events),
                count(u.max_undercount)
            ),
        );
    }
    for m in u.top.iter().take(s.options.top) {
        let message = if m.message.is_empty() {
            "(no message)".to_owned()
        } else {
            printable(&m.message)
        };
        let rank = format!("{:>3}. ", m.rank);
        out.line(&format!("{rank}{message}"));
        let mut facts = format!("{} events", count(m.events));
        if let Some(users) = m.users {
            let _ = write!(facts, ", {} users", approx(users, m.estimated));
        }
        if m.matched_events > 0 {
            let _ = write!(
                facts,
                "; {} more matched by a frame or user agent",
                count(m.matched_events)
            );
        }
        if let (Some(first), Some(last)) = (&m.first_seen, &m.last_seen) {
            if first[..10] == last[..10] {
                let _ = write!(facts, "; on {}", &first[..10]);
            } else {
                let _ = write!(facts, "; {} to {}", &first[..10], &last[..10]);
            }
        }
        out.wrap("     ", "     ", &facts);
        match &m.suggestion {
            Some(sg) => {
                let kind = if sg.kind == "regex" { "re:" } else { "" };
                let pattern = format!("{kind}{}", printable(&sg.pattern));
                if pattern.chars().count() + 13 > WIDTH {
                    // On a line of its own, whole when it fits.
                    if pattern.chars().count() + 7 > WIDTH {
                        out.line("     suggest (cut; --json and --emit have it whole)");
                    } else {
                        out.line("     suggest");
                    }
                    out.line(&format!("       {pattern}"));
                } else {
                    out.line(&format!("     suggest {pattern}"));
                }
                let mut would = format!(
                    "adds {} events over {} message{}",
                    count(sg.adds),
                    count(sg.messages),
                    if sg.messages == 1 { "" } else { "s" }
                );
                if let Some(users) = sg.users {
                    let _ = write!(would, ", {} users", approx(users, sg.estimated));
                }
                let _ = write!(would, "; {} already noise", count(sg.already_noise));
                out.wrap("       ", "       ", &would);
            }
            None => out.line("     no suggestion: too little of it is the same each time"),
        }
    }
    if u.top.iter().any(|m| m.suggestion.is_some()) {
        out.wrap(
            "  ",
            "  ",
            "Keep a suggestion: --accept RANKS --emit patterns > patterns.json, then \
             noise-filter patterns import --account NAME patterns.json",
        );
    }
}

fn candidates(out: &mut Out, s: &Summary) {
    if s.candidates.is_empty() {
        return;
    }
    out.blank();
    out.line("Candidate patterns (--pattern)");
    for c in &s.candidates {
        out.line(&format!("  {}", printable(&c.given)));
        let mut facts = format!(
            "matches {} events; adds {} the list does not match",
            count(c.events),
            count(c.adds)
        );
        if let Some(users) = c.users {
            let _ = write!(facts, " ({} users", approx(users, c.estimated));
            match c.issues {
                Some(issues) => {
                    let _ = write!(facts, ", {} issues)", approx(issues, c.estimated));
                }
                None => facts.push(')'),
            }
        } else if let Some(issues) = c.issues {
            let _ = write!(facts, " ({} issues)", approx(issues, c.estimated));
        }
        out.wrap("    ", "    ", &facts);
        for sample in &c.samples {
            sample_line(out, sample);
        }
    }
}

fn sample_line(out: &mut Out, sample: &Sample) {
    let text = match (sample.field, &sample.message) {
        ("message", _) | (_, None) => printable(&sample.text),
        (field, Some(message)) => format!(
            "{} ({field}: {})",
            printable(message),
            printable(&sample.text)
        ),
    };
    out.line(&format!("    line {}: {text}", sample.line));
}

fn first_party(out: &mut Out, s: &Summary) {
    let Some(fp) = &s.first_party else {
        return;
    };
    out.blank();
    out.wrap(
        "",
        "  ",
        &format!(
            "Suspected false positives (--first-party {})",
            fp.origins.join(" ")
        ),
    );
    out.wrap(
        "  ",
        "  ",
        &format!(
            "{} noise events have every frame first-party (of {} events with frames)",
            count(fp.events),
            count(fp.judged)
        ),
    );
    let mut by_pattern: Vec<&PatternRow> = s.matched.iter().filter(|p| p.first_party > 0).collect();
    by_pattern.sort_by(|a, b| b.first_party.cmp(&a.first_party).then(a.id.cmp(&b.id)));
    for p in by_pattern.iter().take(s.options.top) {
        out.line(&format!(
            "    {}{}",
            left(&printable(&p.id), 40),
            right(&count(p.first_party), 10)
        ));
    }
    for sample in &fp.samples {
        sample_line(out, sample);
    }
}

fn browsers(out: &mut Out, s: &Summary) {
    let Some(rows) = &s.browsers else {
        return;
    };
    out.blank();
    out.line(&format!(
        "{}{}{}{}",
        left("By browser", 40),
        right("noise", 12),
        right("events", 12),
        right("share", 9)
    ));
    for b in rows.iter().take(s.options.top) {
        out.line(&format!(
            "  {}{}{}{}",
            left(&printable(&b.browser), 38),
            right(&count(b.noise), 12),
            right(&count(b.events), 12),
            right(&percent(b.noise, b.events), 9)
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_as_people_read_them() {
        assert_eq!(count(0), "0");
        assert_eq!(count(1234), "1,234");
        assert_eq!(count(1_234_567), "1,234,567");
        assert_eq!(percent(1, 3), "33.3%");
        assert_eq!(percent(1, 0), "-");
        assert_eq!(fit("abcdef", 4), "abc…");
    }
}
