"""Python answers the shared fixtures exactly as the native core does."""

from __future__ import annotations

from typing import Any, Dict, List

import noise_filter as nf
from noise_filter import Admin, Endpoint, Event, Matcher, MemoryStore


def seed(store: MemoryStore, fixtures: Dict[str, Any]) -> Dict[str, str]:
    """The fixtures' keys and custom patterns, written through the admin
    functions at the fixtures' clock (as the oracle does natively)."""
    admin = Admin(store)
    now = fixtures["now"]
    keys = {}
    for seed in fixtures["keys"]:
        made = admin.create_key(seed["account"], seed.get("label", ""), now=now,
                                random=bytes.fromhex(seed["random"]))
        if seed.get("revoked"):
            admin.revoke_key(made.hash, now=now)
        keys[seed["name"]] = made.key
    for account in fixtures.get("customPatterns", []):
        admin.add_patterns(account["account"], account["patterns"], now=now)
    return keys


def substitute(value: str, keys: Dict[str, str], etag: str) -> str:
    value = value.replace("{etag}", etag)
    for name, key in keys.items():
        value = value.replace("{key:" + name + "}", key)
    return value


def test_every_request_gets_the_native_bytes(fixtures, oracle) -> None:
    store = MemoryStore()
    keys = seed(store, fixtures)
    endpoint = Endpoint(store)
    etag = ""
    assert len(oracle["requests"]) == len(fixtures["requests"])
    for case, want in zip(fixtures["requests"], oracle["requests"]):
        headers = [(n, substitute(v, keys, etag)) for n, v in case.get("headers", [])]
        store.failing = case.get("storeFails", False)
        statuses: Dict[str, int] = {}
        for _ in range(case.get("repeat", 1)):
            got = endpoint.handle(case.get("method", "GET"), case["target"], headers,
                                  now=fixtures["now"] + case.get("at", 0))
            statuses[str(got.status)] = statuses.get(str(got.status), 0) + 1
        store.failing = False
        assert got.status == want["status"], case["name"]
        assert [list(h) for h in got.headers] == want["headers"], case["name"]
        # An encoded body (Content-Encoding) is in the oracle as hex.
        if "bodyHex" in want:
            assert got.body == bytes.fromhex(want["bodyHex"]), case["name"]
        else:
            assert got.body == want["body"].encode(), case["name"]
        if "statuses" in want:
            assert statuses == want["statuses"], case["name"]
        etag = got.header("etag") or etag


def matchers(oracle, fixtures) -> Dict[str, Matcher]:
    body = {a["name"]: a["body"] for a in oracle["requests"] if "body" in a}
    builtin = Matcher.builtin(0.5)
    return {
        "builtin": builtin,
        "builtinAll": Matcher.builtin(0.0),
        "builtinDefault": Matcher.builtin(),
        "responseA": Matcher.from_response(body["A: all patterns"]),
        "responseB": Matcher.from_response(body["B: all patterns"].encode()),
        "custom": Matcher.from_patterns(builtin.patterns + fixtures["matcherPatterns"]),
        "firstParty": Matcher.builtin(0.5, first_party=fixtures["firstParty"]),
    }


def test_the_matchers_agree_with_the_native_matcher_on_every_event(oracle, fixtures) -> None:
    events: List[Event] = [Event.from_dict(e["event"]) for e in oracle["events"]]
    assert len(events) > 150
    for name, matcher in matchers(oracle, fixtures).items():
        want = oracle["verdicts"][name]
        got = [matcher.classify(e).to_dict() for e in events]
        assert got == want, name
        assert [matcher.is_noise(e) for e in events] == [v["noise"] for v in want], name
        # The whole set in one batch, and as the dicts it was read from.
        assert matcher.is_noise_many(events) == [v["noise"] for v in want], name
        dicts = [e["event"] for e in oracle["events"]]
        assert matcher.is_noise_many(dicts) == [v["noise"] for v in want], name


def test_the_builtin_matchers_hold_the_cores_patterns(oracle) -> None:
    """``Matcher.builtin()`` with no threshold holds the core's default set,
    the one the endpoint lists by default (and npm's ``Matcher.builtin()``):
    through Python a labelled set scores as through the service."""
    built = {"builtin": Matcher.builtin(0.5), "builtinAll": Matcher.builtin(0.0),
             "builtinDefault": Matcher.builtin()}
    assert set(built) == set(oracle["patterns"])
    for name, matcher in built.items():
        got = [{"id": p.id, "pattern": p.pattern, "type": p.type, "category": p.category,
                "confidence": p.confidence} for p in matcher.patterns]
        assert got == oracle["patterns"][name], name
    assert oracle["patterns"]["builtinDefault"] == oracle["patterns"]["builtin"]
    assert len(oracle["patterns"]["builtinDefault"]) < len(oracle["patterns"]["builtinAll"])


def test_the_package_is_typed() -> None:
    from importlib import resources

    assert resources.files(nf).joinpath("py.typed").is_file()


def as_sentry_events(event: Dict[str, Any], n: int) -> List[Dict[str, Any]]:
    """One event of the table as the Sentry SDKs would send it: an exception
    with sentry-python's frames (`abs_path`) and with a browser SDK's
    (`filename`, a URL); without a type or frames, also as a message and as
    sentry-python's log entry. The user agent is the request's header."""
    shaped = []
    for frame_field in ("abs_path", "filename"):
        thrown: Dict[str, Any] = {"stacktrace": {"frames": [
            {frame_field: f, "function": "f", "lineno": 1} for f in event["frames"]]}}
        if event["type"] is not None:
            thrown["type"] = event["type"]
        if event["message"] is not None:
            thrown["value"] = event["message"]
        shaped.append({"exception": {"values": [thrown]}})
    if event["type"] is None and not event["frames"]:
        shaped.append({"message": event["message"]})
        shaped.append({"logentry": {"message": event["message"], "params": []}}
                      if event["message"] is not None else {"logentry": {}})
    for s in shaped:
        s.update(event_id=f"{n:032x}", level="error", breadcrumbs={"values": []},
                 contexts={"runtime": {"name": "CPython"}}, tags={"release": "1.0"})
        if event["userAgent"] is not None:
            s["request"] = {"url": "https://app.example/", "headers": {
                "Accept": "*/*", "User-Agent": event["userAgent"]}}
    return shaped


def test_sentry_events_of_the_table_get_the_native_verdicts(oracle, fixtures) -> None:
    events = [e["event"] for e in oracle["events"]]
    for name, matcher in matchers(oracle, fixtures).items():
        want = oracle["verdicts"][name]
        for n, (event, verdict) in enumerate(zip(events, want)):
            for shaped in as_sentry_events(event, n):
                assert matcher.classify(shaped).to_dict() == verdict, (name, shaped)


def test_the_sentry_integration_sends_exactly_what_the_native_matcher_keeps(
        oracle, sentry_init) -> None:
    import sentry_sdk

    from noise_filter.sentry import NoiseFilterIntegration

    events = [e["event"] for e in oracle["events"]]
    want = oracle["verdicts"]["builtin"]
    sent = sentry_init(integrations=[NoiseFilterIntegration(Matcher.builtin(0.5))])
    for n, event in enumerate(events):
        for shaped in as_sentry_events(event, n):
            sentry_sdk.capture_event(shaped)
    sentry_sdk.flush()
    # Each shape of each event the native matcher calls clean, and no other.
    kept = sorted(int(e["event_id"], 16) for e in sent)
    assert kept == [n for n, (event, v) in enumerate(zip(events, want)) if not v["noise"]
                    for _ in as_sentry_events(event, n)]
    assert sum(1 for v in want if v["noise"]) > 200


def test_the_sentry_integration_with_first_party_sends_what_the_native_rule_keeps(
        oracle, fixtures, sentry_init) -> None:
    import sentry_sdk

    from noise_filter.sentry import NoiseFilterIntegration

    events = [e["event"] for e in oracle["events"]]
    want = oracle["verdicts"]["firstParty"]
    sent = sentry_init(integrations=[NoiseFilterIntegration(
        Matcher.builtin(0.5), first_party=fixtures["firstParty"])])
    for n, event in enumerate(events):
        for shaped in as_sentry_events(event, n):
            sentry_sdk.capture_event(shaped)
    sentry_sdk.flush()
    kept = sorted(int(e["event_id"], 16) for e in sent)
    assert kept == [n for n, (event, v) in enumerate(zip(events, want)) if not v["noise"]
                    for _ in as_sentry_events(event, n)]
    # The rule decides some events no pattern matches.
    by_rule_alone = [v for v, b in zip(want, oracle["verdicts"]["builtin"])
                     if v["noise"] and not b["noise"]]
    assert by_rule_alone and all(
        [m["id"] for m in v["matches"]] == ["first-party-rule"] for v in by_rule_alone)
