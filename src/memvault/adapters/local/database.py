"""The ``Database`` port over a local sqlite3 file, with ``migrations/*.sql`` applied: the local
image of D1."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memvault.core.errors import StorageFull, StorageUnavailable, TransientStorageError, WriteRaced
from memvault.core.ports import Row
from memvault.core.sql import D1_MAX_BOUND_PARAMETERS

MIGRATIONS_DIR = Path(__file__).resolve().parents[4] / "migrations"
# A read runs on the caller's thread while SQLite's virtual machine takes at most this many steps
# for it (a key looked up by an index takes a few hundred; the budget is a fraction of a
# millisecond); one that takes more is cut and run again on a worker thread, and its statement goes
# straight there from then on. Counted in steps, not time, so a loaded machine cuts nothing more.
INLINE_READ_STEPS = 20_000
# SQLite calls the progress check every this many steps.
PROGRESS_STEPS = 1_000
# Statements that are sent straight to a worker thread (long reads, writes), most recent last.
WORKER_STATEMENTS_KEPT = 256


@contextmanager
def storage_errors() -> Iterator[None]:
    """SQLite failures as the domain errors the edge renders (409 for a broken constraint, 507 for
    a full disk, else 503).
    Only the error's type and SQLite's own words travel on: never the statement or its values."""
    try:
        yield
    except sqlite3.IntegrityError as exc:
        raise WriteRaced(f"another write changed these rows first ({str(exc).split(':', 1)[0][:80]})") from exc
    except sqlite3.Error as exc:
        words = str(exc).split(":", 1)[0][:80]
        if isinstance(exc, sqlite3.OperationalError) and "full" in words:
            raise StorageFull("the local database is full; nothing of this write was stored") from exc
        if isinstance(exc, sqlite3.OperationalError) and ("locked" in words or "busy" in words):
            # Another process held the file past busy_timeout: it lets go, so a retry may pass.
            raise TransientStorageError(f"the local database is busy ({words})") from exc
        raise StorageUnavailable(f"the local database failed ({type(exc).__name__}: {words})") from exc


def connect(path: Path | str) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA busy_timeout=5000")
    # Freed pages are overwritten, so what forget, clear and purge delete does not linger in the file.
    conn.execute("PRAGMA secure_delete=ON")
    return conn


def fetch_rows(cursor: sqlite3.Cursor) -> list[Row]:
    """A statement's rows as column name -> value. Zipping plain tuples with the column names
    costs a third less than ``sqlite3.Row`` copied into dicts: a search reads a few hundred rows."""
    if cursor.description is None:
        return []
    names = [column[0] for column in cursor.description]
    return [dict(zip(names, values, strict=True)) for values in cursor.fetchall()]


def apply_migrations(conn: sqlite3.Connection, migrations_dir: Path = MIGRATIONS_DIR) -> list[str]:
    """Apply every ``NNNN_name.sql`` not yet applied, in order, recording it the way wrangler does."""
    conn.execute(
        "CREATE TABLE IF NOT EXISTS d1_migrations (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE, applied_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP)"
    )
    done = {row[0] for row in conn.execute("SELECT name FROM d1_migrations")}
    applied = []
    for path in sorted(migrations_dir.glob("[0-9][0-9][0-9][0-9]_*.sql")):
        if path.name in done:
            continue
        conn.execute("BEGIN")
        try:
            for statement in split_statements(path.read_text()):
                conn.execute(statement)
            conn.execute("INSERT INTO d1_migrations (name) VALUES (?)", (path.name,))
            conn.execute("COMMIT")
        except Exception:
            conn.execute("ROLLBACK")
            raise
        applied.append(path.name)
    return applied


def split_statements(script: str) -> list[str]:
    """Split a migration into statements; trigger bodies (BEGIN ... END;) stay whole."""
    statements, current = [], ""
    for line in script.splitlines(keepends=True):
        if line.strip().startswith("--") and not current.strip():
            continue
        current += line
        if sqlite3.complete_statement(current):
            statements.append(current.strip())
            current = ""
    if current.strip():
        statements.append(current.strip())
    return statements


class SqliteDatabase:
    """Writes, and reads that take long, run on a worker thread over one connection. A short read
    (a key looked up by its hash) runs on the caller's thread over a second connection: a worker
    thread's round trip costs a busy server more than the read. WAL lets that connection read
    while the other writes; it sees every write that had committed when the read began."""

    def __init__(self, path: Path | str, migrations_dir: Path = MIGRATIONS_DIR) -> None:
        self._conn = connect(path)
        # D1's limit, so a statement that would fail there fails here too.
        self._conn.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, D1_MAX_BOUND_PARAMETERS)
        self._lock = threading.Lock()
        apply_migrations(self._conn, migrations_dir)
        self._reader = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._reader.execute("PRAGMA query_only=ON")
        # Never wait for a lock on the caller's thread: a busy file sends the read to a worker.
        self._reader.execute("PRAGMA busy_timeout=0")
        self._reader.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, D1_MAX_BOUND_PARAMETERS)
        self._reader_lock = threading.Lock()
        self._worker_statements: OrderedDict[str, None] = OrderedDict()
        self._checks_left = 0
        self._reader.set_progress_handler(self._out_of_steps, PROGRESS_STEPS)

    def _out_of_steps(self) -> int:
        self._checks_left -= 1
        return int(self._checks_left < 0)

    def _read_here(self, sql: str, params: Sequence[Any]) -> list[Row] | None:
        """The read's rows, or None when it runs on a worker instead: its statement is one sent
        there, the reader is in use, the file is busy, or the read took more than its steps."""
        if sql in self._worker_statements or not self._reader_lock.acquire(blocking=False):
            return None
        try:
            self._checks_left = INLINE_READ_STEPS // PROGRESS_STEPS
            return fetch_rows(self._reader.execute(sql, tuple(params)))
        except sqlite3.Error as exc:
            # Busy or locked: the worker's connection waits for the file as writes do. Anything else
            # (cut, a write, an error the worker reports as its own) goes to the worker from now on.
            if not (isinstance(exc, sqlite3.OperationalError) and ("locked" in str(exc) or "busy" in str(exc))):
                self._worker_statements[sql] = None
                if len(self._worker_statements) > WORKER_STATEMENTS_KEPT:
                    self._worker_statements.popitem(last=False)
            return None
        finally:
            self._reader_lock.release()

    def _query(self, sql: str, params: Sequence[Any]) -> list[Row]:
        with self._lock, storage_errors():
            return fetch_rows(self._conn.execute(sql, tuple(params)))

    def _execute(self, sql: str, params: Sequence[Any]) -> int:
        with self._lock, storage_errors():
            return self._conn.execute(sql, tuple(params)).rowcount

    def _batch(self, statements: Sequence[tuple[str, Sequence[Any]]]) -> None:
        with self._lock, storage_errors():
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                for sql, params in statements:
                    self._conn.execute(sql, tuple(params))
                self._conn.execute("COMMIT")
            except BaseException:
                if self._conn.in_transaction:
                    self._conn.execute("ROLLBACK")
                raise

    async def query(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        found = self._read_here(sql, params)
        return found if found is not None else await asyncio.to_thread(self._query, sql, params)

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        return await asyncio.to_thread(self._execute, sql, params)

    async def batch(self, statements: Sequence[tuple[str, Sequence[Any]]]) -> None:
        await asyncio.to_thread(self._batch, statements)

    def close(self) -> None:
        with self._lock, self._reader_lock:
            self._reader.close()
            self._conn.close()
