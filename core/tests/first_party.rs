//! The first-party ("not our code") rule: an event whose placed frames are
//! all outside the application's origins and path prefixes is noise, its
//! verdict naming the rule as a pattern match; one own frame keeps it; no
//! frame is never noise by it; off unless given.
#![allow(clippy::unwrap_used)] // tests state their expectations by unwrapping

use noise_filter_core::{
    Event, Exclusions, FIRST_PARTY_RULE_ID, Field, FirstParty, Matcher, MatcherPattern,
    builtin_patterns,
};

const APP: &str = "https://shop.example.com";

fn rule() -> FirstParty {
    FirstParty::new(vec![APP.into()], vec!["/srv/shop/".into()]).unwrap()
}

/// A message no built-in pattern matches, so only the rule can call it noise.
fn event(frames: &[&str]) -> Event {
    Event {
        exception_type: Some("TypeError".into()),
        message: Some("cart.items is undefined".into()),
        frames: frames.iter().map(|f| (*f).to_owned()).collect(),
        user_agent: None,
    }
}

/// No patterns: what the rule alone decides (the catalog itself matches
/// some of these frames, `webkit-masked-url://` and extension URLs among them).
fn no_patterns() -> Matcher {
    Matcher::new(Vec::<MatcherPattern>::new()).unwrap()
}

fn matcher() -> Matcher {
    no_patterns().with_first_party(rule())
}

#[test]
fn every_frame_elsewhere_is_third_party_script_named_by_the_rule() {
    let matcher = matcher();
    for frames in [
        &["webkit-masked-url://hidden/", "<anonymous>"][..],
        &["app:///ytag.js", "app:///inject.bundle.js"],
        &["https://cdn.injected.example/7f3a9c1e-2b4d-4e6f-8a0b-1c2d3e4f5a6b.js"],
        &[
            "chrome-extension://abcdefghijklmnopabcdefghijklmnop/content.js",
            "native",
        ],
        &["moz-extension://2f1c0a9e-1d2b-4c3d-8e9f-0a1b2c3d4e5f/inject.js"],
        &["safari-web-extension://2F1C0A9E-1D2B/content.js"],
    ] {
        let e = event(frames);
        assert!(matcher.is_noise(&e), "{frames:?}");
        let verdict = matcher.classify(&e);
        assert!(verdict.noise);
        let rule = verdict.matches.last().unwrap();
        assert_eq!(rule.id, FIRST_PARTY_RULE_ID);
        assert_eq!(rule.category, "third-party-script");
        assert_eq!(rule.confidence, 1.0);
        assert!(rule.tags.is_empty());
        assert_eq!(rule.index, matcher.patterns().len());
        // The last placed frame (Sentry's innermost): a frame without a
        // place after it is not the one reported.
        let last_placed = frames.iter().rposition(|f| f.contains("://")).unwrap();
        assert_eq!(rule.field, Field::Frame(last_placed), "{frames:?}");
        assert_eq!(
            verdict
                .matches
                .iter()
                .filter(|m| m.id == FIRST_PARTY_RULE_ID)
                .count(),
            1
        );
    }
}

#[test]
fn one_own_frame_anywhere_keeps_the_event() {
    let matcher = matcher();
    for frames in [
        &[
            "https://cdn.injected.example/x.js",
            "https://shop.example.com/assets/app.js",
        ][..],
        &[
            "https://shop.example.com/assets/app.js",
            "https://cdn.jquery.example/jquery.min.js",
        ],
        &[
            "HTTPS://SHOP.EXAMPLE.COM:443/app.js",
            "webkit-masked-url://hidden/",
        ],
        &["/usr/lib/python3.12/json/decoder.py", "/srv/shop/views.py"],
    ] {
        let e = event(frames);
        assert!(!matcher.is_noise(&e), "{frames:?}");
        assert!(!matcher.classify(&e).noise, "{frames:?}");
    }
}

#[test]
fn no_frames_or_no_placed_frame_is_never_noise_by_the_rule() {
    let matcher = matcher();
    for frames in [
        &[][..],
        &["<anonymous>", "native", "[native code]", ""],
        &[
            "node:internal/process/task_queues",
            "resource://gre/modules/x.sys.mjs",
        ],
    ] {
        let e = event(frames);
        assert!(!matcher.is_noise(&e), "{frames:?}");
        assert_eq!(matcher.classify(&e).matches, [], "{frames:?}");
    }
}

#[test]
fn off_unless_given() {
    let e = event(&[
        "https://cdn.injected.example/x.js",
        "app:///inject.bundle.js",
    ]);
    for plain in [no_patterns(), Matcher::builtin_default()] {
        assert!(!plain.is_noise(&e));
        assert!(plain.first_party().is_none());
    }
    assert!(matcher().is_noise(&e));
    assert!(
        Matcher::builtin_default()
            .with_first_party(rule())
            .is_noise(&e)
    );
}

#[test]
fn the_rule_adds_to_pattern_matches_after_them() {
    let matcher = Matcher::builtin_default().with_first_party(rule());
    let e = Event {
        frames: vec!["chrome-extension://abcdefghijklmnopabcdefghijklmnop/content.js".into()],
        ..Event::default()
    };
    let verdict = matcher.classify(&e);
    let ids: Vec<&str> = verdict.matches.iter().map(|m| m.id).collect();
    assert!(ids.len() >= 2, "{ids:?}");
    assert_eq!(ids.last(), Some(&FIRST_PARTY_RULE_ID));
    assert!(
        verdict.matches[..ids.len() - 1]
            .iter()
            .all(|m| m.index < matcher.patterns().len())
    );
    assert_eq!(
        serde_json::to_value(verdict.matches.last().unwrap()).unwrap(),
        serde_json::json!({"id": "first-party-rule", "category": "third-party-script",
                           "tags": [], "confidence": 1.0, "field": "frame", "index": 0})
    );
}

#[test]
fn batches_and_exclusions_keep_the_rule() {
    let matcher = matcher();
    let batch = r#"[{"frames":["webkit-masked-url://hidden/"]},
                    {"frames":["https://shop.example.com/app.js"]},{}]"#;
    assert_eq!(matcher.is_noise_json(batch).unwrap(), [true, false, false]);
    let narrowed = matcher.excluding(
        &Exclusions::default()
            .with_categories(["bot-traffic"])
            .unwrap(),
    );
    assert_eq!(narrowed.first_party(), Some(&rule()));
    assert!(narrowed.is_noise(&event(&["webkit-masked-url://hidden/"])));
}

#[test]
fn the_rule_id_is_no_catalog_pattern_id() {
    assert!(
        builtin_patterns()
            .iter()
            .all(|p| p.id != FIRST_PARTY_RULE_ID)
    );
}
