import json
import os
import threading

import sentry_sdk

from noise_filter import Matcher
from noise_filter.sentry import NoiseFilterIntegration

# Where your own code lives: path prefixes of its files (and, for browser
# events, origins: {"origins": ["https://shop.example.com"]}).
here = os.path.dirname(os.path.abspath(__file__)) + os.sep
sentry_sdk.init(
    dsn=os.environ["SENTRY_DSN"],
    integrations=[NoiseFilterIntegration(
        Matcher.builtin(), first_party={"paths": [here]},
        on_noise=lambda verdict, event, hint: print("dropped:", verdict.matches[-1].id))],
)

# A thread that runs only library code fails: no frame of yours, dropped.
worker = threading.Thread(target=json.loads, args=("{",))
worker.start()
worker.join()


def checkout() -> None:
    raise ValueError("invoice total is negative")


try:
    checkout()  # your code is in the traceback: sent
except ValueError as error:
    sentry_sdk.capture_exception(error)
