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
# A read or a write runs on the caller's thread while SQLite's virtual machine takes at most this
# many steps for it (a key looked up by an index takes a few hundred, a row written by its key a few
# hundred more; the budget is a fraction of a millisecond); one that takes more is cut (a write
# undone whole) and run again on a worker thread, and its statement goes straight there from then
# on. Counted in steps, not time, so a loaded machine cuts nothing more.
INLINE_STEPS = 20_000
# SQLite calls the progress check every this many steps.
PROGRESS_STEPS = 1_000
# Statements (and batches) sent straight to a worker thread, most recent last.
WORKER_STATEMENTS_KEPT = 256
# Writes made on the caller's thread between two checkpoints of the log (SQLite's own default is
# every 1,000 pages; a routed call writes a dozen or two).
CHECKPOINT_EVERY = 50


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


def connect(path: Path | str, busy_timeout_ms: int = 5000) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute(f"PRAGMA busy_timeout={int(busy_timeout_ms)}")
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


def write_all(conn: sqlite3.Connection, statements: Sequence[tuple[str, Sequence[Any]]]) -> int:
    """Run ``statements`` as one write, all or nothing (one alone needs no transaction of its own:
    SQLite undoes a statement that fails or is cut); the last one's row count."""
    if len(statements) == 1:
        sql, params = statements[0]
        return conn.execute(sql, tuple(params)).rowcount
    conn.execute("BEGIN IMMEDIATE")
    try:
        count = 0
        for sql, params in statements:
            count = conn.execute(sql, tuple(params)).rowcount
        conn.execute("COMMIT")
        return count
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


class StepBudget:
    """SQLite's progress handler for statements run on the caller's thread: cut one once it has
    taken ``INLINE_STEPS`` (``start`` before each)."""

    def __init__(self) -> None:
        self.left = 0

    def start(self) -> None:
        self.left = INLINE_STEPS // PROGRESS_STEPS

    def __call__(self) -> int:
        self.left -= 1
        return int(self.left < 0)


class SqliteDatabase:
    """Long work runs on a worker thread over one connection. A short read (a key looked up by its
    hash) or a short write (a routed call's journal row, a receipt) runs on the caller's thread: a
    worker thread's round trip costs a busy server more than the statement. Reads go over a
    read-only connection; WAL lets it read while the other writes, and it sees every write that had
    committed when the read began. Writes on the caller's thread go over a third connection that
    never waits for the file and never checkpoints, so the caller's thread is never held by another
    writer or by a flush to disk; the worker's connection checkpoints as before."""

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
        self._writer = connect(path, busy_timeout_ms=0)
        self._writer.execute("PRAGMA wal_autocheckpoint=0")
        self._writer.setlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER, D1_MAX_BOUND_PARAMETERS)
        self._worker_statements: OrderedDict[object, None] = OrderedDict()
        self._read_steps, self._write_steps = StepBudget(), StepBudget()
        self._reader.set_progress_handler(self._read_steps, PROGRESS_STEPS)
        self._writer.set_progress_handler(self._write_steps, PROGRESS_STEPS)
        self._writes_since_checkpoint = 0
        self._checkpointing: asyncio.Future[None] | None = None

    def _send_to_worker(self, work: object, exc: sqlite3.Error) -> None:
        """Busy or locked: the worker's connection waits for the file as every write there does.
        Anything else (cut, a write sent as a read, an error the worker reports as its own) sends
        ``work`` to the worker from now on."""
        if not (isinstance(exc, sqlite3.OperationalError) and ("locked" in str(exc) or "busy" in str(exc))):
            self._worker_statements[work] = None
            if len(self._worker_statements) > WORKER_STATEMENTS_KEPT:
                self._worker_statements.popitem(last=False)

    def _read_here(self, sql: str, params: Sequence[Any]) -> list[Row] | None:
        """The read's rows, or None when it runs on a worker instead: its statement is one sent
        there, the reader is in use, the file is busy, or the read took more than its steps."""
        if sql in self._worker_statements or not self._reader_lock.acquire(blocking=False):
            return None
        try:
            self._read_steps.start()
            return fetch_rows(self._reader.execute(sql, tuple(params)))
        except sqlite3.Error as exc:
            self._send_to_worker(sql, exc)
            return None
        finally:
            self._reader_lock.release()

    def _write_here(self, statements: Sequence[tuple[str, Sequence[Any]]]) -> int | None:
        """Write ``statements`` in one transaction here; the last one's row count, or None when
        nothing was written and the work goes to a worker: the batch is one sent there, a worker is
        writing, the file is busy, or the work took more than its steps (and was undone)."""
        work = statements[0][0] if len(statements) == 1 else tuple(sql for sql, _ in statements)
        if work in self._worker_statements or not self._lock.acquire(blocking=False):
            return None
        try:
            self._write_steps.start()
            count = write_all(self._writer, statements)
            self._writes_since_checkpoint += 1
            return count
        except sqlite3.IntegrityError:
            # The same verdict the worker would give: raised as a write race, nothing written.
            with storage_errors():
                raise
        except sqlite3.Error as exc:
            self._send_to_worker(work, exc)
            return None
        finally:
            self._lock.release()

    def _query(self, sql: str, params: Sequence[Any]) -> list[Row]:
        with self._lock, storage_errors():
            return fetch_rows(self._conn.execute(sql, tuple(params)))

    def _execute(self, sql: str, params: Sequence[Any]) -> int:
        with self._lock, storage_errors():
            return write_all(self._conn, [(sql, params)])

    def _batch(self, statements: Sequence[tuple[str, Sequence[Any]]]) -> None:
        with self._lock, storage_errors():
            write_all(self._conn, statements)

    async def query(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        found = self._read_here(sql, params)
        return found if found is not None else await asyncio.to_thread(self._query, sql, params)

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        count = self._write_here([(sql, params)])
        if count is None:
            return await asyncio.to_thread(self._execute, sql, params)
        self._checkpoint_when_due()
        return count

    async def batch(self, statements: Sequence[tuple[str, Sequence[Any]]]) -> None:
        if not statements or self._write_here(statements) is None:
            await asyncio.to_thread(self._batch, statements)
        else:
            self._checkpoint_when_due()

    def _checkpoint_when_due(self) -> None:
        """Every ``CHECKPOINT_EVERY`` writes made here, copy the log into the file on a worker,
        without waiting for it: the connection writing here never checkpoints, and the worker's
        checkpoints only when it commits itself, which it may seldom do."""
        if self._writes_since_checkpoint < CHECKPOINT_EVERY or self._checkpointing is not None:
            return
        self._writes_since_checkpoint = 0
        self._checkpointing = asyncio.ensure_future(asyncio.to_thread(self._checkpoint))
        self._checkpointing.add_done_callback(self._checkpointed)

    def _checkpoint(self) -> None:
        with self._lock:
            self._conn.execute("PRAGMA wal_checkpoint(PASSIVE)")

    def _checkpointed(self, done: asyncio.Future[None]) -> None:
        self._checkpointing = None
        if not done.cancelled() and done.exception() is not None:
            # The next commit on the worker's connection, or the next one due here, tries again.
            self._writes_since_checkpoint = CHECKPOINT_EVERY

    def close(self) -> None:
        with self._lock, self._reader_lock:
            self._reader.close()
            self._writer.close()
            self._conn.close()
