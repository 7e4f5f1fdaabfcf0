//! The rate limit through the real host: 16 concurrent clients, the
//! component's clock fixed inside one window so it cannot roll mid-test.
#![allow(clippy::unwrap_used)] // tests state their expectations by unwrapping

mod support;

use support::{Host, LIMIT_PER_MINUTE, TempDir, burst, create_key, remaining};

#[test]
fn exactly_the_limit_then_429_and_other_keys_unaffected() {
    let state = TempDir::new("rate");
    let s = state.path();
    let key = create_key(s, &[], "acme");
    let other = create_key(s, &[], "acme");
    let host = Host::start(s, &[]);

    // One counted request, then conditional ones answered 304: not counted.
    let first = host.get("/api/v1/filters", &key);
    assert_eq!((first.status, remaining(&first)), (200, 999));
    let etag = first.header("etag").unwrap().to_owned();
    let auth = format!("Bearer {key}");
    for _ in 0..5 {
        let cached = host.send(
            "GET",
            "/api/v1/filters",
            &[("authorization", &auth), ("if-none-match", &etag)],
        );
        assert_eq!(
            (cached.status, remaining(&cached)),
            (304, 999),
            "a 304 uses up no allowance"
        );
    }

    // 16 clients at once, 1100 requests: exactly the rest of the limit passes.
    let (ok, limited, samples) = burst(&host, &key, 1100);
    assert_eq!(ok, LIMIT_PER_MINUTE - 1, "admitted in the window");
    assert_eq!(limited, 1100 - (LIMIT_PER_MINUTE - 1));
    for reply in &samples {
        assert_eq!(reply.error(), "Rate limit exceeded");
        let retry: u64 = reply
            .header("retry-after")
            .expect("Retry-After")
            .parse()
            .unwrap();
        assert!((1..=60).contains(&retry), "{retry}");
        assert_eq!(reply.header("cache-control"), Some("no-store"));
    }

    // Over the limit, everything from this key is 429, conditional or not.
    let cached = host.send(
        "GET",
        "/api/v1/filters",
        &[("authorization", &auth), ("if-none-match", &etag)],
    );
    assert_eq!(cached.status, 429);
    assert_eq!(host.get("/v1/filters?minConfidence=7", &key).status, 429);

    // Another key of the same account has its own allowance.
    let fresh = host.get("/api/v1/filters", &other);
    assert_eq!((fresh.status, remaining(&fresh)), (200, 999));
}

#[test]
fn a_refused_request_from_a_valid_key_still_counts() {
    let state = TempDir::new("rate-400");
    let s = state.path();
    let key = create_key(s, &[], "acme");
    let host = Host::start(s, &[]);
    assert_eq!(remaining(&host.get("/v1/filters", &key)), 999);
    let bad = host.get("/v1/filters?includeCustom=maybe", &key);
    assert_eq!((bad.status, remaining(&bad)), (400, 998));
    assert_eq!(remaining(&host.get("/v1/filters", &key)), 997);
}
