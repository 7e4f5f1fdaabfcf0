import os

import sentry_sdk

from noise_filter import Matcher
from noise_filter.sentry import NoiseFilterIntegration

sentry_sdk.init(
    dsn=os.environ["SENTRY_DSN"],
    integrations=[NoiseFilterIntegration(Matcher.builtin(), on_noise=lambda verdict, event, hint: print(
        "dropped:", ", ".join(m.id for m in verdict.matches)))],
)
sentry_sdk.capture_message("Script error.")  # dropped: <the ids of the patterns that matched>
sentry_sdk.capture_exception(ValueError("invoice total is negative"))  # sent
