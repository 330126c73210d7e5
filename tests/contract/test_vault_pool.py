"""The local vault directory holds a bounded number of vault files open, whatever the folder holds."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from memvault.adapters.local.vaults import LocalVaultDirectory
from memvault.core.memory.store import VaultLimits
from memvault.core.models import Message
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
