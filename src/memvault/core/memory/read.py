"""``search_memory``: the one read path of conversation memory, used by every surface."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

from memvault.core.deps import Deps
from memvault.core.errors import InvalidInput
from memvault.core.memory.assemble import VaultAnswer, rank_items, without_repeats
from memvault.core.memory.metadata import metadata_value
from memvault.core.memory.mirror import MirrorStore
from memvault.core.memory.names import vault_name
from memvault.core.memory.results import MemoryStats, MirrorCounts, VaultCounts
from memvault.core.memory.transfer import chunk_record, export_records, vault_label
from memvault.core.memory.windows import WindowPolicy, fill_in_order
from memvault.core.models import MessagePage, SearchItem, SearchQuery, SearchResult

log = logging.getLogger(__name__)
# Candidates each channel ranks: at 200 the weighted fusion finds list questions' scattered turns
# (LoCoMo multi-hop recall@2000 0.70 -> 0.74 against 60) for a few milliseconds more.
SEARCH_DEPTH = 200


def window_policy(deps: Deps) -> WindowPolicy:
    tuning = deps.tuning
    return WindowPolicy(tuning.working_window_seconds, deps.settings.long_term_window_days, tuning.recency_weight)


async def search_memory(
    deps: Deps,
    key_id: str,
    query: str,
    *,
    limit: int | None = None,
    budget_tokens: int | None = None,
    now: float | None = None,
    session_id: str | None = None,
    exclude: Sequence[str] = (),
) -> SearchResult:
    """The best items of the key's memory (its core vault, and ``session_id``'s vault) for ``query``
    that fit ``budget_tokens``, best first. The budget is the constraint: ``limit`` caps the number
    of items only when the caller gives one. Items that say no more than one of the ``exclude``
    texts (the request's own messages, for the memory router) are left out.

    A repeated search is answered from the read cache while the vaults' generations are those it
    was computed at (``core/read_cache.py``); only an answer every vault gave itself is kept."""
    budget = deps.settings.search_budget_tokens if budget_tokens is None else budget_tokens
    if not query.strip():
        raise InvalidInput("query must not be empty")
    if (limit is not None and limit < 1) or budget < 1:
        raise InvalidInput("limit and budget_tokens must be positive")
    names = [vault_name(key_id, None)]
    if session_id and await _written(deps, key_id, session_id):
        names.append(vault_name(key_id, session_id))

    async def compute() -> SearchResult:
        return await _search(deps, key_id, names, query, limit, budget, now, exclude)

    try:
        generations = await asyncio.gather(*(deps.vaults.vault(name).generation() for name in names))
    except Exception as exc:  # a vault that cannot say its generation is raced against the mirror, uncached
        log.warning("vault generation unknown, searching uncached: %s", type(exc).__name__)
        return await compute()
    parts = [key_id, names, generations, query, limit, budget, now, list(exclude)]
    return await deps.reads.read("memory-search", parts, compute, _encode, _decode, _from_vaults_only)


async def _search(
    deps: Deps, key_id: str, names: list[str], query: str, limit: int | None, budget: int, now: float | None,
    exclude: Sequence[str],
) -> SearchResult:
    now = deps.clock() if now is None else now
    started = time.perf_counter()
    metrics: dict[str, Any] = {}
    vector = await _embed_query(deps, query, metrics)
    search = SearchQuery(text=query, vector=vector, depth=SEARCH_DEPTH)
    answers = await asyncio.gather(*(_race(deps, key_id, name, search, metrics) for name in names))
    ranked = without_repeats(rank_items([a for a in answers if a is not None], query, window_policy(deps), now), exclude)
    items = fill_in_order(ranked, budget, limit)
    metrics["total_ms"] = _ms(started)
    return SearchResult(items=items, tokens=sum(i.tokens for i in items), metrics=metrics)


def _encode(result: SearchResult) -> str:
    # Field by field: ``asdict`` deep-copies every value, a millisecond a search.
    return json.dumps({"items": [vars(item) for item in result.items], "tokens": result.tokens, "metrics": result.metrics})


def _decode(raw: str) -> SearchResult:
    data = json.loads(raw)
    items = [SearchItem(**item) for item in data["items"]]
    return SearchResult(items=items, tokens=data["tokens"], metrics={**data["metrics"], "cached": True})


def _from_vaults_only(result: SearchResult) -> bool:
    # A mirror's answer may lag its vault: it is given once, never kept for the vault's generation.
    vaults = result.metrics.get("vaults", {})
    return bool(vaults) and all(v.get("winner") == "vault" for v in vaults.values()) and "embed_error" not in result.metrics


async def _embed_query(deps: Deps, query: str, metrics: dict[str, Any]) -> tuple[float, ...] | None:
    started = time.perf_counter()
    try:
        vector = await deps.query_vectors.vector(deps.embedder, query)
    except Exception as exc:  # keyword search still answers without the vector channel
        log.warning("query embedding failed: %s", type(exc).__name__)
        metrics["embed_error"] = type(exc).__name__
        return None
    metrics["embed_ms"] = _ms(started)
    return tuple(vector)


async def _race(deps: Deps, key_id: str, name: str, query: SearchQuery, metrics: dict[str, Any]) -> VaultAnswer | None:
    """Ask the vault and the mirror; the first good answer wins. The mirror is asked after a short
    head start for the vault (or at once if the vault fails), so a healthy vault is not slowed by
    a full mirror scan."""
    vault = deps.vaults.vault(name)
    mirror = MirrorStore(deps.db)
    timings: dict[str, float | None] = {"vault_ms": None, "mirror_ms": None}
    started = time.perf_counter()

    async def from_vault() -> VaultAnswer:
        candidates = await vault.search(query)
        timings["vault_ms"] = _ms(started)
        return VaultAnswer(name, "vault", candidates)

    async def from_mirror() -> VaultAnswer:
        candidates = await mirror.search(key_id, name, query, deps.tuning)
        timings["mirror_ms"] = _ms(started)
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


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 2)


async def _written(deps: Deps, key_id: str, session_id: str | None) -> bool:
    """Whether a read must ask the vault: a session vault nothing was written to is not asked, so
    reading any number of new session ids opens and creates nothing."""
    if session_id is None:
        return True
    try:
        return await MirrorStore(deps.db).registered(key_id, vault_name(key_id, session_id))
    except Exception as exc:  # the vault itself still answers
        log.warning("vault registry unavailable: %s", type(exc).__name__)
        return True


async def all_vaults(deps: Deps) -> list[tuple[str, str]]:
    """Every registered (key id, vault name)."""
    return await MirrorStore(deps.db).all_vaults()


async def idle_vaults(deps: Deps, key_id: str, idle_before: float) -> list[str]:
    """Vaults of the key whose pending buffer was last written before ``idle_before``."""
    return await MirrorStore(deps.db).idle_buffers(key_id, idle_before)


async def vaults_of(deps: Deps, key_id: str) -> list[str]:
    """Names of every vault the key has (its core vault always among them)."""
    return await MirrorStore(deps.db).vaults_of(key_id)


# SQLite's LIMIT and OFFSET are 64-bit: larger numbers would fail in the store, not as bad input.
MAX_PAGE = 500
MAX_OFFSET = 2**62


async def read_memory(deps: Deps, key_id: str, session_id: str | None, limit: int, offset: int) -> list[dict[str, Any]]:
    """One page of a vault's messages, newest first: pending messages, then stored ones. Read from
    the vault itself, which is never behind (the mirror may be, for a moment)."""
    if limit < 1 or offset < 0:
        raise InvalidInput("limit must be positive and offset not negative")
    if limit > MAX_PAGE or offset > MAX_OFFSET:
        raise InvalidInput(f"limit must be at most {MAX_PAGE} and offset at most {MAX_OFFSET}")
    if not await _written(deps, key_id, session_id):
        return []
    vault = deps.vaults.vault(vault_name(key_id, session_id))
    # Newest first; messages of the same moment newest-arrived first (the buffer is in arrival order).
    pending = sorted(reversed(await vault.pending()), key=lambda m: -m.timestamp)
    page: list[dict[str, Any]] = [
        {"state": "pending", **m.to_dict(), "metadata": metadata_value(m.metadata)} for m in pending[offset : offset + limit]
    ]
    if len(page) < limit:
        stored_offset = max(0, offset - len(pending))
        rows = await vault.recent_messages(limit - len(page), stored_offset)
        page += [
            {
                "state": "stored",
                "role": r.role,
                "content": r.text,
                "timestamp": r.ts_end,
                "id": r.source_ids[0],
                "model": r.model,
                "metadata": metadata_value(r.metadata),
            }
            for r in rows
        ]
    return page


async def memory_stats(deps: Deps, key_id: str) -> MemoryStats:
    """Counts per vault of the key, from the vault and from the mirror, and the read cache's hits
    and misses."""
    mirror = MirrorStore(deps.db)
    vaults: dict[str, VaultCounts] = {}
    for name in await vaults_of(deps, key_id):
        counts = await mirror.counts(key_id, name)
        vaults[vault_label(name)] = VaultCounts(await deps.vaults.vault(name).stats(), MirrorCounts(**counts))
    # The read cache's hits and misses are this process's (an isolate's on Workers), every key's.
    return MemoryStats(key_id, vaults, deps.cache_stats.to_dict())


async def vault_messages(deps: Deps, name: str, after: int, limit: int) -> MessagePage:
    """One page of a vault's messages in the order it took them, after position ``after``; the
    page that reaches the end holds the pending buffer too. What exports and backups read."""
    return await deps.vaults.vault(name).messages(after, limit)


async def export_memory(deps: Deps, key_id: str, page_size: int = 500) -> AsyncIterator[dict[str, Any]]:
    """Everything the key holds, vault by vault, as ``memvault import`` reads it back
    (``transfer.py``): the chunks, then the messages in the order the vault took them, pending last."""
    for name in await vaults_of(deps, key_id):
        label = vault_label(name)
        after: str | None = None
        while rows := await deps.vaults.vault(name).rows(after, page_size):
            for row in rows:
                if row.kind == "chunk":
                    yield chunk_record(row, label)
            after = rows[-1].id
        position = 0
        while True:
            page = await vault_messages(deps, name, position, page_size)
            for record in export_records(page, label):
                yield record
            if page.complete:
                break
            position = page.after
