"""The example bot's local end-to-end run, driven by recorded Telegram updates: a chat fact is
stored through LazyMemory and recalled by memvault's memory router into a later answer; /remember
writes a brain fact with the bot's credential and reads it back; other chats stay apart."""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
from telegram_bot.local_app import LocalBot
from telegram_bot.telegram import SECRET_HEADER

from conftest import WEBHOOK_SECRET, Stack


def post(stack: Stack, name: str, secret: str = WEBHOOK_SECRET) -> httpx.Response:
    return httpx.post(f"{stack.bot_url}/webhook", json=stack.update(name), timeout=30,
                      headers={"X-Telegram-Bot-Api-Secret-Token": secret})


def memvault_page(stack: Stack, session_id: str) -> list[dict[str, Any]]:
    """The session's messages as memvault holds them (oldest first), through the RPC interface."""
    found = httpx.get(f"{stack.memvault_url}/v1/memory", params={"session_id": session_id, "limit": 50},
                      headers={"Authorization": f"Bearer {stack.bot.config.memvault_key}"}, timeout=10)
    assert found.status_code == 200, found.text
    return list(reversed(found.json()["items"]))


def delivered(stack: Stack, session_id: str, text: str) -> list[dict[str, Any]]:
    """Waits for the bot's background flush to bring the message saying ``text`` to memvault."""
    deadline = time.monotonic() + 15
    while True:
        page = memvault_page(stack, session_id)
        if any(m["content"] == text for m in page):
            return page
        assert time.monotonic() < deadline, f"memvault never got {text!r} in {session_id}"
        time.sleep(0.05)


def chat_completions(stack: Stack) -> list[Any]:
    return [r.json for r in stack.model.received if r.path == "/v1/chat/completions"]


def test_a_chat_fact_is_stored_and_recalled_through_the_router(stack: Stack) -> None:
    fact = stack.update("01_tells_a_fact.json")["message"]["text"]
    assert post(stack, "01_tells_a_fact.json").status_code == 200
    assert stack.telegram.sent[-1] == {"chat_id": 5550001, "text": "Happy to help with that."}
    stored = delivered(stack, "telegram-5550001", fact)
    assert [m["role"] for m in stored] == ["user", "assistant"]
    assert stored[0]["metadata"] == {"chat_id": 5550001, "update_id": 731450001}
    assert stored[0]["timestamp"] == 1767261600

    assert post(stack, "02_remembers_a_fact.json").status_code == 200
    assert stack.telegram.sent[-1]["text"] == "Remembered: Our paediatrician is Dr. Okafor at the Riverside clinic"
    assert post(stack, "03_other_chat_small_talk.json").status_code == 200
    assert stack.telegram.sent[-1]["chat_id"] == 5550002
    assert post(stack, "04_same_chat_small_talk.json").status_code == 200
    delivered(stack, "telegram-5550001", stack.update("04_same_chat_small_talk.json")["message"]["text"])

    assert post(stack, "05_asks_about_the_fact.json").status_code == 200
    question = chat_completions(stack)[-1]
    # The bot sent only its last two turns; the ballet day came from memvault's recall, which the
    # router put into the system message (the bot's own system prompt does not hold it).
    sent_turns = [m["content"] for m in question["messages"] if m["role"] != "system"]
    assert len(sent_turns) == 3 and not any("ballet" in text for text in sent_turns[:-1])
    system = " ".join(m["content"] for m in question["messages"] if m["role"] == "system")
    assert "Thursdays" in system and "Lucia" in system
    # The router only read: the user turns in memvault are the ones the bot saved, in order.
    turns = delivered(stack, "telegram-5550001", stack.update("05_asks_about_the_fact.json")["message"]["text"])
    users = [m["content"] for m in turns if m["role"] == "user"]
    assert users == [stack.update(f)["message"]["text"] for f in
                     ("01_tells_a_fact.json", "04_same_chat_small_talk.json", "05_asks_about_the_fact.json")]
    assert "Lucia" not in " ".join(m["content"] for m in memvault_page(stack, "telegram-5550002"))


def test_remember_writes_a_brain_fact_the_bot_can_read_back(stack: Stack) -> None:
    assert post(stack, "02_remembers_a_fact.json").status_code == 200
    assert stack.telegram.sent[-1]["text"].startswith("Remembered:")
    found = httpx.get(f"{stack.memvault_url}/memory/search", params={"q": "paediatrician Okafor"},
                      headers={"Authorization": f"Bearer {stack.bot.config.brain_token}"}, timeout=10).json()
    assert [(r["scope"], r["source"]) for r in found["results"]] == [("family", "telegram:5550001")]
    assert not chat_completions(stack), "/remember needs no model call"


def test_updates_without_text_or_with_a_wrong_secret_are_not_answered(stack: Stack) -> None:
    assert post(stack, "06_sticker_without_text.json").status_code == 200
    assert post(stack, "01_tells_a_fact.json", secret="guessed").status_code == 401
    assert stack.telegram.sent == []
    assert memvault_page(stack, "telegram-5550001") == []


async def test_the_bot_keeps_answering_while_memvault_is_down(stack: Stack, tmp_path: Path) -> None:
    unreachable = replace(stack.bot.config, memvault_url="http://127.0.0.1:9")
    # Without a delivery budget a failed flush leaves the queue at once instead of waiting to retry.
    bot = LocalBot(unreachable, tmp_path / "offline-bot", delivery_budget_seconds=0.0)
    status, _ = await bot.webhook("POST", "/webhook", {SECRET_HEADER: WEBHOOK_SECRET},
                                  json.dumps(stack.update("01_tells_a_fact.json")).encode())
    assert status == 200
    assert stack.telegram.sent[-1]["chat_id"] == 5550001 and stack.telegram.sent[-1]["text"].startswith("Sorry")
    await bot.background.drain()
    agent, _ = bot.agent(5550001)
    kept = agent.memory.get()
    assert kept.queued == 1 and [m["role"] for m in kept.messages] == ["user", "assistant"]
    await bot.aclose()


def test_an_update_delivered_twice_is_answered_once(stack: Stack) -> None:
    assert post(stack, "01_tells_a_fact.json").status_code == 200
    assert post(stack, "01_tells_a_fact.json").status_code == 200  # Telegram re-sends after a slow answer
    assert [m["chat_id"] for m in stack.telegram.sent] == [5550001]
    assert len(chat_completions(stack)) == 1
    stored = delivered(stack, "telegram-5550001", stack.update("01_tells_a_fact.json")["message"]["text"])
    assert [m["role"] for m in stored] == ["user", "assistant"]
