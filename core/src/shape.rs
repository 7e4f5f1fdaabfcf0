//! The body of a successful response, per variant and content coding, and
//! its ETag.

use std::borrow::Cow;
use std::sync::OnceLock;

use xxhash_rust::xxh3::Xxh3;

use crate::catalog::{self, Compressed, Rendered};
use crate::coding::{AcceptEncoding, ContentCoding};
use crate::custom::ServingView;
use crate::exclusion::Excluding;
use crate::gzip::{self, Member};
use crate::params::Filter;
use crate::pattern::{Category, Kind, Variant};
use crate::rate::UnixMillis;

/// Renders the pattern list for `filter` at `now`: the built-ins in catalog
/// order (category as in the category table of docs/CONTRACT.md, then
/// confidence, highest first, then id) without those the account excludes,
/// then the account's custom patterns in the order they were added, but
/// those whose end has passed. What it gives is the answer in each content
/// coding ([`Shaped::etag`], [`Shaped::body`]); nothing is assembled or
/// compressed until one is asked for.
///
/// The ETag of the identity body is the 128-bit XXH3 of everything that
/// makes up the body: the bytes written here (envelope, version, custom
/// patterns) and, for the built-in part, the catalog's digest and which
/// slices of it were copied. Equal bodies from equal inputs get equal tags,
/// and any change of a byte changes the tag, without hashing the ~200 KB of
/// built-ins per request. An encoded body's tag hashes the identity tag's
/// digest, the coding and what its bytes are made with (the digest of the
/// catalog's compressed forms, the composer's format): a strong tag names
/// one representation (RFC 9110 §8.8.3).
pub(crate) fn render(
    variant: Variant,
    filter: &Filter,
    custom: Option<&ServingView<'_>>,
    now: UnixMillis,
) -> Shaped {
    // The answer most requests get (no parameter, no custom pattern listed)
    // is made once, when first asked for, and then sent as it is instead of
    // being copied for every request. Asked for with the very inputs it was
    // made from, it is not planned again (the plan's hash and ETag text are
    // a good part of a request's own work in the core).
    let usual = usual(variant);
    if custom.is_none() && *filter == Filter::default() {
        return Shaped { usual, plan: None };
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
    if plan.same_bytes(&usual.plan) {
        return Shaped { usual, plan: None };
    }
    Shaped {
        usual,
        plan: Some(plan),
    }
}

/// A planned answer, in any content coding.
pub(crate) struct Shaped {
    usual: &'static Usual,
    /// `None`: the usual answer.
    plan: Option<Plan>,
}

impl Shaped {
    /// Whether the answer is offered in `coding`: identity and gzip always;
    /// brotli for the usual answer only, which is compressed whole at build
    /// time (no brotli encoder runs per request: docs/DECISIONS.md).
    pub(crate) fn offers(&self, coding: ContentCoding) -> bool {
        match coding {
            ContentCoding::Identity | ContentCoding::Gzip => true,
            ContentCoding::Brotli => self.plan.is_none(),
        }
    }

    /// The strong ETag of the answer in `coding`.
    pub(crate) fn etag(&self, coding: ContentCoding) -> String {
        match &self.plan {
            None => self.usual.etags[coding as usize].clone(),
            Some(plan) => coded_etag(plan, coding),
        }
    }

    /// The body in `coding` (one it [`Shaped::offers`]): borrowed when it
    /// is the usual answer's, made once or at build time; otherwise
    /// assembled, and for gzip put together from the catalog's compressed
    /// pieces and the request's own bytes.
    pub(crate) fn body(&self, coding: ContentCoding) -> Cow<'static, [u8]> {
        match (&self.plan, coding) {
            (None, ContentCoding::Identity) => Cow::Borrowed(&self.usual.body),
            (None, ContentCoding::Gzip) => Cow::Borrowed(self.usual.compressed.usual_gzip),
            (None, ContentCoding::Brotli) => Cow::Borrowed(self.usual.compressed.usual_brotli),
            (Some(plan), ContentCoding::Identity) => Cow::Owned(plan.assemble()),
            // Not offered: gzip, which every client that sends
            // `Accept-Encoding` at all decodes (unreachable through `offers`).
            (Some(plan), ContentCoding::Gzip | ContentCoding::Brotli) => Cow::Owned(plan.gzip()),
        }
    }
}

/// What the encoded bodies' bytes are made with, beyond the catalog: the
/// composer's format (bump it when `Plan::gzip` or `gzip.rs` writes other
/// bytes for the same body) and the level of the bytes compressed per
/// request.
const COMPOSER: [u8; 2] = [1, gzip::TAIL_LEVEL];

/// The tag of `plan`'s body in `coding` ([`render`]).
fn coded_etag(plan: &Plan, coding: ContentCoding) -> String {
    if coding == ContentCoding::Identity {
        return plan.etag.clone();
    }
    let mut hasher = Xxh3::new();
    hasher.update(&plan.digest.to_le_bytes());
    hasher.update(&[coding as u8]);
    hasher.update(&catalog::COMPRESSED_DIGEST.to_le_bytes());
    hasher.update(&COMPOSER);
    format!("\"{:032x}\"", hasher.digest128())
}

/// What a body is made of: its head, spans of the variant's rendered
/// catalog, its own tail (custom patterns, the list's end), and its ETag.
struct Plan {
    variant: Variant,
    fragments: &'static [u8],
    head: Vec<u8>,
    spans: Vec<(usize, usize)>,
    /// Each category listed (some of its bytes are in the body): the
    /// pieces of the gzip body.
    parts: Vec<Part>,
    /// The parts' spans and holes, each part's a range of these: two
    /// vectors a request, not two a category (the identity path pays for
    /// them too).
    part_spans: Vec<(usize, usize)>,
    holes: Vec<usize>,
    tail: Vec<u8>,
    digest: u128,
    etag: String,
}

/// One category's built-ins in a body.
struct Part {
    category: Category,
    /// The entries listed end before this one.
    end_entry: usize,
    /// The entries before `end_entry` left out by an exclusion, ascending:
    /// a range of [`Plan::holes`].
    holes: std::ops::Range<usize>,
    /// Its bytes, as spans of the rendered catalog (each fragment's comma
    /// included): a range of [`Plan::part_spans`].
    spans: std::ops::Range<usize>,
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
        let mut parts: Vec<Part> = Vec::with_capacity(Category::ALL.len());
        let mut part_spans: Vec<(usize, usize)> = Vec::with_capacity(Category::ALL.len());
        let mut holes: Vec<usize> = Vec::new();
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
            let listed = rendered.category_entries(category, filter.min_confidence);
            let (spans_from, holes_from) = (part_spans.len(), holes.len());
            // This part's spans join each other, never the previous part's.
            let push_own = |part_spans: &mut Vec<(usize, usize)>, from: usize, to: usize| {
                if part_spans.len() == spans_from {
                    if from != to {
                        part_spans.push((from, to));
                    }
                } else {
                    push_span(part_spans, from, to);
                }
            };
            match &excluded {
                None => push_own(&mut part_spans, from as usize, to as usize),
                Some((x, _)) if x.category(category) => left_out |= from != to,
                Some((_, entries)) => {
                    let first = entries.partition_point(|&e| e < listed.start);
                    let mut from = from;
                    for &entry in entries[first..].iter().take_while(|&&e| e < listed.end) {
                        let (start, end) = rendered.entry_span(entry);
                        push_own(&mut part_spans, from as usize, start as usize);
                        holes.push(entry);
                        from = end;
                        left_out = true;
                    }
                    push_own(&mut part_spans, from as usize, to as usize);
                }
            }
            for &(from, to) in &part_spans[spans_from..] {
                push_span(&mut spans, from, to);
            }
            if part_spans.len() > spans_from {
                parts.push(Part {
                    category,
                    end_entry: listed.end,
                    holes: holes_from..holes.len(),
                    spans: spans_from..part_spans.len(),
                });
            } else {
                holes.truncate(holes_from);
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
        let digest = hasher.digest128();
        Plan {
            variant,
            fragments,
            head,
            spans,
            parts,
            part_spans,
            holes,
            tail,
            digest,
            etag: format!("\"{digest:032x}\""),
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

    /// The body as one gzip member (`gzip::Member`): the head stored; each
    /// category's bytes less their last comma, a stored comma between two,
    /// as compressed at build time ([`Plan::compose`]); then the tail (a
    /// comma before custom patterns when built-ins precede them)
    /// compressed here. Only what is the request's own is compressed.
    fn gzip(&self) -> Vec<u8> {
        let compressed = Compressed::of(self.variant);
        let rendered = Rendered::of(self.variant);
        let builtin: usize = self.spans.iter().map(|(from, to)| to - from).sum();
        let mut member = Member::new(builtin / 4 + self.tail.len());
        member.stored(&self.head);
        for (n, part) in self.parts.iter().enumerate() {
            if n > 0 {
                member.stored(b",");
            }
            self.compose(&mut member, compressed, rendered, part);
        }
        if self.tail.len() > 2 && !self.parts.is_empty() {
            let mut tail = Vec::with_capacity(self.tail.len() + 1);
            tail.push(b',');
            tail.extend_from_slice(&self.tail);
            member.finish(&tail)
        } else {
            member.finish(&self.tail)
        }
    }

    /// One category's bytes less their last comma, into `member`: block by
    /// block (`build.rs`, `precompress`), each block's compressed data from
    /// its start up to the last unit's end before the category's listed end
    /// and before its first hole (an excluded entry); the bytes from there
    /// up to the next block that can be used so, holes left out, compressed
    /// here. Without holes that is the build's data only.
    fn compose(
        &self,
        member: &mut Member,
        compressed: &Compressed,
        rendered: &Rendered,
        part: &Part,
    ) {
        let first = rendered.category_starts[part.category.index()] as usize;
        let category_start = rendered.entry_span(first).0 as usize;
        // Where a unit ending before entry `e` ends: the comma after `e - 1`.
        let boundary = |e: usize| {
            if e == first {
                category_start
            } else {
                rendered.entry_span(e - 1).1 as usize - 1
            }
        };
        let part_spans = &self.part_spans[part.spans.clone()];
        let holes = &self.holes[part.holes.clone()];
        let kept_from = part_spans.first().map_or(usize::MAX, |s| s.0);
        let (units, mut stream_at) = compressed.category(part.category);
        // Where the bytes not yet given start (catalog offset), when they
        // are to be compressed here.
        let mut own_from: Option<usize> = None;
        let mut block_start = first;
        let mut i = 0;
        while block_start < part.end_entry && i < units.len() {
            let block_end = i + units[i..]
                .iter()
                .position(|u| u.4)
                .unwrap_or(units.len() - 1 - i);
            let next_hole = holes.iter().find(|&&h| h >= block_start).copied();
            let limit = next_hole.map_or(part.end_entry, |h| h.min(part.end_entry));
            // A block after the category's start begins with a comma: usable
            // only once some listed bytes precede it.
            let usable = block_start == first || kept_from < boundary(block_start);
            let last_usable = units[i..=block_end]
                .iter()
                .rposition(|u| u.0 as usize <= limit)
                .map(|k| i + k)
                .filter(|_| usable);
            if let Some(k) = last_usable {
                if let Some(from) = own_from.take() {
                    member.compressed(&self.listed(part, from, boundary(block_start) + 1));
                }
                let (end_entry, stream_end, crc, len, _) = units[k];
                member.precompressed(
                    &compressed.stream[stream_at..stream_end as usize],
                    crc,
                    u64::from(len),
                );
                if k != block_end {
                    own_from = Some(boundary(end_entry as usize));
                }
            } else if own_from.is_none() {
                own_from = Some(boundary(block_start));
            }
            block_start = units[block_end].0 as usize;
            stream_at = units[block_end].1 as usize;
            i = block_end + 1;
        }
        if let Some(from) = own_from {
            member.compressed(&self.listed(part, from, usize::MAX));
        }
    }

    /// The body's bytes of `part` between catalog offsets `from` and `to`
    /// (holes left out), less the last: a comma, the one the next piece
    /// starts with, or the category's last.
    fn listed(&self, part: &Part, from: usize, to: usize) -> Vec<u8> {
        let mut out = Vec::new();
        for &(a, b) in &self.part_spans[part.spans.clone()] {
            let (a, b) = (a.max(from), b.min(to));
            if a < b {
                out.extend_from_slice(&self.fragments[a..b]);
            }
        }
        out.pop();
        out
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
/// made, its bytes, its compressed forms and its tag in each coding.
struct Usual {
    plan: Plan,
    body: Vec<u8>,
    compressed: &'static Compressed,
    /// By [`ContentCoding`] order.
    etags: [String; 3],
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
        let etags = [
            ContentCoding::Identity,
            ContentCoding::Gzip,
            ContentCoding::Brotli,
        ]
        .map(|coding| coded_etag(&plan, coding));
        Usual {
            plan,
            body,
            compressed: Compressed::of(variant),
            etags,
        }
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

/// The coding of the representation an `If-None-Match` header value
/// (RFC 9110 §13.1.2: `*`, or a list of entity tags compared weakly) says
/// the client holds, if it is current and the request accepts its coding:
/// a client that stored the gzip answer revalidates it with the gzip
/// answer's tag, and is answered 304 whichever coding a 200 would now be
/// sent in. `chosen` is that coding, which `*` names.
pub(crate) fn held(
    header: &str,
    shaped: &Shaped,
    accept: &AcceptEncoding,
    chosen: ContentCoding,
) -> Option<ContentCoding> {
    let tags = || {
        header
            .split(',')
            .map(str::trim)
            .map(|tag| tag.strip_prefix("W/").unwrap_or(tag))
    };
    if tags().any(|tag| tag == "*") {
        return Some(chosen);
    }
    std::iter::once(chosen)
        .chain(ContentCoding::PREFERENCE)
        .filter(|&coding| shaped.offers(coding) && accept.accepts(coding))
        .find(|&coding| {
            let etag = shaped.etag(coding);
            tags().any(|tag| tag == etag)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The usual answer, served without a plan, is byte for byte and tag for
    /// tag what planning the same request gives, in each coding (the build's
    /// gzip and brotli decode to the planned bytes); a request that only
    /// spells the defaults out gets it too.
    #[test]
    fn usual_answer_is_the_planned_answer() {
        for variant in [Variant::A, Variant::B] {
            let planned = Plan::new(variant, &Filter::default(), None, None, UnixMillis(0));
            let shaped = render(variant, &Filter::default(), None, UnixMillis(0));
            let body = shaped.body(ContentCoding::Identity);
            assert!(matches!(body, Cow::Borrowed(_)));
            assert_eq!(*body, *planned.assemble());
            assert_eq!(shaped.etag(ContentCoding::Identity), planned.etag);
            assert_eq!(gunzip(&shaped.body(ContentCoding::Gzip)), *body);
            assert_eq!(unbrotli(&shaped.body(ContentCoding::Brotli)), *body);
            // The composed gzip of the same body decodes to it too.
            assert_eq!(gunzip(&planned.gzip()), *body);

            let spelled = Filter::parse("minConfidence=0.5", variant).expect("a valid query");
            let spelled = render(variant, &spelled, None, UnixMillis(0));
            for coding in ContentCoding::PREFERENCE {
                assert!(spelled.offers(coding));
                assert_eq!(spelled.body(coding), shaped.body(coding), "{coding:?}");
                assert_eq!(spelled.etag(coding), shaped.etag(coding), "{coding:?}");
            }
        }
    }

    /// Every filter's gzip body, put together from the build's pieces,
    /// decodes to its identity body; each coding has its own tag.
    #[test]
    fn composed_gzip_decodes_to_the_identity_body() {
        for variant in [Variant::A, Variant::B] {
            let name = |i: usize| Category::ALL[i].name(variant);
            let queries = [
                "minConfidence=0".to_owned(),
                "minConfidence=0.9".to_owned(),
                format!("minConfidence=0.75&categories={},{}", name(0), name(4)),
                format!("categories={}", name(2)),
                format!("categories={}", name(5)),
                "minConfidence=1".to_owned(),
            ];
            for query in &queries {
                let filter = Filter::parse(query, variant).expect("a valid query");
                let shaped = render(variant, &filter, None, UnixMillis(0));
                assert!(!shaped.offers(ContentCoding::Brotli), "{query}");
                let identity = shaped.body(ContentCoding::Identity);
                let gzip = shaped.body(ContentCoding::Gzip);
                assert_eq!(gunzip(&gzip), *identity, "{variant:?} {query}");
                // A list of some size is a fraction of its bytes.
                if identity.len() > 10_000 {
                    assert!(gzip.len() * 3 < identity.len(), "{variant:?} {query}");
                }
                assert_ne!(
                    shaped.etag(ContentCoding::Identity),
                    shaped.etag(ContentCoding::Gzip)
                );
            }
        }
    }

    /// Exclusions cut holes in a category's run: the blocks without one
    /// are the build's, the bytes from the last unit before a hole to the
    /// next block are compressed on their own, and the member still decodes
    /// to the identity body.
    #[test]
    fn composed_gzip_with_exclusions_decodes_to_the_identity_body() {
        let patterns = catalog::builtin_patterns();
        let n = patterns.len();
        let mut sets: Vec<Vec<usize>> = [0, 1, n / 3, n / 2, n - 1]
            .iter()
            .flat_map(|&pick| [vec![pick], vec![pick, (pick + 7) % n]])
            .collect();
        // Many holes, runs of them (a whole block's worth, the start of a
        // category), every other one.
        sets.push((0..n).step_by(7).collect());
        sets.push((10..140).collect());
        sets.push((0..n).step_by(2).collect());
        sets.push((1..n).collect());
        for variant in [Variant::A, Variant::B] {
            for excluded in &sets {
                let ids: Vec<String> = excluded
                    .iter()
                    .map(|&i| format!("id:{}", patterns[i].id))
                    .collect();
                let excluding =
                    Excluding::at(ids.iter().map(|id| (id.as_str(), None)), UnixMillis(0))
                        .expect("built-in ids");
                for query in ["", "minConfidence=0", "minConfidence=0.8"] {
                    let filter = Filter::parse(query, variant).expect("a valid query");
                    let plan = Plan::new(variant, &filter, None, Some(&excluding), UnixMillis(0));
                    assert_eq!(
                        gunzip(&plan.gzip()),
                        plan.assemble(),
                        "{variant:?} {} holes {query}",
                        excluded.len()
                    );
                }
            }
        }
    }

    fn gunzip(member: &[u8]) -> Vec<u8> {
        assert_eq!(member[..10], gzip::HEADER);
        let body = miniz_oxide::inflate::decompress_to_vec(&member[10..member.len() - 8])
            .expect("valid DEFLATE");
        let trailer = &member[member.len() - 8..];
        assert_eq!(trailer[..4], crc32fast::hash(&body).to_le_bytes());
        assert_eq!(trailer[4..], (body.len() as u32).to_le_bytes());
        body
    }

    fn unbrotli(data: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        brotli_decompressor::BrotliDecompress(&mut &data[..], &mut out).expect("valid brotli");
        out
    }
}
