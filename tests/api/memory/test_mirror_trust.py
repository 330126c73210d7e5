"""The mirror cannot drift: it is derived from each vault's change log, so a failing mirror, a
full disk, a clear racing writes or a crash between vault and mirror all heal at the next write,
the next startup or the nightly run, and nothing deleted is readable from either store."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from memory_support import Memvault
from test_memory_api import DAY, NOW, search, store, turn
from test_vault_and_mirror import BrokenVaults, MirrorDown

from memvault.core import memory
from memvault.core.memory.mirror import MirrorStore
from memvault.core.models import Message
from memvault.core.ports import Database


class FullDisk:
    """The database with every write to mirror tables failing as SQLite does when the disk is full."""

    def __init__(self, db: Database) -> None:
        self._db = db

    async def query(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        return await self._db.query(sql, params)

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        return await self._db.execute(sql, params)

    async def batch(self, statements: Sequence[tuple[str, Sequence[Any]]]) -> None:
        if any("mirror_" in sql for sql, _ in statements):
            raise sqlite3.OperationalError("database or disk is full")
        await self._db.batch(statements)


async def in_step(mv: Memvault) -> list[str]:
    differences = []
    for key_id, name in await memory.all_vaults(mv.deps):
        differences += await memory.mirror_differences(mv.deps, key_id, name)
    return differences


def chat(start: int, count: int, ts: float = NOW - DAY, topic: str = "lanterns") -> list[dict[str, Any]]:
    return [turn(i, ts + i, topic) for i in range(start, start + count)]


async def test_every_write_leaves_vault_and_mirror_identical(memvault: Memvault) -> None:
    await store(memvault, chat(0, 60))
    await store(memvault, chat(100, 7), session="s1")
    await memvault.client.delete("/v1/memory/t30", headers=memvault.auth)
    await memvault.client.post("/v1/memory/purge", json={"older_than": NOW - DAY + 20}, headers=memvault.auth)
    assert await in_step(memvault) == []


async def test_a_mirror_down_for_a_while_catches_up_at_the_next_write(memvault: Memvault) -> None:
    await store(memvault, chat(0, 40))
    healthy = memvault.deps.db
    memvault.deps.db = MirrorDown(healthy)
    for start in range(40, 100, 10):
        result = await store(memvault, chat(start, 10))
        assert result["mirrored"] is False and result["messages_accepted"] == 10
    await memvault.client.delete("/v1/memory/t5", headers=memvault.auth)
    memvault.deps.db = healthy
    assert await in_step(memvault) != []
    assert (await store(memvault, chat(100, 1)))["mirrored"] is True
    assert await in_step(memvault) == []


async def test_a_full_disk_window_on_the_mirror_heals_once_space_is_back(memvault: Memvault) -> None:
    await store(memvault, chat(0, 30))
    healthy = memvault.deps.db
    memvault.deps.db = FullDisk(healthy)
    response = await memvault.client.post("/v1/memory", json={"messages": chat(30, 30)}, headers=memvault.auth)
    assert response.status_code == 200 and response.json()["mirrored"] is False
    memvault.deps.db = healthy
    await memory.sync_all(memvault.deps)  # what the local server runs at startup
    assert await in_step(memvault) == []


async def test_a_clear_racing_writes_leaves_nothing_of_what_it_cleared(memvault: Memvault) -> None:
    await store(memvault, chat(0, 40, topic="before"), session="s9")

    async def writer(offset: int) -> None:
        for start in range(offset, offset + 50, 5):
            await store(memvault, chat(1000 + start, 5, topic="during"), session="s9")

    clear = memvault.client.delete("/v1/memory", params={"session_id": "s9"}, headers=memvault.auth)
    await asyncio.gather(writer(0), writer(100), clear, writer(200))
    await store(memvault, chat(5000, 1, topic="after"), session="s9")
    assert await in_step(memvault) == []
    name = f"{memvault.key_id}:session:s9"
    texts = [r.text for r in await memvault.deps.vaults.vault(name).rows(None, 10_000)]
    texts += [r.text for r in await MirrorStore(memvault.deps.db).rows(memvault.key_id, name, None, 10_000)]
    assert not any("about before" in t for t in texts)
    page = await memory.read_memory(memvault.deps, memvault.key_id, "s9", 500, 0)
    assert not any("about before" in entry["content"] for entry in page)


async def test_a_crash_between_vault_and_mirror_heals_at_startup_or_the_next_write(memvault: Memvault) -> None:
    await store(memvault, chat(0, 20))
    vault = memvault.deps.vaults.vault(f"{memvault.key_id}:core")
    # What a process killed after the vault committed and before the mirror applied leaves behind.
    await vault.append([Message("user", f"orphan note {i} about kites.", NOW + i, f"o{i}") for i in range(40)])
    assert await in_step(memvault) != []
    await memory.sync_all(memvault.deps)
    assert await in_step(memvault) == []
    await vault.forget(["o3"])
    await store(memvault, chat(20, 1))
    assert await in_step(memvault) == []


async def test_a_mirror_behind_the_trimmed_log_is_rebuilt_from_the_vault(memvault: Memvault) -> None:
    await store(memvault, chat(0, 50))
    name = f"{memvault.key_id}:core"
    # A mirror restored from an older copy: it remembers applying nothing, and the log is trimmed.
    await memvault.deps.db.execute("UPDATE vaults SET claimed_seq = synced_seq, synced_seq = 0 WHERE vault = ?", (name,))
    await memvault.deps.db.execute("DELETE FROM mirror_rows WHERE vault = ? AND id LIKE 'c-%'", (name,))
    outcome = await memory.sync_mirror(memvault.deps, memvault.key_id, name)
    assert outcome.rebuilt and await in_step(memvault) == []


async def test_fresh_reads_come_from_the_vault_while_the_mirror_is_behind(memvault: Memvault) -> None:
    healthy = memvault.deps.db
    memvault.deps.db = MirrorDown(healthy)
    await store(memvault, chat(0, 45))
    page = await memory.read_memory(memvault.deps, memvault.key_id, None, 100, 0)
    assert [entry["id"] for entry in page] == [f"t{i}" for i in reversed(range(45))]
    exported = [r async for r in memory.export_memory(memvault.deps, memvault.key_id)]
    assert len([r for r in exported if r["type"] in ("message", "pending")]) == 45


async def test_a_vault_that_cannot_be_registered_is_not_written(memvault: Memvault) -> None:
    class NoRegistry(MirrorDown):
        def _check(self, sql: str) -> None:
            if "vaults" in sql:
                raise ConnectionError("database unreachable")

    memvault.deps.db = NoRegistry(memvault.deps.db)
    response = await memvault.client.post("/v1/memory", json={"messages": chat(0, 3)}, headers={**memvault.auth, "X-Session-ID": "new"})
    assert response.status_code == 503 and response.json()["error"]["code"] == "storage_unavailable"
    stats = await memvault.deps.vaults.vault(f"{memvault.key_id}:session:new").stats()
    assert (stats.messages, stats.buffered_messages) == (0, 0)


async def test_a_message_resent_with_its_id_is_stored_once(memvault: Memvault) -> None:
    first = await store(memvault, chat(0, 3))
    again = await store(memvault, [{**m, "timestamp": NOW} for m in chat(0, 3)])  # a retry, at another time
    assert first["messages_accepted"] == 3 and again["messages_accepted"] == 0
    stats = await memvault.deps.vaults.vault(f"{memvault.key_id}:core").stats()
    assert stats.messages + stats.buffered_messages == 3


async def test_another_text_under_a_stored_id_is_a_conflict_and_stores_nothing(memvault: Memvault) -> None:
    await store(memvault, chat(0, 3))
    body = {"messages": [turn(50, NOW, "fresh"), {**turn(1, NOW), "content": "something else entirely"}]}
    response = await memvault.client.post("/v1/memory", json=body, headers=memvault.auth)
    assert response.status_code == 409 and "'t1'" in response.json()["error"]["message"]
    twice = {"messages": [turn(60, NOW), {**turn(60, NOW), "content": "same id, other words"}]}
    assert (await memvault.client.post("/v1/memory", json=twice, headers=memvault.auth)).status_code == 409
    stats = await memvault.deps.vaults.vault(f"{memvault.key_id}:core").stats()
    assert stats.messages + stats.buffered_messages == 3
    assert await in_step(memvault) == []


async def test_nothing_cleared_comes_back_through_the_mirror_fallback(memvault: Memvault) -> None:
    await store(memvault, chat(0, 45, topic="gone"))
    await memvault.client.delete("/v1/memory", headers=memvault.auth)
    memvault.deps.vaults = BrokenVaults()
    assert (await search(memvault, "gone lanterns tomatoes"))["items"] == []


async def test_a_full_disk_under_the_vault_is_a_507_and_stores_nothing(memvault: Memvault) -> None:
    await store(memvault, chat(0, 5))
    vault = memvault.deps.vaults.vault(f"{memvault.key_id}:core")
    # The connection the vault pool holds open for this vault (it stays open: the pool is not full).
    connection = memvault.deps.vaults._pool[f"{memvault.key_id}:core"].sql._conn  # type: ignore[attr-defined]
    pages = connection.execute("PRAGMA page_count").fetchone()[0]
    connection.execute(f"PRAGMA max_page_count = {pages}")  # SQLite's own SQLITE_FULL from here on
    response = await memvault.client.post("/v1/memory", json={"messages": chat(100, 150, topic="wide " * 8)}, headers=memvault.auth)
    assert response.status_code == 507 and response.json()["error"]["code"] == "insufficient_storage"
    connection.execute("PRAGMA max_page_count = 1073741823")
    stats = await vault.stats()
    assert stats.messages + stats.buffered_messages == 5
    assert (await store(memvault, chat(5, 1)))["messages_accepted"] == 1
    assert await in_step(memvault) == []


def test_memvault_check_finds_a_drifted_mirror_and_repair_rebuilds_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from memvault import cli

    monkeypatch.setenv("MEMVAULT_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("MEMVAULT_EMBEDDER", "hash")
    assert cli.main(["keys", "create"]) == 0
    key = capsys.readouterr().out.strip()
    source = tmp_path / "chat.jsonl"
    source.write_text("\n".join(json.dumps(m) for m in chat(0, 40)) + "\n")
    assert cli.main(["import", str(source), "--key", key]) == 0
    assert cli.main(["check"]) == 0
    with sqlite3.connect(tmp_path / "memvault.sqlite3") as conn:
        conn.execute("DELETE FROM mirror_rows WHERE id IN (SELECT id FROM mirror_rows LIMIT 3)")
    capsys.readouterr()
    assert cli.main(["check"]) == 1 and "missing from the mirror" in capsys.readouterr().out
    assert cli.main(["check", "--repair"]) == 0
    assert '"rebuilt": 1' in capsys.readouterr().out
