"""The bot as a plain ASGI app for local runs: Telegram (or a test) posts updates to ``/webhook``;
each chat gets its agent, with its own SQLite file standing in for the Durable Object's storage,
and reaches memvault over HTTP.

    MEMVAULT_URL=http://127.0.0.1:8787 MEMVAULT_KEY=mk_… MEMVAULT_BRAIN_TOKEN=… LLM_API_KEY=… \\
    TELEGRAM_BOT_TOKEN=… TELEGRAM_WEBHOOK_SECRET=… python -m telegram_bot
"""

from __future__ import annotations

import asyncio
import hmac
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from starlette.requests import Request
from starlette.responses import JSONResponse

from memvault.adapters.local.background import AsyncioBackground
from memvault.adapters.local.http_client import HttpxClient
from memvault.adapters.local.sqlite_sql import SqliteSql
from memvault.client import HttpTransport, LazyMemory, MemoryClient
from memvault.core.ports import HttpClient
from telegram_bot.agent import ChatBot, session_of
from telegram_bot.chat_model import RouterChat
from telegram_bot.config import BotConfig
from telegram_bot.deliveries import Deliveries
from telegram_bot.telegram import SECRET_HEADER, TelegramApi, chat_of

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


class LocalBot:
    def __init__(
        self, config: BotConfig, data_dir: Path, http: HttpClient | None = None, delivery_budget_seconds: float = 20.0
    ) -> None:
        self.config = config
        self._delivery_budget = delivery_budget_seconds
        self._data_dir = data_dir
        self._http = http or HttpxClient()
        self._client = MemoryClient(HttpTransport(self._http, config.memvault_url, config.memvault_key, config.brain_token))
        self._chat = RouterChat(self._http, config.memvault_url, config.memvault_key, config.llm_api_key, config.llm_model)
        self._telegram = TelegramApi(self._http, config.telegram_api, config.telegram_token)
        self.background = AsyncioBackground()
        self._agents: dict[int, tuple[ChatBot, asyncio.Lock]] = {}

    def agent(self, chat_id: int) -> tuple[ChatBot, asyncio.Lock]:
        """The chat's agent; like a Durable Object, one per chat, handling one update at a time."""
        if chat_id not in self._agents:
            self._data_dir.mkdir(parents=True, exist_ok=True)
            storage = SqliteSql(self._data_dir / f"chat-{chat_id}.sqlite3")
            memory = LazyMemory(self._client, storage, self.background, session_of(chat_id),
                                delivery_budget_seconds=self._delivery_budget)
            agent = ChatBot(chat_id, memory, self._client, self._chat, self._telegram,
                            self.config.brain_scope, self.config.history_turns, Deliveries(storage))
            self._agents[chat_id] = (agent, asyncio.Lock())
        return self._agents[chat_id]

    async def __call__(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        request = Request(scope, receive)
        headers = {name.lower(): value for name, value in request.headers.items()}
        status, answer = await self.webhook(request.method, request.url.path, headers, await request.body())
        await JSONResponse(answer, status_code=status)(scope, receive, send)

    async def webhook(self, method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, dict[str, Any]]:
        if (method, path) != ("POST", "/webhook"):
            return 404, {"ok": False}
        if not hmac.compare_digest(headers.get(SECRET_HEADER, ""), self.config.webhook_secret):
            return 401, {"ok": False}
        try:
            update = json.loads(body)
        except ValueError:
            return 400, {"ok": False}
        chat_id = chat_of(update)
        if chat_id is not None:
            agent, lock = self.agent(chat_id)
            async with lock:
                await agent.handle(update)
        # Telegram only needs to hear that the update arrived; anything else would be sent again.
        return 200, {"ok": True}

    async def aclose(self) -> None:
        await self.background.drain()
        closer = getattr(self._http, "aclose", None)
        if closer is not None:
            await closer()


def main() -> None:
    import os

    import uvicorn

    config = BotConfig.from_mapping(dict(os.environ))
    bot = LocalBot(config, Path(os.environ.get("BOT_DATA_DIR", ".telegram-bot")))
    uvicorn.run(bot, host="127.0.0.1", port=int(os.environ.get("BOT_PORT", "8788")))
