"""The one place where values cross between Python and JavaScript.

Rules both directions follow:
- Python dicts become plain JS objects (bindings read properties, not ``Map`` entries);
- ``None`` becomes JS ``null`` (D1 and DO SQL reject ``undefined`` as a parameter);
- ``bytes`` become a ``Uint8Array``, and binary JS values come back as ``bytes``;
- JS ``null`` and ``undefined`` both come back as ``None`` (Pyodide 0.28 turns ``null`` into
  ``jsnull``, an object of its own, which core must never see).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import js
from pyodide.ffi import JsProxy, jsnull
from pyodide.ffi import to_js as _pyodide_to_js

_BINARY_TYPES = {"[object ArrayBuffer]", "[object Uint8Array]", "[object DataView]"}


def to_js(value: Any) -> Any:
    """A JS value for ``value``: nested dicts become objects, ``None`` becomes ``null``."""
    return _pyodide_to_js(
        _prepare(value),
        dict_converter=js.Object.fromEntries,
        create_pyproxies=False,
    )


def _prepare(value: Any) -> Any:
    if value is None:
        return jsnull
    if isinstance(value, (bytes, bytearray, memoryview)):
        return js_bytes(bytes(value))
    if isinstance(value, Mapping):
        return {str(k): _prepare(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_prepare(v) for v in value]
    return value


def sql_param(value: Any) -> Any:
    """A SQL binding for D1 or DO SQL: booleans become 0/1 (DO SQL binds only numbers, strings,
    binary and null), everything else as ``to_js``."""
    if isinstance(value, bool):
        return int(value)
    return to_js(value)


def js_bytes(data: bytes) -> Any:
    """A fresh ``Uint8Array`` holding a copy of ``data``."""
    array = js.Uint8Array.new(len(data))
    array.assign(data)
    return array


def js_array(items: Sequence[Any]) -> Any:
    """A JS array of already-converted JS values (``to_js`` would try to convert them again)."""
    array = js.Array.new()
    for item in items:
        array.push(item)
    return array


def is_missing(value: Any) -> bool:
    """True for Python ``None``, JS ``null`` and JS ``undefined``."""
    return value is None or value is jsnull


def to_py(value: Any) -> Any:
    """A plain Python value for a JS value: objects become dicts, arrays lists, binary ``bytes``."""
    if is_missing(value):
        return None
    if isinstance(value, JsProxy):
        tag = str(js.Object.prototype.toString.call(value))
        if tag in _BINARY_TYPES:
            return bytes_of(value)
        if tag == "[object Map]":
            return _map_to_dict(value)
        return _clean(value.to_py())
    return _clean(value)


def _map_to_dict(value: Any) -> dict[str, Any]:
    return {str(k): to_py(v) for k, v in getattr(js.Array, "from")(value.entries())}


def _clean(value: Any) -> Any:
    # ``JsProxy.to_py`` converts deeply but leaves jsnull and binary buffers (as memoryview).
    if is_missing(value):
        return None
    if isinstance(value, dict):
        return {str(k): _clean(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean(v) for v in value]
    if isinstance(value, memoryview):
        return value.tobytes()
    # Anything else still a JsProxy (a Date, a class instance) has no plain form: left as is.
    return value


def bytes_of(value: Any) -> bytes:
    """``bytes`` from an ``ArrayBuffer``, a typed array or a ``DataView``."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    tag = str(js.Object.prototype.toString.call(value))
    if tag == "[object ArrayBuffer]":
        return bytes(js.Uint8Array.new(value).to_bytes())
    if tag == "[object Uint8Array]":
        return bytes(value.to_bytes())
    return bytes(js.Uint8Array.new(value.buffer, value.byteOffset, value.byteLength).to_bytes())
