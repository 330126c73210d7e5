"""Brain search. Keyword is the floor: walled BM25 over exact tokens (``bm25``) of fact hooks and
of the passages of long facts' full text, an exact-phrase bonus, recency as the tie-break. Hybrid
adds vector recall beside it (never instead of it), fused by reciprocal rank and reranked by the
facts' signals; vector hits are walled by scope metadata and then re-read through the same SQL
wall. A hit on a passage returns its fact once, with the passage as its snippet."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memvault.core.brain.bm25 import FACTS, PASSAGES, ranked, score_of
from memvault.core.brain.commands import SearchFacts
from memvault.core.brain.fact_vectors import parent_of
from memvault.core.brain.freshness import cached_read
from memvault.core.brain.results import FoundFact, FoundFacts
from memvault.core.brain.rows import FACT_COLUMNS, fact_fields, readable_links, visible, walled_side_rows
from memvault.core.brain.scopes import Credential
from memvault.core.brain.signals import rerank
from memvault.core.deps import Deps
from memvault.core.ranking import reciprocal_rank_fusion
from memvault.core.sql import in_batches, placeholders

log = logging.getLogger("memvault.brain")

# Passages asked for per result wanted: several may belong to one fact.
PASSAGES_PER_RESULT = 3
Row = dict[str, Any]


def _filters(credential: Credential, as_of: float | None, entry_type: str | None) -> tuple[str, list[Any]]:
    where, params = visible(credential, as_of, "m")
    if entry_type is not None:
        where, params = f"{where} AND m.entry_type = ?", [*params, entry_type]
    return where, params


def _best_per_fact(hits: list[tuple[Row, float]]) -> list[tuple[Row, float]]:
    best: dict[str, tuple[Row, float]] = {}
    for row, score in hits:
        if row["id"] not in best or score > best[row["id"]][1]:
            best[row["id"]] = (row, score)
    return sorted(best.values(), key=lambda hit: (-hit[1], -float(hit[0]["updated_at"]), hit[0]["id"]))


async def keyword_search(
    deps: Deps, credential: Credential, query: str, limit: int, as_of: float | None = None,
    entry_type: str | None = None,
) -> list[tuple[Row, float]]:
    """Facts by their hooks and by their passages, each fact once at its best score."""
    where, params = _filters(credential, as_of, entry_type)
    hits = [(hit, score_of(hit)) for hit in await ranked(deps, FACTS, query, where, params, limit)]
    deep = await ranked(deps, PASSAGES, query, where, params, limit * PASSAGES_PER_RESULT)
    if deep:
        scored = [(hit, score_of(hit)) for hit in deep]
        parents = await rows_by_id(deps, credential, [hit["fact_id"] for hit, _ in scored], as_of, entry_type)
        hits += [({**parents[hit["fact_id"]], "snippet": hit["passage"]}, score)
                 for hit, score in scored if hit["fact_id"] in parents]
    return _best_per_fact(hits)[:limit]


async def rows_by_id(deps: Deps, credential: Credential, ids: Sequence[str], as_of: float | None = None,
                     entry_type: str | None = None) -> dict[str, Row]:
    where, params = _filters(credential, as_of, entry_type)
    found: dict[str, Row] = {}
    for group in in_batches(list(ids)):
        sql = f"SELECT {FACT_COLUMNS} FROM memory m WHERE {where} AND m.id IN ({placeholders(len(group))})"
        for row in await deps.db.query(sql, [*params, *group]):
            found[row["id"]] = row
    return found


async def vector_search(
    deps: Deps, credential: Credential, query: str, limit: int, as_of: float | None = None,
    entry_type: str | None = None,
) -> list[tuple[Row, float]]:
    vector = await deps.query_vectors.vector(deps.embedder, query)
    metadata_filter: dict[str, Any] = {"scope": {"$in": credential.ordered_scopes}}
    if entry_type is not None:
        metadata_filter["entry_type"] = {"$eq": entry_type}
    # Several passages of one fact may match, so ask for more than needed. A cosine score belongs
    # to one row and the scope filter is part of the query, so no walled row is ranked.
    matches = await deps.vectors.query(vector, top_k=min(limit * PASSAGES_PER_RESULT, 100),
                                       metadata_filter=metadata_filter)
    passages = await _live_passages(deps, credential, [m.id for m in matches if m.id != parent_of(m.id)])
    rows = await rows_by_id(deps, credential, [parent_of(m.id) for m in matches], as_of, entry_type)
    hits: list[tuple[Row, float]] = []
    for match in matches:
        row = rows.get(parent_of(match.id))
        if row is None or (match.id != row["id"] and match.id not in passages):
            continue
        hits.append(({**row, "snippet": passages[match.id]} if match.id in passages else row, match.score))
    return _best_per_fact(hits)[:limit]


async def _live_passages(deps: Deps, credential: Credential, ids: Sequence[str]) -> dict[str, str]:
    """The passage texts behind vector ids, re-read through the wall: an id the database no longer
    records is dropped."""
    rows = await walled_side_rows(deps, credential, "fact_passages", "t.id, t.text", "id", ids)
    return {row["id"]: row["text"] for row in rows}


@dataclass(frozen=True)
class Hits:
    found: list[tuple[Row, float]]
    degraded: tuple[str, ...] = ()  # channels that failed, so the answer came without them


async def hybrid_search(
    deps: Deps, credential: Credential, query: str, limit: int, as_of: float | None = None,
    entry_type: str | None = None,
) -> Hits:
    """Keyword and vector channels fused by rank. The keyword channel is the floor: when the
    embedder or the vector index fails or times out, its results alone are the answer, marked
    degraded."""
    keyword = await keyword_search(deps, credential, query, limit * 2, as_of, entry_type)
    try:
        vector = await asyncio.wait_for(
            vector_search(deps, credential, query, limit * 2, as_of, entry_type),
            deps.settings.race_timeout_ms / 1000.0,
        )
    except Exception as exc:  # the floor answers; the failure is reported, never raised
        log.warning("brain vector channel failed, answering from keywords: %s", type(exc).__name__)
        return Hits(keyword[:limit], ("vector",))
    rows = {row["id"]: row for row, _ in [*keyword, *vector]}
    # Both lists hold re-checked rows only, so a rank here is a rank among readable rows.
    fused = reciprocal_rank_fusion([[r["id"] for r, _ in keyword], [r["id"] for r, _ in vector]])
    reranked = await rerank(deps, credential, [(rows[row_id], score) for row_id, score in fused if row_id in rows],
                            as_of if as_of is not None else deps.clock())
    return Hits(reranked[:limit])


async def search_facts(deps: Deps, credential: Credential, command: SearchFacts) -> FoundFacts:
    """Walled rows, ranked; a repeated search comes from the read cache until a readable scope is written."""
    return await cached_read(deps, credential, "brain-search", command, FoundFacts,
                             lambda: _search(deps, credential, command))


async def _search(deps: Deps, credential: Credential, command: SearchFacts) -> FoundFacts:
    count = command.limit or deps.settings.search_limit
    kind = None if command.entry_type is None else str(command.entry_type)
    if command.mode == "keyword":
        hits = Hits(await keyword_search(deps, credential, command.query, count, command.as_of, kind))
    else:
        hits = await hybrid_search(deps, credential, command.query, count, command.as_of, kind)
    readable = await readable_links(deps, credential, [row for row, _ in hits.found])
    return FoundFacts(
        mode=command.mode, as_of=command.as_of, degraded=list(hits.degraded),
        results=[FoundFact(**fact_fields(row, readable), score=round(score, 6), snippet=row.get("snippet") or None)
                 for row, score in hits.found])
