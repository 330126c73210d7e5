"""Local background tasks finish before shutdown completes, and a failing one does not stop the rest."""

from __future__ import annotations

import asyncio

from memvault.adapters.local.background import AsyncioBackground


async def test_drain_waits_for_every_task_even_ones_added_while_draining() -> None:
    background = AsyncioBackground()
    done: list[str] = []

    async def slow(name: str) -> None:
        await asyncio.sleep(0.05)
        done.append(name)
        if name == "first":
            background.run(lambda: slow("spawned"))

    async def broken() -> None:
        raise RuntimeError("boom")

    background.run(lambda: slow("first"))
    background.run(broken)
    background.run(lambda: slow("second"))
    assert background.pending == 3
    await background.drain()
    assert sorted(done) == ["first", "second", "spawned"] and background.pending == 0
