"""Two stores: in memory, and Redis in the Rust host's layout.

Neither looks inside a key or a value: records are kept under the keys the
core names, counters as the integers ``INCRBY`` keeps, and a record's
lifetime (Redis) is the one the core gives its kind.
"""

from __future__ import annotations

import threading
from importlib import resources
from typing import Any, Dict, List, Optional, Tuple

from ._types import RecordKey, StoreFailure
from .endpoint import record_lifetimes


class MemoryStore:
    """Both labels in one dict, keyed by (label, key). For tests, examples and
    single-process deployments.

    A counter is kept as Redis's ``INCRBY`` keeps it, an integer in ASCII
    decimal, which the core reads: :meth:`increment` adds to the integer it
    wrote, and fails on a value that is not one, as ``INCRBY`` does. No other
    counter form is read here: the core owns the counter's bytes.
    """

    def __init__(self) -> None:
        self.entries: Dict[Tuple[str, str], bytes] = {}
        self._lock = threading.Lock()
        #: When set, every call raises (to see the endpoint answer 503).
        self.failing = False

    def _check(self) -> None:
        if self.failing:
            raise StoreFailure("the memory store is set to fail")

    def get(self, record: RecordKey) -> Optional[bytes]:
        self._check()
        return self.entries.get((record.label, record.key))

    def increment(self, record: RecordKey, delta: int) -> int:
        self._check()
        with self._lock:
            current = self.entries.get((record.label, record.key), b"0")
            try:
                new = int(current) + delta
            except ValueError:
                raise StoreFailure("the stored value is not an integer") from None
            if not -(2**63) <= new < 2**63:
                raise StoreFailure("the counter would overflow")
            self.entries[(record.label, record.key)] = str(new).encode()
            return new

    def delete(self, record: RecordKey) -> None:
        self._check()
        self.entries.pop((record.label, record.key), None)

    def set(self, record: RecordKey, value: bytes) -> None:
        self._check()
        self.entries[(record.label, record.key)] = bytes(value)

    def keys(self, label: str, prefix: str) -> List[str]:
        self._check()
        return sorted(k for (l, k) in self.entries if l == label and k.startswith(prefix))

    def compare_and_swap(self, record: RecordKey, expected: Optional[bytes], new: bytes) -> bool:
        self._check()
        with self._lock:
            if self.entries.get((record.label, record.key)) != expected:
                return False
            self.entries[(record.label, record.key)] = bytes(new)
            return True


#: The compare-and-swap script, shipped in this package: the file the Rust
#: host includes (host/src/store/redis.rs), so both swap alike.
CAS_SCRIPT_FILE = "redis_compare_and_swap.lua"


def _glob_escape(s: str) -> str:
    return "".join("\\" + c if c in "*?[]\\" else c for c in s)


class RedisStore:
    """Redis in the Rust host's layout (``host/src/store/redis.rs``): both
    labels in one keyspace, keys exactly as the core names them
    (``key/<sha256>``, ``account/<a>/patterns``, ``rate/<sha256>/<window>``),
    counters kept by ``INCRBY`` as ASCII decimal. A Python process and the
    host can serve from one Redis: the same keys, the same counts, the same
    limit.

    ``client`` is a ``redis.Redis`` (bytes responses: leave
    ``decode_responses`` off), or give ``url``.

    Every record written gets its kind's lifetime, as the core gives it
    (:func:`noise_filter.endpoint.record_lifetimes`: rate counters, three
    windows; the other kinds none), in the same ``MULTI`` as its ``INCRBY``,
    as the host does: a counter the core's own cleanup could not delete does
    not stay.
    """

    def __init__(self, client: Any = None, *, url: Optional[str] = None) -> None:
        if client is None:
            import redis  # the optional dependency: pip install noise-filter[redis]

            client = redis.Redis.from_url(url or "redis://127.0.0.1:6379/0",
                                          socket_timeout=2, socket_connect_timeout=2)
        self.client = client
        script = resources.files("noise_filter").joinpath(CAS_SCRIPT_FILE).read_text()
        self._cas = client.register_script(script)
        # Asked of the core here, not inside a store call (which runs while
        # the component that made it is in the middle of a request).
        self._lifetimes = record_lifetimes()

    def get(self, record: RecordKey) -> Optional[bytes]:
        value = self.client.get(record.key)
        return None if value is None else bytes(value)

    def increment(self, record: RecordKey, delta: int) -> int:
        lifetime = self._lifetimes.get(record.kind)
        if lifetime is None:
            return int(self.client.incrby(record.key, delta))
        pipe = self.client.pipeline(transaction=True)
        pipe.incrby(record.key, delta)
        pipe.pexpire(record.key, lifetime)
        value, _ = pipe.execute()
        return int(value)

    def delete(self, record: RecordKey) -> None:
        self.client.delete(record.key)

    def set(self, record: RecordKey, value: bytes) -> None:
        self.client.set(record.key, value, px=self._lifetimes.get(record.kind))

    def keys(self, label: str, prefix: str) -> List[str]:
        found = set()
        for key in self.client.scan_iter(match=_glob_escape(prefix) + "*", count=1000):
            found.add(key.decode() if isinstance(key, bytes) else key)
        return sorted(found)

    def compare_and_swap(self, record: RecordKey, expected: Optional[bytes], new: bytes) -> bool:
        written = self._cas(keys=[record.key],
                            args=["1" if expected is not None else "0", expected or b"", new])
        return int(written) == 1
