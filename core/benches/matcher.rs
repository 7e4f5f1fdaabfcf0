//! Events classified per second: the matcher (one automaton pass per text,
//! regexes only behind their literals) against the naive loop a user writes
//! (every pattern in turn), with the full catalog plus 100 custom patterns.
//!
//! `cargo bench -p noise-filter-core --bench matcher`
#![allow(clippy::unwrap_used)] // tests state their expectations by unwrapping

use criterion::{Criterion, Throughput, black_box, criterion_group, criterion_main};
use noise_filter_core::{
    Event, FirstParty, Kind, Matcher, MatcherPattern, builtin_patterns, translate_regex,
};
use regex::{Regex, RegexBuilder};

fn patterns() -> Vec<MatcherPattern> {
    let mut all: Vec<MatcherPattern> = builtin_patterns()
        .iter()
        .map(MatcherPattern::from)
        .collect();
    for i in 0..100 {
        let (pattern, kind) = if i % 5 == 0 {
            (format!(r"^acme-{i}: widget \d+ failed"), Kind::Regex)
        } else {
            (format!("acme-widget-{i} vendor failure"), Kind::String)
        };
        all.push(MatcherPattern {
            id: format!("custom-{i}"),
            pattern,
            kind,
            category: "custom".into(),
            confidence: 1.0,
        });
    }
    all
}

/// The baseline: lowercase the text, then try each pattern in turn.
struct Naive {
    patterns: Vec<(String, Option<Regex>)>,
}

impl Naive {
    fn new(patterns: &[MatcherPattern]) -> Naive {
        let patterns = patterns
            .iter()
            .map(|p| match p.kind {
                Kind::String => (p.pattern.to_lowercase(), None),
                Kind::Regex => {
                    let rust = translate_regex(&p.pattern).unwrap();
                    (
                        String::new(),
                        Some(
                            RegexBuilder::new(&rust)
                                .case_insensitive(true)
                                .build()
                                .unwrap(),
                        ),
                    )
                }
            })
            .collect();
        Naive { patterns }
    }

    fn classify(&self, event: &Event) -> usize {
        let message = event.message_text();
        let texts = message
            .iter()
            .map(String::as_str)
            .chain(event.frames.iter().map(String::as_str))
            .chain(event.user_agent.as_deref());
        let mut hits = 0;
        for text in texts {
            let lower = text.to_lowercase();
            for (literal, regex) in &self.patterns {
                let hit = match regex {
                    None => lower.contains(literal.as_str()),
                    Some(regex) => regex.is_match(text),
                };
                hits += usize::from(hit);
            }
        }
        hits
    }
}

fn clean_event() -> Event {
    Event {
        exception_type: Some("TypeError".into()),
        message: Some("Cannot read properties of undefined (reading 'items')".into()),
        frames: vec![
            "https://shop.example.com/assets/index-3f2a9c71.js".into(),
            "https://shop.example.com/assets/vendor-react-8d1e.js".into(),
        ],
        user_agent: Some("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36".into()),
    }
}

fn noisy_event() -> Event {
    Event {
        exception_type: Some("TypeError".into()),
        message: Some("Cannot redefine property: ethereum".into()),
        frames: vec![
            "chrome-extension://nkbihfbeogaeaoehlefnkodbefgpgknn/inpage.js".into(),
            "https://shop.example.com/assets/index-3f2a9c71.js".into(),
        ],
        user_agent: Some("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36".into()),
    }
}

fn third_party_event() -> Event {
    Event {
        frames: vec![
            "https://cdn.injected.example/7f3a9c1e-2b4d-4e6f-8a0b-1c2d3e4f5a6b.js".into(),
            "<anonymous>".into(),
        ],
        ..clean_event()
    }
}

fn bench(c: &mut Criterion) {
    let patterns = patterns();
    let matcher = Matcher::new(patterns.clone()).unwrap();
    let naive = Naive::new(&patterns);
    let mut group = c.benchmark_group("classify");
    group.throughput(Throughput::Elements(1));
    for (name, event) in [("clean", clean_event()), ("noisy", noisy_event())] {
        assert_eq!(matcher.classify(&event).noise, name == "noisy");
        assert_eq!(naive.classify(&event) > 0, name == "noisy");
        group.bench_function(format!("matcher_{name}"), |b| {
            b.iter(|| matcher.classify(black_box(&event)).noise)
        });
        group.bench_function(format!("naive_loop_{name}"), |b| {
            b.iter(|| naive.classify(black_box(&event)))
        });
    }
    group.finish();
    // The first-party rule's cost: the same events, the same patterns,
    // with and without the rule, in one run (docs/BENCHMARKS.md, "Core:
    // the first-party rule"). `third_party` is clean but for the rule: its
    // frames are a script injected from elsewhere.
    let with_rule = matcher.clone().with_first_party(
        FirstParty::new(
            vec!["https://shop.example.com".into()],
            vec!["/static/".into()],
        )
        .unwrap(),
    );
    let mut group = c.benchmark_group("first_party");
    group.throughput(Throughput::Elements(1));
    for (name, event) in [
        ("clean", clean_event()),
        ("noisy", noisy_event()),
        ("third_party", third_party_event()),
    ] {
        assert_eq!(with_rule.is_noise(&event), name != "clean");
        group.bench_function(format!("without_{name}"), |b| {
            b.iter(|| matcher.classify(black_box(&event)).noise)
        });
        group.bench_function(format!("with_{name}"), |b| {
            b.iter(|| with_rule.classify(black_box(&event)).noise)
        });
    }
    group.finish();
    c.bench_function("build_matcher_catalog_plus_100", |b| {
        b.iter(|| Matcher::new(black_box(patterns.clone())).unwrap())
    });
    // What a page pays before it can filter its first error: the built-in
    // catalog, every confidence, and the first noisy event classified.
    c.bench_function("builtin_ready_and_first_noisy_event", |b| {
        let event = noisy_event();
        b.iter(|| Matcher::builtin(black_box(0.0)).classify(&event).noise)
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
