"""Large writes: stored in bounded slices (a failure leaves a prefix, a re-send completes it without
storing anything twice), embedded off the event loop so other keys keep being answered, each
message embedded once, and chunks get their vectors from their messages'."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Sequence
from typing import Any

import pytest
from memory_support import Memvault
from test_memory_api import NOW, search, store

from memvault.core import memory
from memvault.core.credentials.keys import create_key
from memvault.core.errors import StorageUnavailable
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


class FailingAppends:
    """The vault directory with the n-th append of one vault failing, as a crashed store would."""

    def __init__(self, inner: Any, fail_on: int) -> None:
        self._inner, self._fail_on, self.appends = inner, fail_on, 0

    def vault(self, name: str) -> Any:
        outer, vault = self, self._inner.vault(name)

        class Vault:
            def __getattr__(self, attribute: str) -> Any:
                return getattr(vault, attribute)

            async def append(self, messages: Sequence[Message], model: Any = None, usage: Any = None) -> Any:
                outer.appends += 1
                if outer.appends == outer._fail_on:
                    raise StorageUnavailable("the vault failed mid-batch")
                return await vault.append(messages, model, usage)

        return Vault()


async def test_a_long_batch_goes_in_slices_and_a_resend_completes_it_once(memvault: Memvault) -> None:
    memvault.deps.tuning = memvault.deps.tuning.replace(embed_batch=100)
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
