//! The body of a successful response, per variant, and its ETag.

use crate::catalog::{self, Rendered};
use crate::custom::CustomPatterns;
use crate::params::Filter;
use crate::pattern::{Category, Variant};
use crate::wire;

/// Renders the pattern list for `filter`: the built-ins in catalog order
/// (category as in interface.md 2.3, then confidence, highest first, then id),
/// then the account's custom patterns in the order they were added.
pub fn render_body(variant: Variant, filter: &Filter, custom: Option<&CustomPatterns>) -> Vec<u8> {
    let rendered = Rendered::of(variant);
    let mut body = Vec::with_capacity(rendered.len() + 64 + custom.map_or(0, |c| c.patterns.len() * 160));
    match variant {
        Variant::A => {
            body.extend_from_slice(b"{\"version\":\"");
            body.extend_from_slice(version(filter, custom).as_bytes());
            body.extend_from_slice(b"\",\"patterns\":[");
        }
        Variant::B => body.extend_from_slice(b"{\"patterns\":["),
    }
    for category in Category::ALL {
        if filter.wants(category) {
            rendered.push_category(category, filter.min_confidence, &mut body);
        }
    }
    if let Some(custom) = custom.filter(|_| filter.include_custom) {
        for p in &custom.patterns {
            if !filter.wants_custom(p.category, p.confidence) {
                continue;
            }
            let category = p.category_name(variant);
            let written = match variant {
                Variant::A => serde_json::to_writer(
                    &mut body,
                    &wire::PatternA {
                        id: &p.id,
                        pattern: &p.pattern,
                        kind: p.kind.name(),
                        category,
                        confidence: p.confidence,
                        source: &p.source,
                    },
                ),
                // Variant B lists substrings only.
                Variant::B if p.kind == crate::Kind::Regex => continue,
                Variant::B => serde_json::to_writer(
                    &mut body,
                    &wire::PatternB { id: &p.id, pattern: &p.pattern, category, confidence: p.confidence },
                ),
            };
            written.expect("writing to a Vec cannot fail");
            body.push(b',');
        }
    }
    if body.last() == Some(&b',') {
        body.pop();
    }
    body.extend_from_slice(b"]}");
    body
}

/// Variant A's `version`: the catalog's release date, or the account's latest
/// custom-pattern change when custom patterns are included and it is later.
fn version<'a>(filter: &Filter, custom: Option<&'a CustomPatterns>) -> &'a str {
    let release = catalog::release();
    match custom.and_then(|c| c.changed.as_deref()) {
        Some(changed) if filter.include_custom && changed > release => changed,
        _ => release,
    }
}

/// A strong ETag of `body`: the 128-bit XXH3 of its bytes, quoted.
pub fn etag(body: &[u8]) -> String {
    format!("\"{:032x}\"", xxhash_rust::xxh3::xxh3_128(body))
}

/// Whether an `If-None-Match` header value matches `etag` (RFC 9110 13.1.2:
/// `*`, or a list of entity tags compared weakly).
pub fn if_none_match(header: &str, etag: &str) -> bool {
    header.split(',').map(str::trim).any(|tag| {
        tag == "*" || tag.strip_prefix("W/").unwrap_or(tag) == etag
    })
}
