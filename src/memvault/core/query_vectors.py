"""Vectors of recent queries, kept per process (per isolate on Workers): a query asked again is
not embedded again, and requests asking the same query at once share one embedding. Entries are
keyed by a digest of the model and the text, so no query text is held here."""

from __future__ import annotations

import asyncio
import hashlib
from collections import OrderedDict

from memvault.core.ports import Embedder

QUERIES_KEPT = 512  # 384-d vectors as Python floats: about 12 KB each


class QueryVectors:
    def __init__(self, size: int = QUERIES_KEPT) -> None:
        self._size = size
        self._done: OrderedDict[bytes, tuple[float, ...]] = OrderedDict()
        self._running: dict[bytes, asyncio.Future[tuple[float, ...]]] = {}

    async def vector(self, embedder: Embedder, text: str) -> tuple[float, ...]:
        return await asyncio.shield(self.start(embedder, text))

    def start(self, embedder: Embedder, text: str) -> asyncio.Future[tuple[float, ...]]:
        """The vector of ``text`` as a future shared with every other asker: done at once when it is
        kept, else the embedding under way for it, else one begun now, whose task reaches the model
        at the loop's next turn, ahead of any work queued after this call. Never cancel it (shield
        it): an asker that gives up leaves it to go on for the next."""
        key = hashlib.sha256(f"{embedder.model_id}\n{text}".encode()).digest()
        loop = asyncio.get_running_loop()
        if key in self._done:
            self._done.move_to_end(key)
            kept: asyncio.Future[tuple[float, ...]] = loop.create_future()
            kept.set_result(self._done[key])
            return kept
        running = self._running.get(key)
        if running is not None and running.get_loop() is loop:
            return running
        task = asyncio.ensure_future(self._embed(embedder, text, key))
        # A failure no asker waited for (they all gave up) is not reported as never retrieved.
        task.add_done_callback(lambda done: done.cancelled() or done.exception())
        self._running[key] = task
        return task

    async def _embed(self, embedder: Embedder, text: str, key: bytes) -> tuple[float, ...]:
        try:
            [vector] = await embedder.embed([text])
            found = tuple(vector)
            self._done[key] = found
            while len(self._done) > self._size:
                self._done.popitem(last=False)
            return found
        finally:
            self._running.pop(key, None)

    def clear(self) -> None:
        self._done.clear()
