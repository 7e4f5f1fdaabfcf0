"""The endpoint over Python stores: behaviour users rely on, and failures."""

from __future__ import annotations

import pytest

from noise_filter import Admin, Endpoint, MemoryStore, RecordKey

NOW = 1_795_435_210_500


def keyed() -> tuple:
    store = MemoryStore()
    key = Admin(store).create_key("acme", "ci", now=NOW, random=bytes(range(24))).key
    return store, key


def test_a_valid_key_gets_the_catalog_and_is_counted() -> None:
    store, key = keyed()
    response = Endpoint(store).handle("GET", "/v1/filters?minConfidence=0.9",
                                      [("Authorization", f"Bearer {key}")], now=NOW)
    assert response.status == 200
    assert response.body.startswith(b'{"version":')
    assert response.header("etag")
    # This minute's counter, and the record of the key's latest window
    # (what the first request of a window reads to delete stale counters).
    window = str(NOW // 60_000)
    rate = {k.rsplit("/", 1)[1]: v for (label, k), v in store.entries.items() if label == "rate"}
    assert rate == {window: b"1", "last": window.encode()}


def test_no_key_is_401_and_touches_no_store() -> None:
    class Untouchable:
        def get(self, record: RecordKey) -> bytes:
            raise AssertionError("read")

        def increment(self, record: RecordKey, delta: int) -> int:
            raise AssertionError("counted")

        def delete(self, record: RecordKey) -> None:
            raise AssertionError("deleted")

    assert Endpoint(Untouchable()).handle("GET", "/v1/filters", now=NOW).status == 401


class Raising(MemoryStore):
    """A store whose every call raises something else each time."""

    def __init__(self, error: BaseException) -> None:
        super().__init__()
        self.error = error

    def get(self, record: RecordKey) -> bytes:
        raise self.error


@pytest.mark.parametrize("error", [ConnectionError("redis went away"), KeyError("x"),
                                   RecursionError(), ZeroDivisionError()])
def test_a_store_that_raises_is_503_and_the_endpoint_keeps_serving(error) -> None:
    _, key = keyed()
    endpoint = Endpoint(Raising(error))
    for _ in range(2):
        response = endpoint.handle("GET", "/api/v1/filters", [("authorization", f"Bearer {key}")],
                                   now=NOW)
        assert response.status == 503
        assert b"error" in response.body


def test_a_store_that_returns_nonsense_is_503() -> None:
    store, key = keyed()

    class Nonsense(MemoryStore):
        def get(self, record: RecordKey):  # type: ignore[override]
            return "not bytes"

    bad = Nonsense()
    bad.entries = store.entries
    response = Endpoint(bad).handle("GET", "/v1/filters", [("authorization", f"Bearer {key}")],
                                    now=NOW)
    assert response.status == 503


def test_a_store_missing_methods_is_refused_up_front() -> None:
    with pytest.raises(TypeError, match="increment"):
        Endpoint(object.__new__(type("S", (), {"get": lambda s, r: None})))


def test_bad_arguments_are_type_errors() -> None:
    endpoint = Endpoint(MemoryStore())
    with pytest.raises(TypeError):
        endpoint.handle("GET", "/v1/filters", [("authorization", 42)])  # type: ignore[list-item]
    with pytest.raises(ValueError):
        endpoint.handle("GET", "/v1/filters", now=-1)
    assert endpoint.handle("GET", "/nope", now=NOW).status == 404
