"""One search plan over a vault's rows, wherever they live: the vault's own tables (run by a
synchronous executor inside the vault) or the vault's slice of the shared mirror (run by an
asynchronous one). The plan yields SQL statements and receives their rows, so the keyword channel,
the vector channel, the row lookup and the chunk-context expansion are written once.

A search is two stages: the keyword channel, which needs only the query's text, and the rest,
which needs the query's vector too. A vault can run the first while the query is still being
embedded (``VaultStore.prepare_search``) and hand its candidates to the second."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from memvault.core.memory.fusion import best_chunk_ranks
from memvault.core.memory.keyword_channel import keyword_plan
from memvault.core.memory.resident import ResidentSet
from memvault.core.memory.tables import RowTable, rows_plan
from memvault.core.memory.vector_channel import twins_plan, vector_plan
from memvault.core.models import Candidate, SearchQuery
from memvault.core.sql import Plan
from memvault.core.tuning import Tuning
from memvault.core.vectors import CodeIndex


def search_plan(
    table: RowTable, query: SearchQuery, tuning: Tuning, codes: CodeIndex | None = None,
    resident: ResidentSet | None = None,
) -> Plan[list[Candidate]]:
    """Keyword and vector candidates, then the messages of the best chunks found as context, with
    near-duplicates marked. ``codes`` is the vault's in-memory index; without it codes are read."""
    keyword = yield from keyword_plan(table, query, tuning.keyword_postings, None if resident is None else resident.rows)
    return (yield from after_keywords_plan(table, query, tuning, keyword, codes, resident))


def after_keywords_plan(
    table: RowTable, query: SearchQuery, tuning: Tuning, keyword: Sequence[Candidate], codes: CodeIndex | None = None,
    resident: ResidentSet | None = None,
) -> Plan[list[Candidate]]:
    """The search's second stage, given its keyword candidates (``keyword_plan``'s for the same
    query text and depth, over the same rows). With ``resident`` (the vault's rows held in
    memory) it reads nothing."""
    candidates = list(keyword)
    if query.vector is not None:
        if resident is not None:
            candidates += resident.vector_candidates(query)
        else:
            known = [c.row for c in candidates]
            candidates += yield from vector_plan(table, query, codes, known, tuning.code_page_rows)
    best = best_chunk_ranks(candidates)
    context = resident.children(best) if resident is not None else (yield from rows_plan(table, "parent_id", list(best)))
    candidates += [Candidate(row=row, channel="context", rank=best[str(row.parent_id)], score=0.0) for row in context]
    twins = resident.twins(candidates) if resident is not None else (yield from twins_plan(table, candidates))
    if not twins:
        return candidates
    return [replace(c, twin_of=twins[c.row.id]) if c.row.id in twins else c for c in candidates]
