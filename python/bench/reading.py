"""What reading an event costs, and the Sentry filter on a clean event.

    python bench/reading.py   (with the package and sentry-sdk installed)

Prints the median of runs of many calls, per call: `to_event` and
`is_noise` of the same event given as the core's dict, as a sentry-python
event and as an exception, and for a clean sentry-python event `classify`,
`is_noise` and the integration's filter (`create_before_send`); then
`sentry_sdk.capture_exception` of a clean error without and with
`NoiseFilterIntegration` (a transport that sends nothing).
"""

from __future__ import annotations

import json
import statistics
import time
from pathlib import Path
from typing import Any, Callable

import sentry_sdk
from sentry_sdk.transport import Transport

from noise_filter import Matcher, to_event
from noise_filter.sentry import NoiseFilterIntegration, create_before_send

ROOT = Path(__file__).resolve().parents[2]
UA = "Mozilla/5.0 (X11; Linux x86_64; rv:130.0) Gecko/20100101 Firefox/130.0"


def per_call(fn: Callable[[], Any], n: int) -> float:
    for _ in range(n // 10):
        fn()
    runs = []
    for _ in range(7):
        start = time.perf_counter()
        for _ in range(n):
            fn()
        runs.append((time.perf_counter() - start) / n * 1e6)
    return statistics.median(runs)


def main() -> None:
    matcher = Matcher.builtin(0.5)
    cases = json.loads((ROOT / "core/tests/parity/sentry-events.json").read_text())["cases"]
    sentry = next(c["event"] for c in cases if c["event"].get("platform") == "python")
    sentry["request"]["headers"]["User-Agent"] = UA  # a browser's: the event is clean
    core = {"type": "ConnectionResetError", "message": "[Errno 104] Connection reset by peer",
            "frames": ["/srv/app/app/views.py",
                       "/usr/lib/python3/site-packages/requests/adapters.py"],
            "userAgent": UA}
    try:
        raise ConnectionResetError(104, "Connection reset by peer")
    except ConnectionResetError as error:
        exc = error
    for name, event in (("core dict", core), ("sentry-python event", sentry), ("exception", exc)):
        read = per_call(lambda: to_event(event), 20_000)
        noise = per_call(lambda: matcher.is_noise(event), 2_000)
        print(f"{name}: to_event {read:.1f} us, is_noise {noise:.1f} us")
    filter_ = create_before_send(matcher)
    print(f"clean sentry-python event: classify {per_call(lambda: matcher.classify(sentry), 2_000):.0f}"
          f" us, is_noise {per_call(lambda: matcher.is_noise(sentry), 2_000):.0f} us, the filter "
          f"{per_call(lambda: filter_(sentry, {}), 2_000):.0f} us")
    print(f"capture_exception: without the integration {capture([]):.0f} us, with it "
          f"{capture([NoiseFilterIntegration(matcher)]):.0f} us")


class Nowhere(Transport):
    def capture_envelope(self, envelope: Any) -> None:
        pass


def capture(integrations: Any) -> float:
    sentry_sdk.init(dsn="https://public@sentry.example.invalid/1", transport=Nowhere,
                    default_integrations=False, integrations=integrations)

    def once() -> None:
        try:
            raise ValueError("invoice total is negative")
        except ValueError as error:
            sentry_sdk.capture_exception(error)

    took = per_call(once, 400)
    sentry_sdk.get_client().close()
    return took


if __name__ == "__main__":
    main()
