// Needs the core's `endpoint` feature (default), as the fixtures do.
#![cfg(feature = "endpoint")]
//! An account's exclusions of built-ins and the ends of its custom
//! patterns, as the endpoint applies them: what leaves an answer, when, and
//! what stays exactly as it was.
#![allow(clippy::unwrap_used)] // tests state their expectations by unwrapping

mod support;

use noise_filter_core::{
    Kind, NewExclusion, NewPattern, UnixMillis, admin, builtin_patterns, catalog_release,
};
use proptest::prelude::*;
use serde_json::Value;
use support::{World, ids, json};

fn by_id(id: &str) -> NewExclusion {
    NewExclusion {
        id: Some(id.to_owned()),
        ..NewExclusion::default()
    }
}

fn by_category(category: &str) -> NewExclusion {
    NewExclusion {
        category: Some(category.to_owned()),
        ..NewExclusion::default()
    }
}

fn exclude(world: &mut World, account: &str, exclusions: Vec<NewExclusion>) {
    let now = world.now;
    world
        .store
        .add_exclusions(account, exclusions, now)
        .unwrap();
}

/// `body` without the patterns `drop` says to leave out: what an answer
/// with those exclusions must be.
fn without(body: &Value, drop: impl Fn(&Value) -> bool) -> Value {
    let mut body = body.clone();
    let patterns = body["patterns"].as_array_mut().unwrap();
    patterns.retain(|p| !drop(p));
    body
}

/// A built-in substring and a built-in regex, listed by default.
fn a_string_and_a_regex() -> (&'static str, &'static str) {
    let string = builtin_patterns()
        .iter()
        .find(|p| p.kind == Kind::String && p.confidence >= 0.5)
        .unwrap();
    let regex = builtin_patterns()
        .iter()
        .find(|p| p.kind == Kind::Regex && p.confidence >= 0.5)
        .unwrap();
    (string.id, regex.id)
}

#[test]
fn an_excluded_id_leaves_both_variants_and_nothing_else_changes() {
    let (mut world, key) = support::acme();
    let other = world.key("other");
    let before_a = world.get("/v1/filters", &key);
    let before_b = world.get("/api/v1/filters", &key);
    let other_before = world.get("/v1/filters", &other);
    exclude(&mut world, "acme", vec![by_id("googlebot")]);

    let after_a = world.get("/v1/filters", &key);
    let after_b = world.get("/api/v1/filters", &key);
    for (before, after) in [(&before_a, &after_a), (&before_b, &after_b)] {
        assert_eq!(after.status, 200);
        assert!(ids(before).contains(&"googlebot".to_owned()));
        assert_eq!(
            json(after),
            without(&json(before), |p| p["id"] == "googlebot"),
            "only googlebot leaves; the shape and every other byte stay"
        );
        assert_ne!(after.header("etag"), before.header("etag"));
    }
    // The other account's answer keeps its bytes and its tag.
    let other_after = world.get("/v1/filters", &other);
    assert_eq!(other_after.body, other_before.body);
    assert_eq!(other_after.header("etag"), other_before.header("etag"));
}

#[test]
fn a_tag_exclusion_leaves_the_built_ins_of_that_sub_kind_and_keeps_the_rest_of_the_category() {
    // Slackbot's and the other link previews, without the rest of the bots.
    let (mut world, key) = support::acme();
    let tagged: Vec<&str> = builtin_patterns()
        .iter()
        .filter(|p| p.tags.contains("social-preview"))
        .map(|p| p.id)
        .collect();
    let before = world.get("/v1/filters", &key);
    let listed_before = ids(&before);
    assert!(
        tagged
            .iter()
            .filter(|id| listed_before.contains(&(**id).to_owned()))
            .count()
            > 2,
        "the default answer lists several link previewers"
    );
    exclude(
        &mut world,
        "acme",
        vec![NewExclusion {
            tag: Some("social-preview".into()),
            ..NewExclusion::default()
        }],
    );
    let after = world.get("/v1/filters", &key);
    assert_eq!(
        json(&after),
        without(&json(&before), |p| tagged
            .contains(&p["id"].as_str().unwrap())),
        "only the tagged built-ins leave"
    );
    assert!(
        ids(&after).contains(&"googlebot".to_owned()),
        "the rest of bot-traffic stays"
    );
    assert_ne!(after.header("etag"), before.header("etag"));
}

#[test]
fn a_regex_exclusion_leaves_variant_b_exactly_as_it_was() {
    let (mut world, key) = support::acme();
    let (_, regex) = a_string_and_a_regex();
    let before_b = world.get("/api/v1/filters", &key);
    let before_a = world.get("/v1/filters", &key);
    exclude(&mut world, "acme", vec![by_id(regex)]);
    let after_b = world.get("/api/v1/filters", &key);
    assert_eq!(after_b.body, before_b.body, "B lists no regex");
    assert_eq!(after_b.header("etag"), before_b.header("etag"));
    let after_a = world.get("/v1/filters", &key);
    assert_eq!(
        json(&after_a),
        without(&json(&before_a), |p| p["id"] == regex)
    );
}

#[test]
fn a_category_exclusion_turns_off_built_ins_not_the_accounts_own_patterns() {
    let (mut world, key) = support::acme();
    let before = world.get("/v1/filters", &key);
    exclude(&mut world, "acme", vec![by_category("BOT_TRAFFIC")]);
    let after = world.get("/v1/filters", &key);
    let expected = without(&json(&before), |p| {
        p["category"] == "bot-traffic" && !p["id"].as_str().unwrap().starts_with("custom-")
    });
    assert_eq!(json(&after), expected);
    assert!(
        ids(&after).contains(&"custom-3".to_owned()),
        "AcmeCrawler/ stays"
    );
    // The parameter and the exclusion together: nothing of the category
    // but the account's own.
    let only_bots = world.get("/api/v1/filters?categories=BOT_TRAFFIC", &key);
    assert_eq!(ids(&only_bots), ["custom-3"]);
}

#[test]
fn exclusions_apply_with_include_custom_false_too() {
    let (mut world, key) = support::acme();
    let target = "/api/v1/filters?includeCustom=false";
    let before = world.get(target, &key);
    exclude(&mut world, "acme", vec![by_id("googlebot")]);
    let after = world.get(target, &key);
    assert_eq!(
        json(&after),
        without(&json(&before), |p| p["id"] == "googlebot")
    );
    assert!(ids(&after).iter().all(|id| !id.starts_with("custom-")));
}

#[test]
fn an_account_without_exclusions_gets_the_answer_it_always_got() {
    // An account whose record holds only patterns reads the same record
    // bytes and gets the same answers as before exclusions existed: the
    // record is version 1, its layout unchanged (custom.rs).
    let (mut world, key) = support::acme();
    let record = admin::patterns_record("acme").unwrap();
    let stored = world.store.value(&record).unwrap().to_vec();
    assert!(stored.starts_with(b"nf-custom-patterns 1\n"));
    assert!(!String::from_utf8_lossy(&stored).contains("exclu"));
    // includeCustom=false now reads the record (for exclusions) and still
    // gets the catalog's own answer: the same bytes as an account with no
    // record at all.
    let none = world.key("nobody");
    let target = "/v1/filters?includeCustom=false";
    let with_record = world.get(target, &key);
    let without_record = world.get(target, &none);
    assert_eq!(with_record.body, without_record.body);
    assert_eq!(with_record.header("etag"), without_record.header("etag"));
}

#[test]
fn an_exclusion_ends_at_its_until_and_the_version_says_when() {
    let mut world = World::new();
    // 2027-01-10T12:00:00Z, after the catalog's release.
    world.now = UnixMillis(1_799_582_400_000);
    let key = world.key("acme");
    let plain = world.get("/v1/filters", &key);
    assert_eq!(json(&plain)["version"], catalog_release());
    exclude(
        &mut world,
        "acme",
        vec![NewExclusion {
            until: Some("2027-01-15".into()),
            ..by_id("googlebot")
        }],
    );
    let excluded = world.get("/v1/filters", &key);
    assert!(!ids(&excluded).contains(&"googlebot".to_owned()));
    assert_eq!(
        json(&excluded)["version"],
        "2027-01-10",
        "the day it was added"
    );
    // A millisecond before its end it still applies; from its end on the
    // built-in is back, the body otherwise as without the exclusion.
    world.now = UnixMillis(1_799_971_200_000 - 1);
    assert_eq!(world.get("/v1/filters", &key).body, excluded.body);
    world.now = UnixMillis(1_799_971_200_000);
    let ended = world.get("/v1/filters", &key);
    assert_eq!(json(&ended)["version"], "2027-01-15");
    let mut expected = json(&plain);
    expected["version"] = "2027-01-15".into();
    assert_eq!(json(&ended), expected);
    assert_ne!(ended.header("etag"), excluded.header("etag"));
}

#[test]
fn a_custom_pattern_is_served_until_its_end_and_its_etag_changes_then() {
    let mut world = World::new();
    world.now = UnixMillis(1_799_582_400_000); // 2027-01-10T12:00:00Z
    let key = world.key("acme");
    world.custom(
        "acme",
        serde_json::json!([
            {"pattern": "release 4.2 noise", "until": "2027-01-11T06:00:00Z"},
            {"pattern": "kept for good"}
        ]),
    );
    let served = world.get("/v1/filters?categories=custom", &key);
    assert_eq!(ids(&served), ["custom-1", "custom-2"]);
    assert_eq!(json(&served)["version"], "2027-01-10");
    let etag = served.header("etag").unwrap().to_owned();
    // A client that revalidates after the end gets the new list.
    world.now = UnixMillis(1_799_647_200_000); // 2027-01-11T06:00:00Z
    let auth = format!("Bearer {key}");
    let after = world.request(
        "GET",
        "/v1/filters?categories=custom",
        &[("authorization", &auth), ("if-none-match", &etag)],
    );
    assert_eq!(after.status, 200, "the end changed the answer");
    assert_eq!(ids(&after), ["custom-2"]);
    assert_eq!(json(&after)["version"], "2027-01-11");
    assert_ne!(after.header("etag"), Some(etag.as_str()));
    // The pattern stays in the record (listed with its end) until removed.
    let record = admin::patterns_record("acme").unwrap();
    let listed = admin::read_patterns(world.store.value(&record)).unwrap();
    assert_eq!(listed.patterns.len(), 2);
    assert_eq!(
        listed.patterns[0].until.map(|u| u.to_string()),
        Some("2027-01-11T06:00:00Z".into())
    );
}

#[test]
fn an_end_in_the_past_is_stored_and_never_served() {
    let (mut world, key) = support::acme();
    let now = world.now;
    world
        .store
        .add_patterns(
            "acme",
            vec![NewPattern {
                until: Some("2020-01-01".into()),
                ..NewPattern::string("long gone noise")
            }],
            now,
        )
        .unwrap();
    assert!(!ids(&world.get("/v1/filters", &key)).contains(&"custom-4".to_owned()));
}

#[test]
fn a_bad_until_is_refused_and_nothing_is_written() {
    let (mut world, _) = support::acme();
    let record = admin::patterns_record("acme").unwrap();
    let stored = world.store.value(&record).unwrap().to_vec();
    let now = world.now;
    let refused = world.store.add_patterns(
        "acme",
        vec![NewPattern {
            until: Some("next tuesday".into()),
            ..NewPattern::string("some noise")
        }],
        now,
    );
    let text = refused.unwrap_err().to_string();
    assert!(
        text.contains("until: \"next tuesday\" is not a date"),
        "{text}"
    );
    assert!(text.ends_with("nothing written"), "{text}");
    assert_eq!(world.store.value(&record).unwrap(), stored);
}

fn listed_by_default() -> Vec<&'static str> {
    builtin_patterns()
        .iter()
        .filter(|p| p.confidence >= 0.5)
        .map(|p| p.id)
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]

    /// Any set of ids excluded, with any threshold, in both variants: the
    /// answer is the one without exclusions less exactly those patterns,
    /// and its tag differs exactly when its bytes do.
    #[test]
    fn any_exclusions_leave_exactly_their_patterns_out(
        picks in proptest::collection::vec(any::<proptest::sample::Index>(), 1..40),
        min in prop_oneof![Just("0"), Just("0.5"), Just("0.9")],
        variant_b in any::<bool>(),
    ) {
        let all = listed_by_default();
        let excluded: Vec<&str> = picks.iter().map(|i| all[i.index(all.len())]).collect();
        let (mut world, key) = support::acme();
        let path = if variant_b { "/api/v1/filters" } else { "/v1/filters" };
        let target = format!("{path}?minConfidence={min}");
        let before = world.get(&target, &key);
        exclude(&mut world, "acme", excluded.iter().map(|id| by_id(id)).collect());
        let after = world.get(&target, &key);
        let expected = without(&json(&before), |p| excluded.iter().any(|id| p["id"] == *id));
        prop_assert_eq!(json(&after), expected);
        if after.body == before.body {
            // Every id excluded was below the threshold: the same answer,
            // the same tag (a client's cached copy stays good).
            prop_assert_eq!(after.header("etag"), before.header("etag"));
        } else {
            prop_assert_ne!(after.header("etag"), before.header("etag"));
        }
    }
}
