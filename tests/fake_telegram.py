"""A fake Telegram Bot API on 127.0.0.1 for the example bot's tests: `sendMessage` for one bot
token, recording what the bot sent (any other path answers 404, as Telegram does)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


async def _body(receive: Receive) -> bytes:
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            return body


@dataclass
class FakeTelegram:
    token: str
    sent: list[dict[str, Any]] = field(default_factory=list)

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        body = await _body(receive)
        ok = scope["path"] == f"/bot{self.token}/sendMessage"
        if ok:
            self.sent.append(json.loads(body))
        answer = json.dumps({"ok": ok, "result": {"message_id": len(self.sent)}}).encode()
        await send({"type": "http.response.start", "status": 200 if ok else 404,
                    "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": answer})

    def to_chat(self, chat_id: int) -> list[str]:
        """The texts sent to one chat, in order."""
        return [m["text"] for m in self.sent if m["chat_id"] == chat_id]
