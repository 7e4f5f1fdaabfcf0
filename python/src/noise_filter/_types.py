"""The package's plain data types and the store protocol."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import Any, Dict, List, Literal, Optional, Protocol, Sequence, Tuple, runtime_checkable

RecordKindName = Literal["api-key", "custom-patterns", "rate-counter"]
StoreLabelName = Literal["default", "rate"]
PatternKind = Literal["string", "regex"]


class Refusal(ValueError):
    """The core refused: a pattern outside the regex subset, an unknown
    account name, a malformed response body, … The text is the core's."""


class StoreFailure(RuntimeError):
    """Raised by a store that cannot answer. Any exception a store raises is
    answered 503 by the endpoint; this one is for stores to raise."""


@dataclass(frozen=True)
class RecordKey:
    """A record's place in the store, as the core names it.

    ``key`` is the whole key (``key/<sha256>``, ``account/<a>/patterns``,
    ``rate/<sha256>/<window>``); ``label`` says which of the two stores it
    belongs in (``default`` or ``rate``) for stores that keep them apart.
    """

    kind: str
    label: str
    key: str


@runtime_checkable
class Store(Protocol):
    """What the endpoint needs of a store: the core's three steps.

    Raising any exception answers the request 503 (nothing further is
    written); it never reaches the caller of ``Endpoint.handle``.
    """

    def get(self, record: RecordKey) -> Optional[bytes]:
        """The record's bytes, or None when absent."""
        ...

    def increment(self, record: RecordKey, delta: int) -> int:
        """Atomically adds ``delta`` to a counter (absent: 0); the new value."""
        ...

    def delete(self, record: RecordKey) -> None:
        """Deletes a record (absent: fine)."""
        ...


@runtime_checkable
class AdminStore(Store, Protocol):
    """What the admin helpers need besides: listing and compare-and-swap."""

    def keys(self, label: str, prefix: str) -> List[str]:
        """The keys of ``label`` starting with ``prefix``, sorted."""
        ...

    def compare_and_swap(
        self, record: RecordKey, expected: Optional[bytes], new: bytes
    ) -> bool:
        """Writes ``new`` if the record is still ``expected`` (None: absent)."""
        ...


@dataclass(frozen=True)
class Response:
    """A response exactly as the core wrote it. ``headers`` are in order,
    names in lowercase; a server adds only framing (``content-length``)."""

    status: int
    headers: List[Tuple[str, str]]
    body: bytes

    def header(self, name: str) -> Optional[str]:
        """The first value of header ``name`` (lowercase), if any."""
        for n, v in self.headers:
            if n == name:
                return v
        return None


@dataclass(frozen=True)
class Event:
    """An error event, as far as matching is concerned.

    ``Event.from_dict`` reads the JSON shape the core uses (``type``,
    ``message``, ``frames``, ``userAgent``).
    """

    message: Optional[str] = None
    frames: Sequence[str] = ()
    user_agent: Optional[str] = None
    exception_type: Optional[str] = None

    @classmethod
    def from_dict(cls, data: object) -> "Event":
        if not isinstance(data, dict):
            raise TypeError(f"an event is a dict, not {type(data).__name__}")
        unknown = set(data) - {"type", "message", "frames", "userAgent", "user_agent",
                               "exception_type"}
        if unknown:
            raise TypeError(f"unknown event fields: {', '.join(sorted(unknown))}")
        return cls(
            message=data.get("message"),
            frames=data.get("frames") or (),
            user_agent=data.get("userAgent", data.get("user_agent")),
            exception_type=data.get("type", data.get("exception_type")),
        )


@dataclass(frozen=True, init=False)
class Pattern:
    """One pattern as the matcher takes it, with the JSON's names: ``type``
    is ``string`` or ``regex``.

    ``kind`` is the name this field had before: ``Pattern(kind=...)`` and
    ``pattern.kind`` still work, with a ``DeprecationWarning``.
    """

    id: str
    pattern: str
    type: str = "string"
    category: str = ""
    confidence: float = 1.0

    def __init__(self, id: str, pattern: str, type: str = "string", category: str = "",
                 confidence: float = 1.0, *, kind: Optional[str] = None) -> None:
        if kind is not None:
            warnings.warn("Pattern(kind=...) is Pattern(type=...)", DeprecationWarning,
                          stacklevel=2)
            type = kind
        object.__setattr__(self, "id", id)
        object.__setattr__(self, "pattern", pattern)
        object.__setattr__(self, "type", type)
        object.__setattr__(self, "category", category)
        object.__setattr__(self, "confidence", confidence)

    @property
    def kind(self) -> str:
        """The former name of :attr:`type`."""
        warnings.warn("Pattern.kind is Pattern.type", DeprecationWarning, stacklevel=2)
        return self.type


@dataclass(frozen=True)
class Match:
    """One pattern that matched one text: ``field`` is ``message``, ``frame``
    (then ``index`` is the frame's) or ``userAgent``."""

    id: str
    category: str
    confidence: float
    field: str
    index: Optional[int] = None
    #: What the pattern recognises, finer than its category: a built-in
    #: pattern's tags (``search-engine``, ``wallet``, …), empty for others.
    tags: Tuple[str, ...] = ()

    def to_dict(self) -> Dict[str, Any]:
        """The core's JSON shape of a match."""
        d: Dict[str, Any] = {"id": self.id, "category": self.category, "tags": list(self.tags),
                             "confidence": self.confidence, "field": self.field}
        if self.index is not None:
            d["index"] = self.index
        return d


@dataclass(frozen=True)
class Verdict:
    """The matcher's answer: whether the event is noise, and every match."""

    noise: bool
    matches: List[Match] = field(default_factory=list)

    def to_dict(self) -> Dict[str, Any]:
        """The core's JSON shape of a verdict."""
        return {"noise": self.noise, "matches": [m.to_dict() for m in self.matches]}
