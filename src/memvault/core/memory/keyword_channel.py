"""The keyword channel of a search: BM25 over the vault's full-text index, with bounded work.

Ranking by BM25 scores every row that holds any query term, so a term found in a large share of a
big vault's rows (a name, a place, a word of the user's trade) costs a scan of all of them: 200 ms
and more at half a million rows. Each term's rows are first counted, up to a budget (a cheap walk
of its posting list); the rarest terms are kept while their rows together stay within the budget,
and the common ones, which say least about which rows matter, are left to the vector channel. When
even the rarest term is past the budget, its newest rows within the budget are ranked. A vault
within the budget for every query (LoCoMo's conversations, any vault of a few thousand rows) is
searched with every term, as before."""

from __future__ import annotations

from collections.abc import Mapping

from memvault.core.memory.rows import row_from_sql
from memvault.core.memory.tables import RowTable
from memvault.core.models import Candidate, MemoryRow, SearchQuery
from memvault.core.ranking import fts_terms
from memvault.core.sql import Plan, in_batches

MAX_TERMS = 64  # of a long query, the first terms
PROBES_PER_STATEMENT = 40  # two parameters each


def keyword_plan(
    table: RowTable, query: SearchQuery, postings: int, held: Mapping[str, MemoryRow] | None = None
) -> Plan[list[Candidate]]:
    """BM25 over at most ``postings`` rows (``Tuning.keyword_postings``: 8,000 rank in about 20 ms
    on a 2-core machine). With ``held`` (every row of the table, by id, as it is now) only the
    ids found are read."""
    terms = fts_terms(query.text)[:MAX_TERMS]
    if not terms:
        return []
    counts: list[int] = []
    for batch in in_batches(terms, PROBES_PER_STATEMENT):
        [probed] = yield table.postings(batch, postings + 1)
        counts += [int(probed[f"n{i}"]) for i in range(len(batch))]
    kept: list[str] = []
    total = 0
    for count, index in sorted(zip(counts, range(len(terms)), strict=True)):
        if count == 0:
            continue
        if kept and total + count > postings:
            break
        kept.append(terms[index])
        total += count
    if not kept:
        return []
    from_rowid = None
    if total > postings:
        newest = yield table.newest_posting(kept[0], postings - 1)
        from_rowid = int(newest[0]["rid"]) if newest else None
    found = yield table.keyword(" OR ".join(kept), query.depth, from_rowid, ids_only=held is not None)
    return [
        Candidate(row_from_sql(data) if held is None else held[data["id"]], "keyword", rank, -float(data["score"]))
        for rank, data in enumerate(found, start=1)
    ]
