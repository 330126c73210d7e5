"""What the core operations need from a platform, bundled once by a composition root."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from memvault.core.cpu import InlineCpu
from memvault.core.credentials.access import AccessKeys
from memvault.core.operations.health import PlatformReport
from memvault.core.ports import (
    BackgroundTasks,
    BlobStore,
    Cache,
    ChatModel,
    Cipher,
    CpuWork,
    Database,
    Embedder,
    HttpClient,
    VaultDirectory,
    VectorIndex,
)
from memvault.core.query_vectors import QueryVectors
from memvault.core.read_cache import CacheStats, ReadCache
from memvault.core.settings import Settings
from memvault.core.tuning import Tuning


@dataclass
class Deps:
    settings: Settings
    vaults: VaultDirectory
    db: Database
    embedder: Embedder
    background: BackgroundTasks
    http: HttpClient
    blobs: BlobStore
    vectors: VectorIndex
    cache: Cache | None
    clock: Callable[[], float]
    # What the benchmarks measured; a test or a benchmark sweep may pass another.
    tuning: Tuning = field(default_factory=Tuning)
    # Set by the Workers composition root; read by /health. None in local mode.
    platform: PlatformReport | None = None
    # The brain's judge for the write-time bands and consolidation; without one only exact and
    # near-exact duplicates are caught.
    llm: ChatModel | None = None
    # Seals the provider keys held for memory keys; None where the runtime has no cipher.
    cipher: Cipher | None = None
    # Locally a write is acknowledged once the mirror applied it; on Workers the mirror catches up
    # in the background (waitUntil) and the answer does not wait for D1.
    sync_mirror_inline: bool = True
    # Whether a memory key's lookup may be answered from the read cache. Only where every change of
    # a key passes through this process's cache (on Workers the admin surface is the one writer of
    # keys, and it drops the cached lookup): locally the CLI revokes a key, or lowers its limits,
    # in the same database from another process, which the server's in-process cache never sees.
    key_lookups_cached: bool = False
    # These live as long as the process (an isolate on Workers), not one request.
    query_vectors: QueryVectors = field(default_factory=QueryVectors)
    # Where CPU-heavy work runs (a large write's secret gate): in place unless a runtime has threads.
    cpu: CpuWork = field(default_factory=InlineCpu)
    access_keys: AccessKeys = field(default_factory=AccessKeys)
    cache_stats: CacheStats = field(default_factory=CacheStats)

    @property
    def reads(self) -> ReadCache:
        """Repeated reads through the cache port, with this process's hit and miss counts."""
        return ReadCache(self.cache, self.settings.cache_ttl_seconds, self.cache_stats)

    @property
    def key_reads(self) -> ReadCache | None:
        """``reads`` for memory-key lookups, or None where they are looked up on every call."""
        return self.reads if self.key_lookups_cached else None
