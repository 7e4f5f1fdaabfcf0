"""The Redis store: the Rust host's layout, against a real redis-server."""

from __future__ import annotations

import pytest

redis = pytest.importorskip("redis")

from noise_filter import Admin, Endpoint, RedisStore  # noqa: E402
from noise_filter.endpoint import record_lifetimes  # noqa: E402

NOW = 1_795_435_210_500


def test_keys_counters_and_patterns_in_the_hosts_layout(redis_url: str) -> None:
    client = redis.Redis.from_url(redis_url)
    client.flushdb()
    store = RedisStore(client)
    admin = Admin(store)
    made = admin.create_key("acme", "ci", now=NOW)
    admin.add_patterns("acme", ["acme-widget.js"], now=NOW)
    assert client.exists(f"key/{made.hash}") and client.exists("account/acme/patterns")

    endpoint = Endpoint(store)
    auth = [("authorization", f"Bearer {made.key}")]
    for _ in range(3):
        assert endpoint.handle("GET", "/v1/filters", auth, now=NOW).status == 200
    window = NOW // 60_000
    # INCRBY's ASCII decimal, under the key the core names: what the host reads.
    assert client.get(f"rate/{made.hash}/{window}") == b"3"
    # A count the host made (INCRBY) is the same counter for Python.
    client.incrby(f"rate/{made.hash}/{window}", 996)
    assert endpoint.handle("GET", "/v1/filters", auth, now=NOW).status == 200
    assert endpoint.handle("GET", "/v1/filters", auth, now=NOW).status == 429
    assert client.get(f"rate/{made.hash}/{window}") == b"1000"  # the 429 was refunded

    admin.revoke_key(made.hash, now=NOW)
    assert endpoint.handle("GET", "/v1/filters", auth, now=NOW + 120_000).status == 401


def test_every_counter_expires_three_windows_after_its_last_write(redis_url: str) -> None:
    client = redis.Redis.from_url(redis_url)
    client.flushdb()
    store = RedisStore(client)
    made = Admin(store).create_key("acme", now=NOW)
    counter = f"rate/{made.hash}/{NOW // 60_000}"
    # One the host's INCRBY (or an older client) left without an expiry.
    client.incrby(counter, 5)
    assert client.pttl(counter) == -1
    auth = [("authorization", f"Bearer {made.key}")]
    assert Endpoint(store).handle("GET", "/v1/filters", auth, now=NOW).status == 200
    assert client.get(counter) == b"6"
    # The core's lifetime for the kind: three one-minute windows, set with
    # the write; no other kind expires.
    assert record_lifetimes() == {"rate-counter": 180_000}
    assert 170_000 < client.pttl(counter) <= 180_000
    # Records of the default label never expire.
    assert client.pttl(f"key/{made.hash}") == -1


def test_the_compare_and_swap_is_the_hosts_script_and_swaps(redis_url: str) -> None:
    """The wheel ships the very file the Rust host includes, and the store
    swaps with it: from absent, from the value read, never over a change."""
    import re
    from importlib import resources
    from pathlib import Path

    host = Path(__file__).resolve().parents[2] / "host/src/store/redis.rs"
    included = re.search(r'include_str!\("([^"]+)"\)', host.read_text())
    assert included, "the host includes its compare-and-swap script from a file"
    hosts = (host.parent / included.group(1)).resolve()
    shipped = resources.files("noise_filter").joinpath("redis_compare_and_swap.lua")
    assert shipped.read_bytes() == hosts.read_bytes()
    assert hosts.name == shipped.name

    client = redis.Redis.from_url(redis_url)
    client.flushdb()
    store = RedisStore(client)
    place = Admin(store).patterns_record("acme")
    assert store.compare_and_swap(place, None, b"one")
    assert not store.compare_and_swap(place, None, b"two")
    assert not store.compare_and_swap(place, b"stale", b"two")
    assert store.compare_and_swap(place, b"one", b"two")
    assert client.get(place.key) == b"two"


def test_a_lost_redis_is_503(redis_url: str) -> None:
    client = redis.Redis.from_url(redis_url)
    made = Admin(RedisStore(client)).create_key("acme", now=NOW)
    gone = RedisStore(redis.Redis(host="127.0.0.1", port=1, socket_connect_timeout=0.2))
    response = Endpoint(gone).handle("GET", "/v1/filters",
                                     [("authorization", f"Bearer {made.key}")], now=NOW)
    assert response.status == 503
