"""The retrying ports: a store that fails in a passing way N times is tried again with growing,
jittered waits and answers; a lasting or final failure is raised; writes that may not be
idempotent are never repeated."""

from __future__ import annotations

import inspect
from collections.abc import Sequence
from typing import Any

import pytest

from memvault.core.errors import StorageUnavailable, TransientStorageError
from memvault.core.ports import BlobStore, Database, Embedder, VectorIndex, VectorMatch
from memvault.core.retry import Backoff, RetryPolicy, repeatable_methods, with_retries


class Flaky:
    """Every port at once: each call fails ``failures`` times (transiently), then answers."""

    def __init__(self, failures: int, error: Exception | None = None) -> None:
        self.failures, self.calls = failures, 0
        self.error = error or TransientStorageError("Network connection lost")

    def _call(self) -> None:
        self.calls += 1
        if self.calls <= self.failures:
            raise self.error

    async def query(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        self._call()
        return [{"ok": 1}]

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        self._call()
        return 1

    async def batch(self, statements: Sequence[tuple[str, Sequence[Any]]]) -> None:
        self._call()

    async def upsert(self, items: Sequence[Any]) -> None:
        self._call()

    async def delete(self, key_or_ids: Any) -> None:
        self._call()

    @property
    def model_id(self) -> str:
        return "flaky"

    @property
    def dimension(self) -> int:
        return 2

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self._call()
        return [[1.0, 0.0] for _ in texts]

    async def put(self, key: str, data: bytes, content_type: str = "") -> None:
        self._call()

    async def get(self, key: str) -> bytes | None:
        self._call()
        return b"x"


class VectorFlaky(Flaky):
    async def query(self, vector: Any, top_k: int = 0, metadata_filter: Any = None, *,  # type: ignore[override]
                    with_metadata: bool = False) -> list[VectorMatch]:
        self._call()
        return [VectorMatch("v", 1.0, {})]


def ports(flaky: Flaky, waits: list[float]) -> Any:
    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    policy = RetryPolicy(Backoff(attempts=4, base_seconds=0.1, max_seconds=1.0), sleep=sleep)
    return with_retries(flaky, VectorFlaky(flaky.failures), flaky, flaky, policy)  # type: ignore[arg-type]


CALLS = {
    "db.query": lambda p: p.db.query("SELECT 1"),
    "vectors.query": lambda p: p.vectors.query([1.0, 0.0], 5),
    "vectors.upsert": lambda p: p.vectors.upsert([("v", [1.0, 0.0], {})]),
    "vectors.delete": lambda p: p.vectors.delete(["v"]),
    "embedder.embed": lambda p: p.embedder.embed(["a"]),
    "blobs.put": lambda p: p.blobs.put("k", b"x"),
    "blobs.get": lambda p: p.blobs.get("k"),
    "blobs.delete": lambda p: p.blobs.delete("k"),
}


def inner_of(name: str, p: Any) -> Flaky:
    return getattr(p, name.split(".")[0]).inner  # type: ignore[no-any-return]


@pytest.mark.parametrize("name", sorted(CALLS))
async def test_a_call_that_fails_three_times_in_a_passing_way_answers_on_the_fourth(name: str) -> None:
    waits: list[float] = []
    p = ports(Flaky(3), waits)
    await CALLS[name](p)
    assert inner_of(name, p).calls == 4
    # Exponential steps of 0.1, 0.2, 0.4 s, each between half of its step and the whole of it.
    assert len(waits) == 3 and all(step / 2 <= w <= step for w, step in zip(waits, [0.1, 0.2, 0.4], strict=True))


@pytest.mark.parametrize("name", sorted(CALLS))
async def test_a_lasting_failure_is_raised_after_the_last_try(name: str) -> None:
    p = ports(Flaky(10), [])
    with pytest.raises(TransientStorageError):
        await CALLS[name](p)
    assert inner_of(name, p).calls == 4


async def test_a_final_failure_is_raised_at_once() -> None:
    flaky = Flaky(1, StorageUnavailable("no such table"))
    p = ports(flaky, [])
    with pytest.raises(StorageUnavailable):
        await p.db.query("SELECT 1")
    assert flaky.calls == 1


async def test_writes_that_may_not_be_idempotent_are_never_repeated() -> None:
    flaky = Flaky(5)
    p = ports(flaky, [])
    with pytest.raises(TransientStorageError):
        await p.db.execute("INSERT INTO event_log (at) VALUES (1)")
    with pytest.raises(TransientStorageError):
        await p.db.batch([("INSERT INTO event_log (at) VALUES (1)", ())])
    assert flaky.calls == 2


PORTS = {"db": Database, "vectors": VectorIndex, "embedder": Embedder, "blobs": BlobStore}


def test_the_ports_mark_reads_and_writes_idempotent_by_key_as_repeatable() -> None:
    assert {field: repeatable_methods(port) for field, port in PORTS.items()} == {
        "db": {"query"},
        "vectors": {"upsert", "query", "delete"},
        "embedder": {"embed"},
        "blobs": {"put", "get", "delete"},
    }


@pytest.mark.parametrize("field", sorted(PORTS))
async def test_every_port_method_is_retried_exactly_when_its_port_marks_it_repeatable(field: str) -> None:
    port = PORTS[field]
    methods = [name for name, member in vars(port).items() if inspect.iscoroutinefunction(member)]
    assert methods
    for name in methods:
        flaky = Flaky(1)
        wrapped = getattr(ports(flaky, []), field)
        required = [p for p in inspect.signature(getattr(port, name)).parameters.values()
                    if p.default is inspect.Parameter.empty and p.name != "self"]
        call = getattr(wrapped, name)(*[()] * len(required))
        if name in repeatable_methods(port):
            await call
        else:
            with pytest.raises(TransientStorageError):
                await call
        assert wrapped.inner.calls == (2 if name in repeatable_methods(port) else 1), name


async def test_members_that_are_not_calls_are_the_inner_ports_own() -> None:
    embedder = ports(Flaky(0), []).embedder
    assert (embedder.model_id, embedder.dimension) == ("flaky", 2)
    with pytest.raises(AttributeError):
        _ = embedder.no_such_member
