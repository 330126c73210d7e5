"""Failures of the Vectorize, Workers AI and R2 bindings that pass: the service said "not now"
(overloaded, rate limited, an internal error, a timeout, a lost connection). They are raised as
``TransientStorageError``, which the retrying ports (``core/retry.py``) try again; anything
else (bad input, a missing index) is raised as the binding raised it. The bindings' messages are
not a documented interface, so this matches the words and status codes Cloudflare's error
references use, in any case."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from pyodide.ffi import JsException

from memvault.core.errors import TransientStorageError

PASSING_MARKERS = (
    "network connection lost",
    "internal error",
    "internal server error",
    "service unavailable",
    "temporarily",
    "try again",
    "timed out",
    "timeout",
    "overloaded",
    "capacity",
    "too many requests",
    "rate limit",
    "429",
    "502",
    "503",
    "504",
)


def passing_marker(text: str) -> str | None:
    lowered = text.lower()
    return next((marker for marker in PASSING_MARKERS if marker in lowered), None)


@contextmanager
def binding_errors(service: str) -> Iterator[None]:
    try:
        yield
    except JsException as exc:
        marker = passing_marker(str(exc))
        if marker is None:
            raise
        raise TransientStorageError(f"{service} failed for now ({marker})") from exc
