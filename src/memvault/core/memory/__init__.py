"""Conversation memory: one vault per (memory key, vault), a mirror derived from the vaults, and
the operations every surface calls."""

from memvault.core.memory.read import (
    all_vaults,
    export_memory,
    idle_vaults,
    memory_stats,
    read_memory,
    search_memory,
    vaults_of,
)
from memvault.core.memory.sync import mirror_differences, rebuild_mirror, sync_all, sync_mirror
from memvault.core.memory.write import (
    clear_memory,
    flush_idle_buffers,
    flush_pending,
    forget,
    purge_old_memory,
    purge_vault,
    reconcile_vault,
    store_conversation,
)

__all__ = [
    "all_vaults",
    "clear_memory",
    "export_memory",
    "flush_idle_buffers",
    "flush_pending",
    "forget",
    "idle_vaults",
    "memory_stats",
    "mirror_differences",
    "purge_old_memory",
    "purge_vault",
    "read_memory",
    "rebuild_mirror",
    "reconcile_vault",
    "search_memory",
    "store_conversation",
    "sync_all",
    "sync_mirror",
    "vaults_of",
]
