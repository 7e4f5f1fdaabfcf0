// Needs the core's `endpoint` feature (default), as the fixtures do.
#![cfg(feature = "endpoint")]
//! Authentication: every row of the table in docs/CONTRACT.md, one named
//! test each.
#![allow(clippy::unwrap_used)] // tests state their expectations by unwrapping

mod support;
use support::{World, error_of};

const MISSING: &str = "Missing or invalid Authorization header";
const REQUIRED: &str = "API key required";
const INVALID: &str = "Invalid API key";

/// `{key}` in a header value stands for a valid, active key.
macro_rules! auth_cases {
    ($($name:ident: [$(($h:expr, $v:expr)),*] => $status:expr, $error:expr;)*) => {$(
        #[test]
        fn $name() {
            let mut world = World::new();
            let key = world.key("acme");
            let values: Vec<(String, String)> =
                vec![$(($h.to_string(), $v.replace("{key}", &key))),*];
            let headers: Vec<(&str, &str)> =
                values.iter().map(|(h, v)| (h.as_str(), v.as_str())).collect();
            let response = world.request("GET", "/v1/filters", &headers);
            assert_eq!(response.status, $status, "{}", String::from_utf8_lossy(&response.body));
            let expected: Option<&str> = $error;
            if let Some(message) = expected {
                assert_eq!(error_of(&response), message);
                assert_eq!(response.header("www-authenticate"), Some("Bearer"));
                assert_eq!(response.header("cache-control"), Some("no-store"));
                assert_eq!(response.header("content-type"), Some("application/json"));
                assert_eq!(response.header("access-control-allow-origin"), Some("*"));
                assert!(!String::from_utf8_lossy(&response.body).contains(&key), "no key in a response");
                assert!(response.header("ratelimit").is_none(), "unauthenticated: no rate headers");
            }
        }
    )*};
}

auth_cases! {
    no_header: [] => 401, Some(MISSING);
    empty_header: [("Authorization", "")] => 401, Some(MISSING);
    header_given_twice: [("Authorization", "Bearer {key}"), ("authorization", "Bearer {key}")] => 401, Some(MISSING);
    other_scheme: [("Authorization", "Basic dXNlcjpwYXNz")] => 401, Some(MISSING);
    no_scheme: [("Authorization", "{key}")] => 401, Some(MISSING);
    two_tokens: [("Authorization", "Bearer a b")] => 401, Some(MISSING);
    scheme_glued_to_token: [("Authorization", "Bearer{key}")] => 401, Some(MISSING);
    bearer_without_token: [("Authorization", "Bearer")] => 401, Some(REQUIRED);
    bearer_blank_token: [("Authorization", "Bearer     ")] => 401, Some(REQUIRED);
    bearer_tab_token: [("Authorization", "Bearer \t ")] => 401, Some(REQUIRED);
    unknown_key: [("Authorization", "Bearer nf_000000000000000000000000000000000000000000000000")] => 401, Some(INVALID);
    malformed_key: [("Authorization", "Bearer not-a-key")] => 401, Some(INVALID);
    key_in_wrong_case: [("Authorization", "Bearer NF_0123456789ABCDEF0123456789ABCDEF0123456789ABCDEF")] => 401, Some(INVALID);
    key_with_extra_character: [("Authorization", "Bearer {key}0")] => 401, Some(INVALID);
    scheme_lowercase: [("Authorization", "bearer {key}")] => 200, None;
    scheme_uppercase: [("Authorization", "BEARER {key}")] => 200, None;
    header_name_lowercase: [("authorization", "Bearer {key}")] => 200, None;
    spaces_around_token: [("Authorization", "  Bearer   {key}  ")] => 200, None;
}

#[test]
fn absurdly_long_key_is_invalid() {
    let mut world = World::new();
    let long = format!("Bearer {}", "a".repeat(100_000));
    let response = world.request("GET", "/v1/filters", &[("Authorization", &long)]);
    assert_eq!(
        (response.status, error_of(&response).as_str()),
        (401, INVALID)
    );
}

#[test]
fn revoked_key_is_invalid() {
    let mut world = World::new();
    let key = world.key("acme");
    assert_eq!(world.get("/v1/filters", &key).status, 200);
    world.revoke(&key);
    let response = world.get("/v1/filters", &key);
    assert_eq!(
        (response.status, error_of(&response).as_str()),
        (401, INVALID)
    );
}

#[test]
fn header_that_is_not_utf8_is_malformed() {
    let mut world = World::new();
    let headers: [(&str, &[u8]); 1] = [("Authorization", b"Bearer \xff\xfe")];
    let request = noise_filter_core::Request {
        method: "GET",
        target: "/v1/filters",
        headers: &headers,
    };
    let response = noise_filter_core::run(&request, world.now, &mut world.store);
    assert_eq!(
        (response.status, error_of(&response).as_str()),
        (401, MISSING)
    );
}

#[test]
fn keys_are_stored_only_as_hashes() {
    let mut world = World::new();
    let key = world.key("acme");
    for (_, k, v) in world.store.entries() {
        assert!(!k.contains(&key) && !String::from_utf8_lossy(v).contains(&key));
    }
}

#[test]
fn generated_keys_have_the_documented_shape() {
    let key = noise_filter_core::ApiKey::from_random([0xab; 24]);
    assert_eq!(key.expose(), format!("nf_{}", "ab".repeat(24)));
    assert!(noise_filter_core::ApiKey::parse(key.expose()).is_some());
    assert_eq!(
        format!("{key:?}"),
        "ApiKey(nf_…)",
        "Debug never shows the secret"
    );
    // SHA-256 of the presented token, hex.
    assert_eq!(
        noise_filter_core::KeyHash::of("abc").as_str(),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
}

/// A shell's access log names the key a request presents by its hash, for
/// every spelling the endpoint accepts, and for nothing it refuses.
#[test]
fn the_presented_key_is_read_as_the_endpoint_reads_it() {
    use noise_filter_core::KeyHash;
    let key = noise_filter_core::ApiKey::from_random([0x5a; 24]);
    let hash = Some(key.hash());
    let k = key.expose();
    for accepted in [
        format!("Bearer {k}"),
        format!("bearer {k}"),
        format!("BEARER {k}"),
        format!("Bearer\t{k}"),
        format!("  Bearer   {k}  "),
    ] {
        assert_eq!(
            KeyHash::presented(&[accepted.as_bytes()]),
            hash,
            "{accepted:?}"
        );
    }
    let basic = format!("Basic {k}");
    let two = format!("Bearer {k} x");
    for refused in [basic.as_str(), two.as_str(), "Bearer not-a-key", "Bearer"] {
        assert_eq!(
            KeyHash::presented(&[refused.as_bytes()]),
            None,
            "{refused:?}"
        );
    }
    let once = format!("Bearer {k}");
    assert_eq!(
        KeyHash::presented(&[once.as_bytes(), once.as_bytes()]),
        None,
        "a header given twice authenticates nothing"
    );
}
