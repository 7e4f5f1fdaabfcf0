"""The matcher's hot path: `is-noise`, `is-noise-json` and `classify`
called without wasmtime-py's generic conversions.

wasmtime-py's `Func.__call__` asks the C API for the function's type, and
each value's type for its fields and cases, on every call: ~0.7 ms a call
for an event here, as long as a pure-Python loop over the whole catalog.
The types of these two calls are fixed by the WIT, so the event is lowered
straight into the C API's values (the same structures and calls
`wasmtime.component._types` uses) and `is-noise`'s bool read back directly.
Written against wasmtime-py 50 (`pyproject.toml` pins the major); the parity
tests run every event of the evaluation set through it.
"""

from __future__ import annotations

from ctypes import POINTER, byref, c_char_p, c_size_t, sizeof, string_at
from typing import Any, Callable, List, Optional, Sequence

import wasmtime
from wasmtime import _ffi as ffi
from wasmtime.component import Func, ResourceAny
from wasmtime.component._enter import maybe_raise_last_exn

_EVENT_FIELDS = tuple(
    (i, name.encode()) for i, name in enumerate(("exception-type", "message", "frames", "user-agent"))
)

# `wasm_byte_vec_new` taking the bytes object's own buffer (a `c_char_p`):
# one C call a string, where `ffi.str_to_capi` makes four. A separate
# function object (`dll[name]`), so wasmtime-py's own prototype is untouched.
_byte_vec_new = ffi.dll["wasm_byte_vec_new"]
_byte_vec_new.restype = None
_byte_vec_new.argtypes = [POINTER(ffi.wasm_byte_vec_t), c_size_t, c_char_p]


def check_event(
    exception_type: Optional[str],
    message: Optional[str],
    frames: Sequence[str],
    user_agent: Optional[str],
) -> List[str]:
    """Refuses a malformed event before anything is allocated."""
    for name, value in (("exception_type", exception_type), ("message", message),
                        ("user_agent", user_agent)):
        if value is not None and not isinstance(value, str):
            raise TypeError(f"event {name} must be a str or None, not {type(value).__name__}")
    if isinstance(frames, (str, bytes)):
        raise TypeError("event frames must be a sequence of str, not a single string")
    try:
        frame_list = list(frames)
    except TypeError:
        raise TypeError(f"event frames must be a sequence of str, not {type(frames).__name__}") from None
    for i, frame in enumerate(frame_list):
        if not isinstance(frame, str):
            raise TypeError(f"event frames[{i}] must be a str, not {type(frame).__name__}")
    return frame_list


def _string(c: Any, s: str) -> None:
    b = s.encode()
    c.kind = ffi.WASMTIME_COMPONENT_STRING
    _byte_vec_new(byref(c.of.string), len(b), b)


def _option_string(c: Any, s: Optional[str]) -> None:
    c.kind = ffi.WASMTIME_COMPONENT_OPTION
    if s is None:
        c.of.option = None
    else:
        raw = ffi.wasmtime_component_val_t()
        _string(raw, s)
        c.of.option = ffi.wasmtime_component_val_new(byref(raw))  # moves `raw`


def _string_list(c: Any, items: List[str]) -> None:
    raw = ffi.wasmtime_component_vallist_t()
    ffi.wasmtime_component_vallist_new_uninit(raw, len(items))
    for i, item in enumerate(items):
        _string(raw.data[i], item)
    c.kind = ffi.WASMTIME_COMPONENT_LIST
    c.of.list = raw


def _event(c: Any, exception_type: Optional[str], message: Optional[str],
           frames: List[str], user_agent: Optional[str]) -> None:
    raw = ffi.wasmtime_component_valrecord_t()
    ffi.wasmtime_component_valrecord_new_uninit(raw, 4)
    data = raw.data
    _option_string(data[0].val, exception_type)
    _option_string(data[1].val, message)
    _string_list(data[2].val, frames)
    _option_string(data[3].val, user_agent)
    for i, name in _EVENT_FIELDS:
        _byte_vec_new(byref(data[i].name), len(name), name)
    c.kind = ffi.WASMTIME_COMPONENT_RECORD
    c.of.record = raw


def _call(func: Func, store: wasmtime.Store, matcher: ResourceAny,
          lower: Callable[[Any], None]) -> Any:
    """Calls `func(borrow<matcher>, arg)`, `lower` writing `arg` into its C
    value (first: a refused argument leaves nothing to free); returns the
    raw result value."""
    params = (ffi.wasmtime_component_val_t * 2)()
    lower(params[1])
    params[0].kind = ffi.WASMTIME_COMPONENT_RESOURCE
    params[0].of.resource = ffi.wasmtime_component_resource_any_clone(matcher.ptr())
    result = ffi.wasmtime_component_val_t()
    try:
        error = ffi.wasmtime_component_func_call(
            byref(func._func), store._context(), params, 2, byref(result), 1)
    finally:
        for i in range(2):
            ffi.wasmtime_component_val_delete(byref(params[i]))
    if error:
        exc = wasmtime.WasmtimeError._from_ptr(error)
        maybe_raise_last_exn()
        raise exc
    return result


def call_with_event(
    func: Func,
    store: wasmtime.Store,
    matcher: ResourceAny,
    exception_type: Optional[str],
    message: Optional[str],
    frames: List[str],
    user_agent: Optional[str],
) -> Any:
    """Calls `func(borrow<matcher>, event)`; returns the raw result value."""
    return _call(func, store, matcher,
                 lambda c: _event(c, exception_type, message, frames, user_agent))


def read_bool(result: Any) -> bool:
    assert result.kind == ffi.WASMTIME_COMPONENT_BOOL.value
    return bool(result.of.boolean)


def call_with_string(func: Func, store: wasmtime.Store, matcher: ResourceAny, utf8: bytes) -> Any:
    """Calls `func(borrow<matcher>, string)` with the string's UTF-8 bytes;
    returns the raw result value."""
    def lower(c: Any) -> None:
        c.kind = ffi.WASMTIME_COMPONENT_STRING
        _byte_vec_new(byref(c.of.string), len(utf8), utf8)
    return _call(func, store, matcher, lower)


# Where a value's `boolean` lies inside a `wasmtime_component_val_t`, and
# how far apart two values of a list are: a `list<bool>` is read as one
# block of bytes instead of a ctypes object per element.
_VAL_SIZE = sizeof(ffi.wasmtime_component_val_t)
# (ctypes gives a field's descriptor on the class; its stubs type it as the
# field's value.)
_BOOL_OFFSET = (ffi.wasmtime_component_val_t.of.offset
                + ffi.wasmtime_component_valunion.boolean.offset)  # type: ignore[attr-defined]


def read_bool_list_result(result: Any) -> "tuple[Optional[List[bool]], Optional[str]]":
    """A `result<list<bool>, string>`: (the list, None) or (None, the error)."""
    try:
        assert result.kind == ffi.WASMTIME_COMPONENT_RESULT.value
        outcome = result.of.result
        value = outcome.val.contents
        if not outcome.is_ok:
            assert value.kind == ffi.WASMTIME_COMPONENT_STRING.value
            return None, ffi.to_str(value.of.string)
        assert value.kind == ffi.WASMTIME_COMPONENT_LIST.value
        items = value.of.list
        if items.size == 0:
            return [], None
        raw = string_at(items.data, items.size * _VAL_SIZE)
        return [b != 0 for b in raw[_BOOL_OFFSET::_VAL_SIZE]], None
    finally:
        ffi.wasmtime_component_val_delete(byref(result))
