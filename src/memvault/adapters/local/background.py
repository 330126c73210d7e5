"""Background work on asyncio: started after a response is sent, drained on shutdown so a clean
stop loses no write."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

log = logging.getLogger(__name__)


class AsyncioBackground:
    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[None]] = set()

    def run(self, work: Callable[[], Awaitable[None]]) -> None:
        async def guarded() -> None:
            try:
                await work()
            except Exception as exc:
                log.error("background task failed: %s", type(exc).__name__)

        task = asyncio.get_running_loop().create_task(guarded())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    @property
    def pending(self) -> int:
        return len(self._tasks)

    async def drain(self) -> None:
        while self._tasks:
            await asyncio.gather(*list(self._tasks))
