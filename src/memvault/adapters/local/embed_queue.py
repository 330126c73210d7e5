"""Concurrent requests' texts share model calls.

A model call has a fixed cost (the hand-off to a thread, the session run, the padding) that a
request of five texts pays almost whole. While the model works on one call, the texts that arrive
wait and go together in the next, so eight writers cost a few calls instead of eight. Nothing
waits for company while the model is idle, and a query (a request of one or two texts) never waits
at all: it runs in a call of its own beside whatever bulk call is running, since a search waiting
behind a write's thousands of texts would take seconds."""

from __future__ import annotations

import asyncio
import weakref
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass

Run = Callable[[list[str]], list[list[float]]]
# Texts one call takes from the queue, whole requests only (a larger request goes alone): enough
# to amortise the fixed cost, few enough that a query waiting behind the call is not kept long.
TEXTS_PER_CALL = 256
# Texts that may wait at once; past this a request waits for room before it queues its texts.
WAITING_TEXTS = 8192
# A request this small is a query: it gets a call of its own at once.
QUERY_TEXTS = 2


@dataclass
class _Request:
    texts: list[str]
    answer: asyncio.Future[list[list[float]]]


class _Lane:
    """The queue of one event loop: futures and tasks belong to the loop that made them."""

    def __init__(self) -> None:
        self.waiting: deque[_Request] = deque()
        self.waiting_texts = 0
        self.room = asyncio.Event()
        self.drainer: asyncio.Task[None] | None = None


class EmbeddingQueue:
    """Embeds through ``run`` (blocking; called on a worker thread), one call at a time per event
    loop, each call carrying every request that arrived while the one before it ran. Every request
    gets its own texts' vectors in its own order; a failed call fails every request it carried."""

    def __init__(
        self,
        run: Run,
        *,
        texts_per_call: int = TEXTS_PER_CALL,
        waiting_texts: int = WAITING_TEXTS,
        query_texts: int = QUERY_TEXTS,
    ) -> None:
        self._run = run
        self._query_texts = query_texts
        self._texts_per_call = texts_per_call
        self._waiting_texts = waiting_texts
        self._lanes: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _Lane] = weakref.WeakKeyDictionary()

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        if len(texts) <= self._query_texts:
            return _checked(await asyncio.to_thread(self._run, list(texts)), len(texts))
        loop = asyncio.get_running_loop()
        lane = self._lanes.get(loop)
        if lane is None:
            lane = self._lanes[loop] = _Lane()
        while lane.waiting and lane.waiting_texts + len(texts) > self._waiting_texts:
            lane.room.clear()
            await lane.room.wait()
        request = _Request(list(texts), loop.create_future())
        lane.waiting.append(request)
        lane.waiting_texts += len(request.texts)
        if lane.drainer is None:
            lane.drainer = loop.create_task(self._drain(lane))
        try:
            return await request.answer
        except asyncio.CancelledError:
            if request in lane.waiting:  # still queued: its texts are never embedded
                lane.waiting.remove(request)
                lane.waiting_texts -= len(request.texts)
            raise

    async def _drain(self, lane: _Lane) -> None:
        try:
            while lane.waiting:
                taken = self._take(lane)
                lane.room.set()
                await self._call(taken)
        finally:
            lane.drainer = None
            for request in lane.waiting:  # the loop is closing under the queue
                if not request.answer.done():
                    request.answer.cancel()

    def _take(self, lane: _Lane) -> list[_Request]:
        taken = [lane.waiting.popleft()]
        count = len(taken[0].texts)
        left: deque[_Request] = deque()
        while lane.waiting:
            request = lane.waiting.popleft()
            size = len(request.texts)
            if count + size <= self._texts_per_call:
                taken.append(request)
                count += size
            else:
                left.append(request)
        lane.waiting = left
        lane.waiting_texts -= count
        return taken

    async def _call(self, taken: list[_Request]) -> None:
        texts = [text for request in taken for text in request.texts]
        try:
            vectors = _checked(await asyncio.to_thread(self._run, texts), len(texts))
        except Exception as exc:
            for request in taken:
                if not request.answer.done():
                    request.answer.set_exception(exc)
            return
        except BaseException:
            for request in taken:
                request.answer.cancel()
            raise
        start = 0
        for request in taken:
            end = start + len(request.texts)
            if not request.answer.done():  # its caller may have given up waiting
                request.answer.set_result(vectors[start:end])
            start = end


def _checked(vectors: list[list[float]], count: int) -> list[list[float]]:
    if len(vectors) != count:
        raise RuntimeError(f"the model returned {len(vectors)} vectors for {count} texts")
    return vectors
