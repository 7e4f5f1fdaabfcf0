"""The sentry-python integration with the real sentry-sdk from PyPI: the
events the SDK would send are kept by a transport of the test's own."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional

import pytest

sentry_sdk = pytest.importorskip("sentry_sdk")

from conftest import SentryInit  # noqa: E402
from sentry_sdk.integrations.wsgi import SentryWsgiMiddleware  # noqa: E402

from noise_filter import Matcher, Verdict  # noqa: E402
from noise_filter.sentry import NoiseFilterIntegration, create_before_send  # noqa: E402

BOT = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
BROWSER = "Mozilla/5.0 (X11; Linux x86_64; rv:130.0) Gecko/20100101 Firefox/130.0"


@pytest.fixture
def init(sentry_init: SentryInit) -> SentryInit:
    return sentry_init


def wallet() -> None:
    raise TypeError("Cannot redefine property: ethereum")


def real() -> None:
    raise ValueError("invoice total is negative")


def capture(fn: Callable[[], None]) -> None:
    try:
        fn()
    except Exception as error:
        sentry_sdk.capture_exception(error)


def values(sent: List[Dict[str, Any]]) -> List[Optional[str]]:
    return [e["exception"]["values"][-1]["value"] if "exception" in e else e.get("message")
            for e in sent]


def test_the_issues_before_send_lambda_now_keeps_real_errors(init: SentryInit) -> None:
    """Issue 29: `is_noise` raised on a sentry-python event and the SDK
    dropped every error (`callback_error`)."""
    matcher = Matcher.builtin(0.5)
    sent = init(before_send=lambda e, h: None if matcher.is_noise(e) else e)
    capture(wallet)
    capture(real)
    sentry_sdk.capture_message("Script error.")
    sentry_sdk.flush()
    assert values(sent) == ["invoice total is negative"]


def test_noise_is_not_sent_real_errors_are_and_the_users_before_send_runs(init: SentryInit) -> None:
    noisy: List[Verdict] = []
    seen: List[Optional[str]] = []

    def mine(event: Any, hint: Any) -> Any:
        seen.extend(values([event]))
        event.setdefault("tags", {})["mine"] = "yes"
        return event

    sent = init(integrations=[NoiseFilterIntegration(Matcher.builtin(0.5),
                                                     on_noise=lambda v, e, h: noisy.append(v))],
                before_send=mine)
    capture(wallet)
    capture(real)
    sentry_sdk.capture_message("Script error.")
    sentry_sdk.flush()
    assert values(sent) == ["invoice total is negative"]
    assert sent[0]["tags"]["mine"] == "yes"
    assert seen == ["invoice total is negative"], "the user's hook sees only what is kept"
    assert [sorted({m.id for m in v.matches}) for v in noisy] == [
        ["ethereum-redefine"], ["cross-origin-script-error", "script-error-string"]]


def wsgi_errors(init: SentryInit, integration: NoiseFilterIntegration,
                agents: List[str]) -> List[str]:
    """A WSGI app under sentry-sdk's middleware failing once per user agent:
    the user agents of the errors that reached Sentry."""
    sent = init(integrations=[integration])

    def app(environ: Dict[str, Any], start_response: Any) -> List[bytes]:
        raise RuntimeError("order total is negative")

    wrapped = SentryWsgiMiddleware(app)
    for agent in agents:
        environ = {"REQUEST_METHOD": "GET", "PATH_INFO": "/checkout",
                   "SERVER_NAME": "shop.example", "SERVER_PORT": "80",
                   "wsgi.url_scheme": "http", "HTTP_HOST": "shop.example",
                   "HTTP_USER_AGENT": agent}
        with pytest.raises(RuntimeError):
            wrapped(environ, lambda *a: None)
    sentry_sdk.flush()
    return [e["request"]["headers"]["User-Agent"] for e in sent]


def test_the_request_user_agent_is_read_from_a_wsgi_apps_errors(init: SentryInit) -> None:
    # Only the browser's: the crawler's error is noise by its user agent,
    # which the WSGI integration adds after global event processors ran.
    assert wsgi_errors(init, NoiseFilterIntegration(Matcher.builtin(0.5)),
                       [BOT, BROWSER]) == [BROWSER]


def test_tag_mode_sends_noise_with_the_verdict_as_tags(init: SentryInit) -> None:
    sent = init(integrations=[NoiseFilterIntegration(Matcher.builtin(0.5), mode="tag")])
    sentry_sdk.set_tag("release-train", "blue")
    capture(wallet)
    capture(real)
    sentry_sdk.flush()
    assert len(sent) == 2
    noise, clean = sent
    assert noise["tags"] == {"release-train": "blue", "noise_filter": "noise",
                             "noise_filter.patterns": "ethereum-redefine"}
    assert "noise_filter" not in clean["tags"]


class Throwing:
    def classify(self, event: Any) -> Verdict:
        raise RuntimeError("the matcher broke")


def test_a_matcher_that_throws_keeps_the_event_and_reports_it(init: SentryInit) -> None:
    errors: List[BaseException] = []
    sent = init(integrations=[NoiseFilterIntegration(Throwing(), on_error=errors.append)])
    capture(wallet)
    capture(real)
    sentry_sdk.flush()
    assert values(sent) == ["Cannot redefine property: ethereum", "invoice total is negative"]
    assert [str(e) for e in errors] == ["the matcher broke"] * 2


def test_callbacks_that_throw_change_nothing(init: SentryInit) -> None:
    def broken(*_: Any) -> None:
        raise ZeroDivisionError()

    sent = init(integrations=[NoiseFilterIntegration(Matcher.builtin(0.5), on_noise=broken,
                                                     on_error=broken)])
    capture(wallet)
    capture(real)
    sentry_sdk.flush()
    assert values(sent) == ["invoice total is negative"]


def test_transactions_pass_untouched(init: SentryInit) -> None:
    seen: List[str] = []

    class Recorder:
        def classify(self, event: Any) -> Verdict:
            seen.append(event.get("type", "error"))
            return Verdict(noise=True)

    sent = init(integrations=[NoiseFilterIntegration(Recorder())], traces_sample_rate=1.0)
    with sentry_sdk.start_transaction(name="checkout"):
        pass
    capture(real)
    sentry_sdk.flush()
    assert [e.get("type") for e in sent] == ["transaction"]
    assert seen == ["error"]


def test_a_client_is_a_matcher_too(init: SentryInit) -> None:
    from noise_filter import Client

    # Nothing listens there: the client answers with the built-in catalog.
    client = Client("http://127.0.0.1:9", "nf_" + "0" * 48, refresh=False,
                    on_error=lambda e: None)
    sent = init(integrations=[NoiseFilterIntegration(client)])
    capture(wallet)
    capture(real)
    sentry_sdk.flush()
    client.close()
    assert values(sent) == ["invoice total is negative"]


def test_create_before_send_is_the_same_filter(init: SentryInit) -> None:
    dropped: List[Verdict] = []
    sent = init(before_send=create_before_send(Matcher.builtin(0.5),
                                               on_noise=lambda v, e, h: dropped.append(v)))
    capture(wallet)
    capture(real)
    sentry_sdk.flush()
    assert values(sent) == ["invoice total is negative"]
    assert len(dropped) == 1


def test_a_second_init_filters_with_its_own_integration(init: SentryInit) -> None:
    init(integrations=[NoiseFilterIntegration(Matcher.builtin(0.5))])
    capture(wallet)
    sentry_sdk.flush()
    sentry_sdk.get_client().close()
    everything = Matcher.from_patterns([{"id": "all", "pattern": "negative"}])
    sent = init(integrations=[NoiseFilterIntegration(everything)])
    capture(wallet)
    capture(real)
    sentry_sdk.flush()
    assert values(sent) == ["Cannot redefine property: ethereum"]


def test_bad_options_are_refused_at_once() -> None:
    with pytest.raises(ValueError, match="'drop' or 'tag'"):
        NoiseFilterIntegration(Matcher.builtin(), mode="hide")
    with pytest.raises(TypeError, match="a matcher"):
        NoiseFilterIntegration(None)  # type: ignore[arg-type]


def test_first_party_drops_an_error_raised_and_caught_wholly_elsewhere(
        init: SentryInit, tmp_path: Any) -> None:
    """The integration with the real sentry-sdk: an exception whose
    traceback holds only frames outside the application's paths (a library
    that catches and reports its own error) is dropped; one raised through
    the application's code is sent."""
    module = tmp_path / "vendored.py"
    module.write_text(
        "import sentry_sdk\n"
        "def report():\n"
        "    try:\n"
        "        raise RuntimeError('widget exploded')\n"
        "    except RuntimeError as error:\n"
        "        sentry_sdk.capture_exception(error)\n"
        "def explode():\n"
        "    raise RuntimeError('widget exploded')\n")
    namespace: Dict[str, Any] = {}
    exec(compile(module.read_text(), str(module), "exec"), namespace)
    here = __file__.rsplit("/", 1)[0] + "/"
    noisy: List[Verdict] = []
    sent = init(integrations=[NoiseFilterIntegration(
        Matcher.builtin(0.5), first_party={"paths": [here]},
        on_noise=lambda v, e, h: noisy.append(v))])
    namespace["report"]()
    capture(namespace["explode"])  # through this file's `capture`
    capture(real)
    sentry_sdk.flush()
    assert values(sent) == ["widget exploded", "invoice total is negative"]
    assert [[(m.id, m.category) for m in v.matches] for v in noisy] == [
        [("first-party-rule", "third-party-script")]]


def test_first_party_off_unless_given_and_refused_at_once(init: SentryInit, tmp_path: Any) -> None:
    from noise_filter import Client, Refusal

    with pytest.raises(Refusal, match="firstParty: origins\\[0\\]"):
        NoiseFilterIntegration(Matcher.builtin(), first_party={"origins": ["shop.example"]})
    with pytest.raises(Refusal, match="firstParty: paths\\[0\\]"):
        create_before_send(Matcher.builtin(), first_party={"paths": ["srv/"]})
    with pytest.raises(Refusal, match="firstParty: no origins"):
        Client("http://127.0.0.1:9", "nf_" + "0" * 48, refresh=False, first_party={})
    # A client's sets get the rule; the same event is sent without it.
    client = Client("http://127.0.0.1:9", "nf_" + "0" * 48, refresh=False,
                    on_error=lambda e: None, first_party={"origins": ["https://shop.example"]})
    elsewhere = {"exception": {"values": [{"type": "Error", "value": "x", "stacktrace": {
        "frames": [{"filename": "https://cdn.injected.example/a.js"}]}}]}}
    sent = init(before_send=create_before_send(client))
    sentry_sdk.capture_event(dict(elsewhere))
    sentry_sdk.flush()
    assert sent == [], "the client's sets have the rule"
    assert client.is_noise(elsewhere)
    client.close()
    plain = init(integrations=[NoiseFilterIntegration(Matcher.builtin(0.5))])
    sentry_sdk.capture_event(dict(elsewhere))
    sentry_sdk.flush()
    assert len(plain) == 1


HEADLESS = ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
            "HeadlessChrome/131.0.0.0 Safari/537.36")


def test_exclude_lets_an_end_to_end_runs_headless_browser_through(init: SentryInit) -> None:
    """An end-to-end run's server errors, its browser HeadlessChrome: the
    catalog counts that as bot traffic, so without `exclude` they are
    dropped; with the one pattern left out they are sent, and a crawler's
    are still dropped. A client's sets are narrowed the same way, and a
    wrong word is refused at once."""
    from noise_filter import Client, Refusal

    plain = NoiseFilterIntegration(Matcher.builtin(0.5))
    assert wsgi_errors(init, plain, [HEADLESS, BOT]) == []
    e2e = NoiseFilterIntegration(Matcher.builtin(0.5), exclude={"ids": ["headless-chrome"]})
    assert wsgi_errors(init, e2e, [HEADLESS, BOT]) == [HEADLESS]
    client = Client("http://127.0.0.1:9", "nf_" + "0" * 48, refresh=False,
                    on_error=lambda e: None, exclude={"tags": ["browser-automation"]})
    assert wsgi_errors(init, NoiseFilterIntegration(client), [HEADLESS, BOT]) == [HEADLESS]
    client.close()
    with pytest.raises(Refusal, match="exclude: tags\\[0\\]"):
        create_before_send(Matcher.builtin(), exclude={"tags": ["headless"]})
    with pytest.raises(Refusal, match="exclude: categories\\[0\\]"):
        Client("http://127.0.0.1:9", "nf_" + "0" * 48, refresh=False,
               exclude={"categories": ["bots"]})
