"""Contract of the ``Cache`` port: plain async checks with bare ``assert``, run by pytest against
the local cache and inside Pyodide against Workers KV (miniflare's simulator).

Expiry itself is not checked here: KV's shortest TTL is 60 seconds. The local runner checks it
with a fake clock."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable

from memvault.core.errors import InvalidInput
from memvault.core.ports import Cache


def fresh_key(label: str) -> str:
    # Adapters may share one store across checks: every check uses keys of its own.
    return f"contract:{label}:{uuid.uuid4().hex}"


async def check_missing_key_reads_none(cache: Cache) -> None:
    assert await cache.get(fresh_key("missing")) is None


async def check_put_then_get_round_trips(cache: Cache) -> None:
    key = fresh_key("round-trip")
    value = 'plain text, "quotes", ünïcödé, emoji 🧠, newline\nand a tab\t'
    await cache.put(key, value)
    assert await cache.get(key) == value


async def check_empty_string_is_a_value(cache: Cache) -> None:
    key = fresh_key("empty")
    await cache.put(key, "")
    assert await cache.get(key) == ""


async def check_put_overwrites(cache: Cache) -> None:
    key = fresh_key("overwrite")
    await cache.put(key, "first")
    await cache.put(key, "second")
    assert await cache.get(key) == "second"


async def check_delete_removes(cache: Cache) -> None:
    key, other = fresh_key("delete"), fresh_key("kept")
    await cache.put(key, "gone soon")
    await cache.put(other, "stays")
    await cache.delete(key)
    assert await cache.get(key) is None
    assert await cache.get(other) == "stays"


async def check_delete_of_missing_key_is_quiet(cache: Cache) -> None:
    await cache.delete(fresh_key("never-written"))


async def check_value_with_ttl_is_readable_before_expiry(cache: Cache) -> None:
    key = fresh_key("ttl")
    await cache.put(key, "short-lived", ttl_seconds=3600)
    assert await cache.get(key) == "short-lived"


async def check_ttl_shorter_than_store_minimum_is_accepted(cache: Cache) -> None:
    # Callers ask for what they need; a store with a minimum TTL (KV: 60 s) rounds up.
    key = fresh_key("tiny-ttl")
    await cache.put(key, "brief", ttl_seconds=5)
    assert await cache.get(key) == "brief"


async def check_non_positive_ttl_is_refused(cache: Cache) -> None:
    key = fresh_key("bad-ttl")
    for ttl in (0, -10):
        try:
            await cache.put(key, "never", ttl_seconds=ttl)
        except InvalidInput:
            pass
        else:
            raise AssertionError(f"ttl_seconds={ttl} was accepted")
    assert await cache.get(key) is None


async def check_large_value_round_trips(cache: Cache) -> None:
    key = fresh_key("large")
    value = "x" * 200_000 + "end"
    await cache.put(key, value)
    assert await cache.get(key) == value


CHECKS: list[Callable[[Cache], Awaitable[None]]] = [
    check_missing_key_reads_none,
    check_put_then_get_round_trips,
    check_empty_string_is_a_value,
    check_put_overwrites,
    check_delete_removes,
    check_delete_of_missing_key_is_quiet,
    check_value_with_ttl_is_readable_before_expiry,
    check_ttl_shorter_than_store_minimum_is_accepted,
    check_non_positive_ttl_is_refused,
    check_large_value_round_trips,
]
