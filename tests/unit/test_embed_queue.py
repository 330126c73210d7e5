"""Concurrent requests' texts share model calls: what each request gets back, and when calls run.

The model here is a blocking function on the worker thread, as the real one is; a gate holds its
first call so requests can be made to arrive while it runs."""

from __future__ import annotations

import asyncio
import threading

import pytest

from memvault.adapters.local.embed_queue import EmbeddingQueue
from memvault.adapters.local.embedder import MiniLmEmbedder

WAIT = 60.0


def vector_of(text: str) -> list[float]:
    return [float(len(text)), float(sum(map(ord, text)) % 997)]


class Model:
    """Records each call's texts; with ``hold`` set, the next call waits until it is released."""

    def __init__(self, fail_on: str | None = None) -> None:
        self.calls: list[list[str]] = []
        self.started = threading.Event()
        self.release = threading.Event()
        self.hold = False
        self.fail_on = fail_on

    def __call__(self, texts: list[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        held, self.hold = self.hold, False
        self.started.set()
        if held:
            assert self.release.wait(WAIT)
        if self.fail_on is not None and self.fail_on in texts:
            raise RuntimeError("the model failed")
        return [vector_of(text) for text in texts]


async def queued(lane_of: EmbeddingQueue, count: int) -> None:
    """Until ``count`` requests wait in the queue of this loop."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + WAIT
    while sum(1 for _ in lane_of._lanes[loop].waiting) < count:
        assert loop.time() < deadline, "requests never queued"
        await asyncio.sleep(0.001)


async def first_call_running(model: Model) -> None:
    assert await asyncio.to_thread(model.started.wait, WAIT)


def test_a_lone_request_is_embedded_at_once_in_its_own_call() -> None:
    model = Model()
    queue = EmbeddingQueue(model, query_texts=0)
    assert asyncio.run(queue.embed(["one", "two"])) == [vector_of("one"), vector_of("two")]
    assert model.calls == [["one", "two"]]


def test_requests_arriving_during_a_call_share_the_next_and_each_gets_its_own_vectors() -> None:
    model = Model()
    model.hold = True
    queue = EmbeddingQueue(model, query_texts=0)
    writers = [[f"writer {w} text {t}" for t in range(5)] for w in range(8)]

    async def run() -> list[list[list[float]]]:
        first = asyncio.create_task(queue.embed(["the first request"]))
        await first_call_running(model)
        rest = [asyncio.create_task(queue.embed(texts)) for texts in writers]
        await queued(queue, len(writers))
        model.release.set()
        await first
        return await asyncio.gather(*rest)

    answers = asyncio.run(run())
    assert answers == [[vector_of(text) for text in texts] for texts in writers]
    assert model.calls == [["the first request"], [text for texts in writers for text in texts]]


def test_a_failed_call_fails_every_request_it_carried_and_only_those() -> None:
    model = Model(fail_on="poison")
    model.hold = True
    queue = EmbeddingQueue(model, query_texts=0)

    async def run() -> tuple[list[object], list[list[float]]]:
        first = asyncio.create_task(queue.embed(["fine"]))
        await first_call_running(model)
        carried = [asyncio.create_task(queue.embed(texts)) for texts in (["a", "b"], ["poison"], ["c"])]
        await queued(queue, 3)
        model.release.set()
        await first
        outcomes = await asyncio.gather(*carried, return_exceptions=True)
        return outcomes, await queue.embed(["after"])

    outcomes, after = asyncio.run(run())
    assert all(isinstance(outcome, RuntimeError) for outcome in outcomes)
    assert after == [vector_of("after")]


def test_a_request_given_up_while_queued_is_never_embedded() -> None:
    model = Model()
    model.hold = True
    queue = EmbeddingQueue(model, query_texts=0)

    async def run() -> list[list[float]]:
        first = asyncio.create_task(queue.embed(["first"]))
        await first_call_running(model)
        abandoned = asyncio.create_task(queue.embed(["abandoned"]))
        kept = asyncio.create_task(queue.embed(["kept"]))
        await queued(queue, 2)
        abandoned.cancel()
        with pytest.raises(asyncio.CancelledError):
            await abandoned
        model.release.set()
        await first
        return await kept

    assert asyncio.run(run()) == [vector_of("kept")]
    assert model.calls == [["first"], ["kept"]]


def test_a_query_is_embedded_at_once_beside_a_running_bulk_call() -> None:
    model = Model()
    model.hold = True
    queue = EmbeddingQueue(model, texts_per_call=10)
    bulk = [[f"bulk {b} {t}" for t in range(10)] for b in range(3)]

    async def run() -> None:
        first = asyncio.create_task(queue.embed(bulk[0]))
        await first_call_running(model)
        rest = [asyncio.create_task(queue.embed(texts)) for texts in bulk[1:]]
        await queued(queue, 2)
        assert await queue.embed(["what did she plant?"]) == [vector_of("what did she plant?")]
        assert not first.done(), "the query waited for the bulk call"
        model.release.set()
        assert await first == [vector_of(text) for text in bulk[0]]
        await asyncio.gather(*rest)

    asyncio.run(run())
    assert model.calls == [bulk[0], ["what did she plant?"], bulk[1], bulk[2]]


def test_past_the_waiting_bound_a_request_waits_for_room_and_is_still_answered() -> None:
    model = Model()
    model.hold = True
    queue = EmbeddingQueue(model, texts_per_call=4, waiting_texts=4, query_texts=0)

    async def run() -> list[list[list[float]]]:
        first = asyncio.create_task(queue.embed(["first"]))
        await first_call_running(model)
        full = asyncio.create_task(queue.embed(["a", "b", "c", "d"]))
        await queued(queue, 1)
        over = asyncio.create_task(queue.embed(["e"]))
        await asyncio.sleep(0)
        assert len(queue._lanes[asyncio.get_running_loop()].waiting) == 1  # "e" waits for room
        model.release.set()
        await first
        return await asyncio.gather(full, over)

    assert asyncio.run(run()) == [[vector_of(t) for t in "abcd"], [vector_of("e")]]
    assert sum(len(call) for call in model.calls) == 6


def test_each_event_loop_has_its_own_queue() -> None:
    model = Model()
    queue = EmbeddingQueue(model, query_texts=0)
    assert asyncio.run(queue.embed(["first loop"])) == [vector_of("first loop")]
    assert asyncio.run(queue.embed(["second loop"])) == [vector_of("second loop")]


def test_the_real_model_gives_each_concurrent_request_the_vectors_it_gives_alone() -> None:
    embedder = MiniLmEmbedder()
    requests = [[f"Maria planted {n} tomato seedlings on the balcony", "ok"] for n in range(6)] + [["what did Maria plant?"]]
    alone = [embedder.embed_sync(texts) for texts in requests]

    async def together() -> list[list[list[float]]]:
        return await asyncio.gather(*(embedder.embed(texts) for texts in requests))

    for got, expected in zip(asyncio.run(together()), alone, strict=True):
        assert len(got) == len(expected)
        for a, b in zip(got, expected, strict=True):
            assert max(abs(x - y) for x, y in zip(a, b, strict=True)) < 1e-4
