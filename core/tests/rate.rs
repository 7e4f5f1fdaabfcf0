// Needs the core's `endpoint` feature (default), as the fixtures do.
#![cfg(feature = "endpoint")]
//! The rate limit with a fixed clock and an in-memory store.
#![allow(clippy::unwrap_used)] // tests state their expectations by unwrapping

mod support;
use noise_filter_core::{
    RATE_LIMIT as LIMIT, RATE_WINDOW_MS as WINDOW_MS, RateDecision, RateWindow, StoreLabel,
    UnixMillis, rate_decision,
};
use support::{World, error_of};

fn window_start(world: &World) -> u64 {
    world.now.0 / WINDOW_MS * WINDOW_MS
}

#[test]
fn exactly_the_limit_is_admitted_in_a_fresh_window() {
    let mut world = World::new();
    let key = world.key("acme");
    for n in 1..=LIMIT {
        let response = world.get("/v1/filters?includeCustom=false", &key);
        assert_eq!(response.status, 200, "request {n}");
        let expected = format!("\"per-key\";r={};t=30", LIMIT - n);
        assert_eq!(response.header("ratelimit"), Some(expected.as_str()));
    }
    let over = world.get("/v1/filters", &key);
    assert_eq!(over.status, 429);
    assert_eq!(error_of(&over), "Rate limit exceeded");
    assert_eq!(over.header("cache-control"), Some("no-store"));
    assert_eq!(
        over.header("ratelimit-policy"),
        Some("\"per-key\";q=1000;w=60")
    );
    let retry: u64 = over.header("retry-after").unwrap().parse().unwrap();
    // 1000 used at 30 s into the window: only once this window decays in the
    // next one is there room, 60 ms into it.
    assert_eq!(retry, 31);
    assert_eq!(over.header("ratelimit"), Some("\"per-key\";r=0;t=31"));
}

#[test]
fn over_the_limit_everything_is_429_even_bad_requests() {
    let mut world = World::new();
    let key = world.key("acme");
    for _ in 0..LIMIT {
        world.get("/v1/filters?includeCustom=false", &key);
    }
    assert_eq!(
        world.get("/v1/filters?minConfidence=banana", &key).status,
        429
    );
    assert_eq!(
        world
            .request(
                "HEAD",
                "/v1/filters",
                &[("Authorization", &format!("Bearer {key}"))]
            )
            .status,
        429
    );
}

#[test]
fn refused_requests_are_not_counted_so_retry_after_holds() {
    let mut world = World::new();
    let key = world.key("acme");
    for _ in 0..LIMIT {
        world.get("/v1/filters?includeCustom=false", &key);
    }
    for _ in 0..50 {
        assert_eq!(world.get("/v1/filters", &key).status, 429);
    }
    let retry: u64 = world
        .get("/v1/filters", &key)
        .header("retry-after")
        .unwrap()
        .parse()
        .unwrap();
    world.now = UnixMillis(world.now.0 + retry * 1000);
    assert_eq!(
        world.get("/v1/filters", &key).status,
        200,
        "admitted after Retry-After"
    );
}

#[test]
fn other_keys_are_unaffected() {
    let mut world = World::new();
    let busy = world.key("acme");
    let other_same_account = world.key("acme");
    let other_account = world.key("globex");
    for _ in 0..LIMIT {
        world.get("/v1/filters?includeCustom=false", &busy);
    }
    assert_eq!(world.get("/v1/filters", &busy).status, 429);
    assert_eq!(world.get("/v1/filters", &other_same_account).status, 200);
    assert_eq!(world.get("/v1/filters", &other_account).status, 200);
}

#[test]
fn not_modified_does_not_use_allowance() {
    let mut world = World::new();
    let key = world.key("acme");
    let first = world.get("/v1/filters", &key);
    let etag = first.header("etag").unwrap().to_owned();
    let auth = format!("Bearer {key}");
    for _ in 0..5 {
        let cached = world.request(
            "GET",
            "/v1/filters",
            &[("Authorization", &auth), ("If-None-Match", &etag)],
        );
        assert_eq!(cached.status, 304);
        assert_eq!(cached.header("ratelimit"), Some("\"per-key\";r=999;t=30"));
    }
    let next = world.get("/v1/filters", &key);
    assert_eq!(next.header("ratelimit"), Some("\"per-key\";r=998;t=30"));
}

#[test]
fn previous_window_decays_linearly() {
    let mut world = World::new();
    let key = world.key("acme");
    // Spend the whole limit at the very end of one window.
    world.now = UnixMillis(window_start(&world) + WINDOW_MS - 1);
    for _ in 0..LIMIT {
        assert_eq!(
            world.get("/v1/filters?includeCustom=false", &key).status,
            200
        );
    }
    // At the start of the next window almost nothing is free ...
    world.now = UnixMillis(window_start(&world) + WINDOW_MS);
    assert_eq!(world.get("/v1/filters", &key).status, 429);
    // ... half-way through, half the limit is.
    world.now = UnixMillis(window_start(&world) + WINDOW_MS / 2);
    let mut admitted = 0;
    while world.get("/v1/filters?includeCustom=false", &key).status == 200 {
        admitted += 1;
    }
    assert_eq!(admitted, LIMIT / 2);
}

/// Whatever the gaps between a key's requests, it keeps at most its current
/// and previous counters (and its `last` record): a key used at minutes m
/// and m+3 keeps nothing of m.
#[test]
fn stale_counters_are_deleted_whatever_the_gaps() {
    let mut world = World::new();
    let key = world.key("acme");
    let start = world.now.0;
    let counters = |world: &World| -> Vec<String> {
        world
            .store
            .keys(StoreLabel::Rate)
            .into_iter()
            .filter(|k| !k.ends_with("/last"))
            .map(|k| k.rsplit('/').next().unwrap().to_owned())
            .collect()
    };
    let window = |minutes: u64| ((start + minutes * WINDOW_MS) / WINDOW_MS).to_string();
    for (minute, kept) in [
        (0, vec![0]),
        (1, vec![0, 1]),
        (4, vec![4]),
        (5, vec![4, 5]),
        (6, vec![5, 6]),
        (9, vec![9]),
        (70, vec![70]),
    ] {
        world.now = UnixMillis(start + minute * WINDOW_MS);
        for _ in 0..3 {
            assert_eq!(world.get("/v1/filters", &key).status, 200);
        }
        let mut expected: Vec<String> = kept.into_iter().map(window).collect();
        expected.sort();
        let mut found = counters(&world);
        found.sort();
        assert_eq!(found, expected, "after minute {minute}");
    }
    // One `last` record per key, at the latest window.
    let last: Vec<_> = world
        .store
        .keys(StoreLabel::Rate)
        .into_iter()
        .filter(|k| k.ends_with("/last"))
        .map(str::to_owned)
        .collect();
    assert_eq!(last.len(), 1);
}

/// Counters in either store's encoding (Spin's 8 bytes, Redis's decimal)
/// count as what they hold. (How an unreadable or negative one counts is
/// tested where it is read, in `exchange.rs`.)
#[test]
fn counters_are_read_in_both_store_encodings() {
    use noise_filter_core::Counter;
    assert_eq!(Counter::decode(&7i64.to_le_bytes()), Some(7));
    assert_eq!(Counter::decode(b"42"), Some(42));
    assert_eq!(Counter::decode(b"12345678"), Some(12_345_678));
    assert_eq!(Counter::decode(b"xyz"), None);
}

/// The decision alone, as a table: (elapsed ms, current, previous) → outcome.
#[test]
fn decision_table() {
    let cases: &[(u64, u64, u64, RateDecision)] = &[
        (0, 1, 0, RateDecision::Admitted { remaining: 999 }),
        (0, 1000, 0, RateDecision::Admitted { remaining: 0 }),
        (0, 1001, 0, RateDecision::Limited { retry_after: 61 }),
        (59_999, 1001, 0, RateDecision::Limited { retry_after: 1 }),
        (30_000, 500, 1000, RateDecision::Admitted { remaining: 0 }),
        (30_000, 501, 1000, RateDecision::Limited { retry_after: 1 }),
        (45_000, 1, 1000, RateDecision::Admitted { remaining: 749 }),
    ];
    for &(elapsed_ms, current, previous, expected) in cases {
        let got = rate_decision(
            RateWindow {
                index: 100,
                elapsed_ms,
            },
            current,
            previous,
        );
        assert_eq!(
            got, expected,
            "elapsed {elapsed_ms}, current {current}, previous {previous}"
        );
    }
}

/// Whatever order concurrent increments land in, exactly the limit is admitted.
#[test]
fn concurrent_increments_never_over_admit() {
    let window = RateWindow {
        index: 100,
        elapsed_ms: 10_000,
    };
    for previous in [0, 100, 999, 5000] {
        let admitted = (1..=3000)
            .filter(|&n| {
                matches!(
                    rate_decision(window, n, previous),
                    RateDecision::Admitted { .. }
                )
            })
            .count() as u64;
        let allowance = (LIMIT * WINDOW_MS).saturating_sub(previous * 50_000) / WINDOW_MS;
        assert_eq!(admitted, allowance, "previous {previous}");
    }
}
