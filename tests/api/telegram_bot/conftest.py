"""The example Telegram bot run locally end to end: memvault (local mode) in front of a fake model,
a fake Telegram API, and the bot's own ASGI app, each a real server on 127.0.0.1."""

from __future__ import annotations

import asyncio
import hashlib
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[3]
# The bot's package lives with the example; the fake model is the providers tests' one.
for folder in (ROOT / "examples" / "telegram_bot", ROOT / "tests" / "api" / "providers", ROOT / "tests"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from fake_upstream import FakeUpstream, LoopCapture, ServerThread  # noqa: E402
from telegram_bot.config import BotConfig  # noqa: E402
from telegram_bot.local_app import LocalBot  # noqa: E402

from fake_telegram import FakeTelegram  # noqa: E402
from memvault.api.app import create_app  # noqa: E402
from memvault.core.credentials.keys import create_key  # noqa: E402
from memvault.core.deps import Deps  # noqa: E402
from memvault.core.settings import load_settings  # noqa: E402
from memvault.runtime.local import build_local_deps, close_local_deps  # noqa: E402

UPDATES = ROOT / "tests" / "data" / "telegram"
BOT_TOKEN = "123456:telegram-test-token"
WEBHOOK_SECRET = "webhook-secret-for-tests"
BRAIN_TOKEN = "bot-brain-credential"


@dataclass
class Stack:
    deps: Deps
    memvault_url: str
    model: FakeUpstream
    telegram: FakeTelegram
    bot_url: str
    bot: LocalBot
    key_id: str

    def update(self, name: str) -> dict[str, Any]:
        return dict(json.loads((UPDATES / name).read_text()))


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[Stack]:
    model, telegram = FakeUpstream(answer="Happy to help with that."), FakeTelegram(BOT_TOKEN)
    with ServerThread(model) as model_server, ServerThread(telegram) as telegram_server:
        credentials = {hashlib.sha256(BRAIN_TOKEN.encode()).hexdigest():
                       {"name": "telegram-bot", "scopes": ["family"], "writer": True}}
        deps = build_local_deps(load_settings({
            "MEMVAULT_DATA_DIR": str(tmp_path / "memvault"), "MEMVAULT_EMBEDDER": "hash",
            "MEMVAULT_OPENAI_BASE_URL": model_server.url, "MEMVAULT_BRAIN_CREDENTIALS": json.dumps(credentials),
        }))
        key, secret = asyncio.run(create_key(deps.db, "telegram-bot", deps.clock()))
        capture = LoopCapture(create_app(deps))
        with ServerThread(capture) as memvault_server:
            config = BotConfig(
                telegram_token=BOT_TOKEN, webhook_secret=WEBHOOK_SECRET, memvault_key=secret, brain_token=BRAIN_TOKEN,
                llm_api_key="sk-test-model-key", memvault_url=memvault_server.url, telegram_api=telegram_server.url,
                history_turns=2,
            )
            bot = LocalBot(config, tmp_path / "bot")
            bot_loop = LoopCapture(bot)
            with ServerThread(bot_loop) as bot_server:
                yield Stack(deps, memvault_server.url, model, telegram, bot_server.url, bot, key.id)
                if bot_loop.loop is not None:
                    asyncio.run_coroutine_threadsafe(bot.aclose(), bot_loop.loop).result(timeout=30)
            # memvault's clients were opened on its server's loop: they are closed there.
            if capture.loop is not None:
                asyncio.run_coroutine_threadsafe(close_local_deps(deps), capture.loop).result(timeout=30)
