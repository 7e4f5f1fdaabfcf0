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
        assert got.body == want["body"].encode(), case["name"]
        if "statuses" in want:
            assert statuses == want["statuses"], case["name"]
        etag = got.header("etag") or etag


def matchers(oracle, fixtures) -> Dict[str, Matcher]:
    body = {a["name"]: a["body"] for a in oracle["requests"]}
    builtin = Matcher.builtin(0.5)
    return {
        "builtin": builtin,
        "builtinAll": Matcher.builtin(0.0),
        "responseA": Matcher.from_response(body["A: all patterns"]),
        "responseB": Matcher.from_response(body["B: all patterns"].encode()),
        "custom": Matcher.from_patterns(builtin.patterns + fixtures["matcherPatterns"]),
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


def test_the_package_is_typed() -> None:
    from importlib import resources

    assert resources.files(nf).joinpath("py.typed").is_file()
