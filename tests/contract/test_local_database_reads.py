"""The local database answers a short read on the caller's thread and everything else on a worker
thread, and the caller cannot tell which: the same rows, every committed write seen, no write lost,
a long read never cut short."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from memvault.adapters.local import database as local_database
from memvault.adapters.local.database import SqliteDatabase

LONG_READ = ("WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50000) "
             "SELECT count(*) AS c, sum(i) AS s FROM n")


@pytest.fixture
def db(tmp_path: Path) -> Iterator[SqliteDatabase]:
    store = SqliteDatabase(tmp_path / "db.sqlite3")
    store._conn.execute("CREATE TABLE t (id TEXT PRIMARY KEY, v INTEGER)")
    try:
        yield store
    finally:
        store.close()


@pytest.fixture
def worker_calls(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The name of each call sent to a worker thread."""
    calls: list[str] = []
    real = asyncio.to_thread

    async def counted(function: Any, *args: Any) -> Any:
        calls.append(function.__name__)
        return await real(function, *args)

    monkeypatch.setattr(local_database.asyncio, "to_thread", counted)
    return calls


async def test_a_keyed_read_sees_the_write_before_it_without_a_worker_thread(
    db: SqliteDatabase, worker_calls: list[str]
) -> None:
    await db.execute("INSERT INTO t (id, v) VALUES (?, ?)", ("a", 1))
    assert await db.query("SELECT v FROM t WHERE id = ?", ("a",)) == [{"v": 1}]
    await db.batch([("UPDATE t SET v = ? WHERE id = ?", (2, "a"))])
    assert await db.query("SELECT v FROM t WHERE id = ?", ("a",)) == [{"v": 2}]
    assert worker_calls == ["_execute", "_batch"]


async def test_a_long_read_is_answered_whole_on_a_worker_and_goes_there_from_then_on(
    db: SqliteDatabase, worker_calls: list[str]
) -> None:
    assert await db.query(LONG_READ) == [{"c": 50000, "s": 50000 * 50001 // 2}]
    assert worker_calls == ["_query"]
    assert await db.query(LONG_READ) == [{"c": 50000, "s": 50000 * 50001 // 2}]
    assert worker_calls == ["_query", "_query"]
    assert await db.query("SELECT count(*) AS c FROM t") == [{"c": 0}]  # other statements still read here
    assert worker_calls == ["_query", "_query"]


async def test_a_write_sent_as_a_query_is_written_once(db: SqliteDatabase, worker_calls: list[str]) -> None:
    assert await db.query("INSERT INTO t (id, v) VALUES (?, ?) RETURNING v", ("b", 7)) == [{"v": 7}]
    assert await db.query("INSERT INTO t (id, v) VALUES (?, ?) RETURNING v", ("c", 8)) == [{"v": 8}]
    assert await db.query("SELECT id, v FROM t ORDER BY id") == [{"id": "b", "v": 7}, {"id": "c", "v": 8}]
    assert worker_calls == ["_query", "_query"]


async def test_a_read_while_another_process_writes_sees_what_was_committed(tmp_path: Path, db: SqliteDatabase) -> None:
    await db.execute("INSERT INTO t (id, v) VALUES (?, ?)", ("a", 1))
    other = sqlite3.connect(str(tmp_path / "db.sqlite3"), isolation_level=None)
    try:
        other.execute("BEGIN IMMEDIATE")
        other.execute("UPDATE t SET v = 5 WHERE id = 'a'")
        assert await db.query("SELECT v FROM t WHERE id = ?", ("a",)) == [{"v": 1}]
        other.execute("COMMIT")
        assert await db.query("SELECT v FROM t WHERE id = ?", ("a",)) == [{"v": 5}]
    finally:
        other.close()


async def test_a_bad_statement_fails_as_a_storage_error(db: SqliteDatabase) -> None:
    from memvault.core.errors import StorageUnavailable

    with pytest.raises(StorageUnavailable):
        await db.query("SELECT v FROM no_such_table WHERE id = ?", ("a",))
