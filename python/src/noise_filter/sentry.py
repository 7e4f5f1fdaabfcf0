"""Filtering sentry-python's events: an integration and a ``before_send``.

``NoiseFilterIntegration`` goes into ``sentry_sdk.init(integrations=[...])``
beside the user's own ``before_send``; ``create_before_send`` is the same
filter as a ``before_send`` for those who write their hooks themselves. Both
read the event as the npm package's Sentry integration does (the message,
the thrown exception and its frames, the request's ``User-Agent``: see
:func:`noise_filter.to_event`), and decide with a :class:`Matcher` or a
:class:`Client` (its current set, never waiting on the network).

They fail open: an exception inside the filter (the matcher's, the
``on_noise`` callback's) keeps the event and goes to ``on_error``; only
error events are looked at (transactions and check-ins pass).

Needs ``sentry-sdk`` 2 (``pip install 'noise-filter[sentry]'``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from typing import Any, Callable, Dict, List, Optional, Protocol, Tuple

import sentry_sdk
from sentry_sdk.integrations import Integration
from sentry_sdk.integrations.logging import ignore_logger
from sentry_sdk.scope import add_global_event_processor
from sentry_sdk.types import Event as SentryEvent
from sentry_sdk.types import Hint

from ._types import Verdict
from .matcher import Exclude, FirstParty, exclude_lists, first_party_lists

__all__ = ["Classifier", "NoiseFilterIntegration", "create_before_send"]

_log = logging.getLogger("noise_filter.sentry")

BeforeSend = Callable[[SentryEvent, Hint], Optional[SentryEvent]]
OnNoise = Callable[[Verdict, SentryEvent, Hint], None]
OnError = Callable[[BaseException], None]

#: The tags of tag mode, as the npm integration writes them.
TAG = "noise_filter"
PATTERNS_TAG = "noise_filter.patterns"


class Classifier(Protocol):
    """What the filter decides with: a :class:`noise_filter.Matcher` or a
    :class:`noise_filter.Client` (its current set). An ``is_noise`` method,
    when there is one, is asked first."""

    def classify(self, event: Any) -> Verdict: ...


def _log_error(error: BaseException) -> None:
    _log.warning("noise-filter kept an event it could not classify: %r", error)


class _Filter:
    """The filter both forms share: the event itself, ``None`` to drop it."""

    def __init__(self, matcher: Classifier, mode: str, on_noise: Optional[OnNoise],
                 on_error: Optional[OnError], first_party: Optional[FirstParty] = None,
                 exclude: Optional[Exclude] = None) -> None:
        if mode not in ("drop", "tag"):
            raise ValueError("mode is 'drop' or 'tag'")
        if matcher is None or not callable(getattr(matcher, "classify", None)):
            raise TypeError("a matcher (noise_filter.Matcher) or a client (noise_filter.Client) "
                            "is needed")
        self.matcher = matcher
        self.mode = mode
        self.on_noise = on_noise
        self.on_error = on_error or _log_error
        self.first_party: Optional[Dict[str, List[str]]] = None
        self.exclude: Optional[Dict[str, List[str]]] = None
        # (the matcher it was made from, the matcher narrowed: without the
        # excluded patterns, with the rule): a client's matcher changes with
        # each new set.
        self._narrowed: Optional[Tuple[Any, Classifier]] = None
        if exclude is not None:
            ids, categories, tags = exclude_lists(exclude)
            self.exclude = {"ids": ids, "categories": categories, "tags": tags}
        if first_party is not None:
            origins, paths = first_party_lists(first_party)
            self.first_party = {"origins": origins, "paths": paths}
        if self.exclude is not None or self.first_party is not None:
            self._decider()  # refused now, with the core's text, not at each event

    def __call__(self, event: SentryEvent, hint: Hint) -> Optional[SentryEvent]:
        if not isinstance(event, Mapping):
            return event
        # sentry-sdk types `type` as its two other kinds; an SDK may still
        # write "error" (npm's integration passes it too).
        kind: object = event.get("type")
        if kind is not None and kind != "error":
            return event
        try:
            # `is_noise` first where there is one: most events are clean, and
            # it costs a fraction of `classify` (whose verdict crosses back
            # through wasmtime-py's generic conversion).
            decider = self._decider()
            is_noise = getattr(decider, "is_noise", None)
            if callable(is_noise) and not is_noise(event):
                return event
            verdict = decider.classify(event)
            if not verdict.noise:
                return event
        except Exception as error:  # never lose a report over the filter
            self._report(error)
            return event
        if self.on_noise is not None:
            try:
                self.on_noise(verdict, event, hint)
            except Exception as error:  # the application's counter must not change the outcome
                self._report(error)
        if self.mode == "drop":
            return None
        try:
            _tag(event, verdict)
        except Exception as error:
            self._report(error)
        return event

    def _decider(self) -> Classifier:
        """What decides now: the matcher (a client's current one) without
        the excluded patterns and with the first-party rule, when asked."""
        if self.exclude is None and self.first_party is None:
            return self.matcher
        current: Any = self.matcher
        if not callable(getattr(current, "excluding", None)):
            current = getattr(current, "matcher", None)
            if not callable(getattr(current, "excluding", None)):
                raise TypeError("exclude and first_party need a noise_filter.Matcher or Client")
        narrowed = self._narrowed
        if narrowed is None or narrowed[0] is not current:
            step: Any = current
            if self.exclude is not None:
                step = step.excluding(self.exclude)
            if self.first_party is not None:
                ruled = step.with_first_party(self.first_party)
                if step is not current:
                    step.close()
                step = ruled
            # The previous one is left to the garbage collector: another
            # thread may be classifying with it.
            narrowed = self._narrowed = (current, step)
        return narrowed[1]

    def _report(self, error: BaseException) -> None:
        try:
            self.on_error(error)
        except Exception:  # the application's handler must not break the filter
            pass


def _tag(event: SentryEvent, verdict: Verdict) -> None:
    ids = ",".join(dict.fromkeys(m.id for m in verdict.matches))
    tags = event.get("tags")
    if isinstance(tags, list):  # Sentry's other form: [key, value] pairs
        event["tags"] = tags + [[TAG, "noise"], [PATTERNS_TAG, ids]]
    else:
        event["tags"] = {**(tags if isinstance(tags, Mapping) else {}), TAG: "noise",
                         PATTERNS_TAG: ids}


def create_before_send(matcher: Classifier, *, mode: str = "drop",
                       on_noise: Optional[OnNoise] = None,
                       on_error: Optional[OnError] = None,
                       exclude: Optional[Exclude] = None,
                       first_party: Optional[FirstParty] = None) -> BeforeSend:
    """A ``before_send`` that answers ``None`` for noise (the SDK drops it)
    and the event otherwise: ``sentry_sdk.init(before_send=create_before_send(matcher))``.

    ``mode="tag"`` keeps noise and tags it (``noise_filter: noise``,
    ``noise_filter.patterns: <ids>``); ``on_noise(verdict, event, hint)``
    hears of each noisy event in either mode; ``on_error(exception)`` of
    each event kept because the filter failed (default: a warning on the
    ``noise_filter.sentry`` logger). ``exclude`` (``{"ids": [...],
    "categories": [...], "tags": [...]}``, as npm's) leaves those patterns
    out (:meth:`noise_filter.Matcher.excluding`) and ``first_party``
    (``{"origins": [...], "paths": [...]}``, as npm's ``firstParty``) adds
    the "not our code" rule (:meth:`noise_filter.Matcher.with_first_party`),
    to the matcher or to each set of a client; an entry the core refuses
    raises :class:`noise_filter.Refusal` here, not at an event.
    """
    return _Filter(matcher, mode, on_noise, on_error, first_party, exclude)


class NoiseFilterIntegration(Integration):
    """``sentry_sdk.init(integrations=[NoiseFilterIntegration(matcher)])``.

    Takes the same options as :func:`create_before_send`. The user's own
    ``before_send`` still runs, on the events the filter keeps.

    Where it runs: sentry-python runs global event processors first, before
    the processors the framework integrations (WSGI, Flask, Django, ASGI)
    put on each request's scope, and those are what add ``request`` and its
    ``User-Agent``. The one step after every processor is ``before_send``.
    So ``setup_once`` adds a global event processor that, for each client,
    puts the filter in front of the client's ``before_send`` (once; the
    user's hook is called after it): it sees the event as sent.
    """

    identifier = "noise_filter"

    def __init__(self, matcher: Classifier, *, mode: str = "drop",
                 on_noise: Optional[OnNoise] = None,
                 on_error: Optional[OnError] = None,
                 exclude: Optional[Exclude] = None,
                 first_party: Optional[FirstParty] = None) -> None:
        self.filter = _Filter(matcher, mode, on_noise, on_error, first_party, exclude)
        self._lock = threading.Lock()

    @staticmethod
    def setup_once() -> None:
        # Its own warnings (a failed classification) must not become events
        # or breadcrumbs of the event being filtered.
        ignore_logger(_log.name)
        add_global_event_processor(_install)

    def _put_in_front(self, options: Dict[str, Any]) -> None:
        with self._lock:
            current = options.get("before_send")
            if getattr(current, "noise_filter", None) is self:
                return
            options["before_send"] = _Chained(self, current)


class _Chained:
    """The integration's filter, then the user's ``before_send`` (if any)."""

    def __init__(self, integration: NoiseFilterIntegration,
                 user: Optional[BeforeSend]) -> None:
        self.noise_filter = integration
        self.user = user

    def __call__(self, event: SentryEvent, hint: Hint) -> Optional[SentryEvent]:
        kept = self.noise_filter.filter(event, hint)
        if kept is None or self.user is None:
            return kept
        return self.user(kept, hint)


def _install(event: SentryEvent, hint: Hint) -> SentryEvent:
    """The global event processor: changes no event; makes sure the
    current client's ``before_send`` starts with the filter."""
    client = sentry_sdk.get_client()
    integration = client.get_integration(NoiseFilterIntegration)
    if integration is not None:
        integration._put_in_front(client.options)
    return event
