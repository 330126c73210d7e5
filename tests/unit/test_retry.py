"""The one retry helper: backoff with jitter, explicit transient classification, and its use on
memvault's own storage writes (the mirror's vault registry and batches, brain writes)."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections.abc import Sequence
from typing import Any

import pytest

from local_deps import MakeDeps
from memvault.adapters.local.database import storage_errors
from memvault.core import brain, memory
from memvault.core.brain.scopes import token_hash
from memvault.core.deps import Deps
from memvault.core.errors import (
    Conflict,
    InvalidInput,
    StorageFull,
    StorageUnavailable,
    TransientStorageError,
    Unauthorized,
    UpstreamUnavailable,
)
from memvault.core.models import Message
from memvault.core.ports import Database, Row
from memvault.core.retry import Backoff, is_transient_call, is_transient_storage, retry


class Flaky:
    def __init__(self, failures: list[BaseException]) -> None:
        self.failures = failures
        self.calls = 0

    async def __call__(self) -> str:
        self.calls += 1
        if self.failures:
            raise self.failures.pop(0)
        return "done"


async def test_transient_failures_are_retried_with_growing_waits() -> None:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    call = Flaky([TransientStorageError("reset"), TransientStorageError("reset")])
    backoff = Backoff(attempts=4, base_seconds=0.1, max_seconds=10.0)
    assert await retry(call, is_transient_storage, backoff, sleep=sleep, rand=lambda: 1.0) == "done"
    assert call.calls == 3
    assert waits == [0.1, 0.2]


async def test_a_final_failure_is_raised_at_once() -> None:
    call = Flaky([Conflict("no")])
    with pytest.raises(Conflict):
        await retry(call, is_transient_call, sleep=lambda _: asyncio.sleep(0))
    assert call.calls == 1


async def test_retries_stop_after_the_last_attempt() -> None:
    call = Flaky([TransientStorageError(str(i)) for i in range(5)])
    with pytest.raises(TransientStorageError, match="2"):
        await retry(call, is_transient_storage, Backoff(attempts=3), sleep=lambda _: asyncio.sleep(0))
    assert call.calls == 3


def test_backoff_doubles_up_to_its_cap_with_half_of_each_step_random() -> None:
    backoff = Backoff(base_seconds=1.0, max_seconds=5.0)
    assert [backoff.delay(n, lambda: 0.0) for n in (1, 2, 3, 4, 5)] == [0.5, 1.0, 2.0, 2.5, 2.5]
    assert [backoff.delay(n, lambda: 1.0) for n in (1, 2, 3, 4)] == [1.0, 2.0, 4.0, 5.0]


@pytest.mark.parametrize(
    ("error", "transient"),
    [
        (TimeoutError(), True),
        (ConnectionResetError(), True),
        (StorageUnavailable("down"), True),
        (TransientStorageError("reset"), True),
        (UpstreamUnavailable("unreachable"), True),
        (StorageFull("full"), False),
        (Unauthorized("who"), False),
        (InvalidInput("bad"), False),
        (Conflict("taken"), False),
        (ValueError("a bug"), False),
    ],
)
def test_which_call_failures_are_transient(error: BaseException, transient: bool) -> None:
    assert is_transient_call(error) is transient


@pytest.mark.parametrize(("words", "kind"), [("database is locked", TransientStorageError), ("disk I/O error", StorageUnavailable)])
def test_a_busy_local_database_is_transient_other_failures_are_not(words: str, kind: type[Exception]) -> None:
    with pytest.raises(kind) as raised, storage_errors():
        raise sqlite3.OperationalError(words)
    assert is_transient_storage(raised.value) is (kind is TransientStorageError)


class StutteringDatabase:
    """A ``Database`` whose writes fail transiently ``failures`` times before each reaches the real one."""

    def __init__(self, inner: Database, failures: int) -> None:
        self.inner, self.failures, self.refused = inner, failures, 0

    def _stutter(self) -> None:
        if self.refused < self.failures:
            self.refused += 1
            raise TransientStorageError("Network connection lost")

    async def query(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        return await self.inner.query(sql, params)

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        self._stutter()
        return await self.inner.execute(sql, params)

    async def batch(self, statements: Sequence[tuple[str, Sequence[Any]]]) -> None:
        self._stutter()
        await self.inner.batch(statements)


@pytest.fixture
def deps(make_deps: MakeDeps) -> Deps:
    writer = {token_hash("writer-token"): {"name": "w", "scopes": ["shared"], "writer": True}}
    return make_deps({"MEMVAULT_BRAIN_CREDENTIALS": json.dumps(writer)})


async def test_memory_writes_ride_out_passing_database_failures(deps: Deps) -> None:
    flaky = StutteringDatabase(deps.db, failures=2)
    deps.db = flaky
    result = await memory.store_conversation(deps, "key_1", [Message("user", "The gate code is 2291.", 1.0, "m1")])
    assert flaky.refused == 2 and result.mirrored
    assert await memory.mirror_differences(deps, "key_1", "key_1:core") == []


async def test_brain_writes_ride_out_passing_database_failures(deps: Deps) -> None:
    flaky = StutteringDatabase(deps.db, failures=2)
    deps.db = flaky
    credential = await brain.auth_of("writer-token", deps)
    written = await brain.WRITE_FACTS.perform(
        deps, credential, {"facts": [{"fact": "The office wifi is called Lisboa-5.", "scope": "shared", "source": "t"}]})
    assert flaky.refused >= 2 and written.ids
    found = await brain.SEARCH_FACTS.perform(deps, credential, {"query": "Lisboa-5", "limit": 5})
    assert [r.id for r in found.results] == written.ids
