"""The storage and model ports with retries: every call here is safe to repeat, so a failure the
adapter classified as passing (``TransientStorageError``: D1's lost connection, an overloaded
service, a busy local file) is tried again with exponential backoff and jitter (``core/retry.py``).

What is retried and why it is safe: database reads (``query`` only; ``execute`` and ``batch``
may not be idempotent, so the write paths that are retry those themselves), vector upserts and
deletes by id, vector queries, embeddings, and blob puts, gets and deletes by key. Both
composition roots wrap their adapters with ``with_retries``."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from memvault.core.ports import BlobStore, Database, Embedder, VectorIndex, VectorMatch
from memvault.core.retry import STORAGE_WRITES, Backoff, is_transient_storage, retry
from memvault.core.sql import Row

T = TypeVar("T")


@dataclass(frozen=True)
class RetryPolicy:
    backoff: Backoff = STORAGE_WRITES
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep  # a test passes its own clock

    async def run(self, call: Callable[[], Awaitable[T]]) -> T:
        return await retry(call, is_transient_storage, self.backoff, sleep=self.sleep)


class RetryingDatabase:
    def __init__(self, inner: Database, policy: RetryPolicy) -> None:
        self.inner, self._policy = inner, policy

    async def query(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        return await self._policy.run(lambda: self.inner.query(sql, params))

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        return await self.inner.execute(sql, params)

    async def batch(self, statements: Sequence[tuple[str, Sequence[Any]]]) -> None:
        await self.inner.batch(statements)


class RetryingVectorIndex:
    def __init__(self, inner: VectorIndex, policy: RetryPolicy) -> None:
        self.inner, self._policy = inner, policy

    async def upsert(self, items: Sequence[tuple[str, Sequence[float], dict[str, Any]]]) -> None:
        await self._policy.run(lambda: self.inner.upsert(items))

    async def query(
        self,
        vector: Sequence[float],
        top_k: int,
        metadata_filter: dict[str, Any] | None = None,
        *,
        with_metadata: bool = False,
    ) -> list[VectorMatch]:
        return await self._policy.run(
            lambda: self.inner.query(vector, top_k, metadata_filter, with_metadata=with_metadata)
        )

    async def delete(self, ids: Sequence[str]) -> None:
        await self._policy.run(lambda: self.inner.delete(ids))


class RetryingEmbedder:
    def __init__(self, inner: Embedder, policy: RetryPolicy) -> None:
        self.inner, self._policy = inner, policy

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return await self._policy.run(lambda: self.inner.embed(texts))


class RetryingBlobStore:
    def __init__(self, inner: BlobStore, policy: RetryPolicy) -> None:
        self.inner, self._policy = inner, policy

    async def put(self, key: str, data: bytes, content_type: str = "application/octet-stream") -> None:
        await self._policy.run(lambda: self.inner.put(key, data, content_type))

    async def get(self, key: str) -> bytes | None:
        return await self._policy.run(lambda: self.inner.get(key))

    async def delete(self, key: str) -> None:
        await self._policy.run(lambda: self.inner.delete(key))


@dataclass(frozen=True)
class Retrying:
    db: RetryingDatabase
    vectors: RetryingVectorIndex
    embedder: RetryingEmbedder
    blobs: RetryingBlobStore


def with_retries(
    db: Database, vectors: VectorIndex, embedder: Embedder, blobs: BlobStore, policy: RetryPolicy | None = None
) -> Retrying:
    policy = policy or RetryPolicy()
    return Retrying(
        RetryingDatabase(db, policy), RetryingVectorIndex(vectors, policy),
        RetryingEmbedder(embedder, policy), RetryingBlobStore(blobs, policy),
    )
