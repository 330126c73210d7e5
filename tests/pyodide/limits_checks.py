"""Checks of issue-13 limits inside Pyodide: Vectorize asked for metadata only when read, the
bindings' passing failures retried through the Cloudflare adapters, and the backup round trip over
miniflare's D1 and R2 with the real Vault objects."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Awaitable, Callable
from typing import Any

import js

from memvault.adapters.cloudflare.blobs import R2BlobStore
from memvault.adapters.cloudflare.convert import js_array, to_py
from memvault.adapters.cloudflare.database import D1Database
from memvault.adapters.cloudflare.failures import binding_errors
from memvault.adapters.cloudflare.vector_index import VectorizeIndex
from memvault.core.errors import TransientStorageError
from memvault.core.ports import BlobStore, Database
from memvault.core.retry import Backoff, Retrying, RetryPolicy


async def context() -> Any:
    return js.memvaultTest


class RecordingIndex:
    """A Vectorize binding seen through a recorder of each query's options."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.options: list[dict[str, Any]] = []

    async def query(self, vector: Any, options: Any) -> Any:
        self.options.append(to_py(options))
        return await self.inner.query(vector, options)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


async def check_vectorize_returns_no_metadata_unless_it_is_read(h: Any) -> None:
    binding = RecordingIndex(h.newVectorize())
    index = VectorizeIndex(binding)
    await index.upsert([(f"m{i}", [1.0, i / 100, 0.5], {"scope": "a"}) for i in range(60)])
    bare = await index.query([1.0, 0.2, 0.5], top_k=50, metadata_filter={"scope": {"$in": ["a"]}})
    assert len(bare) == 50 and all(m.metadata == {} for m in bare)
    few = await index.query([1.0, 0.2, 0.5], top_k=5, with_metadata=True)
    assert few[0].metadata == {"scope": "a"}
    assert [o["returnMetadata"] for o in binding.options] == ["none", "all"], binding.options


class FailingTimes:
    """A binding whose named methods throw a JS error ``times`` times before reaching the real one."""

    def __init__(self, inner: Any, times: int, message: str) -> None:
        self.inner, self.left, self.calls = inner, times, 0
        self.throw = js.Function.new("m", "throw new Error(m)")
        self.message = message

    def _fail(self) -> None:
        self.calls += 1
        if self.left > 0:
            self.left -= 1
            self.throw(self.message)

    async def put(self, *args: Any) -> Any:
        self._fail()
        return await self.inner.put(*args)

    def prepare(self, sql: str) -> Any:
        self._fail()
        return self.inner.prepare(sql)


async def _no_wait(_: float) -> None:
    return None


POLICY = RetryPolicy(Backoff(attempts=4, base_seconds=0.01, max_seconds=0.05), sleep=_no_wait)


async def check_passing_binding_failures_are_retried_and_others_are_not(h: Any) -> None:
    await h.resetR2()
    flaky = FailingTimes(h.env.BLOBS, 3, "R2 put: We encountered an internal error. Please try again. (10001)")
    await Retrying(R2BlobStore(flaky), BlobStore, POLICY).put("retried/one", b"kept")
    assert flaky.calls == 4 and await R2BlobStore(h.env.BLOBS).get("retried/one") == b"kept"
    d1 = FailingTimes(await h.freshD1(), 2, "D1_ERROR: Network connection lost.")
    rows = await Retrying(D1Database(d1), Database, POLICY).query("SELECT 1 AS one")
    assert rows == [{"one": 1}] and d1.calls == 3
    throw = js.Function.new("m", "throw new Error(m)")
    try:
        with binding_errors("Workers AI"):
            throw("AiError: 3040: Capacity temporarily exceeded, please try again. (429)")
    except TransientStorageError:
        pass
    else:
        raise AssertionError("a capacity error was not told to pass")
    final = FailingTimes(h.env.BLOBS, 9, "R2 put: Invalid object name")
    try:
        await Retrying(R2BlobStore(final), BlobStore, POLICY).put("bad", b"x")
    except Exception as exc:
        assert not isinstance(exc, TransientStorageError) and final.calls == 1, (type(exc), final.calls)
    else:
        raise AssertionError("a final R2 failure passed")


async def check_backup_round_trip_over_d1_and_r2(h: Any) -> None:
    sys.path.insert(0, "/repo/tests")
    from backup_round_trip import NOW, credentials, fill, read_backup, read_everything
    from memvault.core.operations.restore import restore_backup
    from memvault.runtime.cron import run_cron
    from memvault.runtime.workers import build_deps

    await h.resetR2()
    bindings = {"DB": await h.freshD1(), "VAULT": h.env.VAULT, "VECTORIZE": h.newVectorize(), "BODIES": h.env.BLOBS,
                "AI": h.newWorkersAi(), "CACHE": h.env.CACHE, "MEMVAULT_BRAIN_CREDENTIALS": credentials()}

    def deps_over(db: Any) -> Any:
        env = js.Object.fromEntries(js_array([js_array([k, v]) for k, v in {**bindings, "DB": db}.items()]))
        deps = build_deps(env, h.newContext())
        return dataclasses.replace(deps, clock=lambda: NOW, sync_mirror_inline=True, cache=None)

    deps = deps_over(bindings["DB"])
    filled = await fill(deps)
    before = await read_everything(deps, filled)
    report = await run_cron(deps, now=NOW)
    assert report.finished and report.backup["complete"], report
    lines = b"".join(await read_backup(deps, report.backup["backup_id"])).decode().splitlines()

    fresh = deps_over(await h.freshD1())
    restored = await restore_backup(fresh, lines)
    assert restored.errors == [] and restored.mirrors_rebuilt >= 2, restored
    after = await read_everything(fresh, filled)
    assert after == before, (after, before)


CHECKS: list[Callable[[Any], Awaitable[None]]] = [
    check_vectorize_returns_no_metadata_unless_it_is_read,
    check_passing_binding_failures_are_retried_and_others_are_not,
    check_backup_round_trip_over_d1_and_r2,
]
