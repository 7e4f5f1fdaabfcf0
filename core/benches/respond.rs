//! One whole request through the core, against the floor of copying the same
//! response bytes, measured in the same run.
//!
//! `cargo bench -p noise-filter-core --bench respond`
//!
//! This file uses only what every core since the admin API's predecessor
//! has (`run`, `MemoryStore`, `NewPattern`), so `core/benches/paired.sh`
//! builds it against an earlier revision too and runs both builds in
//! alternating rounds: the same requests, old core and new, in one run.
#![allow(clippy::unwrap_used)] // tests state their expectations by unwrapping

use criterion::{BatchSize, Criterion, black_box, criterion_group, criterion_main};
use noise_filter_core::{ApiKey, MemoryStore, NewPattern, Request, UnixMillis, run};

const NOW: UnixMillis = UnixMillis(1_763_799_990_000);

fn world() -> (MemoryStore, String) {
    let key = ApiKey::from_random([42; 24]);
    let news = (0..20)
        .map(|i| NewPattern {
            source: Some(format!("Seen in acme's checkout widget, ticket {i}")),
            category: (i % 3 == 0).then(|| "third-party-script".to_owned()),
            ..NewPattern::string(&format!("acme-widget-{i}: vendor script failed"))
        })
        .collect();
    let kv = MemoryStore::new()
        .with_key(&key, "acme")
        .with_patterns("acme", news);
    (kv, format!("Bearer {}", key.expose()))
}

fn bench(c: &mut Criterion) {
    let (kv, auth) = world();
    // An account with no record at all: the usual answer, made once.
    let plain_key = ApiKey::from_random([43; 24]);
    let kv = kv.with_key(&plain_key, "plain");
    let plain = format!("Bearer {}", plain_key.expose());
    let mut group = c.benchmark_group("respond");
    for (name, target, auth) in [
        ("default_request_20_custom", "/v1/filters", &auth),
        ("default_request_no_custom", "/v1/filters", &plain),
        (
            "filtered_request",
            "/api/v1/filters?categories=BOT_TRAFFIC,NETWORK_ISSUE&minConfidence=0.8&includeCustom=false",
            &auth,
        ),
    ] {
        let headers = [("authorization", auth.as_bytes())];
        let request = Request {
            method: "GET",
            target,
            headers: &headers,
        };
        let expected = run(&request, NOW, &mut kv.clone());
        assert_eq!(expected.status, 200);
        // Each iteration gets a fresh copy of the store (made outside the
        // timing) so the rate counter never reaches the limit; one response
        // is alive at a time, as in a server (batching many 95 KB bodies
        // measured the allocator's page faults instead of the core).
        group.bench_function(name, |b| {
            b.iter_batched_ref(
                || kv.clone(),
                |kv| run(black_box(&request), NOW, kv),
                BatchSize::PerIteration,
            )
        });
        // The floor: copying the same response body.
        let body = expected.body.clone();
        group.bench_function(format!("{name}_floor_copy_{}_bytes", body.len()), |b| {
            b.iter(|| black_box(black_box(&body).clone()))
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
