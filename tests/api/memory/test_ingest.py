"""Large writes: stored whole or not at all (a re-send after a failure stores them once), embedded
in bounded slices off the event loop so other keys keep being answered, each message embedded
once, and chunks get their vectors from their messages'."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections.abc import Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest
from memory_support import Memvault
from test_memory_api import NOW, search, store

from memvault.adapters.local.vaults import vault_filename
from memvault.core import memory
from memvault.core.credentials.keys import create_key
from memvault.core.models import Message


def chat(count: int, prefix: str = "m") -> list[dict[str, Any]]:
    return [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"{prefix} note {i}: the lantern on shelf {i} is brass.",
         "timestamp": NOW - 10_000 + i, "id": f"{prefix}{i}"}
        for i in range(count)
    ]


class HeldEmbedder:
    """The real embedder's shape (work in a thread), with the calls for texts starting with
    ``held_prefix`` held in their thread until ``release``: an import caught mid-embedding."""

    def __init__(self, inner: Any, held_prefix: str) -> None:
        self._inner, self._held_prefix = inner, held_prefix
        self.model_id, self.dimension = inner.model_id, inner.dimension
        self.holding = threading.Event()
        self._released = threading.Event()

    def release(self) -> None:
        self._released.set()

    def _wait_if_held(self, texts: Sequence[str]) -> None:
        if any(text.startswith(self._held_prefix) for text in texts):
            self.holding.set()
            self._released.wait(timeout=120)

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        await asyncio.to_thread(self._wait_if_held, texts)
        return list(await self._inner.embed(texts))


async def test_a_long_batch_that_fails_part_way_stores_nothing_and_a_resend_stores_it_once(memvault: Memvault) -> None:
    memvault.deps.tuning = memvault.deps.tuning.replace(embed_batch=100)
    await store(memvault, chat(1, prefix="s"))
    name = f"{memvault.key_id}:core"
    path = Path(memvault.deps.settings.data_dir) / "vaults" / vault_filename(name)
    # The vault's storage fails at the 301st message of the batch, as a full disk or a crash would.
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("CREATE TRIGGER fail_part_way BEFORE INSERT ON buffer WHEN NEW.id = 'm300' "
                     "BEGIN SELECT RAISE(ABORT, 'the storage failed'); END")
    response = await memvault.client.post("/v1/memory", json={"messages": chat(450)}, headers=memvault.auth)
    assert response.status_code >= 400 and "error" in response.json()
    stats = await memvault.deps.vaults.vault(name).stats()
    assert stats.messages + stats.buffered_messages == 1  # not the 300 before the failure
    with closing(sqlite3.connect(path)) as conn:
        conn.execute("DROP TRIGGER fail_part_way")
    assert (await store(memvault, chat(450)))["messages_accepted"] == 450
    assert (await store(memvault, chat(450)))["messages_accepted"] == 0
    stats = await memvault.deps.vaults.vault(name).stats()
    assert stats.messages + stats.buffered_messages == 451
    rows = await memvault.deps.vaults.vault(name).rows(None, 1000)
    assert all(r.embedding is not None for r in rows)  # the vectors came in slices of 100


async def test_a_big_import_does_not_hold_up_another_keys_search(memvault: Memvault) -> None:
    await store(memvault, chat(60, prefix="b"))
    other, _ = await create_key(memvault.deps.db, "importer", NOW)
    held = HeldEmbedder(memvault.deps.embedder, held_prefix="i note")
    memvault.deps.embedder = held
    memvault.deps.tuning = memvault.deps.tuning.replace(embed_batch=50)
    messages = [Message(m["role"], m["content"], m["timestamp"], m["id"]) for m in chat(600, prefix="i")]
    importing = asyncio.ensure_future(memory.store_conversation(memvault.deps, other.id, messages))
    try:
        assert await asyncio.to_thread(held.holding.wait, 60), "the import never reached its embedding"
        # The import is stuck inside a model call: other keys' searches are answered all the same.
        for _ in range(3):
            found = await asyncio.wait_for(search(memvault, "brass lantern shelf 7"), timeout=60)
            assert found["items"]
        assert not importing.done()
    finally:
        held.release()
    assert (await importing).messages_accepted == 600


async def test_a_chunk_takes_the_mean_of_its_messages_vectors(memvault: Memvault) -> None:
    await store(memvault, chat(60))
    vault = memvault.deps.vaults.vault(f"{memvault.key_id}:core")
    rows = await vault.rows(None, 1000)
    chunks = [r for r in rows if r.kind == "chunk"]
    assert chunks and all(r.embedding is not None for r in rows)
    members = [r for r in rows if r.kind == "message" and r.parent_id == chunks[0].id]
    total = [sum(values) for values in zip(*(m.embedding or () for m in members), strict=True)]
    norm = sum(x * x for x in total) ** 0.5
    assert all(abs(a - b / norm) < 1e-5 for a, b in zip(chunks[0].embedding or (), total, strict=True))


class Recording:
    """The embedder, keeping every text it was asked to embed."""

    def __init__(self, inner: Any) -> None:
        self._inner, self.texts = inner, list[str]()
        self.model_id, self.dimension = inner.model_id, inner.dimension

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.texts += texts
        return list(await self._inner.embed(texts))


async def test_every_message_reaches_the_model_once_and_chunks_of_messages_never(memvault: Memvault) -> None:
    recording = memvault.deps.embedder = Recording(memvault.deps.embedder)
    long = " ".join(f"Sentence {i} of the keeper's logbook mentions gulls." for i in range(150))
    await store(memvault, chat(3, prefix="early"))  # pending: embedded at once
    assert len(recording.texts) == 3
    await store(memvault, chat(3, prefix="early"))  # a re-send: nothing new
    await store(memvault, [*chat(60), {"role": "user", "content": long, "timestamp": NOW, "id": "long"}])
    await memory.flush_pending(memvault.deps, memvault.key_id)
    vault = memvault.deps.vaults.vault(f"{memvault.key_id}:core")
    rows = await vault.rows(None, 10_000)
    assert all(r.embedding is not None for r in rows) and (await vault.stats()).unembedded == 0
    messages = [r for r in rows if r.kind == "message"]
    assert len(messages) == 64 and sorted(recording.texts[:3]) == sorted(m["content"] for m in chat(3, prefix="early"))
    assert all(recording.texts.count(m.text) == 1 for m in messages)
    held = {m.parent_id for m in messages}
    pieces = [r for r in rows if r.kind == "chunk" and r.id not in held]
    assert pieces and all(recording.texts.count(p.text) == 1 for p in pieces)  # later pieces of the long message
    assert not any(r.text in recording.texts for r in rows if r.kind == "chunk" and r.id in held)
    assert len(recording.texts) == len(messages) + len(pieces)


@pytest.mark.parametrize("count", [1, 257])
async def test_any_length_of_batch_is_stored_whole(memvault: Memvault, count: int) -> None:
    result = await store(memvault, chat(count))
    assert result["messages_accepted"] == count
