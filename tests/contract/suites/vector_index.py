"""Contract of the ``VectorIndex`` port (Vectorize's shape). Plain async checks with bare
``assert``, standard library and ``memvault.core`` only. Ids and a ``run`` metadata value are
unique per check, and every query filters on ``run``, so a shared index does not leak between
checks. Vectors are 8-dimensional."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable

from memvault.core.ports import VectorIndex

DIM = 8


def _axis(i: int, tilt: float = 0.0) -> list[float]:
    vector = [0.0] * DIM
    vector[i % DIM] = 1.0
    vector[(i + 1) % DIM] = tilt
    return vector


def _run() -> str:
    return uuid.uuid4().hex[:12]


async def check_nearest_vector_comes_first_with_its_metadata(index: VectorIndex) -> None:
    run = _run()
    await index.upsert([(f"{run}-{i}", _axis(i), {"run": run, "n": i}) for i in range(4)])
    found = await index.query(_axis(2, 0.1), top_k=2, metadata_filter={"run": run}, with_metadata=True)
    assert found[0].id == f"{run}-2"
    assert found[0].metadata["n"] == 2
    assert len(found) == 2
    assert found[0].score >= found[1].score


async def check_top_k_bounds_the_result(index: VectorIndex) -> None:
    run = _run()
    await index.upsert([(f"{run}-{i}", _axis(i, 0.5), {"run": run}) for i in range(6)])
    assert len(await index.query(_axis(0), top_k=3, metadata_filter={"run": run})) == 3


async def check_metadata_filter_eq_in_and_nin(index: VectorIndex) -> None:
    run = _run()
    scopes = ["business", "family", "shared", "mildred"]
    await index.upsert([(f"{run}-{s}", _axis(0, i / 10), {"run": run, "scope": s}) for i, s in enumerate(scopes)])
    only = await index.query(_axis(0), 10, {"run": run, "scope": {"$eq": "family"}})
    assert [m.id for m in only] == [f"{run}-family"]
    some = await index.query(_axis(0), 10, {"run": run, "scope": {"$in": ["business", "shared"]}})
    assert {m.id for m in some} == {f"{run}-business", f"{run}-shared"}
    rest = await index.query(_axis(0), 10, {"run": {"$eq": run}, "scope": {"$nin": ["business", "shared"]}})
    assert {m.id for m in rest} == {f"{run}-family", f"{run}-mildred"}


async def check_filter_that_matches_nothing_returns_nothing(index: VectorIndex) -> None:
    run = _run()
    await index.upsert([(f"{run}-a", _axis(1), {"run": run, "scope": "business"})])
    assert await index.query(_axis(1), 5, {"run": run, "scope": {"$in": ["family"]}}) == []


async def check_upsert_replaces_vector_and_metadata(index: VectorIndex) -> None:
    run = _run()
    await index.upsert([(f"{run}-x", _axis(3), {"run": run, "v": 1})])
    await index.upsert([(f"{run}-x", _axis(5), {"run": run, "v": 2})])
    found = await index.query(_axis(5), 5, {"run": run}, with_metadata=True)
    assert [m.id for m in found] == [f"{run}-x"]
    assert found[0].metadata["v"] == 2
    assert found[0].score > 0.99


async def check_delete_removes_ids(index: VectorIndex) -> None:
    run = _run()
    await index.upsert([(f"{run}-{i}", _axis(i), {"run": run}) for i in range(3)])
    await index.delete([f"{run}-0", f"{run}-2", f"{run}-missing"])
    assert [m.id for m in await index.query(_axis(0), 5, {"run": run})] == [f"{run}-1"]


async def check_metadata_comes_back_only_when_asked(index: VectorIndex) -> None:
    run = _run()
    await index.upsert([(f"{run}-{i}", _axis(i, 0.3), {"run": run, "n": i}) for i in range(30)])
    bare = await index.query(_axis(0), top_k=30, metadata_filter={"run": run})
    assert len(bare) == 30 and all(m.metadata == {} for m in bare)
    full = await index.query(_axis(0), top_k=30, metadata_filter={"run": run}, with_metadata=True)
    assert [m.id for m in full] == [m.id for m in bare]
    assert all(m.metadata["n"] == int(m.id.rsplit("-", 1)[1]) for m in full)


CHECKS: list[Callable[[VectorIndex], Awaitable[None]]] = [
    check_nearest_vector_comes_first_with_its_metadata,
    check_top_k_bounds_the_result,
    check_metadata_filter_eq_in_and_nin,
    check_filter_that_matches_nothing_returns_nothing,
    check_upsert_replaces_vector_and_metadata,
    check_delete_removes_ids,
    check_metadata_comes_back_only_when_asked,
]
