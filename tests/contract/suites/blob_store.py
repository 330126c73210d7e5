"""Contract of the ``BlobStore`` port. Plain async checks with bare ``assert``, standard library
and ``memvault.core`` only, so the same code runs under pytest and inside Pyodide. Keys are
unique per check, so a shared bucket does not make checks depend on each other."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable

from memvault.core.ports import BlobStore


def _key(name: str) -> str:
    return f"contract/{uuid.uuid4().hex}/{name}"


async def check_put_then_get_returns_the_same_bytes(store: BlobStore) -> None:
    key = _key("body.md")
    await store.put(key, "# Notes\nprix: 12 €\n".encode(), "text/markdown")
    assert await store.get(key) == "# Notes\nprix: 12 €\n".encode()


async def check_missing_key_reads_as_none(store: BlobStore) -> None:
    assert await store.get(_key("never-written")) is None


async def check_put_overwrites(store: BlobStore) -> None:
    key = _key("v")
    await store.put(key, b"first")
    await store.put(key, b"second")
    assert await store.get(key) == b"second"


async def check_delete_removes_and_is_idempotent(store: BlobStore) -> None:
    key = _key("gone")
    await store.put(key, b"x")
    await store.delete(key)
    assert await store.get(key) is None
    await store.delete(key)


async def check_binary_and_empty_payloads_survive(store: BlobStore) -> None:
    data = bytes(range(256)) * 4
    key, empty = _key("bin"), _key("empty")
    await store.put(key, data)
    await store.put(empty, b"")
    assert await store.get(key) == data
    assert await store.get(empty) == b""


async def check_keys_are_independent(store: BlobStore) -> None:
    base = _key("")
    await store.put(base + "a/b", b"ab")
    await store.put(base + "a/c", b"ac")
    await store.delete(base + "a/b")
    assert await store.get(base + "a/c") == b"ac"


CHECKS: list[Callable[[BlobStore], Awaitable[None]]] = [
    check_put_then_get_returns_the_same_bytes,
    check_missing_key_reads_as_none,
    check_put_overwrites,
    check_delete_removes_and_is_idempotent,
    check_binary_and_empty_payloads_survive,
    check_keys_are_independent,
]
