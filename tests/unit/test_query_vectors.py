"""A repeated query is embedded once; concurrent askers share one embedding; failures are not kept."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from memvault.core.query_vectors import QueryVectors


class CountingEmbedder:
    def __init__(self, model_id: str = "counting", fail: bool = False) -> None:
        self.model_id = model_id
        self.dimension = 2
        self.calls: list[list[str]] = []
        self.fail = fail

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        await asyncio.sleep(0.01)
        if self.fail:
            raise RuntimeError("model unavailable")
        return [[float(len(t)), 1.0] for t in texts]


async def test_a_repeated_query_is_embedded_once() -> None:
    cache, embedder = QueryVectors(), CountingEmbedder()
    first = await cache.vector(embedder, "where do I work?")
    again = await cache.vector(embedder, "where do I work?")
    assert first == again == (16.0, 1.0) and len(embedder.calls) == 1


async def test_concurrent_askers_share_one_embedding() -> None:
    cache, embedder = QueryVectors(), CountingEmbedder()
    found = await asyncio.gather(*(cache.vector(embedder, "same question") for _ in range(5)))
    assert len(set(found)) == 1 and len(embedder.calls) == 1


async def test_another_model_embeds_again_and_old_entries_make_room() -> None:
    cache, first, second = QueryVectors(size=2), CountingEmbedder("a"), CountingEmbedder("b")
    await cache.vector(first, "q")
    await cache.vector(second, "q")
    assert len(first.calls) == len(second.calls) == 1
    await cache.vector(first, "other")  # pushes out the oldest entry, ("a", "q")
    await cache.vector(first, "q")
    assert len(first.calls) == 3


async def test_a_failed_embedding_is_not_kept() -> None:
    cache, embedder = QueryVectors(), CountingEmbedder(fail=True)
    for _ in range(2):
        with pytest.raises(RuntimeError):
            await cache.vector(embedder, "q")
    assert len(embedder.calls) == 2


async def test_a_caller_that_gives_up_still_leaves_the_vector_for_the_next() -> None:
    cache, embedder = QueryVectors(), CountingEmbedder()
    with pytest.raises(asyncio.TimeoutError):
        await asyncio.wait_for(cache.vector(embedder, "slow"), 0.001)
    # Asked again while the first embedding may still run, or after it finished: either way no second call.
    assert await cache.vector(embedder, "slow") == (4.0, 1.0) and len(embedder.calls) == 1
