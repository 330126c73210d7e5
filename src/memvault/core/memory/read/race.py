"""A vault raced against its mirror: the first good answer wins. The mirror is asked after a short
head start for the vault (or at once if the vault fails), so a healthy vault is not slowed by a
full mirror scan, and a vault that is down or slow is answered for by the mirror."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from memvault.core.deps import Deps
from memvault.core.memory.assemble import VaultAnswer
from memvault.core.memory.mirror import MirrorStore
from memvault.core.models import SearchQuery

log = logging.getLogger(__name__)


async def race(
    deps: Deps, key_id: str, name: str, query: SearchQuery, metrics: dict[str, Any],
    prepared: Awaitable[None] | None = None,
) -> VaultAnswer | None:
    """The vault ``name``'s candidates for ``query`` from whichever of it and its mirror answers
    well first (None if neither does in time); ``metrics["vaults"][name]`` says which, and when.
    ``prepared`` is the vault's ``prepare_search`` for the query, asked earlier: the vault's search
    follows it, and goes on without it if it failed."""
    vault = deps.vaults.vault(name)
    mirror = MirrorStore(deps.db)
    timings: dict[str, float | None] = {"vault_ms": None, "mirror_ms": None}
    started = time.perf_counter()

    async def from_vault() -> VaultAnswer:
        if prepared is not None:
            try:
                await prepared
            except Exception as exc:  # the search then runs its keyword stage itself
                log.warning("preparing a vault search failed: %s", type(exc).__name__)
        candidates = await vault.search(query)
        timings["vault_ms"] = elapsed_ms(started)
        return VaultAnswer(name, "vault", candidates)

    async def from_mirror() -> VaultAnswer:
        candidates = await mirror.search(key_id, name, query, deps.tuning)
        timings["mirror_ms"] = elapsed_ms(started)
        return VaultAnswer(name, "mirror", candidates)

    winner = await _first_good(
        from_vault, from_mirror, deps.tuning.mirror_head_start_seconds, deps.settings.race_timeout_ms / 1000
    )
    metrics.setdefault("vaults", {})[name] = {**timings, "winner": winner.source if winner else None}
    return winner


async def _first_good(
    primary: Callable[[], Awaitable[VaultAnswer]],
    fallback: Callable[[], Awaitable[VaultAnswer]],
    head_start: float,
    timeout: float,
) -> VaultAnswer | None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    first = asyncio.ensure_future(primary())
    done, _ = await asyncio.wait({first}, timeout=head_start)
    if first in done and first.exception() is None:
        return first.result()
    pending = {first} if first not in done else set()
    pending.add(asyncio.ensure_future(fallback()))
    try:
        while pending:
            done, pending = await asyncio.wait(
                pending, timeout=max(0.0, deadline - loop.time()), return_when=asyncio.FIRST_COMPLETED
            )
            if not done:
                break
            for task in done:
                if task.exception() is None:
                    return task.result()
                log.warning("memory source failed: %s", type(task.exception()).__name__)
        return None
    finally:
        for task in pending:
            task.cancel()


def elapsed_ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)
