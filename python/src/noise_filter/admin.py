"""Managing keys and custom patterns on a store, validated by the core.

These helpers work on a store this process holds (the records the service
reads), never on a deployment: one whose store is out of reach (a managed
Spin platform, a cluster's Redis), and an account's exclusions of
built-ins, are administered through the service's admin API
(``/admin/v1/``, any HTTP client; ``docs/SERVING.md``, "The admin API") or
``noise-filter --remote URL``.

The core's admin functions are pure (current bytes in, new bytes out); these
helpers read the current record, ask the core, and write with one
compare-and-swap against what they read, retrying when another writer got
there first. A refusal raises :class:`noise_filter.Refusal` and writes nothing.

Where a record lives, what to list to find one, a key's hash, how many random
bytes a key takes and every refusal's text are the core's answers: nothing
here reads a key's bytes or names a label.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Any, Callable, Iterable, List, Mapping, Optional, Tuple, TypeVar, Union

from ._component import Core, record, result
from ._types import AdminStore, RecordKey, Refusal, StoreFailure
from .endpoint import now_millis

T = TypeVar("T")
_RETRIES = 8


@dataclass(frozen=True)
class NewPattern:
    """A custom pattern to add. Absent fields take the core's defaults."""

    pattern: str
    kind: str = "string"
    id: Optional[str] = None
    category: Optional[str] = None
    confidence: Optional[float] = None
    source: Optional[str] = None


@dataclass(frozen=True)
class CustomPattern:
    """A custom pattern as stored (``category`` in Variant A's spelling)."""

    id: str
    pattern: str
    kind: str
    category: str
    confidence: float
    source: str


@dataclass(frozen=True)
class CreatedKey:
    """A new key: ``key`` is shown once and never stored; ``hash`` names it."""

    key: str
    hash: str
    account: str


@dataclass(frozen=True)
class KeyInfo:
    """One key as listed (``account`` etc. None: its record is unreadable)."""

    hash: str
    account: Optional[str]
    label: Optional[str]
    created: Optional[str]
    revoked: Optional[str]


@dataclass(frozen=True)
class Revoked:
    """A revoked key: ``already`` is when it had been revoked before, if it had."""

    hash: str
    account: str
    already: Optional[str]


def _rk(place: Any) -> RecordKey:
    return RecordKey(kind=place.kind, label=place.label, key=place.key)


def _new_pattern(p: Union[NewPattern, Mapping[str, Any], str]) -> Any:
    if isinstance(p, str):
        p = NewPattern(pattern=p)
    elif isinstance(p, Mapping):
        unknown = set(p) - {"pattern", "type", "kind", "id", "category", "confidence", "source"}
        if unknown:
            raise TypeError(f"unknown pattern fields: {', '.join(sorted(unknown))}")
        if "pattern" not in p:
            raise TypeError("a pattern needs its 'pattern' text")
        p = NewPattern(pattern=p["pattern"], kind=p.get("type", p.get("kind", "string")),
                       id=p.get("id"), category=p.get("category"),
                       confidence=p.get("confidence"), source=p.get("source"))
    if not isinstance(p, NewPattern):
        raise TypeError(f"a pattern is a NewPattern, a dict or a str, not {type(p).__name__}")
    if p.kind not in ("string", "regex"):
        raise ValueError(f"pattern type must be 'string' or 'regex', not {p.kind!r}")
    confidence = None if p.confidence is None else float(p.confidence)
    return record(id=p.id, pattern=p.pattern, kind=p.kind, category=p.category,
                  confidence=confidence, source=p.source)


class Admin:
    """Keys and custom patterns of ``store`` (an :class:`AdminStore`)."""

    def __init__(self, store: AdminStore, *, core: Optional[Core] = None) -> None:
        for method in ("get", "keys", "compare_and_swap"):
            if not callable(getattr(store, method, None)):
                raise TypeError(f"the store has no {method}() method")
        self.store = store
        self._core = core or Core()
        self._random_bytes: Optional[int] = None

    def _call(self, name: str, *args: Any) -> Any:
        return result(self._core.call("admin", name, *args))

    def _update(self, place: RecordKey, change: Callable[[Optional[bytes]], Tuple[bytes, T]]) -> T:
        for _ in range(_RETRIES):
            current = self.store.get(place)
            value, outcome = change(current)
            if self.store.compare_and_swap(place, current, value):
                return outcome
        raise StoreFailure(f"{place.key} kept changing under {_RETRIES} attempts; nothing written")

    def random_bytes(self) -> int:
        """How many random bytes a new key takes: the core's count."""
        if self._random_bytes is None:
            self._random_bytes = int(self._core.call("admin", "key-random-bytes"))
        return self._random_bytes

    def create_key(self, account: str, label: str = "", *, now: Optional[int] = None,
                   random: Optional[bytes] = None) -> CreatedKey:
        """A new key for ``account`` from :meth:`random_bytes` bytes of
        ``secrets.token_bytes`` (or ``random``, for tests)."""
        if random is None:
            random = secrets.token_bytes(self.random_bytes())
        new = self._call("create-key", bytes(random), account, label,
                         now_millis() if now is None else now)
        place = _rk(new.write.place)
        if not self.store.compare_and_swap(place, None, bytes(new.write.value)):
            raise Refusal(new.exists)
        return CreatedKey(key=new.key, hash=new.hash, account=account)

    def _find(self, hash_prefix: str) -> Any:
        search = self._call("key-search", hash_prefix)
        listed = self.store.keys(search.label, search.prefix)
        return self._call("find-key", search.prefix, listed)

    def find_key(self, hash_prefix: str) -> RecordKey:
        """The one key whose hash starts with ``hash_prefix`` (≥ 6 hex digits)."""
        return _rk(self._find(hash_prefix).place)

    def revoke_key(self, hash_prefix: str, *, now: Optional[int] = None) -> Revoked:
        """Revokes the key whose hash starts with ``hash_prefix``."""
        found = self._find(hash_prefix)
        at = now_millis() if now is None else now

        def change(current: Optional[bytes]) -> Tuple[bytes, Revoked]:
            r = self._call("revoke-key", current, at)
            return bytes(r.value), Revoked(hash=found.hash, account=r.account, already=r.already)

        return self._update(_rk(found.place), change)

    def list_keys(self, account: Optional[str] = None) -> List[KeyInfo]:
        """Every key (of ``account``), by creation time then hash."""
        listing = self._call("key-listing")
        records = []
        for key in self.store.keys(listing.label, listing.prefix):
            value = self.store.get(RecordKey(kind=listing.kind, label=listing.label, key=key))
            if value is not None:
                records.append((key, value))
        listed = self._call("list-keys", records, account)
        out = []
        for k in listed:
            d = k.details
            out.append(KeyInfo(hash=k.hash, account=d.account if d else None,
                               label=d.label if d else None, created=d.created if d else None,
                               revoked=d.revoked if d else None))
        return out

    def patterns_record(self, account: str) -> RecordKey:
        """Where ``account``'s custom patterns are kept."""
        return _rk(self._call("patterns-record", account))

    def add_patterns(self, account: str,
                     patterns: Iterable[Union[NewPattern, Mapping[str, Any], str]], *,
                     now: Optional[int] = None) -> List[str]:
        """Adds patterns to ``account``, all or none; returns their ids."""
        news = [_new_pattern(p) for p in patterns]
        place = self.patterns_record(account)
        at = now_millis() if now is None else now

        def change(current: Optional[bytes]) -> Tuple[bytes, List[str]]:
            added = self._call("add-patterns", current, news, at)
            return bytes(added.value), list(added.ids)

        return self._update(place, change)

    def remove_pattern(self, account: str, pattern_id: str, *, now: Optional[int] = None) -> None:
        """Removes the custom pattern ``pattern_id`` from ``account``."""
        place = self.patterns_record(account)
        at = now_millis() if now is None else now
        self._update(place, lambda current: (bytes(self._call("remove-pattern", current,
                                                                pattern_id, at)), None))

    def read_patterns(self, account: str) -> List[CustomPattern]:
        """``account``'s custom patterns, in the order they were added."""
        current = self.store.get(self.patterns_record(account))
        return [CustomPattern(id=p.id, pattern=p.pattern, kind=p.kind, category=p.category,
                              confidence=p.confidence, source=p.source)
                for p in self._call("read-patterns", current)]
