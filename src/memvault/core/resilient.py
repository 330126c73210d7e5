"""The storage and model ports with retries: a call its port marks ``@repeatable`` (a read, or a
write idempotent by its keys) that fails in a way the adapter classified as passing
(``TransientStorageError``: D1's lost connection, an overloaded service, a busy local file) is
tried again with exponential backoff and jitter (``core/retry.py``). Every other call is made
once: ``Database.execute`` and ``batch`` may not be idempotent, so the write paths that are retry
those themselves. Both composition roots wrap their adapters with ``with_retries``."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from memvault.core.ports import BlobStore, Database, Embedder, VectorIndex, is_repeatable
from memvault.core.retry import STORAGE_WRITES, Backoff, is_transient_storage, retry

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    backoff: Backoff = STORAGE_WRITES
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep  # a test passes its own clock

    async def run(self, call: Callable[[], Awaitable[T]]) -> T:
        return await retry(call, is_transient_storage, self.backoff, sleep=self.sleep)


def repeatable_methods(port: type) -> frozenset[str]:
    """The methods a port's Protocol marks ``@repeatable``."""
    return frozenset(name for name, member in vars(port).items() if inspect.isfunction(member) and is_repeatable(member))


class Retrying:
    """``inner`` as the ``port`` it implements, its repeatable calls retried under ``policy``;
    every other member is the inner port's own."""

    def __init__(self, inner: object, port: type, policy: RetryPolicy) -> None:
        self.inner, self._repeatable, self._policy = inner, repeatable_methods(port), policy

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") or name == "inner":  # this wrapper's own, not set yet
            raise AttributeError(name)
        member = getattr(self.inner, name)
        if name not in self._repeatable:
            return member
        policy = self._policy

        async def retried(*args: Any, **kwargs: Any) -> Any:
            return await policy.run(lambda: member(*args, **kwargs))

        return retried


@dataclass(frozen=True)
class RetryingStores:
    db: Database
    vectors: VectorIndex
    embedder: Embedder
    blobs: BlobStore


def with_retries(
    db: Database, vectors: VectorIndex, embedder: Embedder, blobs: BlobStore, policy: RetryPolicy | None = None
) -> RetryingStores:
    policy = policy or RetryPolicy()
    return RetryingStores(
        Retrying(db, Database, policy), Retrying(vectors, VectorIndex, policy),
        Retrying(embedder, Embedder, policy), Retrying(blobs, BlobStore, policy),
    )
