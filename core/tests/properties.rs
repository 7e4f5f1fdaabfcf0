// Needs the core's `endpoint` feature (default), as the fixtures do.
#![cfg(feature = "endpoint")]
//! Properties over arbitrary input: no request panics, every refusal is a
//! well-formed `{"error": ...}` with a 4xx (5xx only when the store fails),
//! and custom-pattern validation never panics.
#![allow(clippy::unwrap_used)] // tests state their expectations by unwrapping

mod support;
use noise_filter_core::{CustomPatterns, NewPattern, Request, UnixMillis, run};
use proptest::prelude::*;
use support::World;

fn method() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("GET".to_owned()),
        Just("HEAD".to_owned()),
        Just("OPTIONS".to_owned()),
        Just("POST".to_owned()),
        "[A-Za-z]{0,8}",
    ]
}

fn target() -> impl Strategy<Value = String> {
    let path = prop_oneof![
        Just("/v1/filters".to_owned()),
        Just("/api/v1/filters".to_owned()),
        "/[a-z0-9/]{0,20}",
    ];
    let param = prop_oneof![
        "categories=[A-Za-z_,%-]{0,40}",
        "minConfidence=[-+0-9.eE%a-z]{0,12}",
        "includeCustom=[a-zA-Z]{0,6}",
        "[a-zA-Z=&%]{0,30}",
        "[a-z]{2040,2100}",
    ];
    (path, proptest::collection::vec(param, 0..4)).prop_map(|(p, params)| {
        if params.is_empty() {
            p
        } else {
            format!("{p}?{}", params.join("&"))
        }
    })
}

fn authorization(valid: String) -> impl Strategy<Value = Option<Vec<u8>>> {
    prop_oneof![
        Just(Some(format!("Bearer {valid}").into_bytes())),
        Just(None),
        "(?s).{0,80}".prop_map(|s| Some(s.into_bytes())),
        proptest::collection::vec(any::<u8>(), 0..64).prop_map(Some),
        "[Bb]earer [ -~]{0,70}".prop_map(|s| Some(s.into_bytes())),
    ]
}

fn check(status: u16, body: &[u8], head: bool) -> Result<(), TestCaseError> {
    prop_assert!(
        matches!(status, 200 | 204 | 304 | 400 | 401 | 404 | 405 | 414 | 429),
        "status {status}"
    );
    if head || matches!(status, 204 | 304) {
        prop_assert!(body.is_empty());
    } else if status >= 400 {
        let value: serde_json::Value = serde_json::from_slice(body).expect("error body is JSON");
        let object = value.as_object().expect("error body is an object");
        prop_assert_eq!(object.len(), 1);
        prop_assert!(object["error"].is_string());
    } else {
        let value: serde_json::Value = serde_json::from_slice(body).expect("body is JSON");
        prop_assert!(value["patterns"].is_array());
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn any_request_gets_a_well_formed_answer(
        method in method(),
        target in target(),
        auth_choice in 0usize..5,
        raw_auth in proptest::collection::vec(any::<u8>(), 0..64),
        inm in proptest::option::of("[ -~]{0,40}"),
    ) {
        let mut world = World::new();
        let key = world.key("acme");
        world.custom("acme", serde_json::json!([{"pattern": "widget", "category": "other"}]));
        let auth: Option<Vec<u8>> = match auth_choice {
            0 | 1 => Some(format!("Bearer {key}").into_bytes()),
            2 => None,
            3 => Some(raw_auth),
            _ => Some(b"Bearer ".iter().copied().chain(raw_auth).collect()),
        };
        let mut headers: Vec<(&str, &[u8])> = Vec::new();
        if let Some(a) = &auth { headers.push(("Authorization", a)); }
        if let Some(i) = &inm { headers.push(("If-None-Match", i.as_bytes())); }
        let request = Request { method: &method, target: &target, headers: &headers };
        let response = run(&request, world.now, &mut world.store);
        check(response.status, &response.body, method == "HEAD")?;
        let cache = response.header("cache-control");
        if matches!(response.status, 200 | 304) {
            prop_assert_eq!(cache, Some("public, max-age=300"));
        } else {
            prop_assert_eq!(cache, Some("no-store"));
        }
        prop_assert_eq!(response.header("access-control-allow-origin"), Some("*"));
    }

    #[test]
    fn authorization_header_never_panics(auth in authorization("nf_".to_owned() + &"0".repeat(48))) {
        let mut world = World::new();
        let mut headers: Vec<(&str, &[u8])> = Vec::new();
        if let Some(a) = &auth { headers.push(("authorization", a)); }
        let response = run(&Request { method: "GET", target: "/v1/filters", headers: &headers }, world.now, &mut world.store);
        prop_assert_eq!(response.status, 401);
        check(response.status, &response.body, false)?;
    }

    #[test]
    fn custom_pattern_validation_never_panics(
        pattern in "(?s).{0,80}",
        regex in prop_oneof![Just(true), Just(false)],
        category in proptest::option::of("[a-zA-Z_-]{0,20}"),
        confidence in proptest::option::of(any::<f64>()),
        until in proptest::option::of("[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9:.]{0,12}[Z+-]?[0-9:]{0,5})?"),
    ) {
        let mut doc = CustomPatterns::new();
        let before = doc.clone();
        let new = NewPattern {
            id: None,
            pattern,
            kind: if regex { noise_filter_core::Kind::Regex } else { noise_filter_core::Kind::String },
            category,
            confidence,
            source: None,
            until,
        };
        if doc.add(new, UnixMillis(0)).is_err() {
            prop_assert_eq!(doc, before, "nothing changes on refusal");
        } else {
            // What is accepted reads back exactly from the stored layout.
            prop_assert_eq!(CustomPatterns::decode(&doc.encode()), Some(doc));
        }
    }

    #[test]
    fn regex_subset_check_never_panics(pattern in "(?s).{0,60}") {
        let _ = noise_filter_core::translate_regex(&pattern);
    }

    #[test]
    fn published_regex_check_never_panics(pattern in r"([ab;.^$|()*+?]|\\[bdw]|\{[0-9],?[0-9]?\}){0,40}") {
        let _ = noise_filter_core::validate_regex(&pattern);
    }
}
