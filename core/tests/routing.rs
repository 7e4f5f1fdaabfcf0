// Needs the core's `endpoint` feature (default), as the fixtures do.
#![cfg(feature = "endpoint")]
//! Paths, methods, CORS and HEAD, and the order of checks.
#![allow(clippy::unwrap_used)] // tests state their expectations by unwrapping

mod support;
use support::{World, error_of};

macro_rules! route_cases {
    ($($name:ident: $method:expr, $target:expr, auth: $auth:expr => $status:expr;)*) => {$(
        #[test]
        fn $name() {
            let mut world = World::new();
            let key = world.key("acme");
            let auth = format!("Bearer {key}");
            let headers: Vec<(&str, &str)> =
                if $auth { vec![("Authorization", auth.as_str())] } else { vec![] };
            let response = world.request($method, $target, &headers);
            assert_eq!(response.status, $status, "{}", String::from_utf8_lossy(&response.body));
            assert_eq!(response.header("access-control-allow-origin"), Some("*"));
        }
    )*};
}

route_cases! {
    variant_a_path: "GET", "/v1/filters", auth: true => 200;
    variant_b_path: "GET", "/api/v1/filters", auth: true => 200;
    unknown_path: "GET", "/v2/filters", auth: true => 404;
    trailing_slash_is_another_path: "GET", "/v1/filters/", auth: true => 404;
    path_case_matters: "GET", "/V1/filters", auth: true => 404;
    root: "GET", "/", auth: true => 404;
    unknown_path_any_method: "DELETE", "/nope", auth: false => 404;
    unknown_path_without_key: "GET", "/v1/filter", auth: false => 404;
    post_is_405: "POST", "/v1/filters", auth: true => 405;
    put_is_405: "PUT", "/api/v1/filters", auth: true => 405;
    delete_is_405_before_auth: "DELETE", "/v1/filters", auth: false => 405;
    lowercase_get_is_another_method: "get", "/v1/filters", auth: true => 405;
    options_needs_no_key: "OPTIONS", "/v1/filters", auth: false => 204;
    options_on_variant_b: "OPTIONS", "/api/v1/filters", auth: false => 204;
    options_unknown_path_is_404: "OPTIONS", "/elsewhere", auth: false => 404;
    head_is_get_without_body: "HEAD", "/v1/filters", auth: true => 200;
    head_without_key_is_401: "HEAD", "/v1/filters", auth: false => 401;
}

#[test]
fn not_found_body_and_headers() {
    let mut world = World::new();
    let response = world.request("GET", "/nope", &[]);
    assert_eq!(error_of(&response), "Not found");
    assert_eq!(response.header("cache-control"), Some("no-store"));
}

#[test]
fn method_not_allowed_lists_allowed_methods() {
    let mut world = World::new();
    let response = world.request("PATCH", "/v1/filters", &[]);
    assert_eq!(response.status, 405);
    assert_eq!(error_of(&response), "Method not allowed");
    assert_eq!(response.header("allow"), Some("GET, HEAD, OPTIONS"));
    assert_eq!(response.header("cache-control"), Some("no-store"));
}

#[test]
fn preflight_headers() {
    let mut world = World::new();
    let response = world.request(
        "OPTIONS",
        "/v1/filters",
        &[("Origin", "https://app.example")],
    );
    assert_eq!(response.status, 204);
    assert!(response.body.is_empty());
    assert_eq!(response.header("access-control-allow-origin"), Some("*"));
    assert_eq!(
        response.header("access-control-allow-headers"),
        Some("Authorization")
    );
    assert_eq!(
        response.header("access-control-allow-methods"),
        Some("GET, HEAD, OPTIONS")
    );
    assert_eq!(response.header("access-control-max-age"), Some("86400"));
    assert_eq!(response.header("cache-control"), Some("no-store"));
}

#[test]
fn head_has_get_headers_and_no_body() {
    let mut world = World::new();
    let key = world.key("acme");
    let auth = format!("Bearer {key}");
    let get = world.request("GET", "/v1/filters", &[("Authorization", &auth)]);
    let head = world.request("HEAD", "/v1/filters", &[("Authorization", &auth)]);
    assert!(head.body.is_empty());
    assert_eq!(head.header("etag"), get.header("etag"));
    assert_eq!(head.header("content-type"), Some("application/json"));
    let names = |r: &noise_filter_core::Response| r.headers.iter().map(|h| h.0).collect::<Vec<_>>();
    assert_eq!(names(&head), names(&get));
}

#[test]
fn head_error_has_no_body() {
    let mut world = World::new();
    let response = world.request("HEAD", "/v1/filters", &[]);
    assert_eq!(response.status, 401);
    assert!(response.body.is_empty());
}

#[test]
fn order_path_then_method_then_auth_then_rate_then_params() {
    let mut world = World::new();
    // Bad path beats bad method and missing key.
    assert_eq!(world.request("POST", "/x", &[]).status, 404);
    // Bad method beats missing key.
    assert_eq!(world.request("POST", "/v1/filters", &[]).status, 405);
    // Missing key beats bad parameters.
    assert_eq!(
        world
            .request("GET", "/v1/filters?minConfidence=7", &[])
            .status,
        401
    );
    // A valid key with bad parameters gets 400 and it counts against the limit.
    let key = world.key("acme");
    let bad = world.get("/v1/filters?minConfidence=7", &key);
    assert_eq!(bad.status, 400);
    assert_eq!(bad.header("ratelimit"), Some("\"per-key\";r=999;t=30"));
    assert_eq!(
        world.get("/v1/filters", &key).header("ratelimit"),
        Some("\"per-key\";r=998;t=30")
    );
}

#[test]
fn store_failure_is_503_with_error_body() {
    let mut world = World::new();
    let key = world.key("acme");
    world.store.failing = true;
    let response = world.get("/v1/filters", &key);
    assert_eq!(response.status, 503);
    assert!(error_of(&response).contains("store"));
    assert_eq!(response.header("cache-control"), Some("no-store"));
}

#[test]
fn corrupt_key_record_is_500_not_a_panic() {
    let mut world = World::new();
    let key = world.key("acme");
    let hash = noise_filter_core::KeyHash::of(&key);
    world.store.set(
        &noise_filter_core::RecordKey::api_key(&hash),
        b"{not json".to_vec(),
    );
    let response = world.get("/v1/filters", &key);
    assert_eq!(response.status, 500);
    error_of(&response);
}

#[test]
fn a_shell_that_cannot_run_the_exchange_answers_as_the_core_does() {
    let response = noise_filter_core::Rejection::HandlerFailed.response();
    assert_eq!(response.status, 503);
    assert_eq!(
        error_of(&response),
        "Service unavailable: the request could not be handled"
    );
    assert_eq!(response.header("cache-control"), Some("no-store"));
    assert_eq!(response.header("content-type"), Some("application/json"));
    assert_eq!(response.header("access-control-allow-origin"), Some("*"));
}
