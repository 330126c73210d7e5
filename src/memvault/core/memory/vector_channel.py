"""The vector channel of a search, over compact vectors. A vault keeps only each row's binary code
(one bit a dimension) and row number in memory; the codes nearest the query's pick a few hundred
candidates, and their float vectors, read from SQL, give the exact cosine that ranks them. Without
codes in memory (the mirror; a vault over its memory budget) the codes are read in pages."""

from __future__ import annotations

from collections.abc import Sequence

from memvault.core.memory.tables import RowTable, rows_plan
from memvault.core.models import Candidate, MemoryRow, SearchQuery
from memvault.core.ranking import exact_tokens
from memvault.core.sql import Plan, in_batches
from memvault.core.vectors import (
    Coded,
    CodeIndex,
    asymmetric_top,
    binary_code,
    exact_top,
    hamming_nearest,
    similar_pairs,
)

# Three passes: the Hamming distance between codes keeps PRESELECT rows, the float query against
# their codes keeps RESCORE, and those rows' float vectors, read from SQL, rank them exactly.
# On LoCoMo (all five conversations in one vault, 3,069 rows) 0.998 of the exact top 60 are found,
# 0.935 of the top 200 (0.999 and 0.976 rescoring 400, for the same evidence recall with a quarter
# fewer vectors read).
PRESELECT = 2000
RESCORE = 300
# Two messages are one thing said twice when their vectors are this alike and they share their
# numbers, codes and names. Measured with all-MiniLM-L6-v2: rewordings of one sentence 0.94-0.99;
# different facts in the same words 0.95 ("invoice 1237/1238 is paid"), told apart by their tokens.
NEAR_DUPLICATE = 0.9
TWIN_DEPTH = 40


def codes_plan(table: RowTable, width: int, page_rows: int) -> Plan[CodeIndex]:
    """Every stored code of ``width`` bytes, as the in-memory index of a vault, read in pages of
    ``page_rows`` so the rows read never take more memory than the codes kept."""
    index = CodeIndex([], [], width)
    after = 0
    while page := (yield table.codes(width, after, page_rows)):
        index.add([int(r["rid"]) for r in page], [bytes(r["code"]) for r in page])
        after = int(page[-1]["rid"])
    return index


def vector_plan(
    table: RowTable, query: SearchQuery, codes: CodeIndex | None, known: Sequence[MemoryRow], page_rows: int
) -> Plan[list[Candidate]]:
    """The rows nearest the query, best first. Rows in ``known`` (the keyword channel's) are not
    read again; without ``codes`` the stored ones are read ``page_rows`` at a time."""
    vector = query.vector or ()
    code = binary_code(vector)
    if codes is not None and codes.width == len(code):
        coded = codes.nearest(code, PRESELECT)
    else:
        coded = yield from _scan_codes(table, code, page_rows)
    stored: list[tuple[str, bytes]] = []
    for batch in in_batches(asymmetric_top(vector, coded, RESCORE), table.batch):
        stored += [(str(d["id"]), bytes(d["embedding"])) for d in (yield table.vectors_of(batch))]
    ranked = exact_top(vector, [(i, blob) for i, blob in stored if len(blob) == 4 * len(vector)], query.depth)
    rows = {row.id: row for row in known}
    rows.update((row.id, row) for row in (yield from rows_plan(table, "id", [i for i, _ in ranked if i not in rows])))
    return [
        Candidate(row=rows[row_id], channel="vector", rank=rank, score=score)
        for rank, (row_id, score) in enumerate(ranked, start=1)
        if row_id in rows
    ]


def _scan_codes(table: RowTable, code: bytes, page_rows: int) -> Plan[list[Coded]]:
    best: list[Coded] = []
    before: tuple[float, str] | None = None
    read = 0
    while table.vector_scan is None or read < table.vector_scan:
        page = yield table.codes_page(len(code), before, page_rows)
        if not page:
            break
        page_best = hamming_nearest([int(r["rid"]) for r in page], [bytes(r["code"]) for r in page], code, PRESELECT)
        best = sorted(best + page_best)[:PRESELECT]
        before, read = (float(page[-1]["ts_end"]), str(page[-1]["id"])), read + len(page)
        if len(page) < page_rows:
            break
    return best


def twins_plan(table: RowTable, candidates: Sequence[Candidate]) -> Plan[dict[str, str]]:
    """Near-duplicate messages among the candidates (vectors at least ``NEAR_DUPLICATE`` alike and
    the same numbers, codes and names), each mapped to the newest of its group, which stands for
    them all. Only messages a channel ranked within ``TWIN_DEPTH`` are compared."""
    rows = compared_for_twins(candidates)
    if len(rows) < 2:
        return {}
    stored: dict[str, bytes] = {}
    for batch in in_batches(sorted(rows), table.batch):
        stored.update((str(d["id"]), bytes(d["embedding"])) for d in (yield table.embeddings(batch)))
    ids = [i for i in sorted(stored) if len(stored[i]) == len(next(iter(stored.values())))]
    if len(ids) < 2:
        return {}
    return twins_among(rows, ids, similar_pairs([stored[i] for i in ids], len(stored[ids[0]]) // 4, NEAR_DUPLICATE))


def compared_for_twins(candidates: Sequence[Candidate]) -> dict[str, MemoryRow]:
    """The messages a search compares for near-duplicates, by id."""
    return {c.row.id: c.row for c in candidates if c.rank <= TWIN_DEPTH and c.channel != "context" and c.row.kind == "message"}


def twins_among(rows: dict[str, MemoryRow], ids: Sequence[str], pairs: Sequence[tuple[int, int]]) -> dict[str, str]:
    """Each of ``ids`` that has a twin mapped to the newest of its group, given the index pairs
    (into ``ids``) whose vectors are alike; a pair is twins only if it shares its exact tokens."""
    parent = {i: i for i in ids}

    def root(i: str) -> str:
        while parent[i] != i:
            i = parent[i]
        return i

    for a, b in pairs:
        first, second = rows[ids[a]], rows[ids[b]]
        if exact_tokens(first.text) == exact_tokens(second.text):
            parent[root(ids[b])] = root(ids[a])
    joined = {root(i) for i in ids if parent[i] != i}
    if not joined:
        return {}
    groups: dict[str, list[MemoryRow]] = {}
    for i in ids:
        if (top := root(i)) in joined:
            groups.setdefault(top, []).append(rows[i])
    twins: dict[str, str] = {}
    for members in groups.values():
        newest = max(members, key=lambda r: (r.ts_end, r.id))
        twins.update((r.id, newest.id) for r in members if r.id != newest.id)
    return twins
