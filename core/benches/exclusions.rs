//! What an account's exclusions and a custom pattern's end cost a request:
//! the same account and request with ten built-ins excluded by id and one
//! category, with ten of its twenty patterns ending in the future, and with
//! neither, measured in the same run. (What the admin API's existence costs
//! every other request, old core against new: `core/benches/paired.sh`.)
//!
//! `cargo bench -p noise-filter-core --bench exclusions`
#![allow(clippy::unwrap_used)] // tests state their expectations by unwrapping

use criterion::{BatchSize, Criterion, black_box, criterion_group, criterion_main};
use noise_filter_core::{
    ApiKey, MemoryStore, NewExclusion, NewPattern, Request, UnixMillis, builtin_patterns, run,
};

const NOW: UnixMillis = UnixMillis(1_763_799_990_000);

fn account(ends: bool, excluded: bool) -> (MemoryStore, String) {
    let key = ApiKey::from_random([42; 24]);
    let news = (0..20)
        .map(|i| NewPattern {
            source: Some(format!("Seen in acme's checkout widget, ticket {i}")),
            until: (ends && i % 2 == 0).then(|| "2099-01-01".to_owned()),
            ..NewPattern::string(&format!("acme-widget-{i}: vendor script failed"))
        })
        .collect();
    let mut kv = MemoryStore::new()
        .with_key(&key, "acme")
        .with_patterns("acme", news);
    if excluded {
        // Ten built-ins spread over the catalog, and a category.
        let ids = builtin_patterns()
            .iter()
            .filter(|p| p.confidence >= 0.5)
            .step_by(80)
            .take(10)
            .map(|p| NewExclusion {
                id: Some(p.id.to_owned()),
                ..NewExclusion::default()
            });
        let category = NewExclusion {
            category: Some("other".to_owned()),
            ..NewExclusion::default()
        };
        kv = kv.with_exclusions("acme", ids.chain([category]).collect());
    }
    (kv, format!("Bearer {}", key.expose()))
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("exclusions");
    for (name, ends, excluded) in [
        ("neither", false, false),
        ("ten_patterns_ending", true, false),
        ("ten_ids_and_a_category_excluded", false, true),
    ] {
        let (kv, auth) = account(ends, excluded);
        for (variant, target) in [("a", "/v1/filters"), ("b", "/api/v1/filters")] {
            let headers = [("authorization", auth.as_bytes())];
            let request = Request {
                method: "GET",
                target,
                headers: &headers,
            };
            assert_eq!(run(&request, NOW, &mut kv.clone()).status, 200);
            group.bench_function(format!("{name}_{variant}"), |b| {
                b.iter_batched_ref(
                    || kv.clone(),
                    |kv| run(black_box(&request), NOW, kv),
                    BatchSize::PerIteration,
                )
            });
        }
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
