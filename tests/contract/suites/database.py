"""Contract of ``Database`` (D1's shape): local sqlite3 and D1 alike, with ``migrations/`` applied."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any


async def query_returns_dicts(db: Any) -> None:
    await db.execute("CREATE TABLE c_query (id INTEGER PRIMARY KEY, name TEXT, data BLOB)")
    await db.execute("INSERT INTO c_query (name, data) VALUES (?, ?)", ("x", b"\x01\x02"))
    assert await db.query("SELECT id, name, data FROM c_query") == [{"id": 1, "name": "x", "data": b"\x01\x02"}]


async def execute_counts_changed_rows(db: Any) -> None:
    await db.execute("CREATE TABLE c_exec (id INTEGER)")
    await db.batch([("INSERT INTO c_exec VALUES (?)", (i,)) for i in range(3)])
    assert await db.execute("DELETE FROM c_exec WHERE id < ?", (2,)) == 2


async def batch_is_atomic(db: Any) -> None:
    await db.execute("CREATE TABLE c_batch (id INTEGER PRIMARY KEY)")
    try:
        await db.batch([("INSERT INTO c_batch VALUES (?)", (1,)), ("INSERT INTO c_batch VALUES (?)", (1,))])
    except Exception:
        pass
    else:
        raise AssertionError("a duplicate primary key must fail the batch")
    assert await db.query("SELECT id FROM c_batch") == []


async def migrations_are_applied(db: Any) -> None:
    tables = {r["name"] for r in await db.query("SELECT name FROM sqlite_master WHERE type IN ('table', 'view')")}
    assert {"memory_keys", "mirror_rows", "mirror_buffers", "vaults"} <= tables


async def mirror_fts_follows_rows(db: Any) -> None:
    await db.execute(
        "INSERT INTO mirror_rows (key_id, vault, id, kind, text, role, ts_start, ts_end, token_count, source_ids, content_hash) "
        "VALUES ('k', 'k:core', 'm1', 'message', 'ticker NVDA rallied', 'user', 1, 1, 4, '[]', 'h1')"
    )
    match = "SELECT r.id FROM mirror_rows_fts JOIN mirror_rows r ON r.rowid = mirror_rows_fts.rowid WHERE mirror_rows_fts MATCH ?"
    assert [r["id"] for r in await db.query(match, ('"nvda"',))] == ["m1"]
    await db.execute("DELETE FROM mirror_rows WHERE id = 'm1'")
    assert await db.query(match, ('"nvda"',)) == []


CHECKS: list[Callable[[Any], Awaitable[None]]] = [
    query_returns_dicts,
    execute_counts_changed_rows,
    batch_is_atomic,
    migrations_are_applied,
    mirror_fts_follows_rows,
]
