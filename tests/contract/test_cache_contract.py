"""Runs the ``Cache`` contract suite against the local in-memory cache, and checks expiry, which
the shared suite cannot (KV's shortest TTL is a minute)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest
from suites.cache import CHECKS

from memvault.adapters.local.cache import MemoryCache
from memvault.core.ports import Cache


@pytest.mark.parametrize("check", CHECKS, ids=lambda check: check.__name__)
async def test_cache_contract(check: Callable[[Cache], Awaitable[None]]) -> None:
    await check(MemoryCache())


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_entry_expires_after_its_ttl() -> None:
    clock = FakeClock()
    cache = MemoryCache(clock=clock)
    await cache.put("k", "v", ttl_seconds=30)
    clock.now += 29.9
    assert await cache.get("k") == "v"
    clock.now += 0.1
    assert await cache.get("k") is None


async def test_rewrite_without_ttl_keeps_the_entry() -> None:
    clock = FakeClock()
    cache = MemoryCache(clock=clock)
    await cache.put("k", "old", ttl_seconds=10)
    await cache.put("k", "new")
    clock.now += 3600
    assert await cache.get("k") == "new"


async def test_full_cache_drops_expired_then_oldest() -> None:
    clock = FakeClock()
    cache = MemoryCache(max_entries=2, clock=clock)
    await cache.put("a", "1")
    await cache.put("b", "2", ttl_seconds=5)
    clock.now += 10
    await cache.put("c", "3")
    assert (await cache.get("a"), await cache.get("b"), await cache.get("c")) == ("1", None, "3")
    await cache.put("d", "4")
    assert (await cache.get("a"), await cache.get("c"), await cache.get("d")) == (None, "3", "4")


async def test_a_read_keeps_an_entry_from_being_the_next_one_dropped() -> None:
    cache = MemoryCache(max_entries=2)
    await cache.put("a", "1")
    await cache.put("b", "2")
    assert await cache.get("a") == "1"  # "b" is now the least recently used
    await cache.put("c", "3")
    assert (await cache.get("a"), await cache.get("b"), await cache.get("c")) == ("1", None, "3")
