// Needs the core's `endpoint` feature (default), as the fixtures do.
#![cfg(feature = "endpoint")]
//! Snapshots of the exact bytes of each response shape, so a change of field
//! order, spelling or header is a visible diff (`cargo insta review`, or
//! `INSTA_UPDATE=always cargo test` then read the diff).
#![allow(clippy::unwrap_used)] // tests state their expectations by unwrapping
#![cfg(not(target_family = "wasm"))] // insta reads snapshot files

mod support;
use noise_filter_core::Response;
use support::acme;

fn show(response: &Response) -> String {
    let mut out = format!("{}\n", response.status);
    for (name, value) in &response.headers {
        out.push_str(&format!("{name}: {value}\n"));
    }
    out.push('\n');
    out.push_str(&String::from_utf8_lossy(&response.body));
    out
}

#[test]
fn variant_a_custom_patterns() {
    let (mut world, key) = acme();
    insta::assert_snapshot!(show(&world.get(
        "/v1/filters?categories=custom,bot-traffic&minConfidence=0.99",
        &key
    )));
}

#[test]
fn variant_b_custom_patterns() {
    let (mut world, key) = acme();
    insta::assert_snapshot!(show(&world.get(
        "/api/v1/filters?categories=OTHER,BOT_TRAFFIC&minConfidence=0.99",
        &key
    )));
}

#[test]
fn variant_a_one_built_in_category() {
    let (mut world, key) = acme();
    insta::assert_snapshot!(show(&world.get(
        "/v1/filters?categories=known-library&minConfidence=0.95&includeCustom=false",
        &key
    )));
}

#[test]
fn variant_b_one_built_in_category() {
    let (mut world, key) = acme();
    insta::assert_snapshot!(show(&world.get(
        "/api/v1/filters?categories=KNOWN_LIBRARY&minConfidence=0.95&includeCustom=false",
        &key
    )));
}

#[test]
fn not_modified() {
    let (mut world, key) = acme();
    let etag = world
        .get("/v1/filters", &key)
        .header("etag")
        .unwrap()
        .to_owned();
    let auth = format!("Bearer {key}");
    insta::assert_snapshot!(show(&world.request(
        "GET",
        "/v1/filters",
        &[
            ("Authorization", &auth),
            ("If-None-Match", &format!("W/{etag}, \"other\""))
        ]
    )));
}

#[test]
fn unauthorized() {
    let (mut world, _) = acme();
    insta::assert_snapshot!(show(&world.request("GET", "/api/v1/filters", &[])));
}

#[test]
fn bad_parameter() {
    let (mut world, key) = acme();
    insta::assert_snapshot!(show(
        &world.get("/api/v1/filters?categories=BOT_TRAFFIC,bot-traffic", &key)
    ));
}

#[test]
fn rate_limited() {
    let (mut world, key) = acme();
    for _ in 0..1000 {
        world.get("/v1/filters?includeCustom=false", &key);
    }
    insta::assert_snapshot!(show(&world.get("/v1/filters", &key)));
}

#[test]
fn preflight_and_not_found_and_method() {
    let (mut world, _) = acme();
    let all = [
        show(&world.request("OPTIONS", "/v1/filters", &[])),
        show(&world.request("GET", "/v1/nothing", &[])),
        show(&world.request("POST", "/v1/filters", &[])),
    ];
    insta::assert_snapshot!(all.join("\n----\n"));
}

/// The usual answer (no parameter, no custom pattern listed) is static data
/// (borrowed, not copied per request), and its bytes are exactly those of
/// the six one-category answers (each copied from its spans) joined: the
/// same list, in the same order, in the same envelope. Anything else is the
/// request's own bytes.
#[test]
fn the_usual_answer_is_static_and_equals_its_categories_joined() {
    use noise_filter_core::{Category, Variant};
    use std::borrow::Cow;

    let (mut world, acme_key) = acme();
    let plain = world.key("plain");
    for (variant, path) in [(Variant::A, "/v1/filters"), (Variant::B, "/api/v1/filters")] {
        let whole = world.get(path, &plain);
        assert_eq!(whole.status, 200);
        assert!(matches!(whole.body, Cow::Borrowed(_)), "{path}: borrowed");

        let parts: Vec<Response> = Category::ALL
            .iter()
            .map(|c| world.get(&format!("{path}?categories={}", c.name(variant)), &plain))
            .collect();
        let head_len = whole.body.iter().position(|&b| b == b'[').unwrap() + 1;
        let mut joined = whole.body[..head_len].to_vec();
        let inners: Vec<&[u8]> = parts
            .iter()
            .map(|part| {
                assert!(
                    matches!(part.body, Cow::Owned(_)),
                    "{path}: one category is copied"
                );
                assert_eq!(
                    part.body[..head_len],
                    whole.body[..head_len],
                    "same envelope"
                );
                &part.body[head_len..part.body.len() - 2]
            })
            .collect();
        joined.extend_from_slice(&inners.join(&b","[..]));
        joined.extend_from_slice(b"]}");
        assert_eq!(whole.body, joined, "{path}: the categories joined");

        // An account with custom patterns that asks without them gets the
        // same static body; with them, its own bytes.
        let without = world.get(&format!("{path}?includeCustom=false"), &acme_key);
        assert!(matches!(without.body, Cow::Borrowed(_)));
        assert_eq!(without.body, whole.body);
        let with = world.get(path, &acme_key);
        assert!(matches!(with.body, Cow::Owned(_)));
        assert!(String::from_utf8_lossy(&with.body).contains("AcmeCrawler/"));
    }
}
