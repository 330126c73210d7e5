"""Which vaults a key has, as the mirror registers them (the write path registers each vault with
its first write)."""

from __future__ import annotations

from memvault.core.deps import Deps
from memvault.core.memory.mirror import MirrorStore


async def all_vaults(deps: Deps) -> list[tuple[str, str]]:
    """Every registered (key id, vault name)."""
    return await MirrorStore(deps.db).all_vaults()


async def idle_vaults(deps: Deps, key_id: str, idle_before: float) -> list[str]:
    """Vaults of the key whose pending buffer was last written before ``idle_before``."""
    return await MirrorStore(deps.db).idle_buffers(key_id, idle_before)


async def vaults_of(deps: Deps, key_id: str) -> list[str]:
    """Names of every vault the key has (its core vault always among them)."""
    return await MirrorStore(deps.db).vaults_of(key_id)
