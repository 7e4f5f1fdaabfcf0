"""The HTTP endpoint over a store of the embedder's choosing."""

from __future__ import annotations

import time
from typing import Dict, Iterable, Optional, Tuple, Union

from ._component import Core, record, shared_core
from ._types import Response, Store

HeaderValue = Union[str, bytes]


def now_millis() -> int:
    """The current time as the core takes it: Unix milliseconds."""
    return time.time_ns() // 1_000_000


def record_lifetimes() -> Dict[str, int]:
    """How long a store that can expire records keeps a record of each kind
    after its last write, in milliseconds, by kind (``rate-counter``: three
    rate windows); a kind not listed is kept until deleted. The core's
    figures: :class:`RedisStore` asks once, when it is made, and gives every
    record it writes its kind's lifetime."""
    return {kind: int(ms) for kind, ms in shared_core().call("endpoint", "record-lifetimes")}


class Endpoint:
    """Answers ``GET /v1/filters`` and ``GET /api/v1/filters`` requests.

    Every decision (routing, the key, the rate limit, parameters, the body,
    every header) is the core's; ``store`` only keeps bytes (see
    :class:`noise_filter.Store`). A store that raises is answered 503.
    Each endpoint has its own instance of the component; calls are
    serialised by a lock (use one endpoint per thread for parallelism).
    """

    def __init__(self, store: Store, *, core: Optional[Core] = None) -> None:
        for method in ("get", "increment", "delete"):
            if not callable(getattr(store, method, None)):
                raise TypeError(f"the store has no {method}() method")
        self.store = store
        self._core = core or Core()

    def handle(
        self,
        method: str,
        target: str,
        headers: Iterable[Tuple[str, HeaderValue]] = (),
        now: Optional[int] = None,
    ) -> Response:
        """Answers one request. ``target`` is the path and query as received
        (still percent-encoded); ``headers`` every header line in order;
        ``now`` Unix milliseconds (default: the clock)."""
        if not isinstance(method, str) or not isinstance(target, str):
            raise TypeError("method and target are str")
        lines = []
        for name, value in headers:
            if isinstance(value, str):
                value = value.encode("latin-1")
            if not isinstance(name, str) or not isinstance(value, (bytes, bytearray)):
                raise TypeError("headers are (str, str | bytes) pairs")
            lines.append((name, bytes(value)))
        at = now_millis() if now is None else now
        if isinstance(at, bool) or not isinstance(at, int) or not 0 <= at < 2**64:
            raise ValueError("now is Unix milliseconds, a non-negative int")
        request = record(method=method, target=target, headers=lines)
        raw = self._core.call("endpoint", "handle", request, at, store=self.store)
        return Response(status=raw.status, headers=list(raw.headers), body=bytes(raw.body))
