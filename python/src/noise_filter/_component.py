"""Loading the component and calling it: the only module that knows wasmtime.

One :class:`Runtime` per process holds the engine, the compiled component and
the linker (compiling is the expensive part: seconds, once; wasmtime's cache
makes later processes fast). Each :class:`Core` is one instance of the
component in its own wasmtime store, with a lock: a wasmtime store is used by
one thread at a time.

The store import (``noise-filter:core/store``) is defined once on the linker.
Its functions call the embedder's store of the :class:`Core` making the call,
so every ``Endpoint`` can bring its own store.
"""

from __future__ import annotations

import logging
import os
import threading
from importlib import resources
from typing import Any, Callable, Dict, List, Optional, Tuple, TypeVar

import wasmtime
from wasmtime import component as wc
from wasmtime.component import Record, Variant

from ._types import RecordKey, Refusal, Store, StoreFailure

T = TypeVar("T")

WORLD = "noise-filter:core"
VERSION = "0.1.0"
_log = logging.getLogger("noise_filter")


_SHARED: Optional["Core"] = None
_SHARED_LOCK = threading.Lock()


def shared_core() -> "Core":
    """The process's instance for calls that bring no store of their own
    (matchers by default, the core's constants), made on first use."""
    global _SHARED
    with _SHARED_LOCK:
        if _SHARED is None:
            _SHARED = Core()
        return _SHARED


def _interface(name: str) -> str:
    return f"{WORLD}/{name}@{VERSION}"


def component_path() -> str:
    """The path of the component shipped in this package (or ``$NOISE_FILTER_WASM``)."""
    override = os.environ.get("NOISE_FILTER_WASM")
    if override:
        return override
    return str(resources.files("noise_filter").joinpath("noise_filter_core.wasm"))


class Runtime:
    """The engine, the compiled component and the linker with the store import."""

    def __init__(self, path: Optional[str] = None, cache: Optional[bool] = None) -> None:
        config = wasmtime.Config()
        if cache is None:
            cache = os.environ.get("NOISE_FILTER_WASMTIME_CACHE", "1") != "0"
        if cache:
            try:
                config.cache = True
            except wasmtime.WasmtimeError:  # no cache directory: compile every time
                pass
        self.engine = wasmtime.Engine(config)
        self.component = wc.Component.from_file(self.engine, path or component_path())
        self.linker = wc.Linker(self.engine)
        # Rust's standard library imports WASI (streams, environment, exit,
        # an insecure seed for hash maps); none of it reaches this process.
        self.linker.add_wasip2()
        with self.linker.root() as root:
            with root.add_instance(_interface("store")) as store:
                store.add_func("get", _store_get)
                store.add_func("increment", _store_increment)
                store.add_func("delete", _store_delete)


_RUNTIME: Optional[Runtime] = None
_RUNTIME_LOCK = threading.Lock()


def runtime() -> Runtime:
    """The process's runtime, loaded on first use."""
    global _RUNTIME
    with _RUNTIME_LOCK:
        if _RUNTIME is None:
            _RUNTIME = Runtime()
        return _RUNTIME


# ---------------------------------------------------------------------------
# The store import. The core calls these while a `Core` is inside a call; the
# thread-local says whose store they reach.

_CURRENT = threading.local()


def _backend() -> Store:
    store: Optional[Store] = getattr(_CURRENT, "store", None)
    if store is None:
        raise StoreFailure("no store: this instance was called without one")
    return store


def _record_key(place: Any) -> RecordKey:
    return RecordKey(kind=place.kind, label=place.label, key=place.key)


def _failed(what: str, place: Any, error: BaseException) -> None:
    _log.warning("store %s %s failed: %r (answered 503)", what, place.key, error)


# wasmtime-py lowers a host function's WIT `result` from Python values: a
# result whose `ok` and `err` values could be confused is "tagged" (a
# `Variant`), the others are bare values. The store's functions return
# `result<option<list<u8>>>` (tagged), `result<s64>` (bare: an int, or None
# for `err`) and `result` (tagged); see docs/DECISIONS.md.


def _store_get(_ctx: Any, place: Any) -> Variant:
    try:
        value = _backend().get(_record_key(place))
        if value is not None and not isinstance(value, (bytes, bytearray)):
            raise TypeError(f"get returned {type(value).__name__}, not bytes or None")
        return Variant("ok", None if value is None else bytes(value))
    except Exception as error:  # the core answers 503
        _failed("get", place, error)
        return Variant("err")


def _store_increment(_ctx: Any, place: Any, delta: int) -> Optional[int]:
    try:
        value = _backend().increment(_record_key(place), delta)
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"increment returned {type(value).__name__}, not int")
        if not -(2**63) <= value < 2**63:
            raise OverflowError("the counter is outside the signed 64-bit range")
        return value
    except Exception as error:
        _failed("increment", place, error)
        return None


def _store_delete(_ctx: Any, place: Any) -> Variant:
    try:
        _backend().delete(_record_key(place))
        return Variant("ok")
    except Exception as error:
        _failed("delete", place, error)
        return Variant("err")


# ---------------------------------------------------------------------------


class Core:
    """One instance of the component, in its own wasmtime store.

    Calls are serialised by a lock. A call that traps (which the core never
    does on any input; a bug or an exception the store let escape) leaves the
    instance unusable, so the next call starts a fresh one: matchers built on
    the old one are then refused with a clear error.
    """

    def __init__(self, rt: Optional[Runtime] = None) -> None:
        self.runtime = rt or runtime()
        self.lock = threading.RLock()
        self._funcs: Dict[Tuple[str, str], wc.Func] = {}
        self.generation = 0
        self._depth = 0
        self._pending_drops: List[Tuple[int, Any]] = []
        self._owned: Dict[int, Any] = {}
        self._instantiate()

    def _instantiate(self) -> None:
        self.store = wasmtime.Store(self.runtime.engine)
        self.store.set_wasi(wasmtime.WasiConfig())  # no args, no env, no files
        self.instance = self.runtime.linker.instantiate(self.store, self.runtime.component)
        self._funcs = {}
        self.generation += 1
        self.poisoned = False

    def func(self, interface: str, name: str) -> wc.Func:
        """The export `name` of `interface` (cached)."""
        key = (interface, name)
        func = self._funcs.get(key)
        if func is None:
            index = self.instance.get_export_index(self.store, _interface(interface))
            if index is None:
                raise RuntimeError(f"the component exports no {interface}")
            item = self.instance.get_export_index(self.store, name, index)
            found = self.instance.get_func(self.store, item) if item is not None else None
            if found is None:
                raise RuntimeError(f"the component's {interface} exports no {name}")
            func = self._funcs[key] = found
        return func

    def call(self, interface: str, name: str, *args: Any, store: Optional[Store] = None) -> Any:
        """Calls an export through wasmtime-py's generic conversions."""
        return self.run(lambda: self.func(interface, name)(self.store, *args), store)

    def own(self, handle: Any) -> None:
        """Keeps a resource's handle reachable from this instance until its
        owner gives it back (``disown``, ``defer_drop``).

        wasmtime-py's handle frees itself when collected, without the
        guest's destructor. Were it reachable only from its owner (a
        ``Matcher``), a reference cycle through the owner (an exception's
        traceback holding a frame that holds the matcher) would be collected
        at once, finalisers in any order: the handle could close itself
        before the owner's ``__del__`` hands it to ``defer_drop``, and the
        drop at the next call would fail. Held here, it is never part of
        the garbage."""
        self._owned[id(handle)] = handle

    def disown(self, handle: Any) -> None:
        """Gives back a handle ``own`` kept (its owner frees it now)."""
        self._owned.pop(id(handle), None)

    def defer_drop(self, generation: int, handle: Any) -> None:
        """Frees a resource at the next call (a finaliser must not enter wasm:
        it may run while this thread is inside a call)."""
        self._pending_drops.append((generation, handle))
        self.disown(handle)

    def run(self, work: Callable[[], T], store: Optional[Store] = None) -> T:
        with self.lock:
            if self.poisoned:
                self._instantiate()
            if self._depth == 0:
                while self._pending_drops:
                    generation, handle = self._pending_drops.pop()
                    if generation == self.generation:
                        handle.drop(self.store)
            previous = getattr(_CURRENT, "store", None)
            _CURRENT.store = store
            self._depth += 1
            try:
                return work()
            except (TypeError, ValueError):
                # Refused while converting the arguments: nothing was called.
                raise
            except BaseException:
                self.poisoned = True
                raise
            finally:
                self._depth -= 1
                _CURRENT.store = previous


def result(value: Any) -> Any:
    """The `ok` value of a WIT `result<T, refusal>`, or :class:`Refusal`.

    Every error type of the world is a string. wasmtime-py gives a result
    whose `ok` type could also be a string as a tagged `Variant`, and any
    other as the bare value: then a `str` is the refusal.
    """
    if isinstance(value, Variant):
        if value.tag == "ok":
            return value.payload
        raise Refusal(str(value.payload))
    if isinstance(value, str):
        raise Refusal(value)
    return value


def record(**fields: Any) -> Record:
    """A WIT record from Python keyword arguments (`user_agent` → `user-agent`)."""
    r = Record()
    for name, value in fields.items():
        setattr(r, name.replace("_", "-"), value)
    return r


def field(r: Any, name: str) -> Any:
    """A field of a record wasmtime-py lifted (`user_agent` → `user-agent`)."""
    return getattr(r, name.replace("_", "-"))
