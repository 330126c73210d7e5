"""The bot on Cloudflare. Telegram posts every update to this Worker's ``/webhook``; the Worker
answers at once and hands the update to the chat's Durable Object (``ChatAgent``, one per chat)
in ``waitUntil``, so a slow model never makes Telegram deliver it again; the agent drops an update
it has seen before. It reaches memvault over the ``MEMVAULT`` service binding: RPC for the chat's
memory (the memory key is the one the binding's props name) and brain facts, the binding's
``fetch`` for memvault's memory router. ``build.py`` stages this module beside the
``telegram_bot`` package and the parts of ``memvault`` a bot needs."""

from __future__ import annotations

import hmac
import json
from typing import Any
from urllib.parse import urlsplit

from telegram_bot.agent import ChatBot, session_of
from telegram_bot.chat_model import RouterChat
from telegram_bot.config import BotConfig
from telegram_bot.deliveries import Deliveries
from telegram_bot.telegram import SECRET_HEADER, TelegramApi, chat_of
from workers import DurableObject, Response, WorkerEntrypoint

from memvault.adapters.cloudflare.background import WaitUntilTasks
from memvault.adapters.cloudflare.convert import to_py
from memvault.adapters.cloudflare.do_sql import DurableObjectSql
from memvault.adapters.cloudflare.env import env_value, js_binding
from memvault.adapters.cloudflare.http_client import FetchHttpClient
from memvault.adapters.cloudflare.rpc_stub import RpcStub
from memvault.client import LazyMemory, MemoryClient, RpcTransport

__all__ = ["ChatAgent", "Default"]

# A service binding's fetch reaches memvault whatever the host; the URL only carries the path.
MEMVAULT_ORIGIN = "https://memvault.internal"


def bot_config(env: Any) -> BotConfig:
    return BotConfig.from_mapping(lambda name: env_value(env, name))


def answer(status: int) -> Any:
    return Response(json.dumps({"ok": status == 200}), status=status, headers={"content-type": "application/json"})


class Default(WorkerEntrypoint):  # type: ignore[misc]
    async def fetch(self, request: Any) -> Any:
        config = bot_config(self.env)
        if request.method != "POST" or urlsplit(str(request.url)).path != "/webhook":
            return answer(404)
        if not hmac.compare_digest(str(request.headers.get(SECRET_HEADER) or ""), config.webhook_secret):
            return answer(401)
        try:
            update = json.loads(await request.text())
        except ValueError:
            return answer(400)
        chat_id = chat_of(update)
        if chat_id is not None:
            agents = env_value(self.env, "CHAT_AGENT")
            agent = RpcStub(agents.get(agents.idFromName(str(chat_id))))

            async def handle() -> None:
                await agent.call("handle_update", update)

            WaitUntilTasks(self.ctx).run(handle)
        # Telegram only needs to hear that the update arrived; anything else would be sent again.
        return answer(200)


class ChatAgent(DurableObject):  # type: ignore[misc]
    def __init__(self, ctx: Any, env: Any) -> None:
        super().__init__(ctx, env)
        # Nothing here reaches memvault: the agent (and its LazyMemory, whose construction does no
        # I/O) is made on the first update, so no memory call can hold up blockConcurrencyWhile.
        self._logic: ChatBot | None = None

    async def handle_update(self, update: Any) -> Any:
        plain = to_py(update)
        chat_id = chat_of(plain)
        if chat_id is None:
            return None
        return await self._agent(chat_id).handle(plain)

    def _agent(self, chat_id: int) -> ChatBot:
        if self._logic is None:
            config = bot_config(self.env)
            memvault = js_binding(env_value(self.env, "MEMVAULT"))
            client = MemoryClient(RpcTransport(RpcStub(memvault), config.brain_token))
            storage = DurableObjectSql(js_binding(self.ctx.storage))
            self._logic = ChatBot(
                chat_id=chat_id,
                memory=LazyMemory(client, storage, WaitUntilTasks(self.ctx), session_of(chat_id)),
                client=client,
                chat=RouterChat(FetchHttpClient(memvault.fetch), MEMVAULT_ORIGIN, config.memvault_key,
                                config.llm_api_key, config.llm_model),
                telegram=TelegramApi(FetchHttpClient(), config.telegram_api, config.telegram_token),
                brain_scope=config.brain_scope,
                history_turns=config.history_turns,
                deliveries=Deliveries(storage),
            )
        return self._logic
