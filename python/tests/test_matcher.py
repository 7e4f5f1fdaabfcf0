"""The matcher's Python surface, and bad input."""

from __future__ import annotations

import pytest

from noise_filter import Event, Matcher, Pattern, Refusal

ETHEREUM = {"type": "TypeError", "message": "Cannot redefine property: ethereum",
            "frames": ["chrome-extension://abc/inpage.js"]}


def test_builtin_catalog_classifies_and_says_which_text() -> None:
    m = Matcher.builtin()
    verdict = m.classify(ETHEREUM)
    assert verdict.noise and m.is_noise(ETHEREUM)
    fields = {(x.field, x.index) for x in verdict.matches}
    assert ("message", None) in fields and ("frame", 0) in fields
    clean = Event(message="ValueError: invoice total is negative",
                  frames=["https://app.example.com/main.js"])
    assert not m.is_noise(clean) and m.classify(clean).matches == []


def test_min_confidence_narrows_the_catalog() -> None:
    assert len(Matcher.builtin(0.9).patterns) < len(Matcher.builtin(0.0).patterns)


def test_patterns_round_trip_in_order() -> None:
    pats = [Pattern(id="a", pattern="widget.js"),
            Pattern(id="b", pattern=r"^Boom \d+$", type="regex", category="custom",
                    confidence=0.5)]
    m = Matcher.from_patterns(pats)
    assert m.patterns == pats
    assert m.classify({"message": "boom 12"}).to_dict()["matches"][0]["id"] == "b"


def test_a_regex_outside_the_subset_is_refused_with_the_cores_text() -> None:
    with pytest.raises(Refusal, match="pattern bad: .*look-around"):
        Matcher.from_patterns([{"id": "bad", "pattern": "(?<=x)y", "type": "regex"}])
    with pytest.raises(Refusal, match="empty"):
        Matcher.from_patterns([{"id": "e", "pattern": ""}])
    with pytest.raises(Refusal, match="not a pattern list"):
        Matcher.from_response(b"<html>")


@pytest.mark.parametrize("event, why", [
    ({"message": 3}, "message must be a str"),
    ({"frames": "app.js"}, "sequence of str"),
    ({"frames": ["a.js", None]}, r"frames\[1\]"),
    ({"msg": "x"}, "unknown event fields: msg"),
    # A str is a message now (issue 29); other values are still refused.
    (42, "an event is an Event, a dict"),
])
def test_a_malformed_event_is_a_type_error_and_the_matcher_still_works(event, why) -> None:
    m = Matcher.builtin()
    with pytest.raises(TypeError, match=why):
        m.is_noise(event)
    with pytest.raises(TypeError, match=why):
        m.classify(event)
    with pytest.raises(TypeError, match=why):
        m.is_noise_many([ETHEREUM, event])
    assert m.is_noise(ETHEREUM)
    assert m.is_noise_many([ETHEREUM]) == [True]


def test_a_batch_answers_each_event_in_order() -> None:
    m = Matcher.builtin()
    clean = Event(message="ValueError: invoice total is negative",
                  frames=("https://app.example.com/main.js",), user_agent="Mozilla/5.0")
    escaped = {"message": 'Quote " backslash \\ tab \t and é 已取消 \u2028',
               "frames": ["chrome-extension://abc/inpage.js"]}
    batch = [clean, ETHEREUM, {}, escaped, clean]
    assert m.is_noise_many(batch) == [False, True, False, True, False]
    assert m.is_noise_many(batch) == [m.is_noise(e) for e in batch]
    assert m.is_noise_many([]) == []
    assert m.is_noise_many(iter([ETHEREUM])) == [True]


def test_bad_pattern_fields_are_type_errors() -> None:
    with pytest.raises(ValueError, match="'string' or 'regex'"):
        Matcher.from_patterns([{"id": "x", "pattern": "y", "type": "glob"}])
    with pytest.raises(TypeError, match="confidence"):
        Matcher.from_patterns([{"id": "x", "pattern": "y", "confidence": "high"}])


def test_a_closed_matcher_says_so() -> None:
    m = Matcher.builtin()
    m.close()
    with pytest.raises(ValueError, match="closed"):
        m.is_noise(ETHEREUM)


def test_non_ascii_texts_cross_intact() -> None:
    m = Matcher.from_patterns([{"id": "fr", "pattern": "échec de chargement"}])
    assert m.is_noise({"message": "ÉCHEC DE CHARGEMENT du module"})


def test_a_matcher_collected_in_a_reference_cycle_is_freed_and_the_next_call_works() -> None:
    """A traceback holding a frame that holds a matcher is such a cycle
    (sentry-sdk keeps them); the collector finalises its objects in any order."""
    import gc

    for _ in range(3):
        m = Matcher.from_patterns([{"id": "boom", "pattern": "boom"}])
        m.cycle = m  # type: ignore[attr-defined]
        del m
        gc.collect()
        assert Matcher.builtin().is_noise({"message": "Script error."})


def test_the_former_name_kind_still_works_with_a_warning() -> None:
    with pytest.warns(DeprecationWarning, match="type"):
        old = Pattern(id="b", pattern=r"^Boom \d+$", kind="regex")
    assert old == Pattern(id="b", pattern=r"^Boom \d+$", type="regex")
    with pytest.warns(DeprecationWarning, match="type"):
        assert old.kind == "regex"
    m = Matcher.from_patterns([{"id": "k", "pattern": "x+y", "kind": "regex"}])
    assert m.patterns[0].type == "regex"


def test_a_str_an_exception_and_a_sentry_event_are_read() -> None:
    m = Matcher.builtin()
    assert m.is_noise("Script error.") and not m.is_noise("invoice total is negative")
    try:
        raise TypeError("Cannot redefine property: ethereum")
    except TypeError as error:
        assert m.classify(error).matches[0].field == "message"
    sentry_event = {"event_id": "1", "level": "error", "breadcrumbs": {"values": []},
                    "contexts": {"os": {"name": "Linux"}},
                    "exception": {"values": [{"type": "Error", "value": "boom", "stacktrace": {
                        "frames": [{"filename": "chrome-extension://abc/inpage.js"}]}}]}}
    assert m.is_noise(sentry_event)
    assert m.is_noise_many(["Script error.", sentry_event, "invoice total is negative"]) == [
        True, True, False]


FIRST_PARTY = {"origins": ["https://shop.example.com"], "paths": ["/srv/shop/"]}
INJECTED = Event(exception_type="TypeError", message="cart.items is undefined",
                 frames=["https://cdn.injected.example/7f3a9c1e.js", "<anonymous>",
                         "app:///inject.bundle.js", "native"])


def test_first_party_every_frame_elsewhere_is_noise_named_by_the_rule() -> None:
    plain = Matcher.builtin()
    assert not plain.is_noise(INJECTED), "off unless given"
    rule = Matcher.builtin(first_party=FIRST_PARTY)
    verdict = rule.classify(INJECTED)
    assert verdict.to_dict() == {"noise": True, "matches": [
        {"id": "first-party-rule", "category": "third-party-script", "tags": [],
         "confidence": 1.0, "field": "frame", "index": 2}]}
    assert rule.is_noise(INJECTED) and rule.is_noise_many([INJECTED]) == [True]
    own = Event(message="cart.items is undefined",
                frames=["https://cdn.injected.example/x.js", "/srv/shop/views.py"])
    assert not rule.is_noise(own), "one own frame keeps it"
    assert not rule.is_noise("cart.items is undefined"), "no frames: never noise by the rule"
    assert [p.id for p in rule.patterns] == [p.id for p in plain.patterns], "the rule is no pattern"
    assert plain.with_first_party(FIRST_PARTY).is_noise(INJECTED)
    assert Matcher.from_patterns([], first_party=FIRST_PARTY).is_noise(INJECTED)


def test_first_party_reads_an_exception_from_code_elsewhere(tmp_path) -> None:
    """A traceback's frames are file paths: a path prefix places them."""
    module = tmp_path / "vendored.py"
    module.write_text("def explode():\n    raise RuntimeError('widget exploded')\n")
    namespace: dict = {}
    exec(compile(module.read_text(), str(module), "exec"), namespace)
    try:
        namespace["explode"]()
    except RuntimeError as error:
        thrown = error
    here = __file__.rsplit("/", 1)[0] + "/"
    rule = Matcher.from_patterns([], first_party={"paths": [here]})
    assert not rule.is_noise(thrown), "the test's own frame is in the traceback"
    assert rule.is_noise(thrown.with_traceback(thrown.__traceback__.tb_next))
    assert Matcher.from_patterns([], first_party={"paths": [str(tmp_path) + "/"]}).is_noise(
        thrown) is False


@pytest.mark.parametrize("first_party, refusal", [
    ({"origins": ["shop.example.com"]},
     "firstParty: origins[0]: `shop.example.com` is not an origin "
     "(scheme://host[:port], as https://app.example.com)"),
    ({"origins": ["https://"]}, "firstParty: origins[0]: `https://` is not an origin"),
    ({"paths": ["static/"]}, "firstParty: paths[0]: `static/` is not a path prefix"),
    ({}, "firstParty: no origins and no paths"),
])
def test_first_party_refusals_are_the_cores(first_party, refusal) -> None:
    with pytest.raises(Refusal) as refused:
        Matcher.builtin(first_party=first_party)
    assert str(refused.value).startswith(refusal)


def test_first_party_shape_errors_are_type_errors() -> None:
    with pytest.raises(TypeError, match="unknown field origin"):
        Matcher.builtin(first_party={"origin": ["https://shop.example.com"]})
    with pytest.raises(TypeError, match="origins is a list of str"):
        Matcher.builtin(first_party={"origins": "https://shop.example.com"})
    with pytest.raises(TypeError, match="first_party is"):
        Matcher.builtin(first_party=["https://shop.example.com"])  # type: ignore[arg-type]


HEADLESS = {"message": "TypeError: order.total is undefined",
            "userAgent": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
                         "HeadlessChrome/131.0.0.0 Safari/537.36"}
SLACKBOT = {"message": "x", "userAgent": "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)"}
GOOGLEBOT = {"message": "x",
             "userAgent": "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"}


def test_exclude_leaves_the_named_patterns_out_as_npm_does() -> None:
    """npm's shared case, in Python: by id (the end-to-end run's
    HeadlessChrome), by category in either spelling, by tag."""
    every = Matcher.builtin()
    assert [m.id for m in every.classify(HEADLESS).matches] == ["headless-chrome"]
    e2e = Matcher.builtin(exclude={"ids": ["headless-chrome"]})
    assert not e2e.is_noise(HEADLESS), "left out"
    assert e2e.patterns == [p for p in every.patterns if p.id != "headless-chrome"]
    no_bots = every.excluding({"categories": ["BOT_TRAFFIC"]})
    assert no_bots.patterns and all(p.category != "bot-traffic" for p in no_bots.patterns)
    assert not no_bots.is_noise(GOOGLEBOT)
    assert no_bots.is_noise(ETHEREUM), "the other categories stay"
    assert any(m.id == "slackbot-link-expanding" and "social-preview" in m.tags
               for m in every.classify(SLACKBOT).matches)
    previews = every.excluding({"tags": ["social-preview", "generic-bot"]})
    assert not previews.is_noise(SLACKBOT), "previews let through"
    assert previews.is_noise(GOOGLEBOT), "the named bots stay noise"
    assert Matcher.builtin(exclude={"tags": ["social-preview"]}).patterns == \
        every.excluding({"tags": ["social-preview"]}).patterns


def test_exclude_keeps_the_first_party_rule_and_narrows_a_fetched_list() -> None:
    ruled = Matcher.builtin(exclude={"ids": ["headless-chrome"]}, first_party=FIRST_PARTY)
    assert ruled.is_noise(INJECTED) and not ruled.is_noise(HEADLESS)
    assert Matcher.builtin(first_party=FIRST_PARTY).excluding(
        {"categories": ["custom"]}).is_noise(INJECTED), "the rule stays"
    body = '{"patterns": [{"id": "acme-widget", "pattern": "acme-widget.js", "type": "string", ' \
           '"category": "custom", "confidence": 1.0}]}'
    fetched = Matcher.from_response(body, exclude={"categories": ["custom"]})
    assert fetched.patterns == []


@pytest.mark.parametrize("exclude, refusal", [
    ({"categories": ["bots"]},
     "exclude: categories[0]: `bots` is not a category (browser-extension, third-party-script, "
     "bot-traffic, network-issue, known-library, other, custom, or Variant B's spelling of one)"),
    ({"ids": [""]}, "exclude: ids[0]: empty"),
    ({"tags": ["social-previews"]}, "exclude: tags[0]: `social-previews` is not a tag of the catalog"),
])
def test_exclude_refusals_are_the_cores(exclude, refusal) -> None:
    with pytest.raises(Refusal) as refused:
        Matcher.builtin(exclude=exclude)
    assert str(refused.value).startswith(refusal)


def test_exclude_shape_errors_are_type_errors() -> None:
    with pytest.raises(TypeError, match="unknown field id"):
        Matcher.builtin(exclude={"id": ["headless-chrome"]})
    with pytest.raises(TypeError, match="exclude: ids is a list of str"):
        Matcher.builtin(exclude={"ids": "headless-chrome"})
    with pytest.raises(TypeError, match="exclude is"):
        Matcher.builtin(exclude=["headless-chrome"])  # type: ignore[arg-type]
