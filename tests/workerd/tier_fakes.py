"""A model provider the Workers under test call out to, on 127.0.0.1: the providers tests' fake,
which a test can hold so the model answers only when told. (The Telegram Bot API's fake is
tests/fake_telegram.py.)"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from typing import Any

from fake_upstream import FakeUpstream

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
