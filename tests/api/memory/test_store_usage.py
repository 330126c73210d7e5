"""A store's usage (messages and tokens stored, embeddings) rides the vault writes that take its
messages and their vectors: no background work after the answer is needed for it to count, and
where the mirror is brought up to date after the answer (Workers), the vault's log keeps the counts
until a sync adds them, once."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from memory_support import settings_for

from memvault.api.app import create_app
from memvault.core.credentials.keys import create_key
from memvault.core.deps import Deps
from memvault.core.memory import sync_all
from memvault.core.settings import load_settings
from memvault.runtime.local import build_local_deps, close_local_deps

MESSAGES = [{"role": "user", "content": "I keep bees behind the shed."},
            {"role": "assistant", "content": "How many hives do you have?"}]


class Dropped:
    """Background work that never runs, as when the process dies right after the answer."""

    def __init__(self) -> None:
        self.dropped = 0

    def run(self, work: Callable[[], Awaitable[None]]) -> None:
        self.dropped += 1


@pytest.fixture
async def deps(tmp_path: Path) -> AsyncIterator[Deps]:
    built = build_local_deps(load_settings(settings_for(tmp_path)))
    yield built
    await close_local_deps(built)


async def store_then_die(deps: Deps) -> tuple[str, Dropped]:
    """Store through the HTTP API with no background work ever run; the key's id."""
    background = Dropped()
    dying = dataclasses.replace(deps, background=background)
    key, secret = await create_key(deps.db, "store", deps.clock())
    transport = httpx.ASGITransport(app=create_app(dying))
    async with httpx.AsyncClient(transport=transport, base_url="http://memvault.test") as client:
        stored = await client.post("/v1/memory", json={"messages": MESSAGES},
                                   headers={"Authorization": f"Bearer {secret}"})
    assert stored.status_code == 200, stored.text
    return key.id, background


async def totals(deps: Deps, key_id: str) -> dict[str, Any]:
    rows = await deps.db.query("SELECT * FROM usage_days WHERE key_id = ?", (key_id,))
    assert len(rows) <= 1, rows
    return rows[0] if rows else {}


async def test_a_stores_usage_is_counted_before_its_answer(deps: Deps) -> None:
    key_id, _ = await store_then_die(deps)
    counted = await totals(deps, key_id)
    assert (counted.get("messages_stored"), counted.get("embeddings")) == (2, 2), counted
    assert counted["tokens_stored"] > 0 and counted["embedding_tokens"] > 0 and counted["calls"] == 0


async def test_a_mirror_left_behind_brings_the_stores_usage_once(deps: Deps) -> None:
    behind = dataclasses.replace(deps, sync_mirror_inline=False)
    key_id, background = await store_then_die(behind)
    assert background.dropped and await totals(deps, key_id) == {}  # the mirror's sync never ran
    await sync_all(deps)  # the next start (or the nightly run) applies the vault's log
    counted = await totals(deps, key_id)
    assert (counted["messages_stored"], counted["embeddings"]) == (2, 2), counted
    await sync_all(deps)
    assert await totals(deps, key_id) == counted
