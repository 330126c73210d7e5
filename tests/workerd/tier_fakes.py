"""The services the Workers under test call out to, on 127.0.0.1: a model provider (the providers
tests' fake, which a test can hold so a model answers only when told) and the Telegram Bot API."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from fake_upstream import FakeUpstream, read_body

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


class HeldUpstream:
    """``FakeUpstream`` whose answers wait while it is held: a test can see what happens before
    the model has answered."""

    def __init__(self, upstream: FakeUpstream) -> None:
        self.upstream = upstream
        self._open = threading.Event()
        self._open.set()

    def hold(self) -> None:
        self._open.clear()

    def release(self) -> None:
        self._open.set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self._open.is_set():
            await asyncio.get_running_loop().run_in_executor(None, self._open.wait)
        await self.upstream(scope, receive, send)

    def chat_requests(self) -> list[dict[str, Any]]:
        return [r.json for r in self.upstream.received if r.path == "/v1/chat/completions"]


@dataclass
class FakeTelegram:
    """The Bot API's sendMessage for one bot token, recording what the bot sent."""

    token: str
    sent: list[dict[str, Any]] = field(default_factory=list)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        body = await read_body(receive)
        ok = scope["path"] == f"/bot{self.token}/sendMessage"
        if ok:
            self.sent.append(json.loads(body))
        answer = json.dumps({"ok": ok, "result": {"message_id": len(self.sent)}}).encode()
        await send({"type": "http.response.start", "status": 200 if ok else 404,
                    "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": answer})

    def to_chat(self, chat_id: int) -> list[str]:
        return [m["text"] for m in self.sent if m["chat_id"] == chat_id]
