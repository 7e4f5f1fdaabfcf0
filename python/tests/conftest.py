"""Shared fixtures: the native oracle's answers and the shared request fixtures.

`cargo xtask embed test` writes the oracle (the native core's answers to
`core/tests/parity/requests.json` and its verdicts on `core/catalog/eval.toml`,
`core/examples/oracle.rs`) and points `NOISE_FILTER_ORACLE` at it.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def fixtures() -> Dict[str, Any]:
    return json.loads((ROOT / "core/tests/parity/requests.json").read_text())


@pytest.fixture(scope="session")
def oracle() -> Dict[str, Any]:
    path = os.environ.get("NOISE_FILTER_ORACLE")
    if not path:
        pytest.skip("NOISE_FILTER_ORACLE is not set: run through `cargo xtask embed test`")
    return json.loads(Path(path).read_text())


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """A redis-server of our own on a free port of 127.0.0.1."""
    server = shutil.which("redis-server")
    if server is None:
        pytest.skip("redis-server is not installed (Debian: apt-get install redis-server); "
                    "the Redis store tests need a real server")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    pytest.fail("redis-server did not start")
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


SentryInit = Callable[..., List[Dict[str, Any]]]


@pytest.fixture
def sentry_init() -> Iterator[SentryInit]:
    """``sentry_sdk.init`` (the real SDK from PyPI) with a transport of the
    test's own: returns the list of the events and transactions the SDK
    sends, as it would send them (JSON)."""
    sentry_sdk = pytest.importorskip("sentry_sdk")
    from sentry_sdk.transport import Transport

    sent: List[Dict[str, Any]] = []

    class Recording(Transport):  # type: ignore[misc]
        def capture_envelope(self, envelope: Any) -> None:
            for item in envelope.items:
                if item.type in ("event", "transaction"):
                    sent.append(json.loads(item.payload.get_bytes()))

    def start(**options: Any) -> List[Dict[str, Any]]:
        sent.clear()
        sentry_sdk.init(dsn="https://public@sentry.example.invalid/1", transport=Recording,
                        default_integrations=False, **options)
        return sent

    yield start
    sentry_sdk.get_client().close()
