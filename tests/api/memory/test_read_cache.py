"""The read cache: repeated reads are answered from it, and a write makes older answers
unreachable at once (the vault's generation or the brain scope's is part of every cache key);
memory-key lookups, where cached (on Workers), are dropped by memvault's own revocation."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from memory_support import Memvault

from memvault.adapters.local.cache import MemoryCache
from memvault.core import brain, memory
from memvault.core.brain.scopes import token_hash
from memvault.core.credentials import keys
from memvault.core.errors import StorageUnavailable, Unauthorized
from memvault.core.models import Message, SearchQuery
from memvault.core.ports import Row


def message(text: str, i: int) -> Message:
    return Message("user", text, 1_700_000_000.0 + i, f"m{i}")


async def search(memvault: Memvault, query: str, session_id: str | None = None) -> Any:
    return await memory.search_memory(memvault.deps, memvault.key_id, query, session_id=session_id)


def counts(memvault: Memvault) -> tuple[int, int]:
    return memvault.deps.cache_stats.hits, memvault.deps.cache_stats.misses


async def test_a_repeated_search_is_answered_from_the_cache_until_a_write(memvault: Memvault) -> None:
    await memory.store_conversation(memvault.deps, memvault.key_id, [message("The boat is called Nautilus.", 1)])
    first = await search(memvault, "what is the boat called")
    hits, misses = counts(memvault)
    again = await search(memvault, "what is the boat called")
    assert counts(memvault) == (hits + 1, misses)
    assert again.metrics.get("cached") is True and [i.text for i in again.items] == [i.text for i in first.items]

    await memory.store_conversation(memvault.deps, memvault.key_id, [message("The boat is moored at pier 9.", 2)])
    after_write = await search(memvault, "what is the boat called")
    assert counts(memvault)[1] == misses + 1 and "cached" not in after_write.metrics
    assert any("pier 9" in item.text for item in after_write.items)

    await memory.forget(memvault.deps, memvault.key_id, ["m2"])
    after_forget = await search(memvault, "what is the boat called")
    assert not any("pier 9" in item.text for item in after_forget.items)


async def test_a_write_to_the_session_vault_reaches_a_search_of_that_session(memvault: Memvault) -> None:
    await search(memvault, "favourite colour", "chat-1")
    await memory.store_conversation(memvault.deps, memvault.key_id, [message("My favourite colour is teal.", 3)], "chat-1")
    found = await search(memvault, "favourite colour", "chat-1")
    assert any("teal" in item.text for item in found.items)
    await search(memvault, "favourite colour", "chat-1")
    stats = (await memvault.client.get("/v1/memory/stats", headers=memvault.auth)).json()["cache"]
    assert stats["kinds"]["memory-search"] == {"hits": 1, "misses": 2, "hit_rate": 0.3333}
    assert not any(kind.startswith("memory-key") for kind in stats["kinds"])  # looked up on every call locally
    assert stats["hits"] + stats["misses"] == sum(k["hits"] + k["misses"] for k in stats["kinds"].values())


async def test_a_keys_stats_count_its_own_reads_only(memvault: Memvault) -> None:
    other, other_secret = await keys.create_key(memvault.deps.db, "other", memvault.deps.clock())
    other_auth = {"Authorization": f"Bearer {other_secret}"}

    async def cache_of(auth: dict[str, str]) -> dict[str, Any]:
        answer = await memvault.client.get("/v1/memory/stats", headers=auth)
        assert answer.status_code == 200, answer.text
        return dict(answer.json()["cache"])

    before = await cache_of(other_auth)
    await search(memvault, "what is the boat called")
    await search(memvault, "what is the boat called")
    assert await cache_of(other_auth) == before
    assert (await cache_of(memvault.auth))["kinds"]["memory-search"] == {"hits": 1, "misses": 1, "hit_rate": 0.5}
    await memory.search_memory(memvault.deps, other.id, "what is the boat called")
    assert (await cache_of(other_auth))["kinds"]["memory-search"] == {"hits": 0, "misses": 1, "hit_rate": 0.0}


class BrokenSearches:
    """A vault directory whose vaults cannot search (the mirror answers instead)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def vault(self, name: str) -> Any:
        vault = self.inner.vault(name)

        class Vault:
            def __getattr__(self, attr: str) -> Any:
                return getattr(vault, attr)

            async def search(self, query: SearchQuery) -> Any:
                raise StorageUnavailable("vault call search failed")

        return Vault()


async def test_an_answer_the_mirror_gave_is_never_kept(memvault: Memvault) -> None:
    await memory.store_conversation(memvault.deps, memvault.key_id, [message("The cellar key hangs by the door.", 4)])
    memvault.deps.vaults = BrokenSearches(memvault.deps.vaults)  # type: ignore[assignment]
    for _ in range(2):
        found = await search(memvault, "cellar key")
        assert found.metrics["vaults"][f"{memvault.key_id}:core"]["winner"] == "mirror"
        assert "cached" not in found.metrics


class CountingReads:
    def __init__(self, inner: Any) -> None:
        self.inner, self.queries = inner, []

    async def query(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        self.queries.append(sql)
        return await self.inner.query(sql, params)

    def __getattr__(self, attr: str) -> Any:
        return getattr(self.inner, attr)


async def test_brain_reads_are_fresh_for_the_scopes_written_and_cached_for_the_others(memvault: Memvault) -> None:
    writer_hash, family_hash = token_hash("w"), token_hash("f")
    memvault.deps.settings = memvault.deps.settings.replace(brain_credentials=json.dumps({
        writer_hash: {"name": "writer", "scopes": ["family", "business"], "writer": True},
        family_hash: {"name": "family", "scopes": ["family"], "writer": False},
    }))
    writer, family = await brain.auth_of("w", memvault.deps), await brain.auth_of("f", memvault.deps)
    write, recall = brain.WRITE_FACTS.perform, brain.RECALL.perform
    await write(memvault.deps, writer, {"fact": "The cabin door is green.", "scope": "family", "source": "a"})
    first = await recall(memvault.deps, family, {"query": "cabin door"})
    assert await recall(memvault.deps, family, {"query": "cabin door"}) == first
    hits = memvault.deps.cache_stats.hits
    await write(memvault.deps, writer, {"fact": "Invoice 7 pays the cabin door.", "scope": "business", "source": "b"})
    assert await recall(memvault.deps, family, {"query": "cabin door"}) == first
    assert memvault.deps.cache_stats.hits == hits + 1, "a write the reader cannot see leaves its answer cached"
    await write(memvault.deps, writer, {"fact": "The cabin door key is under the mat.", "scope": "family", "source": "c"})
    fresh = await brain.SEARCH_FACTS.perform(memvault.deps, family, {"query": "cabin door key"})
    assert any("under the mat" in row.content for row in fresh.results)
    recalled = await recall(memvault.deps, family, {"query": "cabin door"})
    assert any("under the mat" in e.content for e in [*recalled.recent, *recalled.facts])


async def test_key_lookups_are_cached_and_memvaults_own_revocation_drops_them(memvault: Memvault) -> None:
    reads = CountingReads(memvault.deps.db)
    memvault.deps.db = reads  # type: ignore[assignment]
    for _ in range(3):
        assert (await keys.authenticate(reads, memvault.key, memvault.deps.reads)).id == memvault.key_id
    assert sum("FROM memory_keys" in sql for sql in reads.queries) == 1
    await keys.revoke_key(memvault.deps.db, memvault.key_id, 1.0, memvault.deps.reads)
    try:
        await keys.authenticate(reads, memvault.key, memvault.deps.reads)
    except Unauthorized:
        pass
    else:
        raise AssertionError("a key revoked through memvault was still served from the cache")


async def test_a_key_revoked_behind_the_caches_back_lasts_at_most_the_ttl(memvault: Memvault) -> None:
    now = [0.0]
    memvault.deps.cache = MemoryCache(clock=lambda: now[0])
    ttl = memvault.deps.settings.cache_ttl_seconds
    await keys.authenticate(memvault.deps.db, memvault.key, memvault.deps.reads)
    await keys.revoke_key(memvault.deps.db, memvault.key_id, 1.0)  # another process: no cache to tell
    now[0] += ttl - 1
    assert (await keys.authenticate(memvault.deps.db, memvault.key, memvault.deps.reads)).id == memvault.key_id
    now[0] += 1
    try:
        await keys.authenticate(memvault.deps.db, memvault.key, memvault.deps.reads)
    except Unauthorized:
        pass
    else:
        raise AssertionError("the cached lookup outlived its TTL")
