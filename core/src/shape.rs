//! The body of a successful response, per variant, and its ETag.

use xxhash_rust::xxh3::Xxh3;

use crate::catalog::{self, Rendered};
use crate::custom::ServingView;
use crate::params::Filter;
use crate::pattern::{Category, Variant};

/// Renders the pattern list for `filter`: the built-ins in catalog order
/// (category as in interface.md 2.3, then confidence, highest first, then id),
/// then the account's custom patterns in the order they were added. Returns
/// the body and its strong ETag.
///
/// The ETag is the 128-bit XXH3 of everything that makes up the body: the
/// bytes written here (envelope, version, custom patterns) and, for the
/// built-in part, the catalog's digest and which slices of it were copied.
/// Equal bodies from equal inputs get equal tags, and any change of a byte
/// changes the tag, without hashing the ~90 KB of built-ins per request.
pub fn render(
    variant: Variant,
    filter: &Filter,
    custom: Option<&ServingView<'_>>,
) -> (Vec<u8>, String) {
    let rendered = Rendered::of(variant);
    let custom_len = custom.map_or(0, |c| c.entries.iter().map(|e| e.a.len() + 1).sum());
    let mut body = Vec::with_capacity(rendered.len() + 64 + custom_len);
    match variant {
        Variant::A => {
            body.extend_from_slice(b"{\"version\":\"");
            body.extend_from_slice(version(filter, custom).as_bytes());
            body.extend_from_slice(b"\",\"patterns\":[");
        }
        Variant::B => body.extend_from_slice(b"{\"patterns\":["),
    }
    let mut hasher = Xxh3::new();
    hasher.update(&catalog::DIGEST.to_le_bytes());
    hasher.update(&[variant as u8]);
    hasher.update(&body);
    let builtin_start = body.len();
    for category in Category::ALL {
        if filter.wants(category) {
            let (from, to) = rendered.push_category(category, filter.min_confidence, &mut body);
            hasher.update(&from.to_le_bytes());
            hasher.update(&to.to_le_bytes());
        }
    }
    let builtin_end = body.len();
    if let Some(custom) = custom.filter(|_| filter.include_custom) {
        for entry in &custom.entries {
            if !filter.wants_custom(entry.category, entry.confidence) {
                continue;
            }
            let json = match variant {
                Variant::A => &entry.a,
                Variant::B => &entry.b,
            };
            // Variant B lists substrings only: a regex has no B rendering.
            if !json.is_empty() {
                body.extend_from_slice(json);
                body.push(b',');
            }
        }
    }
    if body.last() == Some(&b',') {
        body.pop();
    }
    body.extend_from_slice(b"]}");
    // Tell "built-ins end in a comma that was dropped" from "they do not".
    hasher.update(&((body.len() - builtin_end) as u64).to_le_bytes());
    hasher.update(&body[builtin_end.min(body.len())..]);
    debug_assert!(builtin_start <= builtin_end);
    let etag = format!("\"{:032x}\"", hasher.digest128());
    (body, etag)
}

/// Variant A's `version`: the catalog's release date, or the account's latest
/// custom-pattern change when custom patterns are included and it is later.
fn version<'a>(filter: &Filter, custom: Option<&'a ServingView<'_>>) -> &'a str {
    let release = catalog::release();
    match custom.and_then(ServingView::changed) {
        Some(changed) if filter.include_custom && changed > release => changed,
        _ => release,
    }
}

/// Whether an `If-None-Match` header value matches `etag` (RFC 9110 13.1.2:
/// `*`, or a list of entity tags compared weakly).
pub fn if_none_match(header: &str, etag: &str) -> bool {
    header
        .split(',')
        .map(str::trim)
        .any(|tag| tag == "*" || tag.strip_prefix("W/").unwrap_or(tag) == etag)
}
