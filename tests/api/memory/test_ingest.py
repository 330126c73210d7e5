"""Large writes: stored in bounded slices (a failure leaves a prefix, a re-send completes it without
storing anything twice), embedded off the event loop so other keys keep being answered, each
message embedded once, and chunks get their vectors from their messages'."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from typing import Any

import pytest
from memory_support import Memvault
from test_memory_api import NOW, search, store

from memvault.core import memory
from memvault.core.errors import StorageUnavailable
from memvault.core.keys import create_key
from memvault.core.models import Message


def chat(count: int, prefix: str = "m") -> list[dict[str, Any]]:
    return [
        {"role": "user" if i % 2 == 0 else "assistant", "content": f"{prefix} note {i}: the lantern on shelf {i} is brass.",
         "timestamp": NOW - 10_000 + i, "id": f"{prefix}{i}"}
        for i in range(count)
    ]


class SlowEmbedder:
    """The real embedder's shape (work in a thread), made slow: what a big import meets."""

    def __init__(self, inner: Any, seconds: float) -> None:
        self._inner, self._seconds = inner, seconds
        self.model_id, self.dimension = inner.model_id, inner.dimension

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        await asyncio.to_thread(time.sleep, self._seconds)
        return list(await self._inner.embed(texts))


class FailingAppends:
    """The vault directory with the n-th append of one vault failing, as a crashed store would."""

    def __init__(self, inner: Any, fail_on: int) -> None:
        self._inner, self._fail_on, self.appends = inner, fail_on, 0

    def vault(self, name: str) -> Any:
        outer, vault = self, self._inner.vault(name)

        class Vault:
            def __getattr__(self, attribute: str) -> Any:
                return getattr(vault, attribute)

            async def append(self, messages: Sequence[Message], model: Any = None) -> Any:
                outer.appends += 1
                if outer.appends == outer._fail_on:
                    raise StorageUnavailable("the vault failed mid-batch")
                return await vault.append(messages, model)

        return Vault()


async def test_a_long_batch_goes_in_slices_and_a_resend_completes_it_once(memvault: Memvault) -> None:
    memvault.deps.settings = memvault.deps.settings.replace(embed_batch=100)
    healthy = memvault.deps.vaults
    memvault.deps.vaults = FailingAppends(healthy, fail_on=4)
    response = await memvault.client.post("/v1/memory", json={"messages": chat(450)}, headers=memvault.auth)
    assert response.status_code == 503
    stats = await healthy.vault(f"{memvault.key_id}:core").stats()
    assert stats.messages + stats.buffered_messages == 300  # the three slices before the failure
    memvault.deps.vaults = healthy
    result = await store(memvault, chat(450))
    assert result["messages_accepted"] == 150
    stats = await healthy.vault(f"{memvault.key_id}:core").stats()
    assert stats.messages + stats.buffered_messages == 450


async def test_a_big_import_does_not_hold_up_another_keys_search(memvault: Memvault) -> None:
    await store(memvault, chat(60, prefix="b"))
    other, _ = await create_key(memvault.deps.db, "importer", NOW)
    memvault.deps.embedder = SlowEmbedder(memvault.deps.embedder, 0.15)
    memvault.deps.settings = memvault.deps.settings.replace(embed_batch=50)
    messages = [Message(m["role"], m["content"], m["timestamp"], m["id"]) for m in chat(600, prefix="i")]
    started = time.perf_counter()
    importing = asyncio.ensure_future(memory.store_conversation(memvault.deps, other.id, messages))
    waits = []
    while not importing.done():
        began = time.perf_counter()
        found = await search(memvault, "brass lantern shelf 7")
        waits.append(time.perf_counter() - began)
        assert found["items"]
        await asyncio.sleep(0.05)
    await importing
    assert time.perf_counter() - started > 1.0 and len(waits) >= 3
    assert max(waits) < 0.9  # one query embedding (0.15 s here) and a search, never the import's queue


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
