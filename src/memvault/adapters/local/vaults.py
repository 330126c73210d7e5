"""In-process vaults: one SQLite file per vault under the data directory, the local image of one
Durable Object per vault. Calls run in a worker thread, one at a time per vault, as a DO would."""

from __future__ import annotations

import asyncio
import hashlib
import re
import threading
from pathlib import Path
from typing import Any

from memvault.adapters.local.sqlite_sql import SqliteSql
from memvault.core.memory.store import VaultLimits, VaultStore
from memvault.core.memory.vault_table import VaultCalls, VaultOperation

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


class LocalVault(VaultCalls):
    def __init__(self, path: Path, limits: VaultLimits) -> None:
        self._sql = SqliteSql(path)
        # `memvault import` and other commands write vault files beside a running server.
        self._store = VaultStore(self._sql, limits, written_elsewhere=self._sql.changed_elsewhere)
        self._lock = threading.Lock()

    async def _run(self, operation: VaultOperation, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        method = getattr(self._store, operation.name)

        def locked() -> Any:
            with self._lock:
                return method(*args, **kwargs)

        return await asyncio.to_thread(locked)

    def close(self) -> None:
        with self._lock:
            self._sql.close()


class LocalVaultDirectory:
    def __init__(self, root: Path, limits: VaultLimits) -> None:
        self._root = root
        self._limits = limits
        self._open: dict[str, LocalVault] = {}
        self._lock = threading.Lock()

    def vault(self, name: str) -> LocalVault:
        with self._lock:
            if name not in self._open:
                self._root.mkdir(parents=True, exist_ok=True)
                path = self._root / vault_filename(name)
                if all(ord(c) < 256 for c in name):  # beyond that, earlier names were ambiguous
                    _move_earlier_file(self._root / _earlier_filename(name), path)
                self._open[name] = LocalVault(path, self._limits)
            return self._open[name]

    def close(self) -> None:
        with self._lock:
            for vault in self._open.values():
                vault.close()
            self._open.clear()


def _move_earlier_file(earlier: Path, path: Path) -> None:
    if earlier == path or path.exists() or not earlier.exists():
        return
    for suffix in ("", "-wal", "-shm"):
        companion = earlier.with_name(earlier.name + suffix)
        if companion.exists():
            companion.rename(path.with_name(path.name + suffix))
