"""A search runs each vault's keyword stage while its query is embedded, not after: an embedder that
will not answer the query until a vault has prepared its search still gets the search answered
(a search that asked the vault only once it had the vector would wait on itself until the
deadline, and answer without the vector channel)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from memory_support import Memvault

from memvault.core import memory
from memvault.core.models import Message

QUERY = "where is the invoice 20028 for Zanzibar"
DEADLINE = 60.0  # seconds: only a search that never prepares waits this long


class QueryWaitsForPreparedVault:
    """The deps' embedder, except that the query waits until ``prepared`` is set."""

    def __init__(self, inner: Any, prepared: asyncio.Event) -> None:
        self.inner, self.prepared = inner, prepared
        self.model_id, self.dimension = inner.model_id, inner.dimension

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if list(texts) == [QUERY]:
            await asyncio.wait_for(self.prepared.wait(), DEADLINE)
        return list(await self.inner.embed(texts))


class SignallingVaults:
    """The deps' vaults, setting ``prepared`` once a vault has run a search's keyword stage."""

    def __init__(self, inner: Any, prepared: asyncio.Event) -> None:
        self.inner, self.prepared = inner, prepared

    def vault(self, name: str) -> Any:
        vault, prepared = self.inner.vault(name), self.prepared

        class Vault:
            def __getattr__(self, attr: str) -> Any:
                return getattr(vault, attr)

            async def prepare_search(self, text: str, depth: int) -> None:
                await vault.prepare_search(text, depth)
                prepared.set()

        return Vault()


def conversation() -> list[Message]:
    said = [f"Turn {i}: we talked about the garden, the boat and the weather near pier {i}." for i in range(60)]
    said[17] = "The invoice 20028 for the Zanzibar shipment is paid."
    return [Message("user" if i % 2 == 0 else "assistant", text, 1_700_000_000.0 + 60 * i, f"m{i}")
            for i, text in enumerate(said)]


async def test_the_vaults_keyword_stage_runs_while_the_query_is_embedded(memvault: Memvault) -> None:
    deps = memvault.deps
    await memory.store_conversation(deps, memvault.key_id, conversation())
    alone = await memory.search_memory(deps, memvault.key_id, QUERY, now=1_700_010_000.0, budget_tokens=800)
    deps.query_vectors.clear()
    prepared = asyncio.Event()
    deps.embedder = QueryWaitsForPreparedVault(deps.embedder, prepared)  # type: ignore[assignment]
    deps.vaults = SignallingVaults(deps.vaults, prepared)  # type: ignore[assignment]
    # Another budget: a search the read cache has not seen, over the same ranking.
    found = await memory.search_memory(deps, memvault.key_id, QUERY, now=1_700_010_000.0, budget_tokens=799)
    assert prepared.is_set()
    assert "embed_error" not in found.metrics and "embed_ms" in found.metrics
    assert found.items[0].text == "The invoice 20028 for the Zanzibar shipment is paid."
    assert [i.text for i in found.items] == [i.text for i in alone.items][:len(found.items)]


class OrderRecorder:
    """Wraps the deps' embedder and vaults, noting when the model is asked for the query and when
    a vault is first asked anything for the search."""

    def __init__(self, embedder: Any, vaults: Any) -> None:
        self.events: list[str] = []
        self.embedder, self.vaults = embedder, vaults
        self.model_id, self.dimension = embedder.model_id, embedder.dimension

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.events.append("model")
        return list(await self.embedder.embed(texts))

    def vault(self, name: str) -> Any:
        vault, events = self.vaults.vault(name), self.events

        class Vault:
            def __getattr__(self, attr: str) -> Any:
                events.append(attr)
                return getattr(vault, attr)

        return Vault()


async def test_the_query_reaches_the_model_before_any_vault_work_of_its_search_begins(memvault: Memvault) -> None:
    """The embedding is the one part nothing overlaps: the vaults' work queued by the same search
    must not go ahead of it (a vault stage that takes the interpreter first delays the model)."""
    deps = memvault.deps
    await memory.store_conversation(deps, memvault.key_id, conversation())
    recorder = OrderRecorder(deps.embedder, deps.vaults)
    deps.embedder, deps.vaults = recorder, recorder  # type: ignore[assignment]
    found = await memory.search_memory(deps, memvault.key_id, "what was paid for Zanzibar", now=1_700_010_000.0)
    assert found.items and "embed_ms" in found.metrics
    work = [event for event in recorder.events if event in ("model", "prepare_search", "search")]
    assert work[:2] == ["model", "prepare_search"], recorder.events
