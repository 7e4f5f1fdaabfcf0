// Needs the core's `endpoint` feature (default), as the fixtures do.
#![cfg(feature = "endpoint")]
//! The built-in catalog: size, coverage, validity and safety.
#![allow(clippy::unwrap_used)] // tests state their expectations by unwrapping

mod support;
use std::collections::HashSet;

use noise_filter_core::{
    Category, Kind, Matcher, Variant, builtin_patterns, translate_regex, validate_regex,
};
use support::{World, json};

#[test]
fn catalog_is_large_and_covers_every_category() {
    let patterns = builtin_patterns();
    assert!(patterns.len() >= 300, "{} patterns", patterns.len());
    for c in Category::ALL {
        let n = patterns.iter().filter(|p| p.category == c).count();
        assert!(n >= 10, "{c:?} has only {n} patterns");
    }
    let low = patterns.iter().filter(|p| p.confidence < 0.5).count();
    assert!(low >= 10, "only {low} patterns below 0.5");
}

#[test]
fn ids_are_unique_readable_and_not_custom() {
    let mut seen = HashSet::new();
    for p in builtin_patterns() {
        assert!(seen.insert(p.id), "duplicate id {}", p.id);
        assert!(
            p.id.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
            "{}",
            p.id
        );
        assert!(!p.id.starts_with("custom-"), "{}", p.id);
        assert!(!p.source.trim().is_empty(), "{} has a source", p.id);
        assert!((0.0..=1.0).contains(&p.confidence), "{}", p.id);
    }
}

#[test]
fn every_regex_is_in_the_shared_subset_and_compiles() {
    let regexes: Vec<_> = builtin_patterns()
        .iter()
        .filter(|p| p.kind == Kind::Regex)
        .collect();
    assert!(!regexes.is_empty());
    for p in regexes {
        let rust = translate_regex(p.pattern).unwrap_or_else(|e| panic!("{}: {e}", p.id));
        assert_eq!(
            Some(rust.as_str()),
            p.rust_regex,
            "{}: build-time translation is current",
            p.id
        );
        regex::RegexBuilder::new(&rust)
            .case_insensitive(true)
            .build()
            .unwrap();
    }
}

#[test]
fn ids_are_the_same_in_both_variants_and_b_lists_only_substrings() {
    let mut world = World::new();
    let key = world.key("acme");
    let a = json(&world.get("/v1/filters?minConfidence=0", &key));
    let b = json(&world.get("/api/v1/filters?minConfidence=0", &key));
    let a: Vec<_> = a["patterns"].as_array().unwrap().clone();
    let b: Vec<_> = b["patterns"].as_array().unwrap().clone();
    let a_strings: Vec<_> = a.iter().filter(|p| p["type"] == "string").collect();
    assert_eq!(
        a_strings.len(),
        b.len(),
        "B lists exactly A's string patterns"
    );
    for (pa, pb) in a_strings.iter().zip(&b) {
        assert_eq!(pa["id"], pb["id"]);
        assert_eq!(pa["pattern"], pb["pattern"]);
        assert_eq!(pa["confidence"], pb["confidence"]);
        let category = Category::ALL
            .into_iter()
            .find(|c| c.name(Variant::A) == pa["category"])
            .unwrap();
        assert_eq!(pb["category"], category.name(Variant::B));
    }
    assert_eq!(a.len(), builtin_patterns().len());
}

#[test]
fn order_is_category_then_confidence_then_id() {
    let patterns = builtin_patterns();
    for pair in patterns.windows(2) {
        let key = |p: &noise_filter_core::BuiltinPattern| {
            (
                p.category,
                std::cmp::Reverse((p.confidence * 100.0) as u32),
                p.id,
            )
        };
        assert!(
            key(&pair[0]) < key(&pair[1]),
            "{} before {}",
            pair[0].id,
            pair[1].id
        );
    }
}

#[test]
fn same_request_gives_the_same_bytes() {
    let mut world = World::new();
    let key = world.key("acme");
    world.custom(
        "acme",
        serde_json::json!([{"pattern": "widget-noise"}, {"pattern": "^w\\d+$", "type": "regex"}]),
    );
    let first = world.get("/v1/filters?categories=other,custom", &key);
    for _ in 0..3 {
        let again = world.get("/v1/filters?categories=other,custom", &key);
        assert_eq!(again.body, first.body);
        assert_eq!(again.header("etag"), first.header("etag"));
    }
}

/// Ordinary texts of real application errors: no pattern, at any confidence
/// at or above the default, may fire on them (docs/CONTRACT.md, "Matching": safe on every text).
#[test]
fn no_pattern_fires_on_ordinary_texts() {
    let matcher = Matcher::builtin(0.5);
    let ordinary = [
        "TypeError: Cannot read properties of undefined (reading 'map')",
        "TypeError: undefined is not a function",
        "ReferenceError: checkoutTotal is not defined",
        // An application's own globals next to X's in-app browser's CONFIG
        // (`x-in-app-layout-globals` takes the whole message only).
        "ReferenceError: Can't find variable: configService",
        "ReferenceError: Can't find variable: CONFIG_URL",
        "TypeError: undefined is not an object (evaluating 'CONFIG.apiUrl')",
        "Error: Request failed with status code 500",
        "SyntaxError: Unexpected token '}'",
        "RangeError: Invalid time value",
        "Error: Minified React error #185",
        "https://app.example.com/assets/index-3f2a9c.js",
        "https://www.example.org/static/js/main.8e4b2c1d.chunk.js",
        "webpack-internal:///./src/components/Cart.tsx",
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
        "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15",
        "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0",
        "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
        "Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/26.0 Chrome/122.0.0.0 Mobile Safari/537.36",
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0",
    ];
    for text in ordinary {
        let verdict = matcher.classify(&noise_filter_core::Event {
            message: Some(text.into()),
            ..Default::default()
        });
        assert!(!verdict.noise, "{text:?} matched {:?}", verdict.matches);
    }
}

#[test]
fn bot_alone_is_not_a_pattern() {
    for p in builtin_patterns() {
        if p.kind == Kind::String {
            assert!(
                p.pattern.trim().chars().count() >= 4 || p.pattern.contains(['/', ':', '.']),
                "{}: {:?} is too short to be safe",
                p.id,
                p.pattern
            );
            assert_ne!(p.pattern.to_lowercase(), "bot", "{}", p.id);
        }
    }
    let matcher = Matcher::builtin(0.5);
    for text in [
        "Error: robot arm failed to calibrate",
        "TypeError: bot.reply is not a function",
        "about the bottom sheet",
    ] {
        assert!(!matcher.is_match(text), "{text:?} matched");
    }
}

/// Every built-in regex may be published: linear in a backtracking engine
/// such as JavaScript's, and no catch-all (`build.rs` refuses the build
/// otherwise; this says so where the rules' tests are read).
#[test]
fn every_regex_is_linear_and_no_catch_all() {
    for p in builtin_patterns().iter().filter(|p| p.kind == Kind::Regex) {
        if let Err(e) = validate_regex(p.pattern) {
            panic!("{}: {e}", p.id);
        }
    }
}
