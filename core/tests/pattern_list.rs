//! Reading pattern lists (`pattern_list`): defaults, and the refusals every
//! shell gives (the npm package reads JavaScript values with the same
//! reader; its tests hold the texts there).
#![allow(clippy::unwrap_used)] // tests state their expectations by unwrapping

use noise_filter_core::pattern_list::{read_patterns, read_response};
use noise_filter_core::{Kind, Matcher, MatcherPattern};
use serde_json::json;

fn patterns(list: &serde_json::Value) -> Result<Vec<MatcherPattern>, String> {
    read_patterns(&Some(list)).map_err(|e| e.0)
}

fn response(body: &str) -> Result<Vec<MatcherPattern>, String> {
    Matcher::from_response(body.as_bytes())
        .map(|m| m.patterns().to_vec())
        .map_err(|e| e.0)
}

#[test]
fn absent_fields_take_their_defaults() {
    let read = patterns(&json!([
        {"id": "a", "pattern": "bcd"},
        {"id": "b", "pattern": "^x$", "type": "regex", "category": "mine", "confidence": 0.25, "extra": 1},
    ]))
    .unwrap();
    assert_eq!(
        read,
        [
            MatcherPattern {
                id: "a".into(),
                pattern: "bcd".into(),
                kind: Kind::String,
                category: String::new(),
                confidence: 1.0,
            },
            MatcherPattern {
                id: "b".into(),
                pattern: "^x$".into(),
                kind: Kind::Regex,
                category: "mine".into(),
                confidence: 0.25,
            },
        ]
    );
}

#[test]
fn a_pattern_list_is_refused_with_the_place_and_the_reason() {
    let cases = [
        (
            json!({"id": "a"}),
            "expected a list of patterns, found an object",
        ),
        (json!("x"), "expected a list of patterns, found a string"),
        (json!([null]), "patterns[0]: expected an object, found null"),
        (
            json!([{"id": "a", "pattern": "x"}, ["a", "x"]]),
            "patterns[1]: expected an object, found a list",
        ),
        (
            json!([{"pattern": "no id"}]),
            "patterns[0]: missing field `id`",
        ),
        (json!([{"id": "a"}]), "patterns[0]: missing field `pattern`"),
        (
            json!([{"id": 5, "pattern": "x"}]),
            "patterns[0].id: expected a string, found a number",
        ),
        (
            json!([{"id": "a", "pattern": null}]),
            "patterns[0].pattern: expected a string, found null",
        ),
        (
            json!([{"id": "a", "pattern": "x", "type": "glob"}]),
            "patterns[0].type: expected `string` or `regex`, found `glob`",
        ),
        (
            json!([{"id": "a", "pattern": "x", "type": true}]),
            "patterns[0].type: expected a string, found a boolean",
        ),
        (
            json!([{"id": "a", "pattern": "x", "category": 3}]),
            "patterns[0].category: expected a string, found a number",
        ),
        (
            json!([{"id": "a", "pattern": "x", "confidence": "0.5"}]),
            "patterns[0].confidence: expected a finite number, found a string",
        ),
    ];
    for (list, reason) in cases {
        assert_eq!(
            patterns(&list).unwrap_err(),
            format!("invalid pattern: {reason}"),
            "{list}"
        );
    }
}

#[test]
fn a_response_body_is_refused_with_the_place_and_the_reason() {
    let cases = [
        ("null", "expected an object with `patterns`, found null"),
        ("[]", "expected an object with `patterns`, found a list"),
        (r#"{"error":"Invalid API key"}"#, "missing field `patterns`"),
        (
            r#"{"patterns":{}}"#,
            "expected a list of patterns, found an object",
        ),
        (
            r#"{"patterns":[5]}"#,
            "patterns[0]: expected an object, found a number",
        ),
        (
            r#"{"patterns":[{"id":"a"}]}"#,
            "patterns[0]: missing field `pattern`",
        ),
    ];
    for (body, reason) in cases {
        assert_eq!(
            response(body).unwrap_err(),
            format!("not a pattern list response: {reason}"),
            "{body}"
        );
    }
    let syntax = response("nope").unwrap_err();
    assert!(
        syntax.starts_with("not a pattern list response: expected"),
        "{syntax}"
    );
    assert_eq!(
        read_response(&Some(&json!({"patterns": []}))).unwrap(),
        [],
        "an empty list is a list"
    );
}

#[test]
fn what_the_reader_accepts_the_matcher_still_validates() {
    let err =
        Matcher::from_response(br#"{"patterns":[{"id":"x","pattern":"a(?=b)","type":"regex"}]}"#)
            .unwrap_err();
    assert!(err.0.starts_with("pattern x: "), "{err}");
    let err = Matcher::from_response(br#"{"patterns":[{"id":"e","pattern":""}]}"#).unwrap_err();
    assert_eq!(err.0, "pattern e: empty");
}
