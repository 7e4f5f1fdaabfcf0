"""A client of a running noise-filter service, as the npm package's
``createClient`` (``npm/src/client.js``).

It keeps the account's pattern set (the built-in catalog plus the account's
own patterns, as the service serves them), refreshes it in a background
thread as the service's cache headers advise, and always has a matcher to
give: the last good set, else the built-in catalog. The patterns are read
and matched by the core (:meth:`Matcher.from_response`); this module only
decides when to ask.

Refresh policy (the npm client's, in seconds):

* 200: the new set; the next refresh after the response's ``max-age``,
  kept between 5 and 15 minutes (the interface advises caching 5 to 15).
* 304 (sent ``If-None-Match`` with the last ETag): the set is current; the
  same schedule as a 200.
* 429: after ``Retry-After`` (seconds or an HTTP date), at least 1 s.
* network errors, 5xx, a body that is not a pattern list, any other answer:
  exponential backoff with full jitter from 5 s, doubling, capped at 15
  minutes; a success resets it.

Nothing here raises into the application once the client is made: failures
go to ``on_error``. The thread is a daemon (it never keeps the process
alive) and is started again in a forked child (a server that forks its
workers after loading the application).
"""

from __future__ import annotations

import email.utils
import json
import logging
import os
import random as _random
import re
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import weakref
import zlib
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional, Tuple

from ._types import Verdict
from .matcher import EventLike, Exclude, FirstParty, Matcher

__all__ = ["Client", "FilterSet", "Outcome"]

_log = logging.getLogger("noise_filter")

REFRESH_MIN = 5 * 60.0
REFRESH_MAX = 15 * 60.0
BACKOFF_FIRST = 5.0
#: A body (compressed or not) larger than this is refused: the service's is
#: about 200 KB with every pattern.
MAX_BODY = 16 * 1024 * 1024
USER_AGENT = "noise-filter-python"

#: The refresh thread's clock (a test replaces it).
_monotonic = time.monotonic

_MAX_AGE = re.compile(r'(?:^|,)\s*max-age\s*=\s*"?(\d+)"?', re.IGNORECASE)


@dataclass(frozen=True)
class FilterSet:
    """The fetched set: its ETag, its ``version`` (Variant A) and when the
    service last confirmed it (Unix seconds, by the client's clock)."""

    etag: Optional[str]
    version: Optional[str]
    fetched_at: float


@dataclass(frozen=True)
class Outcome:
    """What a refresh did: ``status`` is the HTTP status, 0 when no answer
    came (network error), -1 when the client is closed; ``next`` is how
    many seconds until the next refresh (None when closed)."""

    status: int
    next: Optional[float]


def max_age(cache_control: Optional[str]) -> Optional[float]:
    """``max-age`` of a ``Cache-Control`` value, in seconds."""
    m = _MAX_AGE.search(cache_control or "")
    return float(m.group(1)) if m else None


def retry_after(value: Optional[str], now: float) -> Optional[float]:
    """``Retry-After`` (delay-seconds or an HTTP date) in seconds from ``now``."""
    if value is None:
        return None
    value = value.strip()
    if value.isdigit() and value.isascii():
        return float(value)
    try:
        at = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if at.tzinfo is None:  # RFC 9110 dates are GMT
        return None
    return max(0.0, at.timestamp() - now)


def _next_refresh(answer: "_Answer") -> float:
    """After a 200 or 304: the answer's ``max-age``, kept within 5 to 15 minutes."""
    age = max_age(answer.header("Cache-Control"))
    return min(REFRESH_MAX, max(REFRESH_MIN, REFRESH_MIN if age is None else age))


class _Answer:
    """An HTTP answer: status, headers (case-insensitive), decoded body."""

    def __init__(self, status: int, headers: Any, body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body

    def header(self, name: str) -> Optional[str]:
        value = self.headers.get(name) if self.headers is not None else None
        return value if isinstance(value, str) else None


def _read(stream: Any, headers: Any) -> bytes:
    raw = stream.read(MAX_BODY + 1)
    if len(raw) > MAX_BODY:
        raise ValueError(f"the body is larger than {MAX_BODY} bytes")
    coding = (headers.get("Content-Encoding") or "identity").strip().lower()
    if coding in ("gzip", "x-gzip"):
        inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
        body = inflate.decompress(raw, MAX_BODY + 1)
        if len(body) > MAX_BODY or inflate.unconsumed_tail:
            raise ValueError(f"the body is larger than {MAX_BODY} bytes")
        if not inflate.eof:
            raise ValueError("the gzip body is cut short")
        return body
    if coding != "identity":
        raise ValueError(f"the service answered with Content-Encoding {coding!r}, "
                         "which this client does not decode")
    return bytes(raw)


class Client:
    """Keeps an account's pattern set from a noise-filter service current.

    ``Client(url, key)`` starts at once: usable before any answer (the
    built-in catalog), it fetches ``<url>/v1/filters`` in a daemon thread
    and refreshes as the service's cache headers say. ``variant="api"``
    asks ``/api/v1/filters``; ``min_confidence`` is sent as
    ``minConfidence`` (and applies to the built-in fallback);
    ``exclude`` (``{"ids": [...], "categories": [...], "tags": [...]}``)
    leaves those patterns out of every set it matches with, fetched or
    built in (:meth:`Matcher.excluding`); ``first_party`` (``{"origins":
    [...], "paths": [...]}``) adds the "not our code" rule to every such set
    (:meth:`Matcher.with_first_party`); both are refused at once with the
    core's text;
    ``refresh=False`` fetches once and leaves further refreshes to
    :meth:`refresh`; ``on_error(exception)`` hears of each failure (default:
    a warning on the ``noise_filter`` logger); ``timeout`` bounds each
    request, in seconds. ``clock`` (Unix seconds) and ``random`` (0 to 1)
    are for tests.

    It asks for gzip (``Accept-Encoding: gzip``) and reads either coding.
    """

    def __init__(
        self,
        url: str,
        key: str,
        *,
        variant: str = "v1",
        min_confidence: Optional[float] = None,
        exclude: Optional[Exclude] = None,
        first_party: Optional[FirstParty] = None,
        refresh: bool = True,
        on_error: Optional[Callable[[BaseException], None]] = None,
        timeout: float = 10.0,
        clock: Callable[[], float] = time.time,
        random: Callable[[], float] = _random.random,
    ) -> None:
        if not isinstance(url, str) or urllib.parse.urlsplit(url).scheme not in ("http", "https"):
            raise TypeError("url is the service's base URL (https://filters.example.com)")
        if not isinstance(key, str) or not key:
            raise TypeError("key is an API key")
        if variant not in ("v1", "api"):
            raise ValueError("variant is 'v1' or 'api'")
        if min_confidence is not None and (isinstance(min_confidence, bool)
                                           or not isinstance(min_confidence, (int, float))):
            raise TypeError("min_confidence is a number from 0 to 1")
        if exclude is not None or first_party is not None:
            # Checked now, as a wrong url is: the core's text, raised here.
            Matcher.from_patterns([], exclude=exclude, first_party=first_party).close()
        path = "v1/filters" if variant == "v1" else "api/v1/filters"
        endpoint = urllib.parse.urljoin(url if url.endswith("/") else url + "/", path)
        if min_confidence is not None:
            endpoint += "?" + urllib.parse.urlencode({"minConfidence": _number(min_confidence)})
        self.endpoint = endpoint
        self._key = key
        self._min_confidence = min_confidence
        self._exclude = exclude
        self._first_party = first_party
        self._refresh = refresh
        self._on_error = on_error
        self._timeout = timeout
        self._clock = clock
        self._random = random
        self._fetched: Optional[Tuple[Matcher, FilterSet]] = None
        self._builtin: Optional[Matcher] = None
        self._failures = 0
        self._closed = False
        self._attempts = 0
        self._last: Outcome = Outcome(-1, None)
        self._due = _monotonic()  # when the background thread refreshes next
        self._reset_threading()
        _CLIENTS.add(self)
        self._start()

    # -- what the application uses -------------------------------------------

    @property
    def matcher(self) -> Matcher:
        """The matcher to use now: the service's last good set, else the
        built-in catalog."""
        fetched = self._fetched
        if fetched is not None:
            return fetched[0]
        with self._state:
            if self._builtin is None:
                self._builtin = Matcher.builtin(
                    None if self._min_confidence is None else float(self._min_confidence),
                    exclude=self._exclude, first_party=self._first_party)
            return self._builtin

    def is_noise(self, event: EventLike) -> bool:
        """``is_noise`` of the current matcher (see :meth:`Matcher.is_noise`)."""
        return self.matcher.is_noise(event)

    def classify(self, event: EventLike) -> Verdict:
        """``classify`` of the current matcher (see :meth:`Matcher.classify`)."""
        return self.matcher.classify(event)

    @property
    def set(self) -> Optional[FilterSet]:
        """The fetched set's ETag, version and when it was last confirmed;
        None before any."""
        fetched = self._fetched
        return fetched[1] if fetched is not None else None

    def wait_ready(self, timeout: Optional[float] = None) -> bool:
        """Waits until the first fetch has ended, whatever its outcome;
        False if ``timeout`` (seconds) passed first."""
        return self._ready.wait(timeout)

    def refresh(self) -> Outcome:
        """Fetches now, in this thread (a refresh already running is joined,
        not repeated); never raises. The background schedule restarts from
        its outcome."""
        if self._closed:
            return Outcome(-1, None)
        seen = self._attempts
        with self._running:
            if self._attempts != seen:  # one ended while this call waited
                return self._last
            try:
                outcome = self._attempt()
            except Exception as error:  # a bug here must not reach the application
                self._report(error)
                outcome = Outcome(0, self._backoff())
            self._attempts += 1
            self._last = outcome
        self._ready.set()
        if outcome.next is not None:
            self._due = _monotonic() + outcome.next
        self._wake.set()
        return outcome

    def close(self) -> None:
        """Stops refreshing; the current matcher stays usable."""
        self._closed = True
        self._wake.set()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # -- one attempt -----------------------------------------------------------

    def _attempt(self) -> Outcome:
        fetched = self._fetched
        headers = {"Authorization": f"Bearer {self._key}", "Accept": "application/json",
                   "Accept-Encoding": "gzip", "User-Agent": USER_AGENT}
        if fetched is not None and fetched[1].etag:
            headers["If-None-Match"] = fetched[1].etag
        try:
            answer = self._get(headers)
        except Exception as error:
            self._report(error)
            return Outcome(0, self._backoff())
        started = self._clock()
        if answer.status == 200:
            try:
                matcher = Matcher.from_response(answer.body, exclude=self._exclude,
                                                first_party=self._first_party)
                self._fetched = (matcher, FilterSet(etag=answer.header("ETag"),
                                                    version=_version(answer.body),
                                                    fetched_at=started))
            except Exception as error:
                self._report(error)
                return Outcome(200, self._backoff())
            self._failures = 0
            return Outcome(200, _next_refresh(answer))
        if answer.status == 304 and fetched is not None:
            confirmed = FilterSet(etag=fetched[1].etag, version=fetched[1].version,
                                  fetched_at=started)
            self._fetched = (fetched[0], confirmed)
            self._failures = 0
            return Outcome(304, _next_refresh(answer))
        self._report(RuntimeError(f"noise-filter: {urllib.parse.urlsplit(self.endpoint).path} "
                                  f"answered {answer.status}"))
        if answer.status == 429:
            wait = retry_after(answer.header("Retry-After"), started)
            if wait is not None:
                return Outcome(429, max(1.0, wait))
        return Outcome(answer.status, self._backoff())

    def _get(self, headers: Mapping[str, str]) -> _Answer:
        request = urllib.request.Request(self.endpoint, headers=dict(headers))
        try:
            with _OPENER.open(request, timeout=self._timeout) as response:
                return _Answer(response.status, response.headers, _read(response, response.headers))
        except urllib.error.HTTPError as error:
            # urllib raises for every status but 2xx, 304 included.
            with error:
                body = b"" if error.code == 304 else _read(error, error.headers)
                return _Answer(error.code, error.headers, body)

    def _backoff(self) -> float:
        # The exponent stops growing once the cap is reached (a float power
        # overflows after about a thousand failures).
        cap = min(REFRESH_MAX, BACKOFF_FIRST * 2.0 ** min(self._failures, 16))
        self._failures += 1
        return max(1.0, round(self._random() * cap, 3))

    def _report(self, error: BaseException) -> None:
        try:
            if self._on_error is None:
                _log.warning("noise-filter client: %s", error)
            else:
                self._on_error(error)
        except Exception:  # the application's handler must not break the client
            pass

    # -- the background thread ---------------------------------------------------

    def _reset_threading(self) -> None:
        self._state = threading.Lock()
        self._running = threading.Lock()
        self._wake = threading.Event()
        self._ready = threading.Event()

    def _start(self) -> None:
        ref = weakref.ref(self)
        thread = threading.Thread(target=_refresher, args=(ref, not self._ready.is_set()),
                                  name="noise-filter-refresh", daemon=True)
        thread.start()
        self._thread = thread

    def _after_fork(self) -> None:
        # Only the forking thread lives on in the child: the refresher and
        # any lock it held are gone. The set and the schedule are kept.
        ready = self._ready.is_set()
        self._reset_threading()
        if ready:
            self._ready.set()
        if not self._closed and self._refresh:
            self._start()


def _refresher(ref: "weakref.ReferenceType[Client]", first: bool) -> None:
    """The thread: the first fetch at once (when not done yet), then each
    refresh when due. Holds the client only while working, so a client the
    application dropped is collected and its thread ends."""
    if first:
        client = ref()
        if client is None or client._closed:
            return
        client.refresh()
        del client
    while True:
        client = ref()
        if client is None or client._closed or not client._refresh:
            return
        wake = client._wake
        wait = client._due - _monotonic()
        del client
        if wait > 0:
            # Woken early by close() or a refresh() of the application's;
            # at most a minute at a time, so a dropped client is noticed.
            wake.wait(min(wait, 60.0))
            wake.clear()
            continue
        client = ref()
        if client is None or client._closed:
            return
        client.refresh()
        del client


class _KeepKeyOnHost(urllib.request.HTTPRedirectHandler):
    """Follows redirects (an http:// URL sent to https://), but the API key
    goes only to the host it was given for: urllib would send every header
    on to any host a redirect names."""

    def redirect_request(self, req: urllib.request.Request, fp: Any, code: int, msg: str,
                         headers: Any, newurl: str) -> Optional[urllib.request.Request]:
        new = super().redirect_request(req, fp, code, msg, headers, newurl)
        if new is not None and urllib.parse.urlsplit(newurl).netloc != \
                urllib.parse.urlsplit(req.full_url).netloc:
            new.headers = {k: v for k, v in new.headers.items() if k.lower() != "authorization"}
            new.unredirected_hdrs.pop("Authorization", None)
        return new


_OPENER = urllib.request.build_opener(_KeepKeyOnHost)


def _version(body: bytes) -> Optional[str]:
    try:
        version: object = json.loads(body).get("version")
    except Exception:
        return None
    return version if isinstance(version, str) else None


def _number(value: float) -> str:
    return str(value) if isinstance(value, int) else repr(float(value))


_CLIENTS: "weakref.WeakSet[Client]" = weakref.WeakSet()


def _after_fork_in_child() -> None:
    for client in list(_CLIENTS):
        client._after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
