"""``memory_stats``: what a key holds, vault by vault, counted by the vault and by the mirror."""

from __future__ import annotations

from memvault.core.deps import Deps
from memvault.core.memory.mirror import MirrorStore
from memvault.core.memory.read.vaults import vaults_of
from memvault.core.memory.results import MemoryStats, MirrorCounts, VaultCounts
from memvault.core.memory.transfer import vault_label


async def memory_stats(deps: Deps, key_id: str) -> MemoryStats:
    """Counts per vault of the key, from the vault and from the mirror, and the read cache's hits
    and misses of the key's own reads."""
    mirror = MirrorStore(deps.db)
    vaults: dict[str, VaultCounts] = {}
    for name in await vaults_of(deps, key_id):
        counts = await mirror.counts(key_id, name)
        vaults[vault_label(name)] = VaultCounts(await deps.vaults.vault(name).stats(), MirrorCounts(**counts))
    # This process's (an isolate's on Workers) counts of the key's own reads: others' would tell
    # of their activity.
    return MemoryStats(key_id, vaults, deps.cache_stats.of(key_id).to_dict())
