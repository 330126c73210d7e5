"""One chat's bot: what the bot does with an update, wherever it runs (a Durable Object on
Cloudflare, an object in the local app).

The chat's recent turns come from ``LazyMemory`` at once (never waiting on memvault), the answer
from the model through memvault's memory router (which adds what it recalls for this chat), and the
new turn goes back into ``LazyMemory``, flushed in the background. ``/remember <fact>`` writes a
brain fact with the bot's own credential and reads it back before saying so."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from memvault.client import LazyMemory, MemoryClient
from telegram_bot.chat_model import RouterChat
from telegram_bot.deliveries import Deliveries
from telegram_bot.telegram import Incoming, TelegramApi, incoming

log = logging.getLogger(__name__)

SYSTEM_PROMPT = "You are a helpful family assistant on Telegram. Answer briefly, using what you remember about this chat."
REMEMBER = "/remember"


def session_of(chat_id: int) -> str:
    return f"telegram-{chat_id}"


@dataclass
class ChatBot:
    chat_id: int
    memory: LazyMemory
    client: MemoryClient
    chat: RouterChat
    telegram: TelegramApi
    brain_scope: str
    history_turns: int
    deliveries: Deliveries

    async def handle(self, update: object) -> str | None:
        """Answer one update of this chat; returns the reply sent (None when there was nothing to
        answer, or the update was delivered before)."""
        message = incoming(update)
        if message is None or message.chat_id != self.chat_id:
            return None
        if not self.deliveries.claim(message.update_id):
            log.warning("update %s was delivered before: it is answered once", message.update_id)
            return None
        if message.text.split(maxsplit=1)[0].split("@")[0] == REMEMBER:
            reply = await self._remember(message.text[len(REMEMBER):].strip())
        else:
            reply = await self._answer(message)
        await self.telegram.send_message(self.chat_id, reply)
        return reply

    async def _answer(self, message: Incoming) -> str:
        recent = self.memory.get()
        history = [{"role": m["role"], "content": m["content"]} for m in recent.messages[-self.history_turns :]]
        prompt = [{"role": "system", "content": SYSTEM_PROMPT}, *history, {"role": "user", "content": message.text}]
        try:
            answer = await self.chat.reply(prompt, session_of(self.chat_id))
        except Exception as exc:  # the bot keeps answering: an apology now, the turn still remembered
            log.warning("the model could not be reached: %s", type(exc).__name__)
            answer = "Sorry, I cannot answer right now. I have noted your message."
        self.memory.save(
            [{"role": "user", "content": message.text, "timestamp": message.sent_at or None},
             {"role": "assistant", "content": answer}],
            {"chat_id": self.chat_id, "update_id": message.update_id},
        )
        self.memory.flush()
        return answer

    async def _remember(self, fact: str) -> str:
        if not fact:
            return "Tell me what to remember: /remember <fact>"
        try:
            written = await self.client.remember(fact, scope=self.brain_scope, source=f"telegram:{self.chat_id}")
            found = await self.client.recall_facts(fact, limit=10)
        except Exception as exc:  # a brain write either lands or says it did not
            log.warning("a /remember could not be written: %s", type(exc).__name__)
            return "I could not write that down just now; please try again."
        if written["ids"] and written["ids"][0] in {fact_row["id"] for fact_row in found}:
            return f"Remembered: {fact}"
        return "I wrote that down, but could not read it back yet."
