"""The spec's Phase 1 check on the local stack: a family's notes pushed with `brain_sync.py push`
to `memvault serve`, the bot's memory key made with `memvault keys create --brain-scopes`, and
questions whose answers live only in those notes asked along the bot's real path (webhook, agent,
memory router, model); the model's recorded request must hold each answer. `/remember` writes a
fact readable at once over HTTP, MCP and the portal's calls, and the next question gets it."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from itertools import count
from pathlib import Path
from typing import Any

import httpx
import pytest
from fake_upstream import FakeUpstream, LoopCapture, ServerThread
from telegram_bot.config import BotConfig
from telegram_bot.local_app import LocalBot

from conftest import BOT_TOKEN, ROOT, WEBHOOK_SECRET
from fake_telegram import FakeTelegram
from local_http import memvault_serve
from notes_questions import (
    ABOUT_REMEMBERED,
    EXCLUDED,
    GRANTED_SCOPES,
    NOTES_WRITER_SCOPES,
    QUESTIONS,
    REMEMBERED,
    WALLED,
    note_count,
    push_notes,
)

sys.path.insert(0, str(ROOT / "tests" / "api" / "mcp"))
from mcp_support import answer, http_session

BOT_BRAIN = "bot-brain-credential"
NOTES_WRITER = "notes-writer-credential"
UPDATE_IDS = count(990_000_001)


@dataclass
class NotesStack:
    memvault_url: str
    model: FakeUpstream
    telegram: FakeTelegram
    bot_url: str
    pushed: str

    def ask(self, chat_id: int, text: str) -> dict[str, Any]:
        """The update Telegram posts for ``text``; returns the request the model got for it."""
        update = {"update_id": next(UPDATE_IDS), "message": {
            "message_id": 1, "date": int(time.time()), "text": text,
            "chat": {"id": chat_id, "type": "private"}, "from": {"id": chat_id, "is_bot": False, "first_name": "Ana"}}}
        answered = httpx.post(f"{self.bot_url}/webhook", json=update, timeout=60,
                              headers={"X-Telegram-Bot-Api-Secret-Token": WEBHOOK_SECRET})
        assert answered.status_code == 200, answered.text
        [asked] = [r.json for r in self.model.received
                   if r.path == "/v1/chat/completions" and r.json["messages"][-1]["content"] == text]
        return dict(asked)

    def brain(self, path: str, token: str, body: dict[str, Any]) -> Any:
        done = httpx.post(self.memvault_url + path, json=body, timeout=60,
                          headers={"Authorization": f"Bearer {token}", "Accept": "application/json"})
        assert done.status_code == 200, done.text
        return done.json()


def system_of(request: dict[str, Any]) -> str:
    return " ".join(m["content"] for m in request["messages"] if m["role"] == "system")


def create_bot_key(env: dict[str, str]) -> str:
    """The bot's memory key as its README makes it: granted the brain scopes it answers from."""
    made = subprocess.run([str(Path(sys.executable).with_name("memvault")), "keys", "create", "--label", "telegram-bot",
                           "--brain-scopes", ",".join(GRANTED_SCOPES), "--json"],
                          env=env, capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    return str(json.loads(made.stdout)["key"])


@pytest.fixture(scope="module")
def notes_stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NotesStack]:
    work = tmp_path_factory.mktemp("notes-bot")
    credentials = {hashlib.sha256(BOT_BRAIN.encode()).hexdigest(): {"name": "telegram-bot", "scopes": ["family"], "writer": True},
                   hashlib.sha256(NOTES_WRITER.encode()).hexdigest(): {"name": "laptop-notes",
                                                                      "scopes": list(NOTES_WRITER_SCOPES), "writer": True}}
    model, telegram = FakeUpstream(answer="Happy to help with that."), FakeTelegram(BOT_TOKEN)
    with ServerThread(model) as model_server, ServerThread(telegram) as telegram_server:
        env = {**os.environ, "MEMVAULT_DATA_DIR": str(work / "memvault"), "MEMVAULT_BRAIN_CREDENTIALS": json.dumps(credentials),
               "MEMVAULT_OPENAI_BASE_URL": model_server.url}
        memory_key = create_bot_key(env)
        with memvault_serve(env) as memvault_url:
            pushed = push_notes(memvault_url, NOTES_WRITER, work)
            config = BotConfig(telegram_token=BOT_TOKEN, webhook_secret=WEBHOOK_SECRET, memvault_key=memory_key,
                               brain_token=BOT_BRAIN, llm_api_key="sk-test-model-key", memvault_url=memvault_url,
                               telegram_api=telegram_server.url, history_turns=2)
            bot = LocalBot(config, work / "bot")
            bot_loop = LoopCapture(bot)
            with ServerThread(bot_loop) as bot_server:
                yield NotesStack(memvault_url, model, telegram, bot_server.url, pushed)
                if bot_loop.loop is not None:
                    asyncio.run_coroutine_threadsafe(bot.aclose(), bot_loop.loop).result(timeout=30)


def test_the_questions_do_not_hold_their_answers() -> None:
    assert all(q.holds_no_answer() for q in (*QUESTIONS, WALLED, EXCLUDED, ABOUT_REMEMBERED))
    assert note_count() >= 20


def test_the_bot_answers_from_notes_pushed_with_brain_sync(notes_stack: NotesStack) -> None:
    assert json.loads(notes_stack.pushed.strip().splitlines()[-1])["sent"] == note_count()
    assert "excluded: private/" in notes_stack.pushed
    assert "sent: health/appointments.md (scope family, type user)" in notes_stack.pushed
    chat_id = 6_660_001
    for question in QUESTIONS:
        request = notes_stack.ask(chat_id, question.text)
        system = system_of(request)
        assert all(part in system for part in question.answer), (question, system)
        # The answer reached the model from the notes alone, not from the turns the bot sent.
        assert not any(part in m["content"] for m in request["messages"] if m["role"] != "system"
                       for part in question.answer)
    assert len(notes_stack.telegram.to_chat(chat_id)) == len(QUESTIONS)


def test_walled_and_excluded_notes_never_reach_the_model(notes_stack: NotesStack) -> None:
    for question in (WALLED, EXCLUDED):
        sent = json.dumps(notes_stack.ask(6_660_002, question.text))
        assert not any(part in sent for part in question.answer), question


async def test_remember_is_readable_everywhere_at_once_and_reaches_the_next_answer(notes_stack: NotesStack) -> None:
    chat_id = 6_660_003
    update = {"update_id": next(UPDATE_IDS), "message": {
        "message_id": 1, "date": int(time.time()), "text": f"/remember {REMEMBERED}",
        "chat": {"id": chat_id, "type": "private"}, "from": {"id": chat_id, "is_bot": False, "first_name": "Ana"}}}
    done = httpx.post(f"{notes_stack.bot_url}/webhook", json=update, timeout=60,
                      headers={"X-Telegram-Bot-Api-Secret-Token": WEBHOOK_SECRET})
    assert done.status_code == 200
    assert notes_stack.telegram.to_chat(chat_id) == [f"Remembered: {REMEMBERED}"]
    source = f"telegram:{chat_id}"

    found = notes_stack.brain("/v1/brain/facts/search", NOTES_WRITER, {"query": "piano tuner"})
    assert [(f["source"], f["scope"]) for f in found["results"] if f["content"] == REMEMBERED] == [(source, "family")]
    async with http_session(f"{notes_stack.memvault_url}/mcp", {"Authorization": f"Bearer {NOTES_WRITER}"}) as session:
        tool = answer(await session.call_tool("brain_search", {"query": "piano tuner"}))
    assert [f["source"] for f in tool["results"] if f["content"] == REMEMBERED] == [source]
    # The portal's calls, as its page makes them: who is signed in, then its recall view.
    me = httpx.get(f"{notes_stack.memvault_url}/portal/me", headers={"Authorization": f"Bearer {NOTES_WRITER}"}, timeout=30)
    assert me.json()["kind"] == "brain"
    recalled = notes_stack.brain("/v1/brain/recall", NOTES_WRITER, {"query": "piano tuner"})
    assert source in json.dumps(recalled)

    request = notes_stack.ask(chat_id, ABOUT_REMEMBERED.text)
    assert all(part in system_of(request) for part in ABOUT_REMEMBERED.answer)

