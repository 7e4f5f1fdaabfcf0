"""The matcher: the core's, in the component."""

from __future__ import annotations

import json
from typing import Any, Iterable, List, Mapping, Optional, Tuple, Union

from . import _fast
from ._component import Core, record, result, shared_core
from ._read import to_event
from ._types import Event, Match, Pattern, Refusal, Verdict

#: The "not our code" rule's option, as npm's ``firstParty``: the
#: application's ``origins`` (``scheme://host[:port]``) and ``paths`` (path
#: prefixes starting with ``/``), each a list of ``str``.
FirstParty = Mapping[str, Iterable[str]]

#: An exclusion, as npm's ``exclude``: pattern ``ids``, ``categories``
#: (either variant's spelling, or ``custom``) and ``tags`` (the catalog's
#: sub-kinds of a built-in), each a list of ``str``.
Exclude = Mapping[str, Iterable[str]]

#: What the matcher reads (see :func:`noise_filter.to_event`): an ``Event``,
#: a message, an exception, a Sentry event or a dict in the core's shape.
EventLike = Union[Event, str, BaseException, Mapping[str, Any]]


class Matcher:
    """A compiled pattern set. Build one once and classify many events.

    ``Matcher.builtin()`` is the built-in catalog; ``from_patterns`` and
    ``from_response`` compile other sets (a refused pattern raises
    :class:`noise_filter.Refusal` with the core's text). An event is what
    :func:`noise_filter.to_event` reads: an :class:`noise_filter.Event`, a
    message ``str``, an exception (with its traceback), a Sentry event as
    sentry-python or a browser SDK gives it, or a dict in the core's JSON
    shape (``type``, ``message``, ``frames``, ``userAgent``).
    """

    def __init__(self, _handle: Any, _core: Core) -> None:
        self._handle = _handle
        self._core = _core
        self._generation = _core.generation
        _core.own(_handle)

    # -- building ---------------------------------------------------------

    @classmethod
    def builtin(cls, min_confidence: Optional[float] = None, *,
                exclude: Optional[Exclude] = None,
                first_party: Optional[FirstParty] = None,
                core: Optional[Core] = None) -> "Matcher":
        """The built-in catalog's patterns with confidence ≥ ``min_confidence``;
        by default the core's default threshold (0.5), so the matcher holds
        the built-in patterns the endpoint lists by default, as in JavaScript.
        ``exclude``: without the patterns it names (:meth:`excluding`);
        ``first_party``: with the "not our code" rule (:meth:`with_first_party`)."""
        core = core or shared_core()
        threshold = None if min_confidence is None else float(min_confidence)
        handle = core.call("matching", "[static]matcher.builtin", threshold)
        return cls(handle, core)._narrow(exclude, first_party)

    @classmethod
    def from_patterns(
        cls, patterns: Iterable[Union[Pattern, Mapping[str, Any]]], *,
        exclude: Optional[Exclude] = None,
        first_party: Optional[FirstParty] = None, core: Optional[Core] = None
    ) -> "Matcher":
        """Compiles ``patterns`` (``Pattern`` or dicts with ``id``, ``pattern``,
        ``type``, ``category``, ``confidence``), in order."""
        core = core or shared_core()
        lowered = [_pattern_record(p) for p in patterns]
        handle = result(core.call("matching", "[static]matcher.from-patterns", lowered))
        return cls(handle, core)._narrow(exclude, first_party)

    @classmethod
    def from_response(cls, body: Union[bytes, str], *,
                      exclude: Optional[Exclude] = None,
                      first_party: Optional[FirstParty] = None,
                      core: Optional[Core] = None) -> "Matcher":
        """Compiles the patterns of a ``/v1/filters`` or ``/api/v1/filters`` body."""
        core = core or shared_core()
        if isinstance(body, str):
            body = body.encode()
        if not isinstance(body, (bytes, bytearray)):
            raise TypeError(f"a response body is bytes or str, not {type(body).__name__}")
        handle = result(core.call("matching", "[static]matcher.from-response", bytes(body)))
        return cls(handle, core)._narrow(exclude, first_party)

    def with_first_party(self, first_party: FirstParty) -> "Matcher":
        """A new matcher with the "not our code" rule: an event whose stack
        frames are all outside ``first_party`` (``{"origins": [...], "paths":
        [...]}``: the application's origins, ``scheme://host[:port]``, and
        path prefixes, ``/srv/app/``) is noise, its verdict holding a match
        of id ``first-party-rule`` (category ``third-party-script``). Frames
        without a place (``<anonymous>``, no file name, relative names)
        count for neither side; an event with no placed frame is never
        noise by it. An entry the core refuses raises
        :class:`noise_filter.Refusal` with the core's text."""
        origins, paths = first_party_lists(first_party)
        self._check()
        handle = result(self._core.call("matching", "[method]matcher.with-first-party",
                                        self._handle, origins, paths))
        return type(self)(handle, self._core)

    def excluding(self, exclude: Exclude) -> "Matcher":
        """A new matcher without the patterns ``exclude`` names (``{"ids":
        [...], "categories": [...], "tags": [...]}``, each optional), as
        npm's ``exclude`` and an account's exclusions on the service: ids,
        categories (``bot-traffic`` or Variant B's ``BOT_TRAFFIC``, or
        ``custom``) and tags, the catalog's sub-kinds of a built-in
        (``browser-automation``, ``social-preview``, …). Its first-party
        rule, if it has one, is kept. An entry the core refuses raises
        :class:`noise_filter.Refusal` with the core's text."""
        ids, categories, tags = exclude_lists(exclude)
        self._check()
        handle = result(self._core.call("matching", "[method]matcher.excluding",
                                        self._handle, ids, categories, tags))
        return type(self)(handle, self._core)

    def _narrow(self, exclude: Optional[Exclude],
                first_party: Optional[FirstParty]) -> "Matcher":
        """This matcher, or (``exclude`` or ``first_party`` given) a new one
        without the excluded patterns and with the rule, this one (and any
        step between) closed."""
        current = self
        for step, option in ((Matcher.excluding, exclude), (Matcher.with_first_party, first_party)):
            if option is None:
                continue
            try:
                narrowed = step(current, option)
            finally:
                current.close()
            current = narrowed
        return current

    # -- using --------------------------------------------------------------

    def is_noise(self, event: EventLike) -> bool:
        """Whether any pattern matches a text of the event."""
        texts = _texts(event)
        return self._core.run(lambda: _fast.read_bool(self._call("[method]matcher.is-noise", texts)))

    def is_noise_many(self, events: Iterable[EventLike]) -> List[bool]:
        """``is_noise`` of every event, in order, in one call into the
        component: the fast way for a batch (a call costs more than
        matching). The events cross as one JSON text. A malformed event is a
        ``TypeError``, as for ``is_noise``, and nothing is matched.
        """
        rows = []
        for event in events:
            e = to_event(event)
            frames = _fast.check_event(e.exception_type, e.message, e.frames, e.user_agent)
            rows.append({"type": e.exception_type, "message": e.message, "frames": frames,
                         "userAgent": e.user_agent})
        # UTF-8 here, before anything is allocated in the component (a lone
        # surrogate raises UnicodeEncodeError, a ValueError).
        text = json.dumps(rows, ensure_ascii=False, separators=(",", ":")).encode()

        def work() -> List[bool]:
            self._check()
            func = self._core.func("matching", "[method]matcher.is-noise-json")
            raw = _fast.call_with_string(func, self._core.store, self._handle, text)
            noise, refusal = _fast.read_bool_list_result(raw)
            if noise is None:
                raise Refusal(refusal or "events refused")
            return noise

        return self._core.run(work)

    def classify(self, event: EventLike) -> Verdict:
        """Every pattern that matched, and which text."""
        texts = _texts(event)

        def work() -> Verdict:
            raw = self._call("[method]matcher.classify", texts)
            lifted = self._verdict_type().convert_from_c(raw)
            return _verdict(lifted)

        return self._core.run(work)

    @property
    def patterns(self) -> List[Pattern]:
        """The patterns, in the order they were given (a property, as npm's
        ``matcher.patterns``)."""
        self._check()
        lifted = self._core.call("matching", "[method]matcher.patterns", self._handle)
        return [
            Pattern(id=p.id, pattern=p.pattern, type=p.kind, category=p.category,
                    confidence=p.confidence)
            for p in lifted
        ]

    def close(self) -> None:
        """Frees the compiled set in the component now (else when collected)."""
        handle, self._handle = self._handle, None
        if handle is not None:
            self._core.disown(handle)
            if self._generation == self._core.generation:
                self._core.run(lambda: handle.drop(self._core.store))

    def __enter__(self) -> "Matcher":
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def __del__(self) -> None:
        handle = getattr(self, "_handle", None)
        if handle is not None:
            self._core.defer_drop(self._generation, handle)

    # -- internals ------------------------------------------------------------

    def _check(self) -> None:
        if self._handle is None:
            raise ValueError("this matcher was closed")
        if self._generation != self._core.generation:
            raise RuntimeError("this matcher's component instance was restarted after a trap; "
                               "build the matcher again")

    def _call(self, name: str, texts: Tuple[Any, ...]) -> Any:
        self._check()
        func = self._core.func("matching", name)
        return _fast.call_with_event(func, self._core.store, self._handle, *texts)

    def _verdict_type(self) -> Any:
        cache = self._core.__dict__.setdefault("_verdict_types", {})
        ty = cache.get(self._core.generation)
        if ty is None:
            func = self._core.func("matching", "[method]matcher.classify")
            ty = cache[self._core.generation] = func.type(self._core.store).result
        return ty


_FIRST_PARTY_FIELDS = ("origins", "paths")
_EXCLUDE_FIELDS = ("ids", "categories", "tags")


def exclude_lists(exclude: Exclude) -> Tuple[List[str], List[str], List[str]]:
    """The lists of an ``exclude`` option (ids, categories, tags), as given:
    the core checks their words. The option's shape is checked here, as npm's."""
    ids, categories, tags = _option_lists("exclude", _EXCLUDE_FIELDS, exclude)
    return ids, categories, tags


def first_party_lists(first_party: FirstParty) -> Tuple[List[str], List[str]]:
    """The lists of a ``first_party`` option (origins, paths), as given: the
    core checks their words. The option's shape is checked here, as npm's."""
    origins, paths = _option_lists("first_party", _FIRST_PARTY_FIELDS, first_party)
    return origins, paths


def _option_lists(option: str, fields: Tuple[str, ...], value: Any) -> List[List[str]]:
    """The lists of an option (``exclude``, ``first_party``), in ``fields``'
    order, each absent one empty; a value of another shape is a ``TypeError``."""
    if not isinstance(value, Mapping):
        shape = ", ".join(f"{field!r}: [...]" for field in fields)
        raise TypeError(f"{option} is {{{shape}}}")
    unknown = set(value) - set(fields)
    if unknown:
        raise TypeError(f"{option}: unknown field {', '.join(sorted(map(str, unknown)))}")
    lists = []
    for name in fields:
        given = value.get(name, ())
        try:
            items = None if isinstance(given, (str, bytes)) else list(given)
        except TypeError:
            items = None
        if items is None or not all(isinstance(item, str) for item in items):
            raise TypeError(f"{option}: {name} is a list of str")
        lists.append(items)
    return lists


def _texts(value: EventLike) -> Tuple[Any, ...]:
    event = to_event(value)
    frames = _fast.check_event(event.exception_type, event.message, event.frames,
                               event.user_agent)
    return (event.exception_type, event.message, frames, event.user_agent)


def _pattern_record(p: Union[Pattern, Mapping[str, Any]]) -> Any:
    if isinstance(p, Mapping):
        unknown = set(p) - {"id", "pattern", "type", "kind", "category", "confidence"}
        if unknown:
            raise TypeError(f"unknown pattern fields: {', '.join(sorted(unknown))}")
        p = Pattern(id=p.get("id", ""), pattern=p.get("pattern", ""),
                    type=p.get("type", p.get("kind", "string")),
                    category=p.get("category", ""), confidence=p.get("confidence", 1.0))
    if not isinstance(p, Pattern):
        raise TypeError(f"a pattern is a Pattern or a dict, not {type(p).__name__}")
    for name in ("id", "pattern", "category"):
        if not isinstance(getattr(p, name), str):
            raise TypeError(f"pattern {name} must be a str")
    if p.type not in ("string", "regex"):
        raise ValueError(f"pattern type must be 'string' or 'regex', not {p.type!r}")
    if isinstance(p.confidence, bool) or not isinstance(p.confidence, (int, float)):
        raise TypeError("pattern confidence must be a number")
    return record(id=p.id, pattern=p.pattern, kind=p.type, category=p.category,
                  confidence=float(p.confidence))


def _verdict(lifted: Any) -> Verdict:
    matches = []
    for m in lifted.matches:
        f = m.field  # a Variant: message, frame(index), user-agent
        name = {"message": "message", "frame": "frame", "user-agent": "userAgent"}[f.tag]
        matches.append(Match(id=m.id, category=m.category, confidence=m.confidence, field=name,
                             index=f.payload if f.tag == "frame" else None,
                             tags=tuple(m.tags)))
    return Verdict(noise=bool(lifted.noise), matches=matches)


__all__ = ["FirstParty", "Matcher", "first_party_lists"]
