"""What the matcher reads: strings, exceptions, Sentry events, the core's dicts.

The reading of a Sentry event is one rule for Python and JavaScript: every
event of `core/tests/parity/sentry-events.json`, and events the real
sentry-sdk sends, are read by `to_event` and by the npm package's `toEvent`
(`npm/src/matching.js`, run by node) to the same texts.
"""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Dict, List

import pytest

from conftest import SentryInit
from noise_filter import Event, Matcher, to_event

ROOT = Path(__file__).resolve().parents[2]

SENTRY_EVENTS = json.loads((ROOT / "core/tests/parity/sentry-events.json").read_text())["cases"]


def reads(event: Event) -> Dict[str, Any]:
    """An event as the fixtures and npm's toEvent write it: absent texts left out."""
    out: Dict[str, Any] = {"frames": list(event.frames)}
    for name, value in (("type", event.exception_type), ("message", event.message),
                        ("userAgent", event.user_agent)):
        if value is not None:
            out[name] = value
    return out


def npm_reads(events: List[Any]) -> List[Dict[str, Any]]:
    """npm's `toEvent` of each event, from the package's source."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed: the npm package's reader cannot be compared")
    script = (
        "import { toEvent } from " + json.dumps((ROOT / "npm/src/matching.js").as_uri()) + ";"
        "let text = ''; process.stdin.on('data', (d) => (text += d));"
        "process.stdin.on('end', () => process.stdout.write(JSON.stringify("
        "JSON.parse(text).map((e) => toEvent(e)))));"
    )
    done = subprocess.run([node, "--input-type=module", "-e", script], input=json.dumps(events),
                          capture_output=True, text=True, timeout=60, check=True)
    answer: List[Dict[str, Any]] = json.loads(done.stdout)
    return answer


@pytest.mark.parametrize("case", SENTRY_EVENTS, ids=[c["name"] for c in SENTRY_EVENTS])
def test_a_sentry_event_is_read_as_the_table_says(case: Dict[str, Any]) -> None:
    assert reads(to_event(case["event"])) == case["reads"]


def test_npm_reads_every_sentry_event_of_the_table_alike() -> None:
    got = npm_reads([c["event"] for c in SENTRY_EVENTS])
    assert got == [c["reads"] for c in SENTRY_EVENTS]


def test_a_message_is_a_str() -> None:
    m = Matcher.builtin()
    assert to_event("Script error.") == Event(message="Script error.")
    assert m.is_noise("Script error.")
    # A string that names a type is a message like any other.
    assert not m.is_noise("TypeError")
    assert not m.is_noise("ValueError: invoice total is negative")


class Outer:
    class WalletError(Exception):
        pass


def raise_in_extension() -> None:
    raise TypeError("Cannot redefine property: ethereum")


def test_an_exception_is_read_with_its_qualified_type_notes_and_traceback() -> None:
    try:
        raise_in_extension()
    except TypeError as error:
        event = to_event(error)
        assert Matcher.builtin().is_noise(error)
    assert event.exception_type == "TypeError"
    assert event.message == "Cannot redefine property: ethereum"
    # Oldest first: this test's frame, then the function that raised.
    assert list(event.frames) == [__file__, __file__]

    nested = Outer.WalletError("no provider")
    if sys.version_info >= (3, 11):
        nested.add_note("while connecting")
        assert to_event(nested) == Event(exception_type="Outer.WalletError",
                                         message="no provider\nwhile connecting", frames=[])
    assert to_event(nested).exception_type == "Outer.WalletError"


def test_frames_a_tracker_hides_are_left_out() -> None:
    def helper() -> None:
        __tracebackhide__ = True  # noqa: F841 (pytest's and sentry's marker)
        raise ValueError("x")

    try:
        helper()
    except ValueError as error:
        assert len(to_event(error).frames) == 1


def test_an_exception_whose_str_raises_is_still_read() -> None:
    class Odd(Exception):
        def __str__(self) -> str:
            raise RuntimeError("no text")

    event = to_event(Odd())
    assert event.exception_type.endswith("Odd") and event.message is not None


def test_the_cores_shape_is_strict_and_a_sentry_event_is_not() -> None:
    with pytest.raises(TypeError, match="unknown event fields: breadcrumbs, contexts"):
        to_event({"message": "x", "breadcrumbs": [], "contexts": {}})
    # The event: what sentry-python passes to before_send.
    sentry_event = {"event_id": "e", "level": "error", "breadcrumbs": {"values": []},
                    "contexts": {}, "message": "Script error.", "extra": {"sys.argv": []}}
    assert to_event(sentry_event) == Event(message="Script error.", frames=[])
    with pytest.raises(TypeError, match="an event is an Event, a dict"):
        to_event(42)


# -- events the real sentry-sdk sends -------------------------------------------

@pytest.fixture
def sent(sentry_init: SentryInit) -> List[Dict[str, Any]]:
    from sentry_sdk.integrations.logging import LoggingIntegration

    return sentry_init(integrations=[LoggingIntegration()])


def thrown_exceptions() -> List[BaseException]:
    """Exceptions as applications raise them, each with its traceback."""
    made: List[BaseException] = []

    def catch(fn: Any) -> None:
        try:
            fn()
        except BaseException as error:  # noqa: BLE001 (ExceptionGroup included)
            made.append(error)

    def chained() -> None:
        try:
            {}["missing"]
        except KeyError as cause:
            raise ConnectionResetError(104, "Connection reset by peer") from cause

    def noted() -> None:
        error = Outer.WalletError("Cannot redefine property: ethereum")
        error.add_note("injected by a wallet")
        raise error

    def group() -> None:
        raise ExceptionGroup("tasks failed", [ValueError("a"), TypeError("Failed to fetch")])

    catch(raise_in_extension)
    catch(chained)
    catch(lambda: 1 / 0)
    if sys.version_info >= (3, 11):  # notes and exception groups
        catch(noted)
        catch(group)
    return made


def test_an_exception_reads_as_sentry_python_reports_it(sent: List[Dict[str, Any]]) -> None:
    import sentry_sdk

    errors = thrown_exceptions()
    for error in errors:
        sentry_sdk.capture_exception(error)
    sentry_sdk.flush()
    assert len(sent) == len(errors)
    for error, event in zip(errors, sent):
        assert to_event(event) == to_event(error), repr(error)
        assert to_event(error).frames, "each has its traceback"


def test_npm_reads_what_sentry_python_sends_alike(sent: List[Dict[str, Any]]) -> None:
    import sentry_sdk
    from sentry_sdk.integrations.wsgi import SentryWsgiMiddleware

    errors = thrown_exceptions()
    for error in errors:
        sentry_sdk.capture_exception(error)
    sentry_sdk.capture_message("Script error.")
    logging.getLogger("app.payments").error("charge %s failed: %s", 42, "Failed to fetch")

    def app(environ: Dict[str, Any], start_response: Any) -> List[bytes]:
        raise RuntimeError("invoice total is negative")

    environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/checkout", "SERVER_NAME": "shop.example",
               "SERVER_PORT": "80", "wsgi.url_scheme": "http", "HTTP_HOST": "shop.example",
               "HTTP_USER_AGENT": "Mozilla/5.0 (compatible; bingbot/2.0)"}
    with pytest.raises(RuntimeError):
        SentryWsgiMiddleware(app)(environ, lambda *a: None)
    sentry_sdk.flush()

    assert len(sent) == len(errors) + 3
    python = [reads(to_event(e)) for e in sent]
    assert python[-1]["userAgent"] == "Mozilla/5.0 (compatible; bingbot/2.0)"
    assert python[-2]["message"] == "charge 42 failed: Failed to fetch"
    assert npm_reads(sent) == python

