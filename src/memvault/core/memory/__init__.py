"""Conversation memory: one vault per (memory key, vault), a mirror derived from the vaults, and
the operations every surface calls."""

from memvault.core.memory.read.export import export_memory
from memvault.core.memory.read.page import read_memory
from memvault.core.memory.read.search import search_memory
from memvault.core.memory.read.stats import memory_stats
from memvault.core.memory.read.vaults import all_vaults, idle_vaults, vaults_of
from memvault.core.memory.sync import mirror_differences, rebuild_mirror, sync_all, sync_mirror
from memvault.core.memory.write import (
    clear_memory,
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
