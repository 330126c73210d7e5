"""The ``VectorIndex`` port over a SQLite table of float32 vectors with JSON metadata, searched
by brute-force cosine after the metadata filter: the local image of Vectorize, filter operators
included (``$eq $ne $in $nin $lt $lte $gt $gte``; a bare value means ``$eq``)."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memvault.core.errors import InvalidInput
from memvault.core.ports import VectorMatch
from memvault.core.vectors import VectorSet, pack

_SCHEMA = """CREATE TABLE IF NOT EXISTS vectors (
    id TEXT PRIMARY KEY,
    dimension INTEGER NOT NULL,
    vector BLOB NOT NULL,
    metadata TEXT NOT NULL
)"""


def _compare(op: str, have: Any, want: Any) -> bool:
    if op == "$eq":
        return bool(have == want)
    if op == "$ne":
        return bool(have != want)
    if op in {"$in", "$nin"}:
        if not isinstance(want, list):
            raise InvalidInput(f"{op} takes a list")
        return (have in want) == (op == "$in")
    if op in {"$lt", "$lte", "$gt", "$gte"}:
        if have is None or isinstance(have, bool) != isinstance(want, bool):
            return False
        try:
            return bool({"$lt": have < want, "$lte": have <= want, "$gt": have > want, "$gte": have >= want}[op])
        except TypeError:
            return False
    raise InvalidInput(f"unsupported metadata filter operator {op!r}")


def matches(metadata: dict[str, Any], metadata_filter: dict[str, Any] | None) -> bool:
    for field, condition in (metadata_filter or {}).items():
        have = metadata.get(field)
        if isinstance(condition, dict):
            if not all(_compare(op, have, want) for op, want in condition.items()):
                return False
        elif have != condition:
            return False
    return True


class LocalVectorIndex:
    def __init__(self, path: Path | str, dimension: int | None = None) -> None:
        self._conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute(_SCHEMA)
        self._lock = threading.Lock()
        self._dimension = dimension

    def _check_dimension(self, size: int) -> None:
        if self._dimension is None:
            row = self._conn.execute("SELECT dimension FROM vectors LIMIT 1").fetchone()
            self._dimension = int(row[0]) if row else size
        if size != self._dimension:
            raise InvalidInput(f"vector has dimension {size}, the index {self._dimension}")

    def _upsert(self, items: Sequence[tuple[str, Sequence[float], dict[str, Any]]]) -> None:
        with self._lock:
            rows = []
            for item_id, vector, metadata in items:
                self._check_dimension(len(vector))
                rows.append((str(item_id), len(vector), pack(vector), json.dumps(metadata or {})))
            self._conn.execute("BEGIN")
            try:
                self._conn.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?, ?, ?)", rows)
                self._conn.execute("COMMIT")
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise

    def _query(
        self, vector: Sequence[float], top_k: int, metadata_filter: dict[str, Any] | None, with_metadata: bool
    ) -> list[VectorMatch]:
        with self._lock:
            self._check_dimension(len(vector))
            rows = self._conn.execute("SELECT id, vector, metadata FROM vectors").fetchall()
        kept = [(item_id, blob, json.loads(meta)) for item_id, blob, meta in rows]
        kept = [row for row in kept if matches(row[2], metadata_filter)]
        if not kept or top_k <= 0:
            return []
        metadata = {item_id: meta for item_id, _, meta in kept} if with_metadata else {}
        index = VectorSet([r[0] for r in kept], [r[1] for r in kept], len(vector))
        return [VectorMatch(item_id, score, metadata.get(item_id, {})) for item_id, score in index.top_k(vector, top_k)]

    def _delete(self, ids: Sequence[str]) -> None:
        with self._lock:
            self._conn.executemany("DELETE FROM vectors WHERE id = ?", [(str(i),) for i in ids])

    async def upsert(self, items: Sequence[tuple[str, Sequence[float], dict[str, Any]]]) -> None:
        await asyncio.to_thread(self._upsert, list(items))

    async def query(
        self,
        vector: Sequence[float],
        top_k: int,
        metadata_filter: dict[str, Any] | None = None,
        *,
        with_metadata: bool = False,
    ) -> list[VectorMatch]:
        return await asyncio.to_thread(self._query, list(vector), top_k, metadata_filter, with_metadata)

    async def delete(self, ids: Sequence[str]) -> None:
        await asyncio.to_thread(self._delete, list(ids))

    def close(self) -> None:
        with self._lock:
            self._conn.close()
