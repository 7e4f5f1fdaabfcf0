"""noise-filter's core in Python, through its WebAssembly component.

Nothing is decided here: the matcher, the endpoint and the admin checks are
the Rust core's, compiled once to a component (``noise_filter_core.wasm``)
and run by wasmtime. Python converts values (``to_event`` reads exceptions,
strings and Sentry events), keeps the store, and fetches a service's
patterns (``Client``). The sentry-python integration is
``noise_filter.sentry`` (it needs ``sentry-sdk``).
"""

from ._component import Core, Runtime, component_path, runtime
from ._read import to_event
from ._types import (
    AdminStore,
    Event,
    Match,
    Pattern,
    RecordKey,
    Refusal,
    Response,
    Store,
    StoreFailure,
    Verdict,
)
from .admin import Admin, CreatedKey, CustomPattern, KeyInfo, NewPattern, Revoked
from .client import Client, FilterSet, Outcome
from .endpoint import Endpoint, now_millis
from .matcher import Exclude, FirstParty, Matcher
from .stores import MemoryStore, RedisStore

__all__ = [
    "Admin", "AdminStore", "Client", "Core", "CreatedKey", "CustomPattern", "Endpoint",
    "Event", "Exclude", "FilterSet", "FirstParty", "KeyInfo", "Match", "Matcher", "MemoryStore", "NewPattern",
    "Outcome", "Pattern", "RecordKey", "RedisStore", "Refusal", "Response", "Revoked",
    "Runtime", "Store", "StoreFailure", "Verdict", "component_path", "now_millis", "runtime",
    "to_event",
]
