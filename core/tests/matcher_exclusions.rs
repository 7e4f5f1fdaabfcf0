//! Exclusions: a matcher without the patterns an exclusion names gives, on
//! every event of the evaluation set, the verdicts of a matcher built from
//! the remaining patterns; refusals name the entry.
#![allow(clippy::unwrap_used)] // tests state their expectations by unwrapping

#[path = "support/eval.rs"]
mod eval;
use noise_filter_core::{Event, Exclusions, Kind, Matcher, MatcherPattern, builtin_patterns};

/// What Playwright's and Puppeteer's Chromium sends.
const HEADLESS: &str = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) \
                        HeadlessChrome/131.0.0.0 Safari/537.36";

fn headless_event() -> Event {
    Event {
        message: Some("TypeError: order.total is undefined".into()),
        user_agent: Some(HEADLESS.into()),
        ..Event::default()
    }
}

fn ids(matcher: &Matcher) -> Vec<&str> {
    matcher.patterns().iter().map(|p| p.id.as_str()).collect()
}

#[test]
fn a_headless_browser_is_bot_traffic_until_its_pattern_is_excluded() {
    let all = Matcher::builtin_default();
    let verdict = all.classify(&headless_event());
    let matched: Vec<&str> = verdict.matches.iter().map(|m| m.id).collect();
    assert_eq!(matched, ["headless-chrome"]);

    let without = Exclusions::default().with_ids(["headless-chrome"]).unwrap();
    let e2e = Matcher::builtin_excluding(0.5, &without);
    assert!(!e2e.is_noise(&headless_event()));
    assert_eq!(e2e.patterns().len(), all.patterns().len() - 1);
}

#[test]
fn builtin_excluding_holds_the_builtin_patterns_less_the_excluded_in_order() {
    let exclusions = Exclusions::default()
        .with_ids(["headless-chrome", "no-such-id"])
        .unwrap()
        .with_categories(["NETWORK_ISSUE", "known-library"])
        .unwrap();
    for min in [0.0, 0.5, 0.9] {
        let expected: Vec<&str> = builtin_patterns()
            .iter()
            .filter(|p| p.confidence >= min && p.id != "headless-chrome")
            .filter(|p| {
                !matches!(
                    p.category.name(noise_filter_core::Variant::A),
                    "network-issue" | "known-library"
                )
            })
            .map(|p| p.id)
            .collect();
        let matcher = Matcher::builtin_excluding(min, &exclusions);
        assert_eq!(ids(&matcher), expected, "min {min}");
        assert_eq!(
            ids(&Matcher::builtin(min).excluding(&exclusions)),
            expected,
            "min {min}"
        );
    }
}

#[test]
fn no_exclusion_changes_nothing() {
    let none = Exclusions::default();
    assert!(none.is_empty());
    assert_eq!(
        Matcher::builtin_excluding(0.5, &none).patterns(),
        Matcher::builtin_default().patterns()
    );
}

/// Every verdict of the excluding matcher is the one of a matcher built from
/// the remaining patterns, on the 400 evaluation events: leaving a category
/// out removes its matches and nothing else.
#[test]
fn verdicts_are_those_of_the_remaining_patterns() {
    let all = Matcher::builtin(0.0);
    for category in ["bot-traffic", "BROWSER_EXTENSION", "other"] {
        let exclusions = Exclusions::default().with_categories([category]).unwrap();
        let excluding = all.excluding(&exclusions);
        let remaining: Vec<MatcherPattern> = all
            .patterns()
            .iter()
            .zip(all.tags())
            .filter(|(p, tags)| !exclusions.excludes(p, **tags))
            .map(|(p, _)| p.clone())
            .collect();
        assert!(remaining.len() < all.patterns().len());
        let rebuilt = Matcher::new(remaining).unwrap();
        let mut removed = 0;
        for event in eval::events().iter().map(eval::LabelledEvent::event) {
            let expected = rebuilt.classify(&event);
            assert_eq!(excluding.classify(&event), expected, "{event:?}");
            assert_eq!(excluding.is_noise(&event), expected.noise, "{event:?}");
            removed += usize::from(all.is_noise(&event) && !expected.noise);
        }
        assert!(
            removed > 0,
            "excluding {category} changed no verdict of the evaluation set"
        );
    }
}

#[test]
fn an_accounts_patterns_are_excluded_by_their_id_or_category() {
    let own = |id: &str, category: &str| MatcherPattern {
        id: id.into(),
        pattern: format!("{id}.js"),
        kind: Kind::String,
        category: category.into(),
        confidence: 1.0,
    };
    let matcher = Matcher::new([
        own("custom-1", "custom"),
        own("custom-2", "bot-traffic"),
        own("custom-3", "OTHER"),
    ])
    .unwrap();
    let by_category = Exclusions::default()
        .with_categories(["custom", "other"])
        .unwrap();
    assert_eq!(ids(&matcher.excluding(&by_category)), ["custom-2"]);
    let by_id = Exclusions::default().with_ids(["custom-2"]).unwrap();
    assert_eq!(ids(&matcher.excluding(&by_id)), ["custom-1", "custom-3"]);
}

#[test]
fn refusals_name_the_entry() {
    let refused = Exclusions::default()
        .with_categories(["bot-traffic", "bots"])
        .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "exclude: categories[1]: `bots` is not a category (browser-extension, \
         third-party-script, bot-traffic, network-issue, known-library, other, custom, \
         or Variant B's spelling of one)"
    );
    let refused = Exclusions::default().with_ids(["a", ""]).unwrap_err();
    assert_eq!(refused.to_string(), "exclude: ids[1]: empty");
    // Case is part of the spelling, as in the endpoint's `categories`.
    assert!(
        Exclusions::default()
            .with_categories(["Bot-Traffic"])
            .is_err()
    );
}

/// A tag leaves out the built-ins with it, and only those: the link
/// previewers, not the rest of the bots; an unknown tag is refused. The
/// catalog's generic bot rules (tag `generic-bot`) still catch a previewer
/// whose user agent looks like any bot's, so letting previews through
/// takes both tags, and the named bots stay noise.
#[test]
fn a_tag_leaves_out_the_builtins_of_that_sub_kind() {
    let exclusions = Exclusions::default().with_tags(["social-preview"]).unwrap();
    let all = Matcher::builtin(0.0);
    let kept = Matcher::builtin_excluding(0.0, &exclusions);
    let tagged: Vec<&str> = builtin_patterns()
        .iter()
        .filter(|p| p.tags.contains("social-preview"))
        .map(|p| p.id)
        .collect();
    assert!(tagged.len() > 3, "{tagged:?}");
    let expected: Vec<&str> = all
        .patterns()
        .iter()
        .map(|p| p.id.as_str())
        .filter(|id| !tagged.contains(id))
        .collect();
    let got: Vec<&str> = kept.patterns().iter().map(|p| p.id.as_str()).collect();
    assert_eq!(got, expected);
    assert_eq!(all.excluding(&exclusions).patterns(), kept.patterns());

    let event = |ua: &str| Event {
        user_agent: Some(ua.into()),
        ..Event::default()
    };
    let slackbot = event("Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)");
    let twitterbot = event("Twitterbot/1.0");
    let googlebot =
        event("Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)");
    let ids = |matcher: &Matcher, e: &Event| -> Vec<String> {
        matcher
            .classify(e)
            .matches
            .into_iter()
            .map(|m| m.id.to_owned())
            .collect()
    };
    assert!(ids(&all, &slackbot).contains(&"slackbot-link-expanding".to_owned()));
    assert!(!ids(&kept, &slackbot).contains(&"slackbot-link-expanding".to_owned()));
    assert!(
        kept.is_noise(&slackbot),
        "a generic bot rule still catches it"
    );
    let previews = Matcher::builtin_excluding(
        0.0,
        &Exclusions::default()
            .with_tags(["social-preview", "generic-bot"])
            .unwrap(),
    );
    assert!(
        !previews.is_noise(&slackbot),
        "{:?}",
        previews.classify(&slackbot)
    );
    assert!(
        !previews.is_noise(&twitterbot),
        "{:?}",
        previews.classify(&twitterbot)
    );
    assert!(previews.is_noise(&googlebot), "the named bots stay noise");

    let refused = Exclusions::default()
        .with_tags(["social-previews"])
        .unwrap_err();
    assert!(
        refused
            .to_string()
            .starts_with("exclude: tags[0]: `social-previews` is not a tag"),
        "{refused}"
    );
}
