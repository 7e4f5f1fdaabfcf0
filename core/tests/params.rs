// Needs the core's `endpoint` feature (default), as the fixtures do.
#![cfg(feature = "endpoint")]
//! Query parameters: every bad value docs/CONTRACT.md lists gets a 400
//! naming the parameter; good values filter as it says.
#![allow(clippy::unwrap_used)] // tests state their expectations by unwrapping

mod support;
use noise_filter_core::{Category, Variant, builtin_patterns};
use support::{World, error_of, ids, json};

macro_rules! bad_params {
    ($($name:ident: $target:expr => $status:expr, $mentions:expr;)*) => {$(
        #[test]
        fn $name() {
            let mut world = World::new();
            let key = world.key("acme");
            let response = world.get($target, &key);
            assert_eq!(response.status, $status, "{}", String::from_utf8_lossy(&response.body));
            let error = error_of(&response);
            assert!(error.contains($mentions), "{error:?} should mention {:?}", $mentions);
            assert_eq!(response.header("cache-control"), Some("no-store"));
            assert!(response.header("ratelimit").is_some(), "authenticated: rate headers");
        }
    )*};
}

bad_params! {
    min_confidence_empty: "/v1/filters?minConfidence=" => 400, "minConfidence";
    min_confidence_nan: "/v1/filters?minConfidence=NaN" => 400, "minConfidence";
    min_confidence_inf: "/v1/filters?minConfidence=inf" => 400, "minConfidence";
    min_confidence_plus: "/v1/filters?minConfidence=%2B0.5" => 400, "minConfidence";
    min_confidence_leading_blank: "/v1/filters?minConfidence=%200.5" => 400, "minConfidence";
    min_confidence_trailing_blank: "/v1/filters?minConfidence=0.5+" => 400, "minConfidence";
    min_confidence_above_one: "/v1/filters?minConfidence=1.01" => 400, "minConfidence";
    min_confidence_negative: "/v1/filters?minConfidence=-0.1" => 400, "minConfidence";
    min_confidence_word: "/v1/filters?minConfidence=high" => 400, "minConfidence";
    min_confidence_leading_dot: "/v1/filters?minConfidence=.5" => 400, "minConfidence";
    min_confidence_trailing_dot: "/v1/filters?minConfidence=1." => 400, "minConfidence";
    min_confidence_leading_zero: "/v1/filters?minConfidence=00.5" => 400, "minConfidence";
    min_confidence_huge_exponent: "/v1/filters?minConfidence=1e400" => 400, "minConfidence";
    min_confidence_hex: "/v1/filters?minConfidence=0x1" => 400, "minConfidence";
    min_confidence_twice: "/v1/filters?minConfidence=0.5&minConfidence=0.6" => 400, "minConfidence";
    include_custom_yes: "/v1/filters?includeCustom=yes" => 400, "includeCustom";
    include_custom_one: "/v1/filters?includeCustom=1" => 400, "includeCustom";
    include_custom_empty: "/v1/filters?includeCustom=" => 400, "includeCustom";
    include_custom_twice: "/v1/filters?includeCustom=true&includeCustom=true" => 400, "includeCustom";
    category_unknown: "/v1/filters?categories=malware" => 400, "malware";
    category_b_spelling_on_a: "/v1/filters?categories=BOT_TRAFFIC" => 400, "bot-traffic";
    category_a_spelling_on_b: "/api/v1/filters?categories=bot-traffic" => 400, "BOT_TRAFFIC";
    category_wrong_case_on_a: "/v1/filters?categories=Bot-Traffic" => 400, "categories";
    category_custom_on_b: "/api/v1/filters?categories=custom" => 400, "categories";
    category_empty_value: "/v1/filters?categories=" => 400, "categories";
    category_empty_item: "/v1/filters?categories=bot-traffic,,other" => 400, "categories";
    category_trailing_comma: "/v1/filters?categories=bot-traffic," => 400, "categories";
    category_blank_item: "/v1/filters?categories=bot-traffic,%20" => 400, "categories";
    category_padded_item: "/v1/filters?categories=%20bot-traffic" => 400, "categories";
    categories_twice: "/v1/filters?categories=other&categories=other" => 400, "categories";
    seventeen_categories: "/v1/filters?categories=other,other,other,other,other,other,other,other,other,other,other,other,other,other,other,other,other" => 400, "at most 16";
}

#[test]
fn query_over_2_kib_is_414() {
    let mut world = World::new();
    let key = world.key("acme");
    let target = format!("/v1/filters?x={}", "a".repeat(2047));
    let response = world.get(&target, &key);
    assert_eq!(response.status, 414);
    assert!(error_of(&response).contains("2048"));
    // Exactly 2 KiB is accepted.
    let target = format!("/v1/filters?x={}", "a".repeat(2046));
    assert_eq!(world.get(&target, &key).status, 200);
}

#[test]
fn sixteen_categories_are_accepted() {
    let mut world = World::new();
    let key = world.key("acme");
    let target = format!("/v1/filters?categories={}", vec!["other"; 16].join(","));
    assert_eq!(world.get(&target, &key).status, 200);
}

#[test]
fn unknown_parameters_are_ignored() {
    let mut world = World::new();
    let key = world.key("acme");
    let plain = world.get("/v1/filters", &key);
    let extra = world.get("/v1/filters?utm_source=x&MinConfidence=0.9&foo", &key);
    assert_eq!(extra.status, 200);
    assert_eq!(extra.body, plain.body);
}

#[test]
fn json_number_spellings_of_the_threshold_are_equal() {
    let mut world = World::new();
    let key = world.key("acme");
    let half = world.get("/v1/filters?minConfidence=0.5", &key).body;
    for spelling in ["5e-1", "5E-1", "0.50", "50e-2", "0.5e0"] {
        let response = world.get(&format!("/v1/filters?minConfidence={spelling}"), &key);
        assert_eq!(response.status, 200, "{spelling}");
        assert_eq!(response.body, half, "{spelling}");
    }
    for edge in ["0", "1", "-0", "0.0", "1.0", "1e0"] {
        assert_eq!(
            world
                .get(&format!("/v1/filters?minConfidence={edge}"), &key)
                .status,
            200,
            "{edge}"
        );
    }
}

#[test]
fn include_custom_is_case_insensitive() {
    let mut world = World::new();
    let key = world.key("acme");
    for value in ["true", "TRUE", "True", "false", "FALSE", "fAlSe"] {
        assert_eq!(
            world
                .get(&format!("/v1/filters?includeCustom={value}"), &key)
                .status,
            200
        );
    }
}

#[test]
fn default_is_all_categories_at_half_with_custom() {
    let mut world = World::new();
    let key = world.key("acme");
    world.custom(
        "acme",
        serde_json::json!([{"pattern": "acme-widget-noise"}]),
    );
    let response = world.get("/v1/filters", &key);
    let listed = ids(&response);
    let expected: Vec<String> = builtin_patterns()
        .iter()
        .filter(|p| p.confidence >= 0.5)
        .map(|p| p.id.to_owned())
        .chain(["custom-1".to_owned()])
        .collect();
    assert_eq!(listed, expected);
    let categories: std::collections::BTreeSet<String> = json(&response)["patterns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["category"].as_str().unwrap().to_owned())
        .collect();
    for c in Category::ALL {
        if builtin_patterns()
            .iter()
            .any(|p| p.category == c && p.confidence >= 0.5)
        {
            assert!(
                categories.contains(c.name(Variant::A)),
                "{c:?} present by default"
            );
        }
    }
}

#[test]
fn one_category_restricts_the_list() {
    let mut world = World::new();
    let key = world.key("acme");
    let body = json(&world.get("/v1/filters?categories=bot-traffic", &key));
    let patterns = body["patterns"].as_array().unwrap();
    assert!(!patterns.is_empty());
    assert!(patterns.iter().all(|p| p["category"] == "bot-traffic"));
}

#[test]
fn two_categories_restrict_the_list_in_both_variants() {
    let mut world = World::new();
    let key = world.key("acme");
    for (variant, target) in [
        (
            Variant::A,
            "/v1/filters?categories=network-issue,browser-extension",
        ),
        (
            Variant::B,
            "/api/v1/filters?categories=NETWORK_ISSUE,BROWSER_EXTENSION",
        ),
    ] {
        let body = json(&world.get(target, &key));
        let names: std::collections::BTreeSet<&str> = body["patterns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["category"].as_str().unwrap())
            .collect();
        let want: std::collections::BTreeSet<&str> = [
            Category::NetworkIssue.name(variant),
            Category::BrowserExtension.name(variant),
        ]
        .into();
        assert_eq!(names, want, "{variant:?}");
    }
}

#[test]
fn custom_category_on_a_selects_uncategorised_custom_patterns() {
    let mut world = World::new();
    let key = world.key("acme");
    world.custom(
        "acme",
        serde_json::json!([{"pattern": "widget-noise"}, {"pattern": "crawler-x/", "category": "bot-traffic"}]),
    );
    assert_eq!(
        ids(&world.get("/v1/filters?categories=custom", &key)),
        ["custom-1"]
    );
    // With includeCustom=false that is simply an empty list.
    let empty = world.get("/v1/filters?categories=custom&includeCustom=false", &key);
    assert_eq!(empty.status, 200);
    assert!(ids(&empty).is_empty());
    // A custom pattern with a category of its own is listed under it.
    let bots = ids(&world.get("/v1/filters?categories=bot-traffic", &key));
    assert_eq!(bots.last().map(String::as_str), Some("custom-2"));
    // Variant B shows uncategorised custom patterns as OTHER.
    let other = json(&world.get("/api/v1/filters?categories=OTHER&minConfidence=1", &key));
    let custom: Vec<_> = other["patterns"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["id"] == "custom-1")
        .collect();
    assert_eq!(custom.len(), 1);
    assert_eq!(custom[0]["category"], "OTHER");
}

#[test]
fn include_custom_false_leaves_custom_patterns_out() {
    let mut world = World::new();
    let key = world.key("acme");
    world.custom("acme", serde_json::json!([{"pattern": "widget-noise"}]));
    let with = ids(&world.get("/v1/filters", &key));
    let without = ids(&world.get("/v1/filters?includeCustom=false", &key));
    assert!(with.contains(&"custom-1".to_owned()));
    assert!(!without.contains(&"custom-1".to_owned()));
    assert_eq!(with.len(), without.len() + 1);
}

#[test]
fn threshold_is_inclusive_at_the_boundary() {
    let mut world = World::new();
    let key = world.key("acme");
    // One request per distinct confidence (not per pattern: the catalog has
    // more patterns than a key's per-minute quota), every pattern checked.
    let mut confidences: Vec<f64> = builtin_patterns().iter().map(|p| p.confidence).collect();
    confidences.sort_by(f64::total_cmp);
    confidences.dedup();
    for confidence in confidences {
        let at = ids(&world.get(&format!("/v1/filters?minConfidence={confidence}"), &key));
        let above = (confidence < 1.0).then(|| {
            ids(&world.get(
                &format!("/v1/filters?minConfidence={}", confidence + 0.001),
                &key,
            ))
        });
        for p in builtin_patterns()
            .iter()
            .filter(|p| p.confidence == confidence)
        {
            assert!(
                at.contains(&p.id.to_owned()),
                "{} listed at its own confidence {confidence}",
                p.id
            );
            if let Some(listed) = &above {
                assert!(
                    !listed.contains(&p.id.to_owned()),
                    "{} not listed above {confidence}",
                    p.id
                );
            }
        }
    }
}

#[test]
fn high_threshold_returns_only_confident_patterns() {
    let mut world = World::new();
    let key = world.key("acme");
    let body = json(&world.get("/v1/filters?minConfidence=0.95", &key));
    let patterns = body["patterns"].as_array().unwrap();
    assert!(
        patterns
            .iter()
            .all(|p| p["confidence"].as_f64().unwrap() >= 0.95)
    );
    let expected = builtin_patterns()
        .iter()
        .filter(|p| p.confidence >= 0.95)
        .count();
    assert_eq!(patterns.len(), expected);
}

#[test]
fn low_threshold_shows_patterns_below_half() {
    let mut world = World::new();
    let key = world.key("acme");
    let low = builtin_patterns()
        .iter()
        .filter(|p| p.confidence < 0.5)
        .count();
    assert!(low > 0, "the catalog has patterns below 0.5");
    let all = ids(&world.get("/v1/filters?minConfidence=0", &key));
    let default = ids(&world.get("/v1/filters", &key));
    assert_eq!(all.len(), default.len() + low);
}

#[test]
fn percent_encoded_comma_is_a_separator() {
    let mut world = World::new();
    let key = world.key("acme");
    let a = world.get("/v1/filters?categories=bot-traffic%2Cother", &key);
    let b = world.get("/v1/filters?categories=bot-traffic,other", &key);
    assert_eq!(a.status, 200);
    assert_eq!(a.body, b.body);
}
