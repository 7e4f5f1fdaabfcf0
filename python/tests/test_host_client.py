"""The client against the real server: `noise-filter serve` over its
SQLite store, with a key and a custom pattern made by its own admin CLI.

`NOISE_FILTER_HOST_BIN` names the binary (`cargo xtask embed test` sets it
when the host is built, and `cargo xtask ci` always builds it); without it
these tests are skipped, saying so.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import threading
from pathlib import Path
from typing import Any, Iterator, List, Optional

import pytest

from noise_filter import Client, Outcome

OWN = {"message": "TypeError: x is undefined", "frames": ["https://shop.example/acme-legacy-widget.js"]}
BOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
REAL = {"message": "TypeError: order.total is undefined", "frames": ["https://shop.example/app.js"]}


def host_bin() -> str:
    path = os.environ.get("NOISE_FILTER_HOST_BIN")
    if not path:
        pytest.skip("NOISE_FILTER_HOST_BIN is not set: the client is not tried against the real "
                    "host (build it: cargo build -p noise-filter-host; cargo xtask embed test then "
                    "finds it, and cargo xtask ci always runs these tests)")
    if not Path(path).is_file():
        pytest.fail(f"NOISE_FILTER_HOST_BIN={path} is not a file")
    return path


class Host:
    """`noise-filter serve` on a port of 127.0.0.1 (0: any free one)."""

    def __init__(self, state: Path) -> None:
        self.bin = host_bin()
        self.state = state
        self.proc: Optional["subprocess.Popen[str]"] = None
        self.port = 0

    def admin(self, *args: str) -> str:
        done = subprocess.run([self.bin, *args, "--state-dir", str(self.state)],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        return done.stdout

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> str:
        self.proc = subprocess.Popen(
            [self.bin, "serve", "--listen", f"127.0.0.1:{self.port}", "--state-dir",
             str(self.state)],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert self.proc.stdout is not None
        first = self.proc.stdout.readline()
        assert first.startswith("listening on http://127.0.0.1:"), first
        self.port = int(first.strip().rsplit(":", 1)[1])
        # Whatever else it prints is read, so a full pipe never blocks it.
        threading.Thread(target=self.proc.stdout.read, daemon=True).start()
        return self.url

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(timeout=30)
            self.proc = None


@pytest.fixture
def host(tmp_path: Path) -> Iterator[Host]:
    server = Host(tmp_path)
    yield server
    server.stop()


def account(host: Host) -> str:
    """A key of account acme, which has one custom pattern."""
    key = host.admin("keys", "create", "--account", "acme", "--label", "python client").strip()
    assert key.startswith("nf_"), key
    host.admin("patterns", "add", "--account", "acme", "--pattern", "acme-legacy-widget.js",
               "--category", "third-party-script")
    return key


def test_the_client_keeps_the_accounts_set_from_the_real_host(host: Host) -> None:
    key = account(host)
    url = host.start()
    errors: List[BaseException] = []
    client = Client(url, key, refresh=False, on_error=errors.append)
    assert client.wait_ready(60)
    assert client.set is not None and client.set.etag and client.set.version
    assert client.is_noise(OWN), "the account's own pattern"
    assert client.is_noise({"message": "x", "userAgent": BOT}), "the built-in catalog"
    assert not client.is_noise(REAL)
    assert client.refresh() == Outcome(304, 300.0)  # the host's max-age=300
    assert errors == []

    b = Client(url, key, variant="api", min_confidence=0.9, refresh=False)
    assert b.wait_ready(60)
    assert b.set is not None and b.set.version is None  # Variant B has none
    assert b.is_noise(OWN)
    assert all(p.confidence >= 0.9 for p in b.matcher.patterns)
    client.close()
    b.close()


def test_while_the_host_is_down_the_last_good_set_and_after_a_restart_a_304(host: Host) -> None:
    key = account(host)
    url = host.start()
    errors: List[BaseException] = []
    client = Client(url, key, refresh=False, on_error=errors.append, random=lambda: 1.0)
    assert client.wait_ready(60)
    etag = client.set.etag if client.set else None
    host.stop()
    assert client.refresh() == Outcome(0, 5.0)
    assert client.is_noise(OWN), "the last good set"
    assert len(errors) == 1
    host.start()  # the same port, the same store
    assert client.refresh() == Outcome(304, 300.0)
    assert client.set is not None and client.set.etag == etag
    client.close()


def test_a_revoked_key_keeps_the_last_good_set(host: Host) -> None:
    key = account(host)
    url = host.start()
    errors: List[BaseException] = []
    client = Client(url, key, refresh=False, on_error=errors.append, random=lambda: 0.5)
    assert client.wait_ready(60)
    # A key is named by the start of its SHA-256 (the store keeps only that).
    host.admin("keys", "revoke", hashlib.sha256(key.encode()).hexdigest()[:12])
    assert client.refresh() == Outcome(401, 2.5)
    assert "401" in str(errors[-1])
    assert client.is_noise(OWN)
    client.close()


def test_the_sentry_integration_with_a_client_of_the_host(host: Host, sentry_init: Any) -> None:
    import sentry_sdk

    from noise_filter.sentry import NoiseFilterIntegration

    key = account(host)
    client = Client(host.start(), key, refresh=False)
    assert client.wait_ready(60)
    sent = sentry_init(integrations=[NoiseFilterIntegration(client)])
    for frame, value in (("https://shop.example/acme-legacy-widget.js", "x is undefined"),
                         ("https://shop.example/app.js", "order.total is undefined")):
        sentry_sdk.capture_event({"exception": {"values": [
            {"type": "TypeError", "value": value,
             "stacktrace": {"frames": [{"filename": frame}]}}]}})
    sentry_sdk.flush()
    client.close()
    assert [e["exception"]["values"][0]["value"] for e in sent] == ["order.total is undefined"]
