//! The cost of an encoded answer against the identity answer to the same
//! request, in the same run: the usual answer (brotli and gzip made at
//! build time), an account's own list (gzip put together from the
//! catalog's pieces and its own bytes compressed per request), a filtered
//! list, and an account with exclusions (the categories it cuts into
//! compressed from the cut on).
//!
//! `cargo bench -p noise-filter-core --bench encoding`
#![allow(clippy::unwrap_used)] // benches state their expectations by unwrapping

use criterion::{BatchSize, Criterion, black_box, criterion_group, criterion_main};
use noise_filter_core::{ApiKey, MemoryStore, NewExclusion, NewPattern, Request, UnixMillis, run};

const NOW: UnixMillis = UnixMillis(1_763_799_990_000);

/// What browsers send.
const BROWSER: &[u8] = b"gzip, deflate, br, zstd";

fn bench(c: &mut Criterion) {
    let custom_key = ApiKey::from_random([42; 24]);
    let plain_key = ApiKey::from_random([43; 24]);
    let excluding_key = ApiKey::from_random([44; 24]);
    let news: Vec<NewPattern> = (0..20)
        .map(|i| NewPattern {
            source: Some(format!("Seen in acme's checkout widget, ticket {i}")),
            category: (i % 3 == 0).then(|| "third-party-script".to_owned()),
            ..NewPattern::string(&format!("acme-widget-{i}: vendor script failed"))
        })
        .collect();
    let mut kv = MemoryStore::new()
        .with_key(&custom_key, "acme")
        .with_patterns("acme", news)
        .with_key(&plain_key, "plain")
        .with_key(&excluding_key, "initech");
    // Two built-ins excluded, in the first and a middle category.
    let ids: Vec<&str> = {
        let all = noise_filter_core::builtin_patterns();
        vec![all[3].id, all[all.len() / 2].id]
    };
    let exclusions = ids
        .iter()
        .map(|id| NewExclusion {
            id: Some((*id).to_owned()),
            ..NewExclusion::default()
        })
        .collect();
    kv.add_exclusions("initech", exclusions, NOW).unwrap();
    let bearer = |key: &ApiKey| format!("Bearer {}", key.expose());
    let (custom, plain, excluding) = (
        bearer(&custom_key),
        bearer(&plain_key),
        bearer(&excluding_key),
    );

    let mut group = c.benchmark_group("encoding");
    for (name, target, auth) in [
        ("usual_answer", "/v1/filters", &plain),
        ("20_custom", "/v1/filters", &custom),
        ("2_exclusions", "/v1/filters", &excluding),
        (
            "filtered",
            "/api/v1/filters?categories=BOT_TRAFFIC,NETWORK_ISSUE&minConfidence=0.8&includeCustom=false",
            &custom,
        ),
    ] {
        for (coding, accept) in [
            ("identity", None),
            ("gzip", Some(&b"gzip"[..])),
            ("browser", Some(BROWSER)),
        ] {
            let mut headers = vec![("authorization", auth.as_bytes())];
            if let Some(accept) = accept {
                headers.push(("accept-encoding", accept));
            }
            let request = Request {
                method: "GET",
                target,
                headers: &headers,
            };
            let expected = run(&request, NOW, &mut kv.clone());
            assert_eq!(expected.status, 200);
            let sent = expected.header("content-encoding").unwrap_or("identity");
            group.bench_function(
                format!("{name}/{coding}_{sent}_{}_bytes", expected.body.len()),
                |b| {
                    b.iter_batched_ref(
                        || kv.clone(),
                        |kv| run(black_box(&request), NOW, kv),
                        BatchSize::PerIteration,
                    )
                },
            );
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
