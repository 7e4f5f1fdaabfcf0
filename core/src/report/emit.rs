//! The files `--emit` writes (docs/REPORT.md, "Emitted files").
//!
//! `--emit patterns`: the `--pattern` candidates and the accepted
//! suggestions as the JSON array `noise-filter patterns import` takes, each
//! checked as the import will check it.
//!
//! `--emit sentry`: Sentry's own filters for what matched, for teams who
//! filter in Sentry rather than with the integration: inbound-filter globs
//! for error messages (Sentry matches a glob against the whole `Type: value`
//! text, case-insensitively: a substring pattern is `*text*`), and the
//! JavaScript SDK's `ignoreErrors` (messages) and `denyUrls` (script URLs)
//! as regex sources for `new RegExp(source, 'i')`. A regex becomes a glob
//! when it is literals, `^`/`$` and repeated classes (`*`, which matches
//! more: marked `exact: false`); anything else is left out with why.

use regex_syntax::hir::{Class, Hir, HirKind, Look};
use serde::Serialize;

use super::summary::*;
use super::text::count;
use crate::pattern::Kind;

/// The longest `source` an import accepts.
const MAX_SOURCE: usize = 200;

#[derive(Serialize)]
struct Emitted {
    pattern: String,
    #[serde(rename = "type")]
    kind: &'static str,
    source: String,
}

/// The suggestions `--accept` named.
fn accepted(s: &Summary) -> Result<Vec<(usize, &Suggestion)>, String> {
    s.options
        .accept
        .iter()
        .map(|&rank| {
            let row = s.unmatched.top.get(rank.wrapping_sub(1)).ok_or_else(|| {
                format!(
                    "--accept {rank}: the report ranks {} messages",
                    s.unmatched.top.len()
                )
            })?;
            let suggestion = row
                .suggestion
                .as_ref()
                .ok_or_else(|| format!("--accept {rank}: that message has no suggestion"))?;
            Ok((rank, suggestion))
        })
        .collect()
}

fn kind_of(name: &str) -> Kind {
    if name == "regex" {
        Kind::Regex
    } else {
        Kind::String
    }
}

fn source_text(what: String, name: &str) -> String {
    let text = format!("noise-filter report: {what} in {name}");
    let text: String = text
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    super::text::fit(&text, MAX_SOURCE)
}

pub(crate) fn patterns(s: &Summary) -> Result<String, String> {
    let mut out: Vec<Emitted> = Vec::new();
    let mut push = |pattern: &str, kind: &'static str, source: String| -> Result<(), String> {
        if out.iter().any(|e| e.pattern == pattern && e.kind == kind) {
            return Ok(());
        }
        let new = crate::NewPattern {
            kind: kind_of(kind),
            source: Some(source.clone()),
            ..crate::NewPattern::string(pattern)
        };
        new.validate("custom-emitted".to_owned())
            .map_err(|e| format!("{pattern:?}: {}", e.0))?;
        out.push(Emitted {
            pattern: pattern.to_owned(),
            kind,
            source,
        });
        Ok(())
    };
    for c in &s.candidates {
        let what = format!("candidate adding {} events", count(c.adds));
        push(&c.pattern, c.kind, source_text(what, &s.input.name))?;
    }
    for (rank, sg) in accepted(s)? {
        let what = format!("suggestion {rank}, adding {} events", count(sg.adds));
        push(&sg.pattern, sg.kind, source_text(what, &s.input.name))?;
    }
    if out.is_empty() {
        return Err(
            "nothing to emit: give --pattern, or --accept the ranks of suggestions".to_owned(),
        );
    }
    let mut text = serde_json::to_string_pretty(&out).map_err(|e| e.to_string())?;
    text.push('\n');
    Ok(text)
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct SentryFilters {
    about: String,
    error_messages: Vec<Glob>,
    ignore_errors: Vec<Source>,
    deny_urls: Vec<Source>,
    left_out: Vec<LeftOut>,
}

#[derive(Serialize)]
struct Glob {
    glob: String,
    from: String,
    events: u64,
    exact: bool,
}

#[derive(Serialize)]
struct Source {
    regex: String,
    from: String,
    events: u64,
}

#[derive(Serialize)]
struct LeftOut {
    from: String,
    why: String,
}

pub(crate) fn sentry(s: &Summary) -> Result<String, String> {
    let mut f = SentryFilters {
        about: format!(
            "Sentry filters for the patterns that matched {} (and the candidates and accepted \
             suggestions). errorMessages: Project Settings > Inbound Filters > Error Message, \
             one glob a line. ignoreErrors and denyUrls: Sentry.init options of the JavaScript \
             SDK, each as new RegExp(regex, 'i').",
            s.input.name
        ),
        error_messages: Vec::new(),
        ignore_errors: Vec::new(),
        deny_urls: Vec::new(),
        left_out: Vec::new(),
    };
    let mut add = |from: String, pattern: &str, kind: Kind, fields: FieldCounts, events: u64| {
        let message = fields.message > 0 || (fields.frame == 0 && fields.user_agent == 0);
        if message {
            match glob(pattern, kind) {
                Ok((glob, exact)) => f.error_messages.push(Glob {
                    glob,
                    from: from.clone(),
                    events,
                    exact,
                }),
                Err(why) => f.left_out.push(LeftOut {
                    from: from.clone(),
                    why: format!("no inbound-filter glob: {why}"),
                }),
            }
            f.ignore_errors.push(Source {
                regex: js_source(pattern, kind),
                from: from.clone(),
                events,
            });
        }
        if fields.frame > 0 {
            f.deny_urls.push(Source {
                regex: js_source(pattern, kind),
                from: from.clone(),
                events,
            });
        }
        if !message && fields.frame == 0 {
            f.left_out.push(LeftOut {
                from,
                why: "matched user agents only: Sentry filters no user agent but crawlers (its \
                      web-crawlers inbound filter); the integration does"
                    .to_owned(),
            });
        }
    };
    for p in &s.matched {
        add(
            p.id.clone(),
            &p.pattern,
            kind_of(p.kind),
            p.fields,
            p.events,
        );
    }
    for c in &s.candidates {
        add(
            format!("--pattern {}", c.given),
            &c.pattern,
            kind_of(c.kind),
            c.fields,
            c.events,
        );
    }
    for (rank, sg) in accepted(s)? {
        let fields = FieldCounts {
            message: sg.adds,
            ..FieldCounts::default()
        };
        add(
            format!("suggestion {rank}"),
            &sg.pattern,
            kind_of(sg.kind),
            fields,
            sg.adds,
        );
    }
    let mut text = serde_json::to_string_pretty(&f).map_err(|e| e.to_string())?;
    text.push('\n');
    Ok(text)
}

/// The regex source of a pattern for `new RegExp(source, 'i')`.
fn js_source(pattern: &str, kind: Kind) -> String {
    match kind {
        Kind::Regex => pattern.to_owned(),
        Kind::String => {
            let mut out = String::with_capacity(pattern.len() + 8);
            for c in pattern.chars() {
                if "\\^$.|?*+()[]{}/".contains(c) {
                    out.push('\\');
                }
                out.push(c);
            }
            out
        }
    }
}

/// Escapes what Sentry's globs treat as syntax.
fn glob_escape(text: &str, out: &mut String) {
    for c in text.chars() {
        if "*?[]{}\\".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
}

/// A glob matching what the pattern matches in a whole message, and whether
/// it matches nothing more.
fn glob(pattern: &str, kind: Kind) -> Result<(String, bool), String> {
    let mut out = String::new();
    if kind == Kind::String {
        out.push('*');
        glob_escape(pattern, &mut out);
        out.push('*');
        return Ok((out, true));
    }
    let rust = crate::translate_regex(pattern).map_err(|e| e.0)?;
    let hir = regex_syntax::ParserBuilder::new()
        .build()
        .parse(&rust)
        .map_err(|e| e.to_string())?;
    let items: Vec<&Hir> = match hir.kind() {
        HirKind::Concat(items) => items.iter().collect(),
        _ => vec![&hir],
    };
    let mut exact = true;
    let (mut start, mut end) = (0, items.len());
    let anchored_start = matches!(
        items.first().map(|h| h.kind()),
        Some(HirKind::Look(Look::Start))
    );
    let anchored_end = items.len() > usize::from(anchored_start)
        && matches!(
            items.last().map(|h| h.kind()),
            Some(HirKind::Look(Look::End))
        );
    if anchored_start {
        start = 1;
    } else {
        out.push('*');
    }
    if anchored_end {
        end -= 1;
    }
    for item in &items[start..end] {
        piece(item, &mut out, &mut exact)?;
    }
    if !anchored_end {
        out.push('*');
    }
    while out.contains("**") {
        out = out.replace("**", "*");
    }
    Ok((out, exact))
}

fn piece(hir: &Hir, out: &mut String, exact: &mut bool) -> Result<(), String> {
    match hir.kind() {
        HirKind::Empty => Ok(()),
        HirKind::Literal(lit) => {
            let text = std::str::from_utf8(&lit.0).map_err(|e| e.to_string())?;
            glob_escape(text, out);
            Ok(())
        }
        HirKind::Class(class) => {
            // A one-character class is that character; any other is `?`.
            if let Some(c) = single_char(class) {
                glob_escape(&c.to_string(), out);
            } else {
                *exact = false;
                out.push('?');
            }
            Ok(())
        }
        HirKind::Repetition(rep) => match rep.sub.kind() {
            HirKind::Class(_) | HirKind::Literal(_) => {
                *exact = false;
                out.push('*');
                Ok(())
            }
            _ => Err("a repeated group".to_owned()),
        },
        HirKind::Capture(cap) => piece(&cap.sub, out, exact),
        HirKind::Concat(items) => items.iter().try_for_each(|h| piece(h, out, exact)),
        HirKind::Alternation(alts) => {
            let mut options = Vec::new();
            for alt in alts {
                let mut text = String::new();
                let mut alt_exact = true;
                piece(alt, &mut text, &mut alt_exact)?;
                if !alt_exact || text.contains(['*', '?', '{', ',']) {
                    return Err("an alternation of more than plain texts".to_owned());
                }
                options.push(text);
            }
            out.push('{');
            out.push_str(&options.join(","));
            out.push('}');
            Ok(())
        }
        HirKind::Look(Look::WordAscii | Look::WordUnicode) => {
            // A word boundary: the glob cannot say it, and matches more.
            *exact = false;
            Ok(())
        }
        HirKind::Look(_) => Err("an anchor inside the pattern".to_owned()),
    }
}

fn single_char(class: &Class) -> Option<char> {
    match class {
        Class::Unicode(u) => match u.ranges() {
            [r] if r.start() == r.end() => Some(r.start()),
            _ => None,
        },
        Class::Bytes(b) => match b.ranges() {
            [r] if r.start() == r.end() && r.start().is_ascii() => Some(char::from(r.start())),
            _ => None,
        },
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn globs_say_what_patterns_match() {
        let g = |p: &str, k: Kind| glob(p, k);
        assert_eq!(
            g("Script error.", Kind::String).unwrap(),
            ("*Script error.*".into(), true)
        );
        assert_eq!(g("a*b?", Kind::String).unwrap(), (r"*a\*b\?*".into(), true));
        assert_eq!(
            g(r"Loading chunk \d+ failed", Kind::Regex).unwrap(),
            ("*Loading chunk * failed*".into(), false)
        );
        assert_eq!(
            g(
                r"^ResizeObserver loop (limit exceeded|completed)",
                Kind::Regex
            )
            .unwrap(),
            (
                "ResizeObserver loop {limit exceeded,completed}*".into(),
                true
            )
        );
        assert!(g(r"^(ab\d)+x$", Kind::Regex).is_err());
    }

    #[test]
    fn js_sources_escape_substrings() {
        assert_eq!(js_source("a.b(c)", Kind::String), r"a\.b\(c\)");
        assert_eq!(js_source(r"a\d+", Kind::Regex), r"a\d+");
    }
}
