"""The README's snippets are the files of `readme/`, included verbatim (a
test fails when they drift apart), and each one runs here, as a user would
run it, against the installed package (`test_types.py` type-checks them)."""

from __future__ import annotations

import json
import os
import runpy
import subprocess
import sys
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Dict, Iterator, List

import pytest

HERE = Path(__file__).resolve().parent
README = (HERE.parent / "README.md").read_text()
SNIPPETS = sorted((HERE / "readme").glob("*.py"))


@pytest.mark.parametrize("snippet", SNIPPETS, ids=[s.name for s in SNIPPETS])
def test_the_readme_includes_the_snippet_verbatim(snippet: Path) -> None:
    assert "```python\n" + snippet.read_text() + "```" in README, (
        f"README.md lacks the text of tests/readme/{snippet.name}")


def run(name: str, **env: str) -> str:
    done = subprocess.run([sys.executable, str(HERE / "readme" / name)], capture_output=True,
                          text=True, timeout=120, env={**os.environ, **env})
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_matching() -> None:
    assert run("matching.py").splitlines() == [
        "True", "False", "('ethereum-redefine', 'message')", "regex [True, False]"]


def test_serving_in_memory() -> None:
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL"}
    done = subprocess.run([sys.executable, str(HERE / "readme" / "serving.py")],
                          capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "200 public, max-age=300\nTrue\n"


def test_serving_on_redis(redis_url: str) -> None:
    assert run("serving.py", REDIS_URL=redis_url) == "200 public, max-age=300\nTrue\n"


def test_wsgi() -> None:
    app = runpy.run_path(str(HERE / "readme" / "wsgi.py"))["app"]
    started: List[Any] = []
    body = app({"REQUEST_METHOD": "GET", "PATH_INFO": "/v1/filters", "QUERY_STRING": "",
                "HTTP_AUTHORIZATION": "Bearer"}, lambda *a: started.append(a))
    assert started[0][0] == "401 -"
    assert ("content-length", str(len(body[0]))) in started[0][1]
    assert json.loads(body[0]) == {"error": "API key required"}


def test_service_client() -> None:
    from test_client import Service

    service = Service()
    service.start()
    try:
        out = run("service_client.py", NOISE_FILTER_URL=service.url, NOISE_FILTER_KEY=service.key)
    finally:
        service.stop()
    assert out == "True\nTrue\n"


class Ingest:
    """A Sentry ingestion endpoint of the test's own: keeps every envelope's
    events (what `sentry_sdk` sends to the DSN's host)."""

    def __init__(self) -> None:
        self.events: List[Dict[str, Any]] = []
        ingest = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                raw = self.rfile.read(int(self.headers["Content-Length"]))
                if self.headers.get("Content-Encoding") == "gzip":
                    raw = zlib.decompress(raw, 16 + zlib.MAX_WBITS)
                elif self.headers.get("Content-Encoding") == "br":  # with brotli installed
                    import brotli

                    raw = brotli.decompress(raw)
                lines = raw.split(b"\n")
                for header, payload in zip(lines[1::2], lines[2::2]):
                    if json.loads(header).get("type") == "event":
                        ingest.events.append(json.loads(payload))
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *_: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def dsn(self) -> str:
        return f"http://public@127.0.0.1:{self.server.server_address[1]}/1"


@pytest.fixture
def ingest() -> Iterator[Ingest]:
    pytest.importorskip("sentry_sdk")
    server = Ingest()
    yield server
    server.server.shutdown()
    server.server.server_close()


def test_sentry_integration(ingest: Ingest) -> None:
    out = run("sentry_integration.py", SENTRY_DSN=ingest.dsn)
    assert out.startswith("dropped: ") and "script-error" in out
    # The process flushed at exit: the real error reached the DSN, the noise did not.
    assert [e["exception"]["values"][-1]["value"] for e in ingest.events] == [
        "invoice total is negative"]


def test_first_party(ingest: Ingest) -> None:
    out = run("first_party.py", SENTRY_DSN=ingest.dsn)
    assert out.splitlines() == ["dropped: first-party-rule"]
    assert [e["exception"]["values"][-1]["value"] for e in ingest.events] == [
        "invoice total is negative"]


def test_exclude(ingest: Ingest) -> None:
    out = run("exclude.py", SENTRY_DSN=ingest.dsn)
    assert out.splitlines() == ["dropped: googlebot"]
    assert [e["request"]["headers"]["User-Agent"] for e in ingest.events] == [
        "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
        "HeadlessChrome/131.0.0.0 Safari/537.36"]
