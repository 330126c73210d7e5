"""The brain's side of a joint recall: the pinned core facts a grant may read, and the facts
relevant to the query. Both channels of the brain's hybrid search run (walled BM25 and vectors,
each re-read through the SQL wall), and a fact counts as relevant only when its meaning is close to
the query (``Tuning.answer_fact_similarity``), or closer than ``Tuning.answer_keyword_similarity``
while it also shares the query's words: a brain of unrelated facts then adds nothing and spends no
budget. Superseded rows are never read (or, with ``as_of``, rows as they stood then)."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any

from memvault.core.brain.recall_gate import gated_texts
from memvault.core.brain.rows import FACT_COLUMNS, visible
from memvault.core.brain.scopes import Credential
from memvault.core.brain.search import keyword_search, vector_search
from memvault.core.deps import Deps
from memvault.core.ranking import reciprocal_rank_fusion
from memvault.core.vectors import cosine

log = logging.getLogger("memvault.answers")
Row = dict[str, Any]
# Facts each channel proposes: a grant's relevant facts are a handful, never a page.
CANDIDATES = 20
# Pinned facts read at most: core facts are few by design; more would not fit any budget.
PINNED_LIMIT = 50
# With the vector channel down, the best keyword hits stand in for the relevant facts.
KEYWORD_ONLY = 3


@dataclass(frozen=True)
class FactCandidates:
    pinned: list[Row]
    relevant: list[Row]  # best first
    degraded: tuple[str, ...] = ()


def gated(found: FactCandidates) -> tuple[FactCandidates, set[str]]:
    """``found`` as it may leave the brain: each fact's content and matched passage through the
    secret gate at recall (the brain's own rule for its search and recall), and the ids of the
    facts it changed. A fact stored before a rule existed is injected redacted, never as stored."""
    changed: set[str] = set()

    def through_gate(row: Row) -> Row:
        texts = gated_texts(str(row["content"]), row.get("snippet"))
        if texts is None:
            return row
        changed.add(str(row["id"]))
        content, snippet, _ = texts
        return {**row, "content": content, "snippet": snippet}

    pinned, relevant = [through_gate(row) for row in found.pinned], [through_gate(row) for row in found.relevant]
    return FactCandidates(pinned, relevant, found.degraded), changed


def fact_text(row: Row) -> str:
    """What a fact says in an answer: its content, and the passage of its body that matched."""
    snippet = row.get("snippet")
    return f"{row['content']} … {snippet}" if snippet else str(row["content"])


async def fact_candidates(deps: Deps, credential: Credential, query: str, as_of: float | None) -> FactCandidates:
    pinned_rows, keyword, vector = await asyncio.gather(
        _pinned(deps, credential, as_of),
        keyword_search(deps, credential, query, CANDIDATES, as_of),
        _vector_hits(deps, credential, query, as_of),
    )
    pinned_ids = {row["id"] for row in pinned_rows}
    keyword = [(row, score) for row, score in keyword if row["id"] not in pinned_ids]
    if vector is None:
        return FactCandidates(pinned_rows, [row for row, _ in keyword[:KEYWORD_ONLY]], ("vector",))
    vector = [(row, score) for row, score in vector if row["id"] not in pinned_ids]
    if as_of is not None:
        vector = await _with_past_versions(deps, query, keyword, vector)
    return FactCandidates(pinned_rows, _relevant(deps, keyword, vector))


def _relevant(deps: Deps, keyword: list[tuple[Row, float]], vector: list[tuple[Row, float]]) -> list[Row]:
    similarity = {row["id"]: score for row, score in vector}
    worded = {row["id"] for row, _ in keyword}
    strong, weak = deps.tuning.answer_fact_similarity, deps.tuning.answer_keyword_similarity

    def admitted(fact_id: str) -> bool:
        close = similarity.get(fact_id, 0.0)
        return close >= strong or (fact_id in worded and close >= weak)

    rows = {row["id"]: row for row, _ in [*vector, *keyword]}  # a keyword hit keeps its matching passage
    fused = reciprocal_rank_fusion([[r["id"] for r, _ in keyword if admitted(r["id"])],
                                    [r["id"] for r, _ in vector if admitted(r["id"])]])
    return [rows[fact_id] for fact_id, _ in fused]


async def _with_past_versions(deps: Deps, query: str, keyword: list[tuple[Row, float]],
                              vector: list[tuple[Row, float]]) -> list[tuple[Row, float]]:
    """At a past moment the versions then current may since have been superseded, and a superseded
    version's vectors leave the index: the keyword hits the vector channel did not see are
    compared with the query here, in one embedding call."""
    seen = {row["id"] for row, _ in vector}
    unseen = [row for row, _ in keyword if row["id"] not in seen]
    if not unseen:
        return vector
    asked = await deps.query_vectors.vector(deps.embedder, query)
    embedded = await deps.embedder.embed([fact_text(row) for row in unseen])
    return [*vector, *((row, cosine(asked, found)) for row, found in zip(unseen, embedded, strict=True))]


async def _pinned(deps: Deps, credential: Credential, as_of: float | None) -> list[Row]:
    where, params = visible(credential, as_of, "m")
    return await deps.db.query(
        f"SELECT {FACT_COLUMNS} FROM memory m WHERE {where} AND m.pinned = 1"
        f" ORDER BY m.importance DESC, m.updated_at DESC, m.id LIMIT {PINNED_LIMIT}",
        params,
    )


async def _vector_hits(deps: Deps, credential: Credential, query: str, as_of: float | None) -> list[tuple[Row, float]] | None:
    """The vector channel's walled hits with their cosine; None when it failed or ran late (the
    keyword channel then answers alone)."""
    try:
        return await asyncio.wait_for(vector_search(deps, credential, query, CANDIDATES, as_of),
                                      deps.settings.race_timeout_ms / 1000.0)
    except Exception as exc:  # the keyword channel still answers
        log.warning("brain vector channel failed in a joint recall: %s", type(exc).__name__)
        return None
