import os

import sentry_sdk

from noise_filter import Matcher
from noise_filter.sentry import NoiseFilterIntegration

# The settings your end-to-end tests run with: their browser (Playwright's,
# Puppeteer's) sends HeadlessChrome, which the catalog counts as a bot.
sentry_sdk.init(
    dsn=os.environ["SENTRY_DSN"],
    integrations=[NoiseFilterIntegration(
        Matcher.builtin(), exclude={"ids": ["headless-chrome"]},
        on_noise=lambda verdict, event, hint: print("dropped:", verdict.matches[0].id))],
)

test_browser = ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
                "HeadlessChrome/131.0.0.0 Safari/537.36")
crawler = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"
for agent in (test_browser, crawler):
    # An error of a request from that user agent: the test run's is sent.
    sentry_sdk.capture_event({"message": "order total is negative",
                              "request": {"headers": {"User-Agent": agent}}})
