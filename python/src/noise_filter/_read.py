"""Reading what a Python program has into the core's event.

The core matches an :class:`Event`'s texts; this module only converts the
values a user holds into one, as the npm package's ``toEvent`` does for
JavaScript (``npm/src/matching.js``). The reading of a Sentry event is the
same rule in both languages (docs/CONTRACT.md, "Reading a tracker's event"),
and a test runs both readers on the same events.

* a ``str`` is a message;
* a ``BaseException`` is read as sentry-python reports it: its qualified
  type name, its message (``str(exc)``, with its notes), and the file of
  each frame of its traceback, oldest first (frames a tracker hides are
  left out);
* a Sentry event (a dict with ``event_id``, ``logentry``, or
  ``exception.values``; any other field is ignored) is read as the npm
  package reads one; a value of the wrong type is skipped, never raised;
* any other dict is the core's JSON shape (``type``, ``message``,
  ``frames``, ``userAgent``) and nothing else: a misspelt field is refused
  with ``TypeError`` rather than silently never matched.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from types import TracebackType
from typing import Any, List, Optional

from ._types import Event


def to_event(value: object) -> Event:
    """The :class:`Event` the matcher sees for ``value``: an ``Event``, a
    message ``str``, an exception, a Sentry event or a dict in the core's
    shape. Raises ``TypeError`` only for a value of another type or a dict in
    the core's shape with a wrong field; a Sentry event is always read."""
    if isinstance(value, Event):
        return value
    if isinstance(value, str):
        return Event(message=value)
    if isinstance(value, BaseException):
        return from_exception(value)
    if isinstance(value, Mapping):
        if is_sentry_event(value):
            return from_sentry_event(value)
        return Event.from_dict(dict(value))
    raise TypeError(
        "an event is an Event, a dict (the core's shape or a Sentry event), a str or an "
        f"exception, not {type(value).__name__}")


def is_sentry_event(value: Mapping[Any, Any]) -> bool:
    """Whether a dict is read as a Sentry event: what every Sentry SDK's
    events carry (``event_id``, set before any processor or ``before_send``
    runs), a ``logentry`` (sentry-python's logging integration), or an
    ``exception.values`` list. The same test as npm's ``toEvent``."""
    if isinstance(value.get("event_id"), str) or isinstance(value.get("logentry"), Mapping):
        return True
    exception = value.get("exception")
    return isinstance(exception, Mapping) and isinstance(exception.get("values"), _LISTS)


def from_sentry_event(event: Mapping[Any, Any]) -> Event:
    """A Sentry event's texts, read as npm's ``toEvent`` reads them:

    * the thrown exception is the last of ``exception.values`` (Sentry lists
      a chain oldest first, the raised exception last);
    * its ``type``; the message is its ``value``, else ``logentry.formatted``,
      ``logentry.message``, ``message.formatted``, ``message`` (the first
      that is a string);
    * a frame's text is its ``abs_path`` when present, else its
      ``filename`` (browser SDKs give a URL in ``filename``; sentry-python
      the absolute path in ``abs_path``, a shortened one in ``filename``);
      empty and non-string ones are skipped;
    * the user agent is the first ``User-Agent`` header (any case) of
      ``request.headers``, a dict or a list of pairs.

    Never raises: a part of the wrong type is not read.
    """
    thrown: Mapping[Any, Any] = {}
    exception = event.get("exception")
    if isinstance(exception, Mapping):
        values = exception.get("values")
        if isinstance(values, _LISTS) and values and isinstance(values[-1], Mapping):
            thrown = values[-1]
    logentry = _mapping(event.get("logentry"))
    message = event.get("message")
    message_entry = _mapping(message)
    text = _first_string(thrown.get("value"), logentry.get("formatted"), logentry.get("message"),
                         message_entry.get("formatted"), message_entry.get("message"), message)
    frames: List[str] = []
    stacktrace = _mapping(thrown.get("stacktrace"))
    listed = stacktrace.get("frames")
    if isinstance(listed, _LISTS):
        for frame in listed:
            if not isinstance(frame, Mapping):
                continue
            url = frame.get("abs_path")
            if url is None:
                url = frame.get("filename")
            if isinstance(url, str) and url != "":
                frames.append(url)
    exception_type = thrown.get("type")
    return Event(
        exception_type=exception_type if isinstance(exception_type, str) else None,
        message=text,
        frames=frames,
        user_agent=_user_agent(_mapping(event.get("request")).get("headers")),
    )


def from_exception(exc: BaseException) -> Event:
    """An exception's texts, as sentry-python reports it (so that
    ``is_noise(exc)`` and ``is_noise`` of its Sentry event agree): the type's
    ``__qualname__``; its ``message`` or ``detail`` attribute when set (an
    ``ExceptionGroup``'s message, a REST framework's detail), else
    ``str(exc)``, with its ``__notes__`` on further lines; and each
    traceback frame's file as an absolute path, oldest first, leaving out
    frames marked ``__traceback_hide__``/``__tracebackhide__`` and
    sentry-sdk's own."""
    cls = type(exc)
    name = getattr(cls, "__qualname__", None) or getattr(cls, "__name__", None)
    message = _safe_str(getattr(exc, "message", "") or getattr(exc, "detail", "") or exc)
    notes = getattr(exc, "__notes__", None)
    if message is not None and isinstance(notes, list) and notes:
        message += "\n" + "\n".join(note for note in notes if isinstance(note, str))
    return Event(exception_type=name if isinstance(name, str) else None, message=message,
                 frames=_traceback_files(exc.__traceback__))


def _traceback_files(tb: Optional[TracebackType]) -> List[str]:
    files = []
    while tb is not None:
        frame = tb.tb_frame
        if not _hidden(frame):
            path = frame.f_code.co_filename
            if path:
                try:
                    files.append(os.path.abspath(path))
                except Exception:  # an odd name (a NUL byte): as it is
                    files.append(path)
        tb = tb.tb_next
    return files


def _hidden(frame: Any) -> bool:
    module = frame.f_globals.get("__name__")
    if isinstance(module, str) and module.startswith("sentry_sdk."):
        return True
    try:
        local = frame.f_locals
        return bool(local.get("__traceback_hide__") or local.get("__tracebackhide__"))
    except Exception:
        return False


def _safe_str(value: object) -> Optional[str]:
    # An exception whose __str__ raises is still an event to read.
    try:
        return str(value)
    except Exception:
        try:
            return repr(value)
        except Exception:
            return None


def _user_agent(headers: object) -> Optional[str]:
    if isinstance(headers, Mapping):
        pairs: Any = headers.items()
    elif isinstance(headers, _LISTS):
        pairs = (h for h in headers if isinstance(h, _LISTS) and len(h) == 2)
    else:
        return None
    for name, value in pairs:
        if isinstance(name, str) and name.lower() == "user-agent" and isinstance(value, str):
            return value
    return None


def _first_string(*values: object) -> Optional[str]:
    for value in values:
        if isinstance(value, str):
            return value
    return None


def _mapping(value: object) -> Mapping[Any, Any]:
    return value if isinstance(value, Mapping) else {}


#: What a JSON array is, read from Python (``Array.isArray`` in npm's reader).
_LISTS = (list, tuple)


__all__ = ["from_exception", "from_sentry_event", "is_sentry_event", "to_event"]
