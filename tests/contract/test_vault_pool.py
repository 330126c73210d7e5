"""The local vault directory holds a bounded number of vault files open, whatever the folder holds."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from memvault.adapters.local.vaults import LocalVaultDirectory
from memvault.core.memory.store import VaultLimits, VaultStore
from memvault.core.models import Message, SearchQuery
from memvault.core.settings import load_settings

LIMITS = VaultLimits.of(load_settings({}))


def open_files_under(folder: Path) -> int:
    """File descriptors of this process open on files under ``folder``."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue  # closed since the listing
        count += target.startswith(str(folder))
    return count


async def test_more_vaults_than_the_pool_keep_their_data_and_few_files_stay_open(tmp_path: Path) -> None:
    directory = LocalVaultDirectory(tmp_path, LIMITS, open_limit=2)
    try:
        for i in range(12):
            await directory.vault(f"k:session:s{i}").append([Message("user", f"note {i}", 1.0, f"m{i}")])
            assert directory.open_count <= 2
            assert open_files_under(tmp_path) <= 2 * 3  # the database, its -wal and its -shm
        for i in range(12):
            assert [m.id for m in await directory.vault(f"k:session:s{i}").pending()] == [f"m{i}"]
        assert len(list(tmp_path.glob("*.sqlite3"))) == 12
    finally:
        directory.close()
    assert open_files_under(tmp_path) == 0


async def test_a_handle_opens_nothing_until_a_call_needs_the_vault(tmp_path: Path) -> None:
    directory = LocalVaultDirectory(tmp_path, LIMITS, open_limit=4)
    try:
        directory.vault("k:core")
        assert directory.open_count == 0 and not list(tmp_path.glob("*"))
    finally:
        directory.close()


async def test_concurrent_calls_on_more_vaults_than_the_pool_all_complete(tmp_path: Path) -> None:
    """A vault in use by one call is never closed under it, however many others are asked for."""
    directory = LocalVaultDirectory(tmp_path, LIMITS, open_limit=1)
    try:

        async def write_and_read(i: int) -> list[str]:
            vault = directory.vault(f"k:session:s{i % 6}")
            await vault.append([Message("user", f"text {i}", float(i), f"m{i}")])
            return [m.id for m in await vault.pending()]

        answers = await asyncio.gather(*(write_and_read(i) for i in range(30)))
        for i, ids in enumerate(answers):
            assert f"m{i}" in ids
        for j in range(6):
            held = {m.id for m in await directory.vault(f"k:session:s{j}").pending()}
            assert held == {f"m{i}" for i in range(30) if i % 6 == j}
        assert directory.open_count <= 1
    finally:
        directory.close()


async def test_idle_vaults_are_closed_and_reopen_on_the_next_call(tmp_path: Path) -> None:
    directory = LocalVaultDirectory(tmp_path, LIMITS, open_limit=8)
    try:
        for i in range(3):
            await directory.vault(f"k:session:s{i}").append([Message("user", f"note {i}", 1.0, f"m{i}")])
        assert directory.close_idle(3600) == 0 and directory.open_count == 3
        assert directory.close_idle(0) == 3
        assert directory.open_count == 0 and open_files_under(tmp_path) == 0
        assert [m.id for m in await directory.vault("k:session:s1").pending()] == ["m1"]
    finally:
        directory.close()


async def test_a_search_of_an_open_free_vault_runs_on_the_loop_and_a_busy_one_in_a_worker(tmp_path: Path) -> None:
    """The calls a search waits for run on the event loop's thread only when they cannot block
    it: the vault open, and no other call holding or waiting for it."""
    directory = LocalVaultDirectory(tmp_path, LIMITS, open_limit=2)
    vault = directory.vault("k:core")
    threads: list[str] = []
    try:
        await vault.generation()  # not open yet: opened in a worker
        await vault.append([Message("user", "the kettle is in the attic", 1.0, "m1")])
        query = SearchQuery(text="where is the kettle", vector=None, depth=10)
        with _recording_threads(threads):
            assert await vault.generation() > 0
            found = await vault.search(query)
        assert threads == [threading.current_thread().name] * 2
        assert [c.row.text for c in found if c.row.kind == "message"] == ["the kettle is in the attic"]

        threads.clear()
        with _recording_threads(threads):
            with directory.using_now("k:core") as held:  # another call holds it
                assert held is not None
                with directory.using_now("k:core") as again:
                    assert again is None
                worker = asyncio.ensure_future(vault.search(query))
                done, _ = await asyncio.wait({worker}, timeout=0.2)
                assert not done, "a search of a held vault must wait in a worker, not on the loop"
            found = await worker
        assert [c.row.text for c in found if c.row.kind == "message"] == ["the kettle is in the attic"]
        assert threads and threading.current_thread().name not in threads

        directory.close_idle(0)
        assert directory.open_count == 0
        threads.clear()
        with _recording_threads(threads):
            await vault.search(query)  # closed: opened again in a worker, never on the loop
        assert threads and threading.current_thread().name not in threads
    finally:
        directory.close()


@contextmanager
def _recording_threads(names: list[str]) -> Iterator[None]:
    """Record the thread each vault search or generation runs on."""
    originals = {name: getattr(VaultStore, name) for name in ("search", "generation")}

    def recorded(original: Callable[..., Any]) -> Callable[..., Any]:
        def call(self: VaultStore, *args: Any, **kwargs: Any) -> Any:
            names.append(threading.current_thread().name)
            return original(self, *args, **kwargs)

        return call

    for name, original in originals.items():
        setattr(VaultStore, name, recorded(original))
    try:
        yield
    finally:
        for name, original in originals.items():
            setattr(VaultStore, name, original)
