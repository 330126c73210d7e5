"""The ``Cache`` port in process memory: a least-recently-used map of entries with an optional time
to live, for the local mode (one process, so a dict is the whole cache)."""

from __future__ import annotations

import time
from collections.abc import Callable

from memvault.core.errors import InvalidInput


class MemoryCache:
    def __init__(self, *, max_entries: int = 10_000, clock: Callable[[], float] = time.monotonic) -> None:
        if max_entries < 1:
            raise InvalidInput("max_entries must be at least 1")
        self._entries: dict[str, tuple[str, float | None]] = {}
        self._max_entries = max_entries
        self._clock = clock

    async def get(self, key: str) -> str | None:
        entry = self._entries.get(key)
        if entry is None:
            return None
        value, expires = entry
        if expires is not None and self._clock() >= expires:
            del self._entries[key]
            return None
        self._entries[key] = self._entries.pop(key)  # now the most recently used
        return value

    async def put(self, key: str, value: str, ttl_seconds: int | None = None) -> None:
        if ttl_seconds is not None and ttl_seconds < 1:
            raise InvalidInput("ttl_seconds must be at least 1")
        expires = None if ttl_seconds is None else self._clock() + ttl_seconds
        self._entries.pop(key, None)
        self._entries[key] = (value, expires)
        if len(self._entries) > self._max_entries:
            self._evict()

    async def delete(self, key: str) -> None:
        self._entries.pop(key, None)

    def _evict(self) -> None:
        now = self._clock()
        for key in [k for k, (_, expires) in self._entries.items() if expires is not None and now >= expires]:
            del self._entries[key]
        # Still full: drop the least recently used first (dicts keep insertion order, and a read
        # moves its entry to the end).
        while len(self._entries) > self._max_entries:
            del self._entries[next(iter(self._entries))]
