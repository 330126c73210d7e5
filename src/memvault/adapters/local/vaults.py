"""In-process vaults: one SQLite file per vault under the data directory, the local image of one
Durable Object per vault. Calls run in a worker thread, one at a time per vault, as a DO would; the
files are opened on demand and a bounded number stay open."""

from __future__ import annotations

import asyncio
import hashlib
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memvault.adapters.local.database import storage_errors
from memvault.adapters.local.sqlite_sql import SqliteSql
from memvault.core.errors import StorageUnavailable
from memvault.core.memory.store import VaultLimits, VaultStore
from memvault.core.memory.vault_table import VaultCalls, VaultOperation
from memvault.core.settings import Settings

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")
_SAFE = re.compile(r"[a-z0-9_.-]")


def vault_filename(name: str) -> str:
    """A file name for a vault, different for every vault name even on a file system that ignores
    case: lower-case letters, digits and ``_.-`` stay, every other character becomes the %XX
    escapes of its UTF-8 bytes (``%`` included, upper-case hex); a name too long for one file
    name keeps a readable start and a digest of the whole name."""
    safe = "".join(c if _SAFE.fullmatch(c) else "".join(f"%{b:02X}" for b in c.encode()) for c in name)
    if len(safe) > 120:
        safe = safe[:80] + "-" + hashlib.sha256(name.encode()).hexdigest()
    return f"{safe}.sqlite3"


def _earlier_filename(name: str) -> str:
    """The name files had before escapes were made injective (kept to move such files over)."""
    safe = _UNSAFE.sub(lambda m: f"%{ord(m.group()):02X}", name)
    if len(safe) > 120:
        safe = safe[:80] + "-" + hashlib.sha256(name.encode()).hexdigest()[:32]
    return f"{safe}.sqlite3"


class _OpenVault:
    """One vault file held open: its connection and store, the calls using it, and the lock that
    has them run one at a time, as a Durable Object serves one request at a time."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.users = 0  # calls that hold or wait for it: it is never closed while any does
        self.last_used = time.monotonic()
        self.sql: SqliteSql | None = None
        self.store: VaultStore | None = None

    @property
    def held(self) -> bool:
        return self.store is not None or self.users > 0

    def close(self) -> None:
        if self.sql is not None:
            self.sql.close()
        self.sql = self.store = None


class LocalVaultDirectory:
    """The vault files under ``root``, opened when a call needs one and kept in a pool of at most
    ``open_limit`` (each holds three file descriptors, the database and its -wal and -shm files,
    and its vector codes in memory): past it the one used least recently is closed, once no call
    is using it. So however many vaults a folder holds, the process holds a bounded number open."""

    def __init__(self, root: Path, limits: VaultLimits, open_limit: int | None = None) -> None:
        open_limit = Settings().open_vaults if open_limit is None else open_limit
        if open_limit < 1:
            raise ValueError("open_limit must be at least 1")
        self._root = root
        self._limits = limits
        self.open_limit = open_limit
        self._pool: OrderedDict[str, _OpenVault] = OrderedDict()  # least recently used first
        self._lock = threading.Lock()

    def vault(self, name: str) -> LocalVault:
        """A handle on the vault ``name``; nothing is opened (or created) until a call needs it."""
        return LocalVault(self, name)

    @property
    def open_count(self) -> int:
        """Vault files open right now."""
        with self._lock:
            return sum(1 for entry in self._pool.values() if entry.store is not None)

    @contextmanager
    def using(self, name: str) -> Iterator[VaultStore]:
        """The store of vault ``name``, opened if it is not, for one call at a time. Blocking: run
        it in a worker thread."""
        with self._lock:
            entry = self._pool.get(name)
            if entry is None:
                entry = self._pool[name] = _OpenVault()
            self._pool.move_to_end(name)
            entry.users += 1
        try:
            with entry.lock:
                if entry.store is None:
                    self._open_file(name, entry)
                assert entry.store is not None
                yield entry.store
        finally:
            self._let_go(name, entry)

    @contextmanager
    def using_now(self, name: str) -> Iterator[VaultStore | None]:
        """The store of vault ``name`` if it is open and no call holds or waits for it, held for
        one call on this thread; else None, and the call goes to a worker thread (``using``). It
        never blocks: nothing is opened and no lock waited for."""
        with self._lock:
            entry = self._pool.get(name)
            if entry is None or entry.store is None or entry.users or not entry.lock.acquire(blocking=False):
                entry = None
            else:
                self._pool.move_to_end(name)
                entry.users += 1
        if entry is None:
            yield None
            return
        try:
            assert entry.store is not None
            yield entry.store
        finally:
            entry.lock.release()
            self._let_go(name, entry)

    def _let_go(self, name: str, entry: _OpenVault) -> None:
        with self._lock:
            entry.users -= 1
            entry.last_used = time.monotonic()
            if not entry.held and self._pool.get(name) is entry:
                del self._pool[name]  # its file failed to open
            closing = self._beyond_limit()
        for idle in closing:
            with idle.lock:
                idle.close()

    def _open_file(self, name: str, entry: _OpenVault) -> None:
        # Out of file descriptors or disk: this one call fails, in the error envelope; others go on.
        with storage_errors(), _os_errors():
            self._root.mkdir(parents=True, exist_ok=True)
            path = self._root / vault_filename(name)
            if all(ord(c) < 256 for c in name):  # beyond that, earlier names were ambiguous
                _move_earlier_file(self._root / _earlier_filename(name), path)
            sql = SqliteSql(path)
            try:
                # `memvault import` and other commands write vault files beside a running server.
                entry.store = VaultStore(sql, self._limits, written_elsewhere=sql.changed_elsewhere)
            except BaseException:
                sql.close()
                raise
            entry.sql = sql

    def _beyond_limit(self) -> list[_OpenVault]:
        """Take out of the pool the least recently used vaults no call holds while more than the
        limit are held; the caller closes them outside the pool's lock."""
        excess = sum(1 for entry in self._pool.values() if entry.held) - self.open_limit
        taken: list[_OpenVault] = []
        for name, entry in list(self._pool.items()):
            if excess <= 0:
                break
            if not entry.users:
                del self._pool[name]
                taken.append(entry)
                excess -= 1
        return taken

    def close_idle(self, idle_seconds: float) -> int:
        """Close the vaults no call has used for ``idle_seconds`` (blocking: run it in a worker
        thread); how many were closed. So a quiet server holds no vault open."""
        cutoff = time.monotonic() - idle_seconds
        with self._lock:
            idle = [name for name, entry in self._pool.items() if not entry.users and entry.last_used <= cutoff]
            entries = [self._pool.pop(name) for name in idle]
        for entry in entries:
            with entry.lock:
                entry.close()
        return len(entries)

    def close(self) -> None:
        with self._lock:
            entries = list(self._pool.values())
            self._pool.clear()
        for entry in entries:
            with entry.lock:
                entry.close()


# Calls a search waits for once its query's vector is there. They mostly read what an open vault
# holds in memory (a search whose keyword stage ran while the vector was computed; without it, one
# keyword query and at most a page of rows): on the event loop's own thread when the vault is free,
# they cost less than the hop to a worker thread and back.
CALLS_ON_THE_LOOP = frozenset({"generation", "search"})


class LocalVault(VaultCalls):
    """A vault of a ``LocalVaultDirectory``: each call runs in a worker thread on the pooled store
    (but for ``CALLS_ON_THE_LOOP`` on a vault open and free)."""

    def __init__(self, directory: LocalVaultDirectory, name: str) -> None:
        self._directory = directory
        self._name = name

    async def _run(self, operation: VaultOperation, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if operation.name in CALLS_ON_THE_LOOP:
            with self._directory.using_now(self._name) as free:
                if free is not None:
                    return getattr(free, operation.name)(*args, **kwargs)

        def call() -> Any:
            with self._directory.using(self._name) as store:
                return getattr(store, operation.name)(*args, **kwargs)

        return await asyncio.to_thread(call)


@contextmanager
def _os_errors() -> Iterator[None]:
    try:
        yield
    except OSError as exc:
        raise StorageUnavailable(f"a vault file could not be opened ({exc.strerror or type(exc).__name__})") from exc


def _move_earlier_file(earlier: Path, path: Path) -> None:
    if earlier == path or path.exists() or not earlier.exists():
        return
    for suffix in ("", "-wal", "-shm"):
        companion = earlier.with_name(earlier.name + suffix)
        if companion.exists():
            companion.rename(path.with_name(path.name + suffix))
