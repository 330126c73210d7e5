"""Retries with exponential backoff and jitter, for calls that are safe to repeat: reads, and
writes that are idempotent by construction (an upsert, a compare-and-set batch, a message batch
whose ids the caller fixed). Which failures are worth another try is decided by the caller, with
an explicit predicate; everything else is raised at once.

The storage and model ports are wrapped once (``with_retries``, in both composition roots): a call
its port marks ``@repeatable`` that fails in a way the adapter classified as passing
(``TransientStorageError``: D1's lost connection, an overloaded service, a busy local file) is
tried again; every other call is made once. ``Database.execute`` and ``batch`` may not be
idempotent, so the write paths that are idempotent retry those themselves."""

from __future__ import annotations

import asyncio
import inspect
import logging
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from memvault.core.errors import MemvaultError, TransientStorageError, WriteRaced
from memvault.core.ports import BlobStore, Database, Embedder, VectorIndex, is_repeatable

T = TypeVar("T")
log = logging.getLogger(__name__)

# Answers that say "not now" rather than "never": rate limited, or a server or gateway failing.
TRANSIENT_STATUSES = frozenset({408, 425, 429, 500, 502, 503, 504})


@dataclass(frozen=True)
class Backoff:
    attempts: int = 4  # tries in all, the first one included
    base_seconds: float = 0.05
    max_seconds: float = 2.0

    def delay(self, failures: int, rand: Callable[[], float] = random.random) -> float:
        """The wait after ``failures`` failures in a row: the exponential step, half of it fixed
        and half random, so a crowd of callers that failed together does not retry together."""
        step = min(self.max_seconds, self.base_seconds * 2.0 ** max(0, failures - 1))
        return step / 2 + float(rand()) * step / 2


STORAGE_WRITES = Backoff(attempts=4, base_seconds=0.05, max_seconds=1.0)


def is_transient_storage(exc: BaseException) -> bool:
    """A store failure the adapters classified as passing (D1's lost connection or reset, a busy
    local database)."""
    return isinstance(exc, TransientStorageError)


def is_transient_or_raced(exc: BaseException) -> bool:
    """``is_transient_storage``, or a batch that lost a race to a concurrent write (``WriteRaced``):
    for a write that plans its batch again on each try, so the next plan sees the other write."""
    return is_transient_storage(exc) or isinstance(exc, WriteRaced)


def is_transient_call(exc: BaseException) -> bool:
    """A remote call that may succeed if repeated: it timed out, memvault or the network answered
    with a passing status, or a store behind it failed in a passing way. Refusals (bad input, an
    unknown key, a conflict) and full storage are final."""
    if isinstance(exc, TimeoutError | asyncio.TimeoutError | ConnectionError):
        return True
    return isinstance(exc, MemvaultError) and exc.status in TRANSIENT_STATUSES


async def retry(
    call: Callable[[], Awaitable[T]],
    transient: Callable[[BaseException], bool],
    backoff: Backoff = STORAGE_WRITES,
    *,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    rand: Callable[[], float] = random.random,
) -> T:
    """``call()``, tried again after a growing wait while it fails transiently, up to
    ``backoff.attempts`` tries; the last failure is raised."""
    failures = 0
    while True:
        try:
            return await call()
        except Exception as exc:
            failures += 1
            if failures >= backoff.attempts or not transient(exc):
                raise
            log.info("retrying after a transient failure (%s), attempt %d", type(exc).__name__, failures + 1)
            await sleep(backoff.delay(failures, rand))


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
