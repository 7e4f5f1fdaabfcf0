//! Instructions a request costs, for `core/benches/instructions.sh`: runs one
//! case's request a given number of times and exits, for a count under
//! valgrind (`callgrind`), which does not move with the machine's load as
//! a clock does. The same cases and store as `respond.rs`, and only what
//! every core since before the admin API has, so the script builds this
//! file against an earlier core too.
//!
//! `instructions <case> <requests>` (cases: the `respond` group's names).
#![allow(clippy::unwrap_used)] // a measuring tool states its expectations by unwrapping

use std::hint::black_box;

use noise_filter_core::{ApiKey, MemoryStore, NewPattern, Request, UnixMillis, run};

const NOW: UnixMillis = UnixMillis(1_763_799_990_000);

fn main() {
    let args: Vec<String> = std::env::args().collect();
    // `cargo bench` runs every bench binary with `--bench`: nothing to do.
    let (Some(case), Some(count)) = (args.get(1), args.get(2)) else {
        return;
    };
    let count: usize = count.parse().unwrap();
    let key = ApiKey::from_random([42; 24]);
    let news = (0..20)
        .map(|i| NewPattern {
            source: Some(format!("Seen in acme's checkout widget, ticket {i}")),
            category: (i % 3 == 0).then(|| "third-party-script".to_owned()),
            ..NewPattern::string(&format!("acme-widget-{i}: vendor script failed"))
        })
        .collect();
    let plain_key = ApiKey::from_random([43; 24]);
    let kv = MemoryStore::new()
        .with_key(&key, "acme")
        .with_patterns("acme", news)
        .with_key(&plain_key, "plain");
    let (target, key) = match case.as_str() {
        "default_request_20_custom" => ("/v1/filters", &key),
        "default_request_no_custom" => ("/v1/filters", &plain_key),
        "filtered_request" => (
            "/api/v1/filters?categories=BOT_TRAFFIC,NETWORK_ISSUE&minConfidence=0.8&includeCustom=false",
            &key,
        ),
        other => panic!("no case {other}"),
    };
    let auth = format!("Bearer {}", key.expose());
    let headers = [("authorization", auth.as_bytes())];
    let request = Request {
        method: "GET",
        target,
        headers: &headers,
    };
    // The usual answer is made at the first request: made here, before
    // what is counted.
    assert_eq!(run(&request, NOW, &mut kv.clone()).status, 200);
    for _ in 0..count {
        // A fresh store for each request, as in `respond.rs` (its copy is
        // counted alike on both sides).
        let mut store = kv.clone();
        black_box(run(black_box(&request), NOW, &mut store));
    }
}
