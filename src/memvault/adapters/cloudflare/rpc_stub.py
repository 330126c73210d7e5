"""Calling RPC methods of another Worker or Durable Object (a service binding, a DO stub) with
plain data: arguments become JS values, results come back as plain Python, and a domain error
the callee raised comes back as the same domain error."""

from __future__ import annotations

import re
from typing import Any

from pyodide.ffi import JsException

from memvault.adapters.cloudflare.convert import to_js, to_py
from memvault.adapters.cloudflare.env import js_binding
from memvault.core import errors


class RpcStub:
    def __init__(self, stub: Any) -> None:
        # The JS stub, not the SDK's wrapper of it: arguments and results convert here, once.
        self._stub = js_binding(stub)

    async def call(self, method: str, *args: Any) -> Any:
        try:
            return to_py(await getattr(self._stub, method)(*[to_js(a) for a in args]))
        except JsException as exc:
            raise error_from_rpc(method, str(exc)) from None


# A Python exception raised in the callee reaches the caller as a JS Error whose message is the
# Python traceback; its last "module.Class: message" line names the exception.
_LAST_EXCEPTION = re.compile(r"^([A-Za-z_][\w.]*): (.*)$")


def error_from_rpc(method: str, message: str) -> errors.MemvaultError:
    """The domain error the callee raised, rebuilt on this side; anything else (the callee
    crashed, storage failed, the call never arrived) is the callee being unavailable."""
    cause = "unknown error"
    for line in reversed(message.strip().splitlines()):
        found = _LAST_EXCEPTION.match(line.strip())
        if found is None:
            continue
        module, _, name = found.group(1).rpartition(".")
        kind = getattr(errors, name, None)
        if module == errors.__name__ and isinstance(kind, type) and issubclass(kind, errors.MemvaultError):
            return kind(found.group(2))
        cause = found.group(1)
        break
    # The exception's type only: its text may quote stored memory.
    return errors.StorageUnavailable(f"rpc call {method} failed ({cause})")
