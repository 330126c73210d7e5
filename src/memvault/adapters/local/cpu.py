"""``CpuWork`` on worker threads: the event loop goes on answering other callers while a large
write passes the secret gate (``core/cpu.py``)."""

from __future__ import annotations

import asyncio
import contextvars
import functools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")

# Two at once: the gate holds the interpreter's lock, so more threads would only queue for it.
CPU_THREADS = 2


class ThreadCpu:
    def __init__(self) -> None:
        self._pool: ThreadPoolExecutor | None = None

    async def run(self, work: Callable[[], T]) -> T:
        if self._pool is None:
            self._pool = ThreadPoolExecutor(CPU_THREADS, thread_name_prefix="memvault-cpu")
        context = contextvars.copy_context()
        return await asyncio.get_running_loop().run_in_executor(self._pool, functools.partial(context.run, work))
