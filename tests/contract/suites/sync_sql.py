"""Contract of ``SyncSql``: local sqlite3 and a Durable Object's ``ctx.storage.sql`` alike."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any


async def returns_rows_as_dicts(sql: Any) -> None:
    sql.execute("CREATE TABLE t_rows (id INTEGER PRIMARY KEY, name TEXT, score REAL, data BLOB)")
    sql.execute("INSERT INTO t_rows (name, score, data) VALUES (?, ?, ?)", ("a", 1.5, b"\x00\x01"))
    rows = sql.execute("SELECT id, name, score, data FROM t_rows")
    assert rows == [{"id": 1, "name": "a", "score": 1.5, "data": b"\x00\x01"}]


async def empty_result_is_an_empty_list(sql: Any) -> None:
    sql.execute("CREATE TABLE t_empty (id INTEGER)")
    assert sql.execute("SELECT id FROM t_empty WHERE id = ?", (1,)) == []


async def null_comes_back_as_none(sql: Any) -> None:
    sql.execute("CREATE TABLE t_null (id INTEGER, v TEXT)")
    sql.execute("INSERT INTO t_null VALUES (?, ?)", (1, None))
    assert sql.execute("SELECT v FROM t_null") == [{"v": None}]


async def transaction_commits_all(sql: Any) -> None:
    sql.execute("CREATE TABLE t_commit (id INTEGER)")

    def work() -> int:
        sql.execute("INSERT INTO t_commit VALUES (1)")
        sql.execute("INSERT INTO t_commit VALUES (2)")
        return 7

    assert sql.transaction(work) == 7
    assert [r["id"] for r in sql.execute("SELECT id FROM t_commit ORDER BY id")] == [1, 2]


async def failed_transaction_leaves_nothing(sql: Any) -> None:
    sql.execute("CREATE TABLE t_rollback (id INTEGER)")

    def work() -> None:
        sql.execute("INSERT INTO t_rollback VALUES (1)")
        raise RuntimeError("half-way")

    try:
        sql.transaction(work)
    except RuntimeError:
        pass
    else:
        raise AssertionError("the error must propagate")
    assert sql.execute("SELECT id FROM t_rollback") == []


async def fts5_is_available(sql: Any) -> None:
    sql.execute("CREATE VIRTUAL TABLE t_fts USING fts5 (text, tokenize = 'porter unicode61')")
    sql.execute("INSERT INTO t_fts (text) VALUES (?)", ("invoice 20028 was paid",))
    rows = sql.execute("SELECT text, bm25(t_fts) AS score FROM t_fts WHERE t_fts MATCH ?", ('"20028"',))
    assert [r["text"] for r in rows] == ["invoice 20028 was paid"]


CHECKS: list[Callable[[Any], Awaitable[None]]] = [
    returns_rows_as_dicts,
    empty_result_is_an_empty_list,
    null_comes_back_as_none,
    transaction_commits_all,
    failed_transaction_leaves_nothing,
    fts5_is_available,
]
