"""The client of a running service.

Against a service of the test's own: the package's `Endpoint` (the core's
bytes over a `MemoryStore`, gzip when asked for) behind `http.server` on a
real port, which the tests make answer 429 or 500, stop and start again
(npm's client tests do the same with its handler). Against the real host:
`test_host_client.py`. Times come from the client's answers (`Outcome.next`)
and an injected clock and random source, never from waiting.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from email.utils import format_datetime
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List, Optional

import pytest

from noise_filter import Admin, Client, Endpoint, MemoryStore, Outcome
from noise_filter.client import max_age, retry_after

NOW = 1_795_435_210.5
# Only the account's own pattern says this is noise: the built-in catalog does not.
OWN = {"message": "TypeError: x is undefined", "frames": ["https://shop.example/acme-legacy-widget.js"]}
BOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"


class Service:
    """A real HTTP server answering with the core's bytes; `mode` makes it
    answer as a bad day would."""

    def __init__(self) -> None:
        self.store = MemoryStore()
        admin = Admin(self.store)
        self.key = admin.create_key("acme", "client tests").key
        admin.add_patterns("acme", [{"pattern": "acme-legacy-widget.js",
                                     "category": "third-party-script"}])
        self.endpoint = Endpoint(self.store)
        self.mode = "serve"
        self.cache_control: Optional[str] = None
        self.retry_after = "7"
        self.location = ""
        self.seen: List[Dict[str, Any]] = []
        self.port = 0
        self.server: Optional[ThreadingHTTPServer] = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> str:
        service = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's name)
                service.answer(self)

            def log_message(self, *_: Any) -> None:
                pass

        ThreadingHTTPServer.allow_reuse_address = True
        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self.url

    def stop(self) -> None:
        assert self.server is not None
        self.server.shutdown()
        self.server.server_close()

    def answer(self, request: BaseHTTPRequestHandler) -> None:
        entry = {"path": request.path, "ifNoneMatch": request.headers.get("If-None-Match"),
                 "acceptEncoding": request.headers.get("Accept-Encoding"),
                 "authorized": "Authorization" in request.headers, "status": None}
        self.seen.append(entry)
        if self.mode == "redirect" and request.path == "/v1/filters":
            return self.send(request, entry, 302, [("Location", self.location)], b"")
        if self.mode == "limited":
            return self.send(request, entry, 429, [("Retry-After", self.retry_after)],
                             b'{"error":"Rate limit exceeded"}')
        if self.mode == "broken":
            return self.send(request, entry, 500, [], b"")
        if self.mode == "html":
            return self.send(request, entry, 200, [("Content-Type", "text/html")], b"<html>")
        # The core's answer as it is: encoded when the request accepts it.
        response = self.endpoint.handle("GET", request.path, list(request.headers.items()))
        out = list(response.headers)
        body = response.body
        if self.cache_control is not None:
            out = [(n, self.cache_control if n == "cache-control" else v) for n, v in out]
        self.send(request, entry, response.status, out, body)

    def send(self, request: BaseHTTPRequestHandler, entry: Dict[str, Any], status: int,
             headers: List[Any], body: bytes) -> None:
        entry["status"] = status
        entry["bytes"] = len(body)
        entry["contentEncoding"] = dict((n.lower(), v) for n, v in headers).get("content-encoding")
        request.send_response(status)
        for name, value in headers:
            request.send_header(name, value)
        request.send_header("Content-Length", str(len(body)))
        request.end_headers()
        request.wfile.write(body)


@pytest.fixture
def service() -> Any:
    svc = Service()
    svc.start()
    yield svc
    if svc.server is not None:
        svc.server.shutdown()
        svc.server.server_close()


def client_of(service: Service, errors: Optional[List[BaseException]] = None,
              **options: Any) -> Client:
    options.setdefault("refresh", False)
    options.setdefault("clock", lambda: NOW)
    return Client(service.url, service.key,
                  on_error=(errors.append if errors is not None else None), **options)


def test_fetches_the_account_set_then_revalidates_with_its_etag(service: Service) -> None:
    errors: List[BaseException] = []
    client = client_of(service, errors)
    assert client.wait_ready(30)
    assert client.is_noise(OWN), "the fetched set holds the account's pattern"
    assert client.set is not None and client.set.etag and client.set.version
    assert client.set.fetched_at == NOW
    outcome = client.refresh()
    assert outcome == Outcome(304, 300.0)  # max-age=300
    assert [s["status"] for s in service.seen] == [200, 304]
    assert service.seen[1]["ifNoneMatch"] == client.set.etag
    assert all(s["acceptEncoding"] == "gzip" for s in service.seen)
    assert client.is_noise(OWN) and errors == []
    client.close()


def test_the_other_variant_and_min_confidence(service: Service) -> None:
    client = Client(service.url + "/", service.key, variant="api", min_confidence=0.9,
                    refresh=False)
    assert client.wait_ready(30)
    assert service.seen[0]["path"] == "/api/v1/filters?minConfidence=0.9"
    assert service.seen[0]["status"] == 200
    assert client.is_noise(OWN)
    assert all(p.confidence >= 0.9 for p in client.matcher.patterns)
    client.close()


def test_the_gzip_answer_saves_bytes_is_decoded_and_revalidated(service: Service) -> None:
    client = client_of(service)
    assert client.wait_ready(30)
    assert client.is_noise(OWN)
    first = service.seen[0]
    assert first["acceptEncoding"] == "gzip" and first["contentEncoding"] == "gzip"
    # What a client without Accept-Encoding is sent for the same list.
    identity = service.endpoint.handle("GET", "/v1/filters",
                                       [("Authorization", f"Bearer {service.key}")])
    assert not any(n == "content-encoding" for n, _ in identity.headers)
    print(f"bytes on the wire: gzip {first['bytes']}, identity {len(identity.body)}")
    assert first["bytes"] * 4 < len(identity.body)
    # The gzip answer's own tag revalidates it.
    assert client.set is not None and client.set.etag != identity.header("etag")
    assert client.refresh().status == 304
    assert service.seen[1]["ifNoneMatch"] == client.set.etag


def test_before_any_answer_and_while_away_the_last_good_set_else_the_builtin_catalog(
        service: Service) -> None:
    service.stop()  # nothing listens on that port now
    errors: List[BaseException] = []
    client = client_of(service, errors, random=lambda: 1.0)
    # Usable at once, before any answer: the built-in catalog.
    assert client.is_noise({"userAgent": BOT})
    assert not client.is_noise(OWN)
    assert client.wait_ready(30)
    assert client.set is None and len(errors) == 1
    # Backoff doubles (jitter at its top here): 5 s, then 10 s.
    assert client.refresh() == Outcome(0, 10.0)
    service.start()  # back on the same port
    assert client.refresh().status == 200
    assert client.is_noise(OWN)
    service.stop()
    assert client.refresh() == Outcome(0, 5.0), "a success reset the backoff"
    assert client.is_noise(OWN), "the last good set is kept"
    client.close()


def test_a_429_waits_for_retry_after_a_5xx_backs_off_with_jitter_and_nothing_raises(
        service: Service) -> None:
    errors: List[BaseException] = []
    client = client_of(service, errors, random=lambda: 0.5)
    assert client.wait_ready(30)
    service.mode = "limited"
    assert client.refresh() == Outcome(429, 7.0)
    service.retry_after = format_datetime(datetime.fromtimestamp(NOW + 42, timezone.utc),
                                          usegmt=True)
    assert client.refresh() == Outcome(429, 41.5)  # the date is whole seconds
    service.retry_after = "soon"
    assert client.refresh() == Outcome(429, 2.5), "an unreadable Retry-After: backoff"
    service.mode = "broken"
    assert client.refresh() == Outcome(500, 5.0)
    assert client.refresh() == Outcome(500, 10.0)
    service.mode = "html"
    assert client.refresh() == Outcome(200, 20.0), "not a pattern list: backoff"
    assert len(errors) == 6
    assert client.is_noise(OWN), "the last good set is kept"
    service.mode = "serve"
    assert client.refresh().status == 304
    client.close()


def test_max_age_is_kept_between_5_and_15_minutes(service: Service) -> None:
    service.cache_control = "public, max-age=60"
    client = client_of(service)
    assert client.wait_ready(30)
    assert client.refresh() == Outcome(304, 300.0)
    service.cache_control = 'max-age="3600", public'
    assert client.refresh() == Outcome(304, 900.0)
    service.cache_control = "public, max-age=600"
    assert client.refresh() == Outcome(304, 600.0)
    service.cache_control = "no-store"
    assert client.refresh() == Outcome(304, 300.0)


def test_a_failing_on_error_and_a_closed_client_never_raise(service: Service) -> None:
    def broken(_: BaseException) -> None:
        raise ZeroDivisionError()

    client = Client(service.url, "nf_" + "0" * 48, refresh=False, on_error=broken)
    assert client.wait_ready(30)
    assert service.seen[0]["status"] == 401
    assert client.refresh().status == 401
    client.close()
    assert client.refresh() == Outcome(-1, None)
    assert client.is_noise({"userAgent": BOT}), "still usable: the built-in catalog"


def test_the_cache_headers_are_read_as_the_npm_client_reads_them() -> None:
    assert max_age("public, max-age=300") == 300.0
    assert max_age('MAX-AGE="42"') == 42.0
    assert max_age("s-maxage=10") is None and max_age(None) is None
    assert retry_after("120", NOW) == 120.0
    assert retry_after(" 7 ", NOW) == 7.0
    assert retry_after("Sun, 06 Nov 1994 08:49:37 GMT", NOW) == 0.0  # past
    at = datetime.fromtimestamp(NOW + 90.5, timezone.utc)
    assert retry_after(format_datetime(at, usegmt=True), NOW) == 90.5
    assert retry_after("-1", NOW) is None and retry_after("later", NOW) is None
    assert retry_after(None, NOW) is None


def test_bad_options_are_refused_at_once() -> None:
    with pytest.raises(TypeError, match="key"):
        Client("http://127.0.0.1:9", "")
    with pytest.raises(TypeError, match="url"):
        Client("", "nf_x")
    with pytest.raises(ValueError, match="variant"):
        Client("http://127.0.0.1:9", "nf_x", variant="v2")
    with pytest.raises(TypeError, match="min_confidence"):
        Client("http://127.0.0.1:9", "nf_x", min_confidence="0.5")  # type: ignore[arg-type]


def test_the_refresh_thread_never_keeps_the_process_alive(service: Service) -> None:
    """A process that made a client (its thread waiting for the next
    refresh) and never closed it still ends."""
    script = (
        "import sys\n"
        "from noise_filter import Client\n"
        "c = Client(sys.argv[1], sys.argv[2])\n"
        "assert c.wait_ready(30)\n"
        "assert c._thread.is_alive() and c._thread.daemon\n"
        "print(c.set is not None)\n"
    )
    done = subprocess.run([sys.executable, "-c", script, service.url, service.key],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "True\n"


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_forked_child_refreshes_with_a_thread_of_its_own(service: Service) -> None:
    client = client_of(service, refresh=True)
    assert client.wait_ready(30)
    parent = client._thread
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report, and leave without running anything else
        ok = (client._thread is not parent and client._thread.is_alive()
              and client.set is not None and client.refresh().status == 304)
        os.write(write, b"1" if ok else b"0")
        os._exit(0)
    os.close(write)
    answer = os.read(read, 1)
    os.waitpid(pid, 0)
    os.close(read)
    client.close()
    assert answer == b"1"


def test_the_thread_refreshes_when_due_by_its_clock(service: Service,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    import noise_filter.client as module

    at = [1000.0]
    monkeypatch.setattr(module, "_monotonic", lambda: at[0])
    client = client_of(service, refresh=True)
    assert client.wait_ready(30)
    assert [s["status"] for s in service.seen] == [200]
    at[0] += 300.0  # max-age=300 later
    client._wake.set()
    deadline = threading.Event()
    for _ in range(300):  # the thread's request, within 30 s
        if len(service.seen) == 2 and service.seen[1]["status"] is not None:
            break
        deadline.wait(0.1)
    client.close()
    assert [s["status"] for s in service.seen] == [200, 304]


def test_a_redirect_is_followed_and_the_key_stays_on_its_host(service: Service) -> None:
    other = Service()
    other.start()
    try:
        elsewhere = Client(service.url, service.key, refresh=False, on_error=lambda e: None)
        assert elsewhere.wait_ready(30) and elsewhere.set is not None
        service.mode = "redirect"
        service.location = other.url + "/api/v1/filters"
        assert elsewhere.refresh().status == 401
        assert other.seen[0]["authorized"] is False, "the key went to another host"
        service.location = f"http://localhost:{service.port}/api/v1/filters"
        assert elsewhere.refresh().status == 401  # localhost is another host name
        service.location = f"{service.url}/api/v1/filters"
        assert elsewhere.refresh().status == 200, "the same host gets the key"
        assert service.seen[-1]["authorized"] and service.seen[-1]["path"] == "/api/v1/filters"
        elsewhere.close()
    finally:
        other.stop()
