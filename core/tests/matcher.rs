// Needs the core's `endpoint` feature (default), as the fixtures do.
#![cfg(feature = "endpoint")]
//! The matcher: semantics, attribution, response bodies, custom patterns, and
//! equality with the naive loop a user would write.
#![allow(clippy::unwrap_used)] // tests state their expectations by unwrapping

#[path = "support/eval.rs"]
mod eval;
mod support;
use noise_filter_core::{Event, Field, Kind, Matcher, MatcherPattern, builtin_patterns};
use proptest::prelude::*;
use support::World;

fn pattern(id: &str, text: &str, kind: Kind) -> MatcherPattern {
    MatcherPattern {
        id: id.into(),
        pattern: text.into(),
        kind,
        category: "other".into(),
        confidence: 0.9,
    }
}

/// The whole catalog: as patterns, compiled by the matcher, and compiled one
/// by one for the naive loop. Built once for all tests of this file.
struct Compiled {
    patterns: Vec<MatcherPattern>,
    matcher: Matcher,
    one_by_one: Vec<Option<regex::Regex>>,
}

static CATALOG: std::sync::LazyLock<Compiled> = std::sync::LazyLock::new(|| {
    let patterns: Vec<MatcherPattern> = builtin_patterns()
        .iter()
        .map(MatcherPattern::from)
        .collect();
    let one_by_one = patterns
        .iter()
        .map(|p| {
            (p.kind == Kind::Regex).then(|| {
                let rust = noise_filter_core::translate_regex(&p.pattern).unwrap();
                regex::RegexBuilder::new(&rust)
                    .case_insensitive(true)
                    .build()
                    .unwrap()
            })
        })
        .collect();
    Compiled {
        matcher: Matcher::new(patterns.clone()).unwrap(),
        patterns,
        one_by_one,
    }
});

/// What a user writes today: every pattern in turn, substrings through
/// `to_lowercase().contains`, regexes one by one.
fn naive(text: &str) -> Vec<String> {
    let lower = text.to_lowercase();
    let c = &*CATALOG;
    c.patterns
        .iter()
        .zip(&c.one_by_one)
        .filter(|(p, regex)| match regex {
            None => lower.contains(&p.pattern.to_lowercase()),
            Some(regex) => regex.is_match(text),
        })
        .map(|(p, _)| p.id.clone())
        .collect()
}

fn matched_ids(matcher: &Matcher, text: &str) -> Vec<String> {
    let verdict = matcher.classify(&Event {
        message: Some(text.into()),
        ..Default::default()
    });
    verdict.matches.iter().map(|m| m.id.to_owned()).collect()
}

#[test]
fn substring_matching_is_case_insensitive() {
    let m = Matcher::new([pattern("p", "Failed To Fetch", Kind::String)]).unwrap();
    assert!(m.is_match("TypeError: failed to fetch"));
    assert!(m.is_match("FAILED TO FETCH"));
    assert!(!m.is_match("failed to fetc"));
}

#[test]
fn substring_matching_lowercases_non_ascii_like_to_lower_case() {
    let m = Matcher::new([pattern("p", "ÉCHEC", Kind::String)]).unwrap();
    assert!(m.is_match("Erreur: échec du chargement"));
    assert!(m.is_match("ÉCHEC"));
}

#[test]
fn regex_matching_is_case_insensitive_and_anchored_as_written() {
    let m = Matcher::new([pattern("p", r"^Script error\.?$", Kind::Regex)]).unwrap();
    assert!(m.is_match("Script error."));
    assert!(m.is_match("script ERROR"));
    assert!(!m.is_match("Script error. at line 3"));
}

#[test]
fn regex_without_a_literal_is_case_insensitive_too() {
    // No literal every match must contain: runs outside the automaton.
    let m = Matcher::new([pattern("p", "^[a-z]{3}$", Kind::Regex)]).unwrap();
    assert!(m.is_match("abc"));
    assert!(m.is_match("ABC"));
    assert!(!m.is_match("ABCD"));
}

#[test]
fn regexes_with_non_ascii_literals_match_as_the_regex_does() {
    // Literals with non-ASCII letters are looked for in the lowercased text
    // (é, caseless scripts); a letter that lowercasing folds differently from
    // the regex (σ, whose orbit holds final ς) leaves its regex running on
    // every text. Either way, the answer is the regex's own.
    let sources = [
        "^(TypeError: )?(annulé|キャンセルしました|취소됨)$",
        "σφάλμα δικτύου",
        "ſtatus (ok|failed)",
    ];
    let m = Matcher::new(
        sources
            .iter()
            .enumerate()
            .map(|(i, s)| pattern(&format!("p{i}"), s, Kind::Regex)),
    )
    .unwrap();
    let one_by_one: Vec<regex::Regex> = sources
        .iter()
        .map(|s| {
            regex::RegexBuilder::new(s)
                .case_insensitive(true)
                .build()
                .unwrap()
        })
        .collect();
    for text in [
        "annulé",
        "ANNULÉ",
        "TypeError: AnNuLÉ",
        "annule",
        "x annulé",
        "キャンセルしました",
        "TypeError: 취소됨",
        "ΣΦΆΛΜΑ ΔΙΚΤΎΟΥ",
        "ςφάλμα δικτύου",
        "σφαλμα δικτυου",
        "STATUS FAILED",
        "ſtatus ok",
        "status unknown",
    ] {
        let expected = one_by_one.iter().any(|r| r.is_match(text));
        assert_eq!(m.is_match(text), expected, "{text}");
        assert_eq!(!matched_ids(&m, text).is_empty(), expected, "{text}");
    }
}

#[test]
fn each_text_of_an_event_is_matched_and_attributed() {
    let m = Matcher::new([
        pattern("ext", "chrome-extension://", Kind::String),
        pattern("bot", "Googlebot/", Kind::String),
        pattern("fetch", "TypeError: Failed to fetch", Kind::String),
    ])
    .unwrap();
    let event = Event {
        exception_type: Some("TypeError".into()),
        message: Some("Failed to fetch".into()),
        frames: vec![
            "https://app.example/a.js".into(),
            "chrome-extension://abc/inpage.js".into(),
        ],
        user_agent: Some("Mozilla/5.0 (compatible; Googlebot/2.1)".into()),
    };
    let verdict = m.classify(&event);
    assert!(verdict.noise);
    let got: Vec<(&str, Field)> = verdict.matches.iter().map(|m| (m.id, m.field)).collect();
    assert_eq!(
        got,
        [
            ("fetch", Field::Message),
            ("ext", Field::Frame(1)),
            ("bot", Field::UserAgent)
        ]
    );
    assert_eq!(verdict.matches[0].confidence, 0.9);
    let json = serde_json::to_value(&verdict).unwrap();
    assert_eq!(json["matches"][1]["field"], "frame");
    assert_eq!(json["matches"][1]["index"], 1);
    let indices: Vec<usize> = verdict.matches.iter().map(|m| m.index).collect();
    assert_eq!(indices, [2, 0, 1], "each pattern's index in the list");
    assert!(json["matches"][0].get("index").is_none(), "{json}");
}

#[test]
fn clean_event_is_not_noise() {
    let matcher = Matcher::builtin(0.5);
    let verdict = matcher.classify(&Event {
        exception_type: Some("TypeError".into()),
        message: Some("Cannot read properties of null (reading 'id')".into()),
        frames: vec!["https://shop.example.com/assets/cart-9f8e.js".into()],
        user_agent: Some("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36".into()),
    });
    assert!(!verdict.noise, "{:?}", verdict.matches);
    assert!(verdict.matches.is_empty());
}

#[test]
fn matcher_from_a_response_body_matches_like_the_catalog() {
    let mut world = World::new();
    let key = world.key("acme");
    world.custom(
        "acme",
        serde_json::json!([{"pattern": "acme-widget exploded"}]),
    );
    let a = Matcher::from_response(&world.get("/v1/filters", &key).body).unwrap();
    let b = Matcher::from_response(&world.get("/api/v1/filters", &key).body).unwrap();
    let builtin = Matcher::builtin(0.5);
    assert_eq!(a.patterns().len(), builtin.patterns().len() + 1);
    assert!(a.is_match("Error: ACME-WIDGET exploded again"));
    assert!(b.is_match("Error: ACME-WIDGET exploded again"));
    for e in eval::events() {
        for text in e.texts() {
            let from_a: Vec<_> = matched_ids(&a, text);
            let from_catalog: Vec<_> = matched_ids(&builtin, text);
            assert_eq!(from_a, from_catalog, "{text:?}");
        }
    }
}

/// `Matcher::builtin_default`, which every binding's `builtin` gives when no
/// threshold is passed, holds exactly the built-in patterns a request with no
/// `minConfidence` is served, in the same order and with the same fields.
#[test]
fn the_default_matcher_holds_what_the_endpoint_lists_by_default() {
    let mut world = World::new();
    let key = world.key("acme");
    let body = world
        .get("/v1/filters?includeCustom=false", &key)
        .body
        .into_owned();
    let served = Matcher::from_response(&body).unwrap();
    let default = Matcher::builtin_default();
    assert_eq!(default.patterns(), served.patterns());
    assert!(
        default.patterns().len() < Matcher::builtin(0.0).patterns().len(),
        "the default threshold leaves some built-in patterns out"
    );
    assert!(
        default
            .patterns()
            .iter()
            .all(|p| p.confidence >= noise_filter_core::DEFAULT_MIN_CONFIDENCE)
    );
}

#[test]
fn invalid_patterns_are_refused_with_the_reason() {
    let err = Matcher::new([pattern("bad", "(?<=x)y", Kind::Regex)]).unwrap_err();
    assert!(
        err.0.contains("bad") && err.0.contains("does not parse"),
        "{err}"
    );
    assert!(Matcher::from_response(b"{\"nope\":1}").is_err());
}

#[test]
fn catalog_plus_custom_patterns_compile_once() {
    let custom = noise_filter_core::CustomPattern {
        id: "custom-1".into(),
        pattern: r"acme-\d+ failed".into(),
        kind: Kind::Regex,
        category: None,
        confidence: 1.0,
        source: "test".into(),
        until: None,
    };
    let all = builtin_patterns()
        .iter()
        .map(MatcherPattern::from)
        .chain([MatcherPattern::from(&custom)]);
    let m = Matcher::new(all).unwrap();
    let verdict = m.classify(&Event {
        message: Some("ACME-42 failed".into()),
        ..Default::default()
    });
    assert_eq!(verdict.matches[0].id, "custom-1");
    assert_eq!(verdict.matches[0].category, "custom");
}

/// The automaton-and-prefilter matcher finds exactly what the naive loop
/// finds, on every text of the evaluation set, with the whole catalog.
#[test]
fn matcher_equals_naive_loop_on_the_evaluation_set() {
    let mut checked = 0;
    for e in eval::events() {
        for text in e.texts() {
            assert_eq!(matched_ids(&CATALOG.matcher, text), naive(text), "{text:?}");
            checked += 1;
        }
    }
    assert!(checked > 200);
}

/// Each match carries its pattern's index in `patterns()`: the pattern with
/// that id, category and confidence, in pattern order within a text, also
/// when ids repeat (a custom pattern with a built-in's id).
#[test]
fn every_match_carries_the_index_of_its_pattern() {
    let mut patterns = CATALOG.patterns.clone();
    let at = patterns
        .iter()
        .position(|p| p.kind == Kind::String)
        .unwrap();
    let first = patterns[at].clone();
    patterns.push(MatcherPattern {
        category: "mine".into(),
        confidence: 0.25,
        ..first.clone()
    });
    let matcher = Matcher::new(patterns).unwrap();
    let mut checked = 0;
    let mut events: Vec<Event> = eval::events().iter().map(|e| e.event()).collect();
    events.push(Event {
        message: Some(first.pattern.clone()),
        ..Event::default()
    });
    for event in &events {
        let verdict = matcher.classify(event);
        for pair in verdict.matches.windows(2) {
            if pair[0].field == pair[1].field {
                assert!(pair[0].index < pair[1].index, "{pair:?}");
            }
        }
        for m in &verdict.matches {
            let p = &matcher.patterns()[m.index];
            assert_eq!((p.id.as_str(), p.category.as_str()), (m.id, m.category));
            assert_eq!(p.confidence.to_bits(), m.confidence.to_bits());
            checked += 1;
        }
    }
    assert!(checked > 100, "{checked} matches");
    let last = matcher.classify(events.last().unwrap());
    let twins: Vec<usize> = (last.matches.iter())
        .filter(|m| m.id == first.id)
        .map(|m| m.index)
        .collect();
    assert_eq!(twins, [at, matcher.patterns().len() - 1]);
}

/// `is_noise` (stops at the first match) answers `classify(..).noise` on
/// every evaluation event, whole catalog and the service's default.
/// A batch as one JSON text answers each event as `is_noise` does, in
/// order; anything but an array of events in `Event`'s shape is refused
/// with the place and the reason.
#[test]
fn a_json_batch_answers_each_event_as_is_noise_does() {
    let events: Vec<Event> = eval::events().iter().map(|e| e.event()).collect();
    let json = serde_json::to_string(&events).unwrap();
    let want: Vec<bool> = events.iter().map(|e| CATALOG.matcher.is_noise(e)).collect();
    assert_eq!(CATALOG.matcher.is_noise_json(&json).unwrap(), want);
    assert!(want.contains(&true) && want.contains(&false));
    assert_eq!(
        CATALOG.matcher.is_noise_json("[]").unwrap(),
        Vec::<bool>::new()
    );
    assert_eq!(
        CATALOG
            .matcher
            .is_noise_json(r#"[{}, {"frames": ["chrome-extension://x/a.js"]}]"#)
            .unwrap(),
        [false, true]
    );
    for (bad, why) in [
        ("{}", "expected a sequence"),
        (r#"[{"message": 3}]"#, "expected a string"),
        (r#"[{"frames": "a.js"}]"#, "expected a sequence"),
        (r#"[{"user_agent": "x"}]"#, "unknown field `user_agent`"),
        ("[{}", "EOF"),
    ] {
        let refused = CATALOG.matcher.is_noise_json(bad).unwrap_err().to_string();
        assert!(
            refused.starts_with("events: ") && refused.contains(why),
            "{bad}: {refused}"
        );
    }
}

#[test]
fn is_noise_equals_classify_on_the_evaluation_set() {
    let default = Matcher::builtin(0.5);
    let (mut noise, mut clean) = (0, 0);
    for e in eval::events() {
        let event = e.event();
        for matcher in [&CATALOG.matcher, &default] {
            let verdict = matcher.classify(&event).noise;
            assert_eq!(matcher.is_noise(&event), verdict, "{event:?}");
            if verdict { noise += 1 } else { clean += 1 }
        }
    }
    assert!(noise > 100 && clean > 50, "{noise} noise, {clean} clean");
}

#[test]
fn is_noise_reads_every_text_and_the_type_with_the_message() {
    let m = Matcher::new([
        pattern("typed", "TypeError: boom", Kind::String),
        pattern("frame", r"^chrome-extension://", Kind::Regex),
        pattern("agent", "HeadlessChrome", Kind::String),
    ])
    .unwrap();
    let event = |t: Option<&str>, msg: Option<&str>, frames: &[&str], ua: Option<&str>| Event {
        exception_type: t.map(Into::into),
        message: msg.map(Into::into),
        frames: frames.iter().map(|f| (*f).into()).collect(),
        user_agent: ua.map(Into::into),
    };
    assert!(m.is_noise(&event(Some("TypeError"), Some("boom"), &[], None)));
    assert!(!m.is_noise(&event(None, Some("boom"), &[], None)));
    assert!(!m.is_noise(&event(Some("TypeError"), None, &[], None)));
    assert!(m.is_noise(&event(
        None,
        None,
        &["a.js", "CHROME-EXTENSION://x/y.js"],
        None
    )));
    assert!(!m.is_noise(&event(None, None, &["https://x/chrome-extension://"], None)));
    assert!(m.is_noise(&event(
        None,
        None,
        &[],
        Some("Mozilla/5.0 headlesschrome/1")
    )));
    assert!(!m.is_noise(&Event::default()));
    for e in [
        event(Some("TypeError"), Some("boom"), &[], None),
        event(None, None, &["a.js", "chrome-extension://x"], Some("ua")),
        event(Some(""), Some("TypeError: boom"), &[], None),
    ] {
        assert_eq!(m.is_noise(&e), m.classify(&e).noise, "{e:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

    /// Texts built from pieces of the catalog's own patterns (so matches are
    /// frequent), with case changes and noise around them.
    #[test]
    fn matcher_equals_naive_loop_on_generated_texts(
        picks in proptest::collection::vec((0usize..1000, any::<bool>(), "[ -~éÉİſK]{0,6}"), 1..4),
    ) {
        let patterns = &CATALOG.patterns;
        let mut text = String::new();
        for (i, upper, junk) in picks {
            let p = &patterns[i % patterns.len()].pattern;
            let piece: String = p.chars().filter(|c| !"^$\\?*+()[]{}|".contains(*c)).collect();
            text.push_str(&if upper { piece.to_uppercase() } else { piece });
            text.push_str(&junk);
        }
        let naive = naive(&text);
        prop_assert_eq!(CATALOG.matcher.is_match(&text), !naive.is_empty(), "{:?}", text);
        prop_assert_eq!(matched_ids(&CATALOG.matcher, &text), naive, "{:?}", text);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, failure_persistence: None, ..ProptestConfig::default() })]

    /// Substring sets whose literals crowd onto few prefixes (a two-letter
    /// alphabet, many sharing a start, some shorter than any prefix the
    /// matcher would cut, duplicates), over texts of the same letters in
    /// either case: every pattern that occurs is found, and no other.
    #[test]
    fn substrings_sharing_prefixes_match_as_the_naive_loop(
        literals in proptest::collection::vec("(goog|GOO|)[abAB]{1,6}", 1..40),
        text in "[abgoAGOB ]{0,40}",
    ) {
        let patterns: Vec<MatcherPattern> = literals
            .iter()
            .enumerate()
            .map(|(i, l)| pattern(&format!("p{i}"), l, Kind::String))
            .collect();
        let matcher = Matcher::new(patterns.clone()).unwrap();
        let lower = text.to_lowercase();
        let naive: Vec<String> = patterns
            .iter()
            .filter(|p| lower.contains(&p.pattern.to_lowercase()))
            .map(|p| p.id.clone())
            .collect();
        prop_assert_eq!(matcher.is_match(&text), !naive.is_empty(), "{:?}", text);
        prop_assert_eq!(matched_ids(&matcher, &text), naive, "{:?} in {:?}", literals, text);
    }
}
