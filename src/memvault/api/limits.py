"""Request and response framing every route shares.

Refuse request bodies over the configured size before any handler reads them, however they
arrive: a declared Content-Length is checked at once, a chunked body is read up to the limit
first and then handed on whole, so the refusal is always a 413 in the documented envelope."""

from __future__ import annotations

import json
from collections.abc import Callable
from email.utils import formatdate

from starlette.types import ASGIApp, Message, Receive, Scope, Send


class BodySizeLimit:
    def __init__(self, app: ASGIApp, max_bytes: int, exempt: Callable[[str], bool] = lambda path: False) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.exempt = exempt

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self.exempt(scope["path"]):
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await self._refuse(send)
            return
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":
                await self.app(scope, replay([message]), send)
                return
            body.extend(message.get("body", b""))
            if len(body) > self.max_bytes:
                await self._refuse(send)
                return
            if not message.get("more_body", False):
                break
        await self.app(scope, replay([{"type": "http.request", "body": bytes(body), "more_body": False}], receive), send)

    async def _refuse(self, send: Send) -> None:
        body = json.dumps(
            {"error": {"code": "payload_too_large", "message": f"request body is larger than {self.max_bytes} bytes"}}
        ).encode()
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
        await send({"type": "http.response.start", "status": 413, "headers": headers})
        await send({"type": "http.response.body", "body": body})


class ResponseDefaults:
    """Give every response a ``Date`` and a ``Cache-Control`` unless it has its own. The local
    server is run without its own ``Date`` (it would repeat the one a relayed provider response
    already carries). ``no-store``: nearly every answer holds a caller's memory, facts, usage or a
    new secret, and a request naming its key in ``X-Memory-Key`` is, to a shared cache, no
    different from an anonymous one; the few public answers (the portal's files, the docs' assets)
    set their own."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def completed(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers") or [])
                present = {name.lower() for name, _ in headers}
                if b"date" not in present:
                    headers.append((b"date", formatdate(usegmt=True).encode("latin-1")))
                if b"cache-control" not in present:
                    headers.append((b"cache-control", b"no-store"))
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, completed)


def replay(messages: list[Message], then: Receive | None = None) -> Receive:
    """A receive that hands out ``messages`` first, then waits on ``then`` (for the disconnect)."""
    pending = list(messages)

    async def receive() -> Message:
        if pending:
            return pending.pop(0)
        if then is None:
            return {"type": "http.disconnect"}
        return await then()

    return receive
