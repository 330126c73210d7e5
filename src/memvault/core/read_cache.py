"""Reads that repeat, answered from the ``Cache`` port (KV on Workers, an in-process LRU locally)
for ``cache_ttl_seconds``: conversation-memory searches, brain searches and recall envelopes, and
(on Workers) memory-key lookups.

Why a cached answer is never older than the caller's own write: every cached read names, in its
cache key, the generation of what it read, asked where the writes happen and strongly consistent
there — a vault's change-log head (the vault Durable Object, or its local file), moved by every
vault mutation in that mutation's transaction; for the brain, a counter per scope in the database,
moved in the same batch as the write. A write therefore makes every older entry unreachable at
once, for every reader; old entries just expire. The one lookup with no generation to ask is a
memory key's (asking the database would cost what the cache saves): it is cached only where
memvault's own revocation, which deletes the cached lookup, is the one writer of keys (Workers;
``Deps.key_lookups_cached``), and a revocation made anywhere else takes effect within the TTL.

On Workers, KV's propagation delay (up to about 60 s) never serves a stale answer through a
generation — an entry not yet visible somewhere is a miss there — it only delays, for readers in
other locations, a deletion made elsewhere (a revoked key). A failing cache is a miss, never an
error."""

from __future__ import annotations

import functools
import hashlib
import json
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from memvault.core.ports import BackgroundTasks, Cache, Database
from memvault.core.sql import Statement

T = TypeVar("T")
log = logging.getLogger(__name__)
PREFIX = "mv1"


@dataclass
class ReadCounts:
    """Hits and misses, in all and by kind of read (``memory-search``, ``brain-recall``,
    ``memory-key:…``)."""

    hits: int = 0
    misses: int = 0
    kinds: dict[str, list[int]] = field(default_factory=dict)  # kind -> [hits, misses]

    def count(self, kind: str, hit: bool) -> None:
        counts = self.kinds.setdefault(kind, [0, 0])
        counts[0 if hit else 1] += 1
        if hit:
            self.hits += 1
        else:
            self.misses += 1

    def to_dict(self) -> dict[str, Any]:
        return {**_rate(self.hits, self.misses),
                "kinds": {kind: _rate(hits, misses) for kind, (hits, misses) in sorted(self.kinds.items())}}


# Memory keys whose own counts are kept; past it the key read least recently starts again from 0.
OWNERS_KEPT = 10_000


@dataclass
class CacheStats(ReadCounts):
    """The reads since the process (on Workers, the isolate) started: every reader's, and each
    memory key's own (a key is shown only its own: how often others read tells of their activity)."""

    owners: OrderedDict[str, ReadCounts] = field(default_factory=OrderedDict)

    def count(self, kind: str, hit: bool, owner: str | None = None) -> None:
        super().count(kind, hit)
        if owner is None:
            return
        own = self.owners.pop(owner, None) or ReadCounts()
        own.count(kind, hit)
        self.owners[owner] = own
        if len(self.owners) > OWNERS_KEPT:
            self.owners.popitem(last=False)

    def of(self, owner: str) -> ReadCounts:
        """The reads made for memory key ``owner``."""
        return self.owners.get(owner) or ReadCounts()


def _rate(hits: int, misses: int) -> dict[str, Any]:
    reads = hits + misses
    return {"hits": hits, "misses": misses, "hit_rate": round(hits / reads, 4) if reads else None}


def cache_key(namespace: str, parts: Sequence[object]) -> str:
    """A short, fixed-length key: the parts (query texts included) are hashed, never stored as such."""
    digest = hashlib.sha256(json.dumps(list(parts), sort_keys=True, default=str).encode("utf-8")).hexdigest()
    return f"{PREFIX}:{namespace}:{digest[:40]}"


class ReadCache:
    def __init__(self, cache: Cache | None, ttl_seconds: int, stats: CacheStats) -> None:
        self._cache = cache
        self._ttl = ttl_seconds
        self.stats = stats

    async def read(
        self,
        namespace: str,
        parts: Sequence[object],
        compute: Callable[[], Awaitable[T]],
        encode: Callable[[T], str] = json.dumps,
        decode: Callable[[str], T] = json.loads,
        keep: Callable[[T], bool] = lambda _: True,
        owner: str | None = None,
        later: BackgroundTasks | None = None,
    ) -> T:
        """The cached answer for ``parts``, or ``compute()``'s, stored when ``keep`` says it is
        one to give again (not a degraded one). ``owner`` is the memory key the read is made for,
        when there is one, to count it among that key's own reads. With ``later`` the answer is
        stored after the caller has it: only for reads whose key names the generation they read,
        which a late store can never make stale (a KV write costs a Worker's caller a round trip)."""
        if self._cache is None:
            return await compute()
        key = cache_key(namespace, parts)
        try:
            raw = await self._cache.get(key)
        except Exception as exc:
            log.warning("read cache failed, reading through: %s", type(exc).__name__)
            raw = None
        self.stats.count(namespace, raw is not None, owner)
        if raw is not None:
            return decode(raw)
        value = await compute()
        if keep(value):
            if later is None:
                await self._keep(key, encode, value)
            else:
                later.run(functools.partial(self._keep, key, encode, value))
        return value

    async def _keep(self, key: str, encode: Callable[[T], str], value: T) -> None:
        if self._cache is None:
            return
        try:
            await self._cache.put(key, encode(value), self._ttl)
        except Exception as exc:
            log.warning("read cache could not keep an answer: %s", type(exc).__name__)

    async def forget(self, namespace: str, parts: Sequence[object]) -> None:
        if self._cache is not None:
            await self._cache.delete(cache_key(namespace, parts))


def bump_generations(names: Sequence[str]) -> list[Statement]:
    """Statements that move each named generation on; run them in the write's own batch."""
    return [
        (
            "INSERT INTO cache_generations (name, generation) VALUES (?, 1) "
            "ON CONFLICT (name) DO UPDATE SET generation = generation + 1",
            (name,),
        )
        for name in dict.fromkeys(names)
    ]


async def generations(db: Database, names: Sequence[str]) -> list[int]:
    """The current generation of each name (0 for one never written), in the order given."""
    if not names:
        return []
    # One JSON parameter, so any number of names (a credential's scopes) fits D1's 100.
    found = await db.query(
        "SELECT name, generation FROM cache_generations WHERE name IN (SELECT value FROM json_each(?))",
        (json.dumps(list(names)),),
    )
    current = {str(row["name"]): int(row["generation"]) for row in found}
    return [current.get(name, 0) for name in names]
