"""Pending messages carry their own vectors, in the vault and in its mirror: embedded once at store
time, kept through an embedder outage (found by keyword until the nightly run embeds them), gone
with forget, purge and clear, checked and repaired like the rows, refused for another model, and
vaults and mirrors from before pending vectors keep working."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memory_support import Memvault
from test_memory_api import DAY, NOW, export, search, store
from test_mirror_trust import in_step

from memvault.adapters.local.embedder import HashEmbedder
from memvault.adapters.local.sqlite_sql import SqliteSql
from memvault.adapters.local.vaults import vault_filename
from memvault.core import memory
from memvault.core.credentials.keys import create_key
from memvault.core.memory.mirror import MirrorStore
from memvault.core.memory.rows import message_hash
from memvault.core.memory.schema import MIGRATIONS
from memvault.core.models import Message


class Recording:
    """The embedder, failing while ``down``, taking ``pause`` seconds a call, and keeping every text
    it embedded."""

    def __init__(self, inner: Any) -> None:
        self._inner, self.texts, self.down, self.pause = inner, list[str](), False, 0.0
        self.model_id, self.dimension = inner.model_id, inner.dimension

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if self.down:
            raise ConnectionError("embedding service unavailable")
        await asyncio.sleep(self.pause)
        self.texts += texts
        return list(await self._inner.embed(texts))


def said(i: int, text: str, ts: float = NOW - DAY) -> dict[str, Any]:
    return {"role": "user", "content": text, "timestamp": ts + i, "id": f"p{i}"}


async def vectors(mv: Memvault, key_id: str | None = None) -> dict[str, int]:
    """How many pending messages have a vector in the vault and in the mirror."""
    key_id = key_id or mv.key_id
    vault = await mv.deps.vaults.vault(f"{key_id}:core").changes(0, 0, 0)
    mirrored = await MirrorStore(mv.deps.db).buffer_vectors(key_id, f"{key_id}:core")
    return {"vault": len(vault.buffer.vectors), "mirror": len(mirrored)}


async def unembedded(mv: Memvault) -> int:
    stats = (await mv.client.get("/v1/memory/stats", headers=mv.auth)).json()
    return int(stats["vaults"]["core"]["vault"]["unembedded"])


async def test_an_outage_keeps_the_message_found_by_keyword_until_the_nightly_run_embeds_it_once(
    memvault: Memvault,
) -> None:
    recording = memvault.deps.embedder = Recording(memvault.deps.embedder)
    recording.down = True
    result = await store(memvault, [said(0, "The boiler service is booked with Dalton Heating.")])
    assert result["messages_accepted"] == 1 and result["tokens_buffered"] > 0
    assert [i["text"] for i in (await search(memvault, "Dalton boiler"))["items"]][:1] == [
        "The boiler service is booked with Dalton Heating."
    ]
    assert await unembedded(memvault) == 1 and await vectors(memvault) == {"vault": 0, "mirror": 0}
    recording.down = False
    assert (await memory.reconcile_vault(memvault.deps, memvault.key_id))["embedded"] == 1
    assert recording.texts == ["The boiler service is booked with Dalton Heating."]
    assert await unembedded(memvault) == 0 and await vectors(memvault) == {"vault": 1, "mirror": 1}
    assert await in_step(memvault) == []
    await memory.flush_pending(memvault.deps, memvault.key_id)  # its row takes the vector: no model call
    assert recording.texts == ["The boiler service is booked with Dalton Heating."]
    assert await unembedded(memvault) == 0 and await in_step(memvault) == []


async def test_forget_purge_and_clear_take_pending_vectors_from_vault_and_mirror(memvault: Memvault) -> None:
    await store(memvault, [said(i, f"Reminder {i}: water the ferns on the balcony.", NOW - (3 - i) * DAY) for i in range(3)])
    assert await vectors(memvault) == {"vault": 3, "mirror": 3}
    forgotten = await memvault.client.delete("/v1/memory/p0", headers=memvault.auth)
    assert forgotten.json()["forgotten"] == ["p0"] and await vectors(memvault) == {"vault": 2, "mirror": 2}
    purged = await memvault.client.post("/v1/memory/purge", json={"older_than": NOW - 1.5 * DAY}, headers=memvault.auth)
    assert purged.status_code == 200 and await vectors(memvault) == {"vault": 1, "mirror": 1}
    assert await in_step(memvault) == []
    assert (await memvault.client.delete("/v1/memory", headers=memvault.auth)).status_code == 200
    assert await vectors(memvault) == {"vault": 0, "mirror": 0}


async def test_a_mirror_missing_pending_vectors_is_reported_and_rebuilt(memvault: Memvault) -> None:
    await store(memvault, [said(i, f"Pending thought {i} about the allotment.") for i in range(2)])
    await memvault.deps.db.execute("DELETE FROM mirror_buffer_vectors WHERE key_id = ?", (memvault.key_id,))
    assert await in_step(memvault) == [f"{memvault.key_id}:core: the pending buffers' vectors differ"]
    await memory.rebuild_mirror(memvault.deps, memvault.key_id, f"{memvault.key_id}:core")
    assert await in_step(memvault) == [] and await vectors(memvault) == {"vault": 2, "mirror": 2}


async def test_another_model_is_refused_when_only_pending_messages_hold_vectors(memvault: Memvault) -> None:
    await store(memvault, [said(0, "Only one short message so far.")])
    memvault.deps.embedder = HashEmbedder(dimension=128)
    refused = await memvault.client.post("/v1/memory", json={"messages": [said(1, "Another one.")]}, headers=memvault.auth)
    assert refused.status_code == 409 and "reset" in refused.json()["error"]["message"]
    assert (await memvault.client.delete("/v1/memory", params={"reset": "true"}, headers=memvault.auth)).status_code == 200
    assert (await store(memvault, [said(1, "Another one.")]))["messages_accepted"] == 1
    assert await vectors(memvault) == {"vault": 1, "mirror": 1}


async def test_export_carries_pending_messages_without_their_vectors(memvault: Memvault) -> None:
    await store(memvault, [said(0, "The gate code is on the fridge.")])
    [line] = await export(memvault)
    assert line["type"] == "pending" and "embedding" not in json.dumps(line)


async def test_a_vault_and_mirror_from_before_pending_vectors_keep_working(memvault: Memvault, tmp_path: Path) -> None:
    key, secret = await create_key(memvault.deps.db, "older", NOW)
    name = f"{key.id}:core"
    old = [Message("user", f"Older pending note {i}: the shed roof leaks.", NOW - DAY + i, f"o{i}") for i in range(2)]
    _write_vault_of_the_earlier_format(tmp_path / "vaults" / vault_filename(name), old)
    await MirrorStore(memvault.deps.db).register(key.id, name, NOW)
    await memory.sync_mirror(memvault.deps, key.id, name)  # a mirror with the buffer and no vectors
    older = Memvault(memvault.deps, memvault.client, secret, key.id)
    assert [i["text"] for i in (await search(older, "shed roof leaks"))["items"]] == [m.content for m in reversed(old)]
    assert await vectors(older) == {"vault": 0, "mirror": 0} and await unembedded(older) == 2
    recording = memvault.deps.embedder = Recording(memvault.deps.embedder)
    await store(older, [said(5, "A new note: the gutter is blocked.")])
    assert await vectors(older) == {"vault": 1, "mirror": 1} and await unembedded(older) == 2
    await memory.flush_pending(memvault.deps, key.id)  # the cut embeds the older ones, as it always did
    assert sorted(recording.texts) == sorted(["A new note: the gutter is blocked.", *(m.content for m in old)])
    assert await unembedded(older) == 0 and await in_step(older) == []
    assert [i["text"] for i in (await search(older, "shed roof leaks"))["items"]][:2] == [m.content for m in reversed(old)]


def _write_vault_of_the_earlier_format(path: Path, pending: Sequence[Message]) -> None:
    """A vault file as the release before pending vectors wrote it: its migrations, its buffer."""
    path.parent.mkdir(parents=True, exist_ok=True)
    sql = SqliteSql(path)
    sql.execute("CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY)")
    for name, statements in MIGRATIONS:
        if name == "0008_buffer_embeddings":
            break
        for statement in statements:
            sql.execute(statement)
        sql.execute("INSERT INTO schema_migrations (name) VALUES (?)", (name,))
    for m in pending:
        sql.execute(
            "INSERT INTO buffer (id, role, content, ts, model, content_hash, occurrences, metadata) VALUES (?, ?, ?, ?, ?, ?, 1, NULL)",
            (m.id, m.role, m.content, m.timestamp, m.model, message_hash(m)),
        )
    sql.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'log_head'")
    sql.execute("INSERT INTO changes (seq, kind, ids) SELECT CAST(value AS INTEGER), 'buffer', '[]' FROM meta WHERE key = 'log_head'")
    sql.close()


async def test_concurrent_writers_embed_each_message_once_and_leave_nothing_unembedded(memvault: Memvault) -> None:
    recording = memvault.deps.embedder = Recording(memvault.deps.embedder)
    recording.pause = 0.01  # each model call yields, so other writers' cuts fall between a store and its vectors

    async def writer(w: int) -> None:
        for r in range(6):
            batch = [said(100 * w + 10 * r + i, f"Writer {w} round {r} line {i}: the kettle is {w * r + i} degrees.")
                     for i in range(5)]
            await store(memvault, batch)

    await asyncio.gather(*(writer(w) for w in range(8)))
    assert len(recording.texts) == 240 and len(set(recording.texts)) == 240
    stats = (await memvault.client.get("/v1/memory/stats", headers=memvault.auth)).json()["vaults"]["core"]["vault"]
    assert stats["chunks"] > 0 and stats["unembedded"] == 0
    assert await in_step(memvault) == []
