"""What the bot needs of Telegram: reading a webhook update, and sending a message back."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from memvault.core.ports import HttpClient

# Telegram puts the secret given to setWebhook in this header of every update it posts.
SECRET_HEADER = "x-telegram-bot-api-secret-token"


@dataclass(frozen=True)
class Incoming:
    update_id: int
    chat_id: int
    text: str
    sent_at: float  # the message's own date, epoch seconds


def incoming(update: Any) -> Incoming | None:
    """The text message an update carries (a new or edited one), or None for anything else."""
    if not isinstance(update, dict):
        return None
    message = update.get("message") or update.get("edited_message")
    if not isinstance(message, dict) or not isinstance(message.get("text"), str) or not message["text"].strip():
        return None
    chat = message.get("chat") or {}
    if not isinstance(chat.get("id"), int):
        return None
    return Incoming(int(update.get("update_id", 0)), chat["id"], message["text"].strip(), float(message.get("date", 0)))


def chat_of(update: Any) -> int | None:
    found = incoming(update)
    return None if found is None else found.chat_id


class TelegramApi:
    def __init__(self, http: HttpClient, base_url: str, token: str) -> None:
        self._http = http
        self._base = f"{base_url.rstrip('/')}/bot{token}"

    async def send_message(self, chat_id: int, text: str) -> None:
        body = json.dumps({"chat_id": chat_id, "text": text}).encode("utf-8")
        response = await self._http.send("POST", f"{self._base}/sendMessage", [("content-type", "application/json")], body)
        status = response.status
        await response.aclose()
        if status >= 400:
            raise RuntimeError(f"Telegram answered {status} to sendMessage")
