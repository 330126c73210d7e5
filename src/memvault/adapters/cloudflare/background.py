"""``BackgroundTasks`` over ``ctx.waitUntil``: the Worker stays alive until the work finishes,
after the response has gone out."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import js
from pyodide.ffi import create_once_callable

log = logging.getLogger(__name__)


class WaitUntilTasks:
    def __init__(self, ctx: Any) -> None:
        self._ctx = ctx
        self._tasks: set[asyncio.Future[None]] = set()

    def run(self, work: Callable[[], Awaitable[None]]) -> None:
        task = asyncio.ensure_future(_logged(work))
        # asyncio keeps only weak references to tasks: hold it until it is done.
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

        def settle(resolve: Any, _reject: Any) -> None:
            task.add_done_callback(lambda _: resolve())

        # waitUntil wants a real JS Promise; this one settles when the task does.
        self._ctx.waitUntil(js.Promise.new(create_once_callable(settle)))


async def _logged(work: Callable[[], Awaitable[None]]) -> None:
    # Nobody awaits background work: report its failure here (the type only, never memory content).
    try:
        await work()
    except Exception as exc:
        log.error("background task failed: %s", type(exc).__name__)
