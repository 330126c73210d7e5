"""The ``Cache`` port over a Workers KV namespace binding."""

from __future__ import annotations

from typing import Any

from memvault.adapters.cloudflare.convert import is_missing, to_js
from memvault.core.errors import InvalidInput

# KV refuses an expirationTtl below 60 seconds; a shorter TTL is rounded up to it, which a cache
# may do (an entry living a little longer is still a cache hit, never a wrong answer).
KV_MIN_TTL_SECONDS = 60


class KvCache:
    def __init__(self, binding: Any) -> None:
        self._kv = binding

    async def get(self, key: str) -> str | None:
        value = await self._kv.get(key)
        return None if is_missing(value) else str(value)

    async def put(self, key: str, value: str, ttl_seconds: int | None = None) -> None:
        if ttl_seconds is not None and ttl_seconds < 1:
            raise InvalidInput("ttl_seconds must be at least 1")
        if ttl_seconds is None:
            await self._kv.put(key, value)
        else:
            await self._kv.put(key, value, to_js({"expirationTtl": max(int(ttl_seconds), KV_MIN_TTL_SECONDS)}))

    async def delete(self, key: str) -> None:
        await self._kv.delete(key)
