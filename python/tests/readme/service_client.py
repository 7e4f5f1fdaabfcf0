import os

from noise_filter import Client

# Usable at once (the built-in catalog until the first answer); refreshed in a daemon thread.
filters = Client(os.environ["NOISE_FILTER_URL"], os.environ["NOISE_FILTER_KEY"])
filters.wait_ready(timeout=10)  # optional: the first fetch has ended, whatever its outcome
print(filters.set is not None)  # True: the account's set (its etag, version, fetched_at)
print(filters.is_noise({"message": "x", "frames": ["https://shop.example/acme-legacy-widget.js"]}))  # True
