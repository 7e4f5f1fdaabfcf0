"""Keys and custom patterns through the core's admin functions."""

from __future__ import annotations

import pytest

from noise_filter import Admin, Endpoint, MemoryStore, NewPattern, Refusal

NOW = 1_795_435_210_500


def test_keys_are_created_listed_and_revoked() -> None:
    store = MemoryStore()
    admin = Admin(store)
    a = admin.create_key("acme", "ci", now=NOW)
    b = admin.create_key("globex", now=NOW + 1000)
    assert a.key.startswith("nf_") and a.key != b.key
    assert [k.hash for k in admin.list_keys()] == [a.hash, b.hash]
    assert [k.account for k in admin.list_keys("globex")] == ["globex"]
    endpoint = Endpoint(store)
    auth = [("authorization", f"Bearer {a.key}")]
    assert endpoint.handle("GET", "/v1/filters", auth, now=NOW).status == 200
    revoked = admin.revoke_key(a.hash[:8], now=NOW)
    assert revoked.account == "acme" and revoked.already is None
    assert admin.revoke_key(a.hash, now=NOW).already is not None
    assert endpoint.handle("GET", "/v1/filters", auth, now=NOW).status == 401
    assert admin.list_keys("acme")[0].revoked is not None


def test_refusals_carry_the_cores_text_and_write_nothing() -> None:
    store = MemoryStore()
    admin = Admin(store)
    with pytest.raises(Refusal, match="invalid account name"):
        admin.create_key("Not An Account")
    with pytest.raises(Refusal, match="exactly 24 random bytes, got 3"):
        admin.create_key("acme", random=b"abc")
    assert admin.random_bytes() == 24
    with pytest.raises(Refusal, match="at least 6 hex digits"):
        admin.revoke_key("abc")
    with pytest.raises(Refusal, match="no key's hash starts with"):
        admin.revoke_key("abcdef")
    with pytest.raises(Refusal, match=r"pattern 2.*look-around|look-around"):
        admin.add_patterns("acme", ["fine.js", NewPattern("(?<=a)b", kind="regex")])
    assert store.entries == {}


def test_a_key_whose_record_exists_is_refused_in_the_cores_words() -> None:
    store = MemoryStore()
    admin = Admin(store)
    first = admin.create_key("acme", now=NOW, random=bytes(range(24)))
    assert len(first.key) == len("nf_") + 2 * admin.random_bytes()
    before = dict(store.entries)
    with pytest.raises(Refusal) as refused:
        admin.create_key("globex", now=NOW + 1, random=bytes(range(24)))
    assert str(refused.value) == ("a key with this hash already exists (the random source "
                                  "repeated itself); nothing written")
    assert store.entries == before
    assert [k.account for k in admin.list_keys()] == ["acme"]


def test_custom_patterns_are_added_served_and_removed() -> None:
    store = MemoryStore()
    admin = Admin(store)
    key = admin.create_key("acme", now=NOW).key
    ids = admin.add_patterns("acme", ["acme-widget.js",
                                      {"pattern": r"^Retry \d+$", "type": "regex",
                                       "category": "network-issue", "confidence": 0.6}], now=NOW)
    assert ids == ["custom-1", "custom-2"]
    listed = admin.read_patterns("acme")
    assert [(p.id, p.kind, p.category) for p in listed] == [
        ("custom-1", "string", "custom"), ("custom-2", "regex", "network-issue")]
    body = Endpoint(store).handle("GET", "/v1/filters?categories=custom",
                                  [("authorization", f"Bearer {key}")], now=NOW).body
    assert b"acme-widget.js" in body
    admin.remove_pattern("acme", "custom-1", now=NOW)
    assert [p.id for p in admin.read_patterns("acme")] == ["custom-2"]
    with pytest.raises(Refusal, match="no custom pattern"):
        admin.remove_pattern("acme", "custom-1", now=NOW)
