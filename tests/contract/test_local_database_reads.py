"""The local database answers a short read or write on the caller's thread and everything else on a
worker thread, and the caller cannot tell which: the same rows, every committed write seen, no
write lost or half made, a long read or write never cut short, another process's lock waited for."""

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


async def test_short_writes_and_the_keyed_reads_after_them_need_no_worker_thread(
    db: SqliteDatabase, worker_calls: list[str]
) -> None:
    assert await db.execute("INSERT INTO t (id, v) VALUES (?, ?)", ("a", 1)) == 1
    assert await db.query("SELECT v FROM t WHERE id = ?", ("a",)) == [{"v": 1}]
    await db.batch([("UPDATE t SET v = ? WHERE id = ?", (2, "a")), ("INSERT INTO t (id, v) VALUES (?, ?)", ("b", 3))])
    assert await db.query("SELECT id, v FROM t ORDER BY id") == [{"id": "a", "v": 2}, {"id": "b", "v": 3}]
    assert worker_calls == []


async def test_a_long_write_is_undone_here_and_made_once_on_a_worker_and_goes_there_from_then_on(
    db: SqliteDatabase, worker_calls: list[str]
) -> None:
    many = "INSERT INTO t (id, v) " + LONG_READ.replace("SELECT count(*) AS c, sum(i) AS s FROM n", "SELECT 'n' || i, i FROM n")
    assert await db.execute(many) == 50000
    assert worker_calls == ["_execute"]
    assert await db.query("SELECT count(*) AS c, sum(v) AS s FROM t") == [{"c": 50000, "s": 50000 * 50001 // 2}]
    await db.execute("DELETE FROM t")
    await db.batch([("INSERT INTO t (id, v) VALUES ('first', 0)", ()), (many, ())])
    await db.batch([("DELETE FROM t", ()), ("INSERT INTO t (id, v) VALUES ('first', 0)", ()), (many, ())])
    assert await db.query("SELECT count(*) AS c FROM t") == [{"c": 50001}]
    assert worker_calls[-2:] == ["_batch", "_batch"]


async def test_a_batch_that_breaks_a_constraint_writes_nothing_and_is_a_write_race(db: SqliteDatabase) -> None:
    from memvault.core.errors import WriteRaced

    await db.execute("INSERT INTO t (id, v) VALUES ('a', 1)")
    with pytest.raises(WriteRaced):
        await db.batch([("UPDATE t SET v = 9 WHERE id = 'a'", ()), ("INSERT INTO t (id, v) VALUES ('a', 2)", ())])
    with pytest.raises(WriteRaced):
        await db.execute("INSERT INTO t (id, v) VALUES ('a', 3)")
    assert await db.query("SELECT id, v FROM t") == [{"id": "a", "v": 1}]


async def test_a_write_while_another_process_holds_the_file_waits_for_it_on_a_worker(
    tmp_path: Path, db: SqliteDatabase, worker_calls: list[str]
) -> None:
    other = sqlite3.connect(str(tmp_path / "db.sqlite3"), isolation_level=None, check_same_thread=False)
    try:
        other.execute("BEGIN IMMEDIATE")
        other.execute("INSERT INTO t (id, v) VALUES ('theirs', 1)")
        write = asyncio.ensure_future(db.execute("INSERT INTO t (id, v) VALUES ('ours', 2)"))
        while not worker_calls:  # refused here at once, never waited for on this thread
            await asyncio.sleep(0.01)
        assert not write.done()
        other.execute("COMMIT")
        assert await write == 1
        assert worker_calls == ["_execute"]
        assert await db.query("SELECT id FROM t ORDER BY id") == [{"id": "ours"}, {"id": "theirs"}]
    finally:
        other.close()


async def test_the_log_of_writes_made_here_is_checkpointed_on_a_worker(
    db: SqliteDatabase, worker_calls: list[str]
) -> None:
    for index in range(local_database.CHECKPOINT_EVERY):
        await db.execute("INSERT INTO t (id, v) VALUES (?, ?)", (f"k{index}", index))
    assert db._checkpointing is not None
    await db._checkpointing
    assert worker_calls == ["_checkpoint"]
    assert await db.query("SELECT count(*) AS c FROM t") == [{"c": local_database.CHECKPOINT_EVERY}]


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
