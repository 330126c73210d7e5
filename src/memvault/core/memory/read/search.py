"""``search_memory``: the best of a key's memory for a query within a token budget, from its core
vault and its session's, each raced against its mirror (``race.py``); repeated searches are
answered from the read cache while the vaults are unchanged."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import Sequence
from itertools import islice
from typing import Any

from memvault.core.deps import Deps
from memvault.core.errors import InvalidInput
from memvault.core.memory.assemble import rank_items, without_repeats
from memvault.core.memory.names import vault_name
from memvault.core.memory.read.race import elapsed_ms, race
from memvault.core.memory.read.vaults import written
from memvault.core.memory.windows import WindowPolicy, fill_in_order
from memvault.core.models import SearchItem, SearchQuery, SearchResult
from memvault.core.receipts.model import CUT_SHOWN, cut_entries
from memvault.core.receipts.record import CUT_METRIC
from memvault.core.redaction.recall import RecallGate

log = logging.getLogger(__name__)
# Candidates each channel ranks: at 200 the weighted fusion finds list questions' scattered turns
# (LoCoMo multi-hop recall@2000 0.70 -> 0.74 against 60) for a few milliseconds more.
SEARCH_DEPTH = 200


# When the search began, its query's embedding under way since then, and its metrics so far.
Begun = tuple[float, asyncio.Future[tuple[float, ...]], dict[str, Any]]


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
    # The query is embedded while the vaults are looked up, its model call begun first, before
    # the vaults' work is queued (its vector is shared with any search of the same text, and kept
    # for the next one; answered from the read cache, the search leaves it to go on for the next).
    started, metrics = time.perf_counter(), dict[str, Any]()
    embedding = deps.query_vectors.start(deps.embedder, query)
    names = [vault_name(key_id, None)]
    if session_id and await written(deps, key_id, session_id):
        names.append(vault_name(key_id, session_id))

    async def compute() -> SearchResult:
        return await _search(deps, key_id, names, query, limit, budget, now, exclude, (started, embedding, metrics))

    try:
        generations = await asyncio.gather(*(deps.vaults.vault(name).generation() for name in names))
    except Exception as exc:  # a vault that cannot say its generation is raced against the mirror, uncached
        log.warning("vault generation unknown, searching uncached: %s", type(exc).__name__)
        return await compute()
    parts = [key_id, names, generations, query, limit, budget, now, list(exclude)]
    return await deps.reads.read("memory-search", parts, compute, _encode, _decode, _from_vaults_only, key_id,
                                 later=deps.background)


async def _search(
    deps: Deps, key_id: str, names: list[str], query: str, limit: int | None, budget: int, now: float | None,
    exclude: Sequence[str], begun: Begun,
) -> SearchResult:
    """The search itself, ``begun`` with the query's embedding: each vault runs its keyword stage
    while the embedding finishes, then the rest of its search with the vector."""
    started, embedding, metrics = begun
    now = deps.clock() if now is None else now
    prepared = [asyncio.ensure_future(deps.vaults.vault(name).prepare_search(query, SEARCH_DEPTH)) for name in names]
    try:
        vector = await _query_vector(embedding, started, metrics)
    except BaseException:
        for task in prepared:
            task.cancel()
        raise
    search = SearchQuery(text=query, vector=vector, depth=SEARCH_DEPTH)
    asked = time.perf_counter()
    answers = await asyncio.gather(*(race(deps, key_id, name, search, metrics, ready)
                                     for name, ready in zip(names, prepared, strict=True)))
    metrics["vault_ms"] = elapsed_ms(asked)
    ranking = time.perf_counter()
    gate = RecallGate()
    ranked = without_repeats(rank_items([a for a in answers if a is not None], query, window_policy(deps), now), exclude)
    # Only what is returned passes the gate; what ranked next is named in the receipt by id only.
    items = fill_in_order(gate.items(ranked), budget, limit)
    metrics[CUT_METRIC] = cut_entries(list(islice(ranked, CUT_SHOWN)))
    metrics["rank_ms"] = elapsed_ms(ranking)
    metrics["gate_ms"] = round(gate.ms, 2)
    metrics["redacted"] = gate.changed
    metrics["total_ms"] = elapsed_ms(started)
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


async def _query_vector(
    embedding: asyncio.Future[tuple[float, ...]], started: float, metrics: dict[str, Any]
) -> tuple[float, ...] | None:
    """The query's vector (None when the model failed: the keyword channel answers alone)."""
    try:
        vector = await asyncio.shield(embedding)
    except Exception as exc:  # keyword search still answers without the vector channel
        log.warning("query embedding failed: %s", type(exc).__name__)
        metrics["embed_error"] = type(exc).__name__
        return None
    metrics["embed_ms"] = elapsed_ms(started)
    return tuple(vector)
