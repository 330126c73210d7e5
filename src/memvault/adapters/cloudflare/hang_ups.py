"""A client's hang-up, told to the app as ASGI says: ``http.disconnect`` from ``receive``.

The Workers ASGI adapter never sends ``http.disconnect`` while the response is streaming, and a
write to the response stream of a client that left neither completes nor fails: a relayed stream
would wait on it until the runtime cancels the request as hung, and the work scheduled after the
relay (the call's usage, its receipt) with it. The runtime tells a hang-up through the request's
``signal`` (compatibility flag ``enable_request_signal``), which this wrapper turns into the message
the local server's ASGI server sends.
"""

from __future__ import annotations

import asyncio
from typing import Any

from pyodide.ffi import create_once_callable
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memvault.adapters.cloudflare.convert import is_missing

DISCONNECT: Message = {"type": "http.disconnect"}


def hearing_hang_ups(app: ASGIApp, signal: Any) -> ASGIApp:
    """``app`` whose ``receive`` answers ``http.disconnect`` once ``signal`` (the request's
    ``AbortSignal``) aborted; ``app`` itself when the request has no signal."""
    if is_missing(signal):
        return app

    async def served(scope: Scope, receive: Receive, send: Send) -> None:
        left = asyncio.Event()
        if signal.aborted:
            left.set()
        else:
            signal.addEventListener("abort", create_once_callable(lambda _event: left.set()))
        await app(scope, _receive_until(receive, left), send)

    return served


def _receive_until(receive: Receive, left: asyncio.Event) -> Receive:
    async def received() -> Message:
        if left.is_set():
            return DISCONNECT
        message = asyncio.ensure_future(receive())
        hang_up = asyncio.ensure_future(left.wait())
        try:
            await asyncio.wait((message, hang_up), return_when=asyncio.FIRST_COMPLETED)
        finally:
            # Whether this returns or is cancelled (the relay ended), neither task is left pending
            # when the request ends: the runtime would report each as destroyed while pending.
            hang_up.cancel()
            if not message.done():
                message.cancel()
            await asyncio.wait((message, hang_up))
        if not message.cancelled():
            return message.result()
        return DISCONNECT

    return received
