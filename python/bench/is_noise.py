"""`Matcher.is_noise` against a naive pure-Python loop over the same catalog.

    python bench/is_noise.py core/catalog/eval.toml      (or: cargo xtask embed bench)

The naive loop is what a Python pipeline would write without the package:
every built-in pattern, `pattern.lower() in text.lower()` for substrings and
a precompiled `re.search(pattern, text, re.I)` for regexes, over the event's
texts (message, frames, user agent), stopping at the first match. Both run
over the evaluation set's clean ("real") and noisy events, in one process,
best of several rounds; `is_noise_many` (one call for a batch) in batches
of 20, 100 and the whole set. Also reports what loading the component and building
a matcher cost. A measurement, not a test: it asserts nothing about speed.
"""

from __future__ import annotations

import re
import statistics
import sys
import time
from typing import Callable, List, Sequence

try:
    import tomllib
except ImportError:  # Python < 3.11
    import tomli as tomllib  # type: ignore[no-redef]

import noise_filter as nf
from noise_filter import Event, Matcher


def per_event_us(run: Callable[[Sequence[Event]], object], events: Sequence[Event],
                 rounds: int) -> float:
    """Best of `rounds` of the mean time a call, in microseconds."""
    best = []
    for _ in range(rounds):
        t = time.perf_counter()
        run(events)
        best.append((time.perf_counter() - t) / len(events) * 1e6)
    return min(best)


def main() -> None:
    eval_path = sys.argv[1] if len(sys.argv) > 1 else "../core/catalog/eval.toml"
    with open(eval_path, "rb") as f:
        data = tomllib.load(f)
    events = {"clean": [], "noisy": []}  # type: dict
    for e in data["event"]:
        events["noisy" if e["label"] == "noise" else "clean"].append(
            Event(message=e.get("message"), frames=e.get("frames", []),
                  user_agent=e.get("user_agent")))

    t = time.perf_counter()
    cold = nf.Runtime(cache=False)
    compile_s = time.perf_counter() - t
    nf.Runtime(cache=True)  # fills wasmtime's cache if empty
    t = time.perf_counter()
    rt = nf.Runtime(cache=True)
    cached_s = time.perf_counter() - t
    t = time.perf_counter()
    core = nf.Core(rt)
    instantiate_ms = (time.perf_counter() - t) * 1e3
    del cold

    builds = {}
    for name, build in [("builtin(0.0)", lambda: Matcher.builtin(0.0, core=core)),
                        ("builtin(0.5)", lambda: Matcher.builtin(0.5, core=core))]:
        times = []
        for _ in range(5):
            t = time.perf_counter()
            m = build()
            times.append((time.perf_counter() - t) * 1e3)
            m.close()
        builds[name] = statistics.median(times)
    matcher = Matcher.builtin(0.0, core=core)
    patterns = matcher.patterns
    t = time.perf_counter()
    Matcher.from_patterns(patterns, core=core).close()
    builds[f"from_patterns({len(patterns)} patterns)"] = (time.perf_counter() - t) * 1e3

    substrings: List[str] = []
    regexes: List["re.Pattern[str]"] = []
    skipped = 0
    for p in patterns:
        if p.type == "string":
            substrings.append(p.pattern.lower())
        else:
            try:
                regexes.append(re.compile(p.pattern, re.IGNORECASE))
            except re.error:
                skipped += 1

    def naive(event: Event) -> bool:
        texts = ([event.message] if event.message else []) + list(event.frames) + (
            [event.user_agent] if event.user_agent else [])
        for text in texts:
            lowered = text.lower()
            for s in substrings:
                if s in lowered:
                    return True
            for r in regexes:
                if r.search(text):
                    return True
        return False

    def run_naive(evs: Sequence[Event]) -> None:
        for e in evs:
            naive(e)

    def run_wasm(evs: Sequence[Event]) -> None:
        for e in evs:
            matcher.is_noise(e)

    def batches_of(size: int) -> Callable[[Sequence[Event]], None]:
        def run(evs: Sequence[Event]) -> None:
            for start in range(0, len(evs), size):
                matcher.is_noise_many(evs[start:start + size])
        return run

    print(f"noise-filter {nf.__name__}: component {nf.component_path()}")
    print(f"load: compile {compile_s:.2f} s (no cache), {cached_s * 1e3:.0f} ms "
          f"(wasmtime cache hit), instantiate {instantiate_ms:.1f} ms")
    for name, ms in builds.items():
        print(f"build: Matcher.{name}: {ms:.1f} ms")
    print(f"catalog: {len(substrings)} substrings, {len(regexes)} regexes "
          f"({skipped} not valid Python regexes, left out of the naive loop)")
    agree = sum(naive(e) == matcher.is_noise(e) for evs in events.values() for e in evs)
    total = sum(len(evs) for evs in events.values())
    print(f"agreement naive vs core on is_noise: {agree}/{total}")
    for kind, evs in events.items():
        assert matcher.is_noise_many(evs) == [matcher.is_noise(e) for e in evs]
        n = per_event_us(run_naive, evs, 5)
        w = per_event_us(run_wasm, evs, 5)
        print(f"{kind} ({len(evs)} events): is_noise {w:.1f} us/event, naive {n:.1f} us/event, "
              f"x{n / w:.1f}")
        for size in (20, 100, len(evs)):
            b = per_event_us(batches_of(size), evs, 5)
            print(f"{kind} ({len(evs)} events): is_noise_many, batches of {size}: "
                  f"{b:.1f} us/event, x{n / b:.1f} the naive loop")


if __name__ == "__main__":
    main()
