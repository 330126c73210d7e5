"""A test (or a benchmark sweep) replaces the product's tuning through the composition root, and
what it replaced is what the operations use: the vaults' chunk shape and the search's recency."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from local_deps import MakeDeps
from memvault.core import memory
from memvault.core.credentials.keys import create_key
from memvault.core.deps import Deps
from memvault.core.models import Message
from memvault.core.tuning import Tuning

NOW = 1_800_000_000.0
DAY = 86_400.0

Open = Callable[[str, Tuning | None], Deps]


@pytest.fixture
def open_deps(make_deps: MakeDeps, tmp_path: Path) -> Open:
    """Deps over a data folder of their own per name, with ``tuning``."""
    return lambda name, tuning: make_deps(data=tmp_path / name, tuning=tuning, clock=lambda: NOW)


def turns(count: int, at: float) -> list[Message]:
    return [Message("user", f"Turn {i}: the ferry to Tangier leaves from quay {i} at dawn.", at + i, f"t{i}")
            for i in range(count)]


async def test_the_product_runs_the_default_tuning(open_deps: Open) -> None:
    assert open_deps("default", None).tuning == Tuning()


async def test_a_replaced_chunk_size_reaches_the_vaults(open_deps: Open) -> None:
    chunked = {}
    for name, tuning in (("default", None), ("small", Tuning(chunk_tokens=60, chunk_overlap_tokens=0))):
        deps = open_deps(name, tuning)
        key, _ = await create_key(deps.db, name, NOW)
        await memory.store_conversation(deps, key.id, turns(12, NOW - 3600))
        chunked[name] = (await deps.vaults.vault(f"{key.id}:core").stats()).chunks
    assert chunked["default"] == 0  # twelve short turns wait for more (300 tokens a chunk)
    assert chunked["small"] >= 2


async def test_a_replaced_recency_weight_reaches_the_search(open_deps: Open) -> None:
    scores = {}
    for name, tuning in (("default", None), ("flat", Tuning().replace(recency_weight=0.0))):
        deps = open_deps(name, tuning)
        key, _ = await create_key(deps.db, name, NOW)
        await memory.store_conversation(deps, key.id, [Message("user", "The ferry to Tangier leaves at dawn.", NOW - 60, "new"),
                                                        Message("user", "The ferry to Tangier leaves at dusk.", NOW - 60 * DAY, "old")])
        found = await memory.search_memory(deps, key.id, "ferry to Tangier", now=NOW)
        scores[name] = {item.source_ids[0]: item.score for item in found.items}
    # With the default a memory from a minute ago is lifted by up to 1.25; with no weight it is not.
    assert scores["default"]["new"] / scores["flat"]["new"] == pytest.approx(1.25, abs=0.01)
    assert scores["default"]["old"] == pytest.approx(scores["flat"]["old"], rel=1e-3)
