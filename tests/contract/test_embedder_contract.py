"""Runs the ``Embedder`` contract suite against every local embedder, the real model included."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest
from suites.embedder import CHECKS

from memvault.adapters.local.embedder import HashEmbedder, MiniLmEmbedder
from memvault.core.ports import Embedder

# One instance per implementation for the whole module: loading the model once keeps this fast.
EMBEDDERS: dict[str, Embedder] = {"hash": HashEmbedder(), "minilm": MiniLmEmbedder()}


@pytest.mark.parametrize("name", sorted(EMBEDDERS))
@pytest.mark.parametrize("check", CHECKS, ids=lambda check: check.__name__)
async def test_embedder_contract(name: str, check: Callable[[Embedder], Awaitable[None]]) -> None:
    await check(EMBEDDERS[name])
