// Needs the core's `endpoint` feature (default), as the fixtures do.
#![cfg(feature = "endpoint")]
//! Content codings (docs/CONTRACT.md, "Content codings"): what a client
//! that sends `Accept-Encoding` gets, decoded here by decoders other than
//! the core's, and what a client that does not send it still gets.
#![allow(clippy::unwrap_used)] // tests state their expectations by unwrapping

mod support;
use std::io::Read as _;

use noise_filter_core::Response;
use support::{World, acme, error_of};

const BROWSER: &str = "gzip, deflate, br, zstd";

fn gunzip(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::GzDecoder::new(body)
        .read_to_end(&mut out)
        .unwrap();
    out
}

fn unbrotli(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    brotli_decompressor::BrotliDecompress(&mut &body[..], &mut out).unwrap();
    out
}

/// The body as the client reads it once decoded.
fn decoded(response: &Response) -> Vec<u8> {
    match response.header("content-encoding") {
        None => response.body.to_vec(),
        Some("gzip") => gunzip(&response.body),
        Some("br") => unbrotli(&response.body),
        Some(other) => panic!("unexpected coding {other}"),
    }
}

fn get(world: &mut World, target: &str, key: &str, accept: Option<&str>) -> Response {
    let auth = format!("Bearer {key}");
    let mut headers = vec![("Authorization", auth.as_str())];
    if let Some(accept) = accept {
        headers.push(("Accept-Encoding", accept));
    }
    world.request("GET", target, &headers)
}

/// The headers but those a coding changes (`content-encoding`, `etag`) and
/// the rate headers (each request counts).
fn steady_headers(response: &Response) -> Vec<(&str, &str)> {
    response
        .headers
        .iter()
        .filter(|(n, _)| !matches!(*n, "content-encoding" | "etag" | "ratelimit"))
        .map(|(n, v)| (*n, v.as_ref()))
        .collect()
}

/// The usual answer (no parameter, no custom pattern) in brotli, gzip and
/// identity: each decodes to the identity bytes, has its own tag, and the
/// rest of the headers are the identity answer's.
#[test]
fn the_usual_answer_in_each_coding() {
    let mut world = World::new();
    let key = world.key("plain");
    for path in ["/v1/filters", "/api/v1/filters"] {
        let identity = get(&mut world, path, &key, None);
        assert_eq!(identity.status, 200);
        assert_eq!(identity.header("content-encoding"), None);
        assert_eq!(
            identity.header("vary"),
            Some("Authorization, Accept-Encoding")
        );
        let mut tags = vec![identity.header("etag").unwrap().to_owned()];
        for (accept, coding) in [
            (BROWSER, Some("br")),
            ("gzip", Some("gzip")),
            ("identity", None),
            ("br;q=0, gzip;q=0", None),
        ] {
            let encoded = get(&mut world, path, &key, Some(accept));
            assert_eq!(encoded.status, 200, "{accept}");
            assert_eq!(encoded.header("content-encoding"), coding, "{accept}");
            assert_eq!(decoded(&encoded), identity.body.to_vec(), "{accept}");
            assert_eq!(
                steady_headers(&encoded),
                steady_headers(&identity),
                "{accept}"
            );
            let tag = encoded.header("etag").unwrap().to_owned();
            if coding.is_some() {
                assert!(!tags.contains(&tag), "{accept}: a tag of its own");
                tags.push(tag);
                // The usual answer on the wire, against identity: at most
                // 18 % in gzip and 16 % in brotli (docs/BENCHMARKS.md).
                let most = if coding == Some("br") { 16 } else { 18 };
                assert!(
                    encoded.body.len() * 100 <= identity.body.len() * most,
                    "{accept}: {} of {} bytes",
                    encoded.body.len(),
                    identity.body.len()
                );
            } else {
                assert_eq!(tag, tags[0], "{accept}");
                assert_eq!(encoded.body, identity.body, "{accept}");
            }
        }
    }
}

/// A list of the account's own (custom patterns, parameters, exclusions)
/// is gzip even when brotli is preferred: brotli is only precomposed.
#[test]
fn other_lists_are_gzip_and_decode_to_the_identity_bytes() {
    let (mut world, key) = acme();
    world
        .store
        .add_exclusions(
            "acme",
            serde_json::from_value(serde_json::json!([{"id": "googlebot"}])).unwrap(),
            world.now,
        )
        .unwrap();
    for target in [
        "/v1/filters",
        "/api/v1/filters",
        "/v1/filters?minConfidence=0",
        "/v1/filters?categories=custom,bot-traffic&minConfidence=0.99",
        "/api/v1/filters?categories=BOT_TRAFFIC&includeCustom=false",
        "/v1/filters?categories=custom",
    ] {
        let identity = get(&mut world, target, &key, None);
        let encoded = get(&mut world, target, &key, Some(BROWSER));
        assert_eq!(encoded.status, 200, "{target}");
        assert_eq!(encoded.header("content-encoding"), Some("gzip"), "{target}");
        assert_eq!(decoded(&encoded), identity.body.to_vec(), "{target}");
        assert_ne!(encoded.header("etag"), identity.header("etag"), "{target}");
        // Same request, same bytes.
        let again = get(&mut world, target, &key, Some("gzip"));
        assert_eq!(again.body, encoded.body, "{target}");
        assert_eq!(again.header("etag"), encoded.header("etag"), "{target}");
    }
}

/// A client that stored the gzip answer revalidates with its tag: 304,
/// refunded, with the tag it holds; one that no longer accepts gzip gets
/// the list again.
#[test]
fn a_stored_encoded_answer_revalidates() {
    let (mut world, key) = acme();
    let auth = format!("Bearer {key}");
    for (stored_with, now_sends) in [
        ("gzip", "gzip"),
        ("gzip", BROWSER),
        (BROWSER, BROWSER),
        ("identity", BROWSER),
    ] {
        for target in ["/v1/filters", "/v1/filters?categories=network-issue"] {
            let first = get(&mut world, target, &key, Some(stored_with));
            let tag = first.header("etag").unwrap().to_owned();
            let before = first.header("ratelimit").unwrap().to_owned();
            let revalidated = world.request(
                "GET",
                target,
                &[
                    ("Authorization", &auth),
                    ("Accept-Encoding", now_sends),
                    ("If-None-Match", &format!("\"other\", W/{tag}")),
                ],
            );
            assert_eq!(
                revalidated.status, 304,
                "{stored_with} → {now_sends} {target}"
            );
            assert!(revalidated.body.is_empty());
            assert_eq!(revalidated.header("etag"), Some(tag.as_str()));
            assert_eq!(
                revalidated.header("vary"),
                Some("Authorization, Accept-Encoding")
            );
            // Refunded: the allowance is what it was after the first.
            assert_eq!(revalidated.header("ratelimit"), Some(before.as_str()));
        }
    }
    // The gzip tag from a client that now refuses gzip: the list again.
    let gzip = get(&mut world, "/v1/filters", &key, Some("gzip"));
    let refused = world.request(
        "GET",
        "/v1/filters",
        &[
            ("Authorization", &auth),
            ("If-None-Match", gzip.header("etag").unwrap()),
        ],
    );
    assert_eq!(refused.status, 200);
    assert_eq!(refused.header("content-encoding"), None);
    assert_eq!(refused.body.to_vec(), gunzip(&gzip.body));
}

/// HEAD has the GET's status and headers in every coding, and no body.
#[test]
fn head_agrees_with_get() {
    let (mut world, key) = acme();
    let auth = format!("Bearer {key}");
    for target in ["/v1/filters", "/api/v1/filters?minConfidence=0.9"] {
        for accept in [BROWSER, "gzip", "identity"] {
            let headers = [
                ("Authorization", auth.as_str()),
                ("Accept-Encoding", accept),
            ];
            let got = world.request("GET", target, &headers);
            let head = world.request("HEAD", target, &headers);
            assert!(head.body.is_empty());
            assert_eq!(head.status, got.status);
            assert_eq!(
                steady_headers(&head),
                steady_headers(&got),
                "{target} {accept}"
            );
            assert_eq!(head.header("etag"), got.header("etag"), "{target} {accept}");
            assert_eq!(
                head.header("content-encoding"),
                got.header("content-encoding")
            );
        }
    }
}

/// Refusals are what they were: never encoded, byte for byte the same
/// whatever `Accept-Encoding` says.
#[test]
fn refusals_are_never_encoded() {
    let (mut world, key) = acme();
    let cases: [(&str, Option<String>, u16); 3] = [
        ("/v1/filters", None, 401),
        ("/v1/filters", Some("Bearer nf_0".to_owned()), 401),
        (
            "/v1/filters?minConfidence=2",
            Some(format!("Bearer {key}")),
            400,
        ),
    ];
    for (target, auth, status) in cases {
        let mut plain: Vec<(&str, &str)> = Vec::new();
        if let Some(auth) = &auth {
            plain.push(("Authorization", auth));
        }
        let mut encoded = plain.clone();
        encoded.push(("Accept-Encoding", BROWSER));
        let a = world.request("GET", target, &plain);
        let b = world.request("GET", target, &encoded);
        assert_eq!(a.status, status);
        assert_eq!(b.status, status);
        assert_eq!(b.header("content-encoding"), None);
        assert_eq!(a.body, b.body);
        let without_rate = |r: &Response| {
            r.headers
                .iter()
                .filter(|(n, _)| *n != "ratelimit")
                .cloned()
                .collect::<Vec<_>>()
        };
        assert_eq!(without_rate(&a), without_rate(&b));
        error_of(&b);
    }
    // Over the limit: 429, not encoded.
    let mut last = None;
    for _ in 0..1001 {
        last = Some(get(
            &mut world,
            "/v1/filters?categories=custom",
            &key,
            Some(BROWSER),
        ));
    }
    let limited = last.unwrap();
    assert_eq!(limited.status, 429);
    assert_eq!(limited.header("content-encoding"), None);
    assert_eq!(error_of(&limited), "Rate limit exceeded");
}
