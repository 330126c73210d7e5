"""Runs the ``VectorIndex`` contract suite against the local adapter (SQLite + brute-force cosine)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from suites.vector_index import CHECKS, DIM

from memvault.adapters.local.vector_index import LocalVectorIndex
from memvault.core.errors import InvalidInput
from memvault.core.ports import VectorIndex


@pytest.mark.parametrize("check", CHECKS, ids=lambda check: check.__name__)
async def test_local_vector_index_contract(tmp_path: Path, check: Callable[[VectorIndex], Awaitable[None]]) -> None:
    index = LocalVectorIndex(tmp_path / "vectors.sqlite3")
    try:
        await check(index)
    finally:
        index.close()


async def test_all_checks_share_one_index_without_interfering(tmp_path: Path) -> None:
    index = LocalVectorIndex(tmp_path / "vectors.sqlite3", dimension=DIM)
    for check in CHECKS:
        await check(index)
    index.close()


async def test_wrong_dimension_is_refused(tmp_path: Path) -> None:
    index = LocalVectorIndex(tmp_path / "vectors.sqlite3", dimension=DIM)
    with pytest.raises(InvalidInput):
        await index.upsert([("a", [1.0, 0.0], {})])
    index.close()
