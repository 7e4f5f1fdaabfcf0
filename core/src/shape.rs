//! The body of a successful response, per variant, and its ETag.

use std::borrow::Cow;
use std::sync::OnceLock;

use xxhash_rust::xxh3::Xxh3;

use crate::catalog::{self, Rendered};
use crate::custom::ServingView;
use crate::exclusion::Excluding;
use crate::params::Filter;
use crate::pattern::{Category, Kind, Variant};
use crate::rate::UnixMillis;

/// Renders the pattern list for `filter` at `now`: the built-ins in catalog
/// order (category as in the category table of docs/CONTRACT.md, then
/// confidence, highest first, then id) without those the account excludes,
/// then the account's custom patterns in the order they were added, but
/// those whose end has passed. Returns
/// the body (borrowed when it is the variant's usual answer, which is made
/// once: the most common body is not copied per request) and its strong
/// ETag.
///
/// The ETag is the 128-bit XXH3 of everything that makes up the body: the
/// bytes written here (envelope, version, custom patterns) and, for the
/// built-in part, the catalog's digest and which slices of it were copied.
/// Equal bodies from equal inputs get equal tags, and any change of a byte
/// changes the tag, without hashing the ~90 KB of built-ins per request.
pub(crate) fn render(
    variant: Variant,
    filter: &Filter,
    custom: Option<&ServingView<'_>>,
    now: UnixMillis,
) -> (Cow<'static, [u8]>, String) {
    // The answer most requests get (no parameter, no custom pattern listed)
    // is made once, when first asked for, and then sent as it is instead of
    // being copied for every request. Asked for with the very inputs it was
    // made from, it is not planned again (the plan's hash and ETag text are
    // a good part of a request's own work in the core).
    let usual = usual(variant);
    if custom.is_none() && *filter == Filter::default() {
        return (Cow::Borrowed(&usual.body), usual.plan.etag.clone());
    }
    // Resolved only for an account that has exclusions: the others take
    // the path they always took.
    let excluding = custom
        .filter(|view| !view.exclusions.is_empty())
        .and_then(|view| {
            Excluding::at(
                view.exclusions
                    .iter()
                    .map(|(t, until)| (t.as_ref(), *until)),
                now,
            )
        });
    let plan = Plan::new(variant, filter, custom, excluding.as_ref(), now);
    let body = if plan.same_bytes(&usual.plan) {
        Cow::Borrowed(&usual.body[..])
    } else {
        Cow::Owned(plan.assemble())
    };
    (body, plan.etag)
}

/// What a body is made of: its head, spans of the variant's rendered
/// catalog, its own tail (custom patterns, the list's end), and its ETag.
struct Plan {
    fragments: &'static [u8],
    head: Vec<u8>,
    spans: Vec<(usize, usize)>,
    tail: Vec<u8>,
    etag: String,
}

impl Plan {
    fn new(
        variant: Variant,
        filter: &Filter,
        custom: Option<&ServingView<'_>>,
        excluding: Option<&Excluding>,
        now: UnixMillis,
    ) -> Plan {
        let rendered = Rendered::of(variant);
        let fragments = rendered.bytes();
        let head = head(variant, &version(filter, custom, now));
        let mut hasher = Xxh3::new();
        hasher.update(&catalog::DIGEST.to_le_bytes());
        hasher.update(&[variant as u8]);
        hasher.update(&head);
        // The built-ins: spans of the rendered catalog (those of adjacent
        // categories join into one; at most one per category).
        let mut spans: Vec<(usize, usize)> = Vec::with_capacity(Category::ALL.len());
        // Each wanted category's run, as the usual path hashes it.
        let mut runs: Vec<(u32, u32)> = Vec::with_capacity(Category::ALL.len());
        let mut left_out = false;
        let excluded = excluding.map(|x| (x, excluded_entries(variant, &x.patterns)));
        for category in Category::ALL {
            if !filter.wants(category) {
                continue;
            }
            let (from, to) = rendered.category_span(category, filter.min_confidence);
            runs.push((from, to));
            match &excluded {
                None => push_span(&mut spans, from as usize, to as usize),
                Some((x, _)) if x.category(category) => left_out |= from != to,
                Some((_, entries)) => {
                    let listed = rendered.category_entries(category, filter.min_confidence);
                    let first = entries.partition_point(|&e| e < listed.start);
                    let mut from = from;
                    for &entry in entries[first..].iter().take_while(|&&e| e < listed.end) {
                        let (start, end) = rendered.entry_span(entry);
                        push_span(&mut spans, from as usize, start as usize);
                        from = end;
                        left_out = true;
                    }
                    push_span(&mut spans, from as usize, to as usize);
                }
            }
        }
        if left_out {
            // The spans copied say which built-in bytes the body holds:
            // after a mark no run of the usual path hashes to (those are
            // pairs of u32), the spans themselves.
            hasher.update(&u64::MAX.to_le_bytes());
            hasher.update(&(spans.len() as u64).to_le_bytes());
            for &(from, to) in &spans {
                hasher.update(&(from as u64).to_le_bytes());
                hasher.update(&(to as u64).to_le_bytes());
            }
        } else {
            // Nothing listed was excluded (or nothing is): the body is the
            // one without exclusions, and so is its tag.
            for (from, to) in runs {
                hasher.update(&from.to_le_bytes());
                hasher.update(&to.to_le_bytes());
            }
        }
        // Then the custom patterns and the end of the list.
        let mut tail = Vec::new();
        if let Some(custom) = custom.filter(|_| filter.include_custom) {
            tail.reserve(custom.entries.iter().map(|e| e.a.len() + 1).sum::<usize>() + 2);
            for entry in &custom.entries {
                if !filter.wants_custom(entry.category, entry.confidence)
                    || entry.until.is_some_and(|until| until.has_passed(now))
                {
                    continue;
                }
                let json = match variant {
                    Variant::A => &entry.a,
                    Variant::B => &entry.b,
                };
                // Variant B lists substrings only: a regex has no B rendering.
                if !json.is_empty() {
                    tail.extend_from_slice(json);
                    tail.push(b',');
                }
            }
        }
        // Every listed pattern ends in a comma; the last one's goes.
        let mut builtin_comma_dropped = false;
        if tail.last() == Some(&b',') {
            tail.pop();
        } else if let Some(last) = spans.last_mut()
            && fragments[last.1 - 1] == b','
        {
            last.1 -= 1;
            builtin_comma_dropped = true;
        }
        tail.extend_from_slice(b"]}");
        // The bytes that follow the built-ins, counted from where they ended
        // before their comma was dropped, so "built-ins end in a comma that
        // was dropped" is told from "they do not".
        let after = if builtin_comma_dropped {
            &tail[1..]
        } else {
            &tail[..]
        };
        hasher.update(&(after.len() as u64).to_le_bytes());
        hasher.update(after);
        let etag = format!("\"{:032x}\"", hasher.digest128());
        Plan {
            fragments,
            head,
            spans,
            tail,
            etag,
        }
    }

    /// Whether the two plans make the same bytes (same catalog, same parts).
    fn same_bytes(&self, other: &Plan) -> bool {
        std::ptr::eq(self.fragments, other.fragments)
            && self.spans == other.spans
            && self.tail == other.tail
            && self.head == other.head
    }

    /// The body, in one piece.
    fn assemble(&self) -> Vec<u8> {
        let builtin: usize = self.spans.iter().map(|(from, to)| to - from).sum();
        let mut body = Vec::with_capacity(self.head.len() + builtin + self.tail.len());
        body.extend_from_slice(&self.head);
        for &(from, to) in &self.spans {
            body.extend_from_slice(&self.fragments[from..to]);
        }
        body.extend_from_slice(&self.tail);
        body
    }
}

/// Adds the bytes `from..to` of the rendered catalog to the body's spans:
/// nothing when empty, joined to the last span when they follow it.
fn push_span(spans: &mut Vec<(usize, usize)>, from: usize, to: usize) {
    match spans.last_mut() {
        _ if from == to => {}
        Some(last) if last.1 == from => last.1 = to,
        _ => spans.push((from, to)),
    }
}

/// Where the built-ins at these places of the catalog (ascending) are
/// listed in `variant`'s rendering, ascending: Variant A lists every
/// built-in in catalog order; Variant B the same without the regexes.
fn excluded_entries(variant: Variant, patterns: &[usize]) -> Vec<usize> {
    match variant {
        Variant::A => patterns.to_vec(),
        Variant::B => {
            let mut entries = Vec::with_capacity(patterns.len());
            let (mut regexes, mut next) = (0, 0);
            for (at, pattern) in catalog::builtin_patterns().iter().enumerate() {
                let Some(&wanted) = patterns.get(next) else {
                    break;
                };
                let regex = pattern.kind == Kind::Regex;
                if wanted == at {
                    if !regex {
                        entries.push(at - regexes);
                    }
                    next += 1;
                }
                regexes += usize::from(regex);
            }
            entries
        }
    }
}

/// The start of a body, up to the pattern list's `[`.
fn head(variant: Variant, version: &str) -> Vec<u8> {
    let mut head = Vec::with_capacity(64);
    match variant {
        Variant::A => {
            head.extend_from_slice(b"{\"version\":\"");
            head.extend_from_slice(version.as_bytes());
            head.extend_from_slice(b"\",\"patterns\":[");
        }
        Variant::B => head.extend_from_slice(b"{\"patterns\":["),
    }
    head
}

/// A variant's usual answer (no parameter, no custom pattern): how it is
/// made, and its bytes.
struct Usual {
    plan: Plan,
    body: Vec<u8>,
}

/// The usual answer of `variant`. Static data of the catalog, the same for
/// every account: made the first time it is asked for.
fn usual(variant: Variant) -> &'static Usual {
    static A: OnceLock<Usual> = OnceLock::new();
    static B: OnceLock<Usual> = OnceLock::new();
    let made = match variant {
        Variant::A => &A,
        Variant::B => &B,
    };
    made.get_or_init(|| {
        let plan = Plan::new(variant, &Filter::default(), None, None, UnixMillis(0));
        let body = plan.assemble();
        Usual { plan, body }
    })
}

/// Variant A's `version`: the catalog's release date, or the date of the
/// latest change to what the account makes of the list, when later: an add
/// or remove of a custom pattern, or the end of one, when custom patterns
/// are included; a change to its exclusions, or the end of one, always (they
/// apply to every answer). Ends count from `now` on: the day a pattern
/// stops being served, the list changed.
fn version<'a>(
    filter: &Filter,
    custom: Option<&'a ServingView<'_>>,
    now: UnixMillis,
) -> Cow<'a, str> {
    let mut latest = Cow::Borrowed(catalog::catalog_release());
    let Some(view) = custom else {
        return latest;
    };
    let mut consider = |date: Cow<'a, str>| {
        if date > latest {
            latest = date;
        }
    };
    if filter.include_custom {
        if let Some(changed) = view.changed() {
            consider(Cow::Borrowed(changed));
        }
        for until in view.entries.iter().filter_map(|e| e.until) {
            if until.has_passed(now) {
                consider(Cow::Owned(until.date()));
            }
        }
    }
    if let Some(changed) = view.exclusions_changed() {
        consider(Cow::Borrowed(changed));
    }
    for &(_, until) in &view.exclusions {
        if let Some(until) = until.filter(|until| until.has_passed(now)) {
            consider(Cow::Owned(until.date()));
        }
    }
    latest
}

/// Whether an `If-None-Match` header value matches `etag` (RFC 9110 13.1.2:
/// `*`, or a list of entity tags compared weakly).
pub(crate) fn if_none_match(header: &str, etag: &str) -> bool {
    header
        .split(',')
        .map(str::trim)
        .any(|tag| tag == "*" || tag.strip_prefix("W/").unwrap_or(tag) == etag)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The usual answer, served without a plan, is byte for byte and tag for
    /// tag what planning the same request gives; a request that only spells
    /// the defaults out gets it too.
    #[test]
    fn usual_answer_is_the_planned_answer() {
        for variant in [Variant::A, Variant::B] {
            let planned = Plan::new(variant, &Filter::default(), None, None, UnixMillis(0));
            let (body, etag) = render(variant, &Filter::default(), None, UnixMillis(0));
            assert!(matches!(body, Cow::Borrowed(_)));
            assert_eq!(*body, *planned.assemble());
            assert_eq!(etag, planned.etag);

            let spelled = Filter::parse("minConfidence=0.5", variant).expect("a valid query");
            assert_eq!(render(variant, &spelled, None, UnixMillis(0)), (body, etag));
        }
    }
}
