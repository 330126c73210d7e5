"""The ``SyncSql`` port over one sqlite3 connection: the local image of a Durable Object's SQL."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from memvault.adapters.local.database import connect, fetch_rows, storage_errors
from memvault.core.ports import Row

T = TypeVar("T")


class SqliteSql:
    def __init__(self, path: Path | str) -> None:
        self._conn = connect(path)
        self._lock = threading.RLock()
        self._depth = 0
        self._data_version: int | None = None

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        with self._lock, storage_errors():
            return fetch_rows(self._conn.execute(sql, tuple(params)))

    def transaction(self, work: Callable[[], T]) -> T:
        with self._lock, storage_errors():
            if self._depth:
                return work()
            self._conn.execute("BEGIN IMMEDIATE")
            self._depth += 1
            try:
                result = work()
                self._conn.execute("COMMIT")
            except BaseException:
                # A failed COMMIT (a full disk) may have ended the transaction already.
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise
            finally:
                self._depth -= 1
            return result

    def changed_elsewhere(self) -> bool:
        """Whether another connection (another process) committed since the last time this was asked."""
        with self._lock, storage_errors():
            version = int(self._conn.execute("PRAGMA data_version").fetchone()[0])
            changed, self._data_version = version != self._data_version, version
            return changed

    def close(self) -> None:
        with self._lock:
            self._conn.close()
