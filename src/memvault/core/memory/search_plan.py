"""One search plan over a vault's rows, wherever they live: the vault's own tables (run by a
synchronous executor inside the vault) or the vault's slice of the shared mirror (run by an
asynchronous one). The plan yields SQL statements and receives their rows, so the keyword channel,
the vector channel, the row lookup and the chunk-context expansion are written once."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from memvault.core.memory.fusion import best_chunk_ranks
from memvault.core.memory.rows import ROW_COLUMNS, row_from_sql
from memvault.core.models import Candidate, MemoryRow, SearchQuery
from memvault.core.ranking import exact_tokens, fts_match_expression
from memvault.core.sql import MAX_IN_PARAMS, Plan, Statement, in_batches, placeholders
from memvault.core.vectors import VectorSet, similar_pairs

# The mirror is a fallback: its vector channel covers the newest rows of a vault only, so a large
# vault costs a bounded scan there; its keyword channel still covers every row.
MIRROR_VECTOR_SCAN = 5000
# Two messages are one thing said twice when their vectors are this alike and they share their
# numbers, codes and names. Measured with all-MiniLM-L6-v2: rewordings of one sentence 0.94-0.99;
# different facts in the same words 0.95 ("invoice 1237/1238 is paid"), told apart by their tokens.
NEAR_DUPLICATE = 0.9
TWIN_DEPTH = 40
_COLUMNS = ", ".join(f"r.{column.strip()}" for column in ROW_COLUMNS.split(","))


@dataclass(frozen=True)
class RowTable:
    """Where one vault's rows live, and which of them belong to it."""

    rows: str
    fts: str
    owner: str = ""  # a condition on alias ``r``; empty when the tables hold one vault only
    owner_params: tuple[Any, ...] = ()
    vector_scan: int | None = None  # newest rows read for the vector channel; None reads all

    def where(self, condition: str) -> str:
        return f"{self.owner} AND {condition}" if self.owner else condition

    def keyword(self, expression: str, depth: int) -> Statement:
        # Ties in score are broken by id, so every copy of the same rows ranks them alike.
        return (
            f"SELECT {_COLUMNS}, {self.fts}.rank AS score FROM {self.fts} JOIN {self.rows} r ON r.rowid = {self.fts}.rowid "
            f"WHERE {self.where(f'{self.fts} MATCH ?')} ORDER BY {self.fts}.rank, r.id LIMIT ?",
            (*self.owner_params, expression, depth),
        )

    def vectors(self, dimension: int) -> Statement:
        sql = f"SELECT r.id, r.embedding FROM {self.rows} r WHERE {self.where('length(r.embedding) = ?')}"
        params: tuple[Any, ...] = (*self.owner_params, 4 * dimension)
        if self.vector_scan is not None:
            sql, params = f"{sql} ORDER BY r.ts_end DESC LIMIT ?", (*params, self.vector_scan)
        return sql, params

    def embeddings(self, ids: Sequence[str]) -> Statement:
        condition = f"r.id IN ({placeholders(len(ids))}) AND r.embedding IS NOT NULL"
        return f"SELECT r.id, r.embedding FROM {self.rows} r WHERE {self.where(condition)}", (*self.owner_params, *ids)

    def rows_where(self, column: str, values: Sequence[Any]) -> Statement:
        condition = f"r.{column} IN ({placeholders(len(values))})"
        return f"SELECT {_COLUMNS} FROM {self.rows} r WHERE {self.where(condition)}", (*self.owner_params, *values)

    @property
    def batch(self) -> int:
        return MAX_IN_PARAMS - len(self.owner_params)


VAULT_TABLE = RowTable(rows="rows", fts="rows_fts")


def mirror_table(key_id: str, vault: str) -> RowTable:
    return RowTable(
        rows="mirror_rows",
        fts="mirror_rows_fts",
        owner="r.key_id = ? AND r.vault = ?",
        owner_params=(key_id, vault),
        vector_scan=MIRROR_VECTOR_SCAN,
    )


def vectors_plan(table: RowTable, dimension: int) -> Plan[VectorSet]:
    """The vault's stored vectors of ``dimension`` (rows of another dimension are left out)."""
    found = yield table.vectors(dimension)
    return VectorSet([r["id"] for r in found], [r["embedding"] for r in found], dimension)


def rows_plan(table: RowTable, column: str, values: Sequence[Any]) -> Plan[list[MemoryRow]]:
    """Rows whose ``column`` is one of ``values``, in as many statements as the parameter limit needs."""
    rows: list[MemoryRow] = []
    for batch in in_batches(list(values), table.batch):
        rows += [row_from_sql(data) for data in (yield table.rows_where(column, batch))]
    return rows


def search_plan(table: RowTable, query: SearchQuery, vectors: VectorSet | None = None) -> Plan[list[Candidate]]:
    """Keyword and vector candidates, then the messages of the best chunks found as context.
    ``vectors`` is the vault's in-memory set; without it the stored vectors are read."""
    candidates: list[Candidate] = []
    expression = fts_match_expression(query.text)
    if expression:
        found = yield table.keyword(expression, query.depth)
        candidates += [
            Candidate(row=row_from_sql(data), channel="keyword", rank=rank, score=-float(data["score"]))
            for rank, data in enumerate(found, start=1)
        ]
    if query.vector is not None:
        if vectors is None or vectors.dimension != len(query.vector):
            vectors = yield from vectors_plan(table, len(query.vector))
        hits = vectors.top_k(query.vector, query.depth)
        by_id = {row.id: row for row in (yield from rows_plan(table, "id", [row_id for row_id, _ in hits]))}
        ranked = [(by_id[row_id], score) for row_id, score in hits if row_id in by_id]
        candidates += [
            Candidate(row=row, channel="vector", rank=rank, score=score)
            for rank, (row, score) in enumerate(ranked, start=1)
        ]
    best = best_chunk_ranks(candidates)
    context = yield from rows_plan(table, "parent_id", list(best))
    candidates += [Candidate(row=row, channel="context", rank=best[str(row.parent_id)], score=0.0) for row in context]
    twins = yield from twins_plan(table, candidates)
    return [replace(c, twin_of=twins[c.row.id]) if c.row.id in twins else c for c in candidates]


def twins_plan(table: RowTable, candidates: Sequence[Candidate]) -> Plan[dict[str, str]]:
    """Near-duplicate messages among the candidates (vectors at least ``NEAR_DUPLICATE`` alike and
    the same numbers, codes and names), each mapped to the newest of its group, which stands for
    them all. Only messages a channel ranked within ``TWIN_DEPTH`` are compared."""
    rows = {c.row.id: c.row for c in candidates if c.row.kind == "message" and c.channel != "context" and c.rank <= TWIN_DEPTH}
    if len(rows) < 2:
        return {}
    stored: dict[str, bytes] = {}
    for batch in in_batches(sorted(rows), table.batch):
        stored.update((str(d["id"]), bytes(d["embedding"])) for d in (yield table.embeddings(batch)))
    ids = [i for i in sorted(stored) if len(stored[i]) == len(next(iter(stored.values())))]
    if len(ids) < 2:
        return {}
    parent = {i: i for i in ids}

    def root(i: str) -> str:
        while parent[i] != i:
            i = parent[i]
        return i

    for a, b in similar_pairs([stored[i] for i in ids], len(stored[ids[0]]) // 4, NEAR_DUPLICATE):
        first, second = rows[ids[a]], rows[ids[b]]
        if exact_tokens(first.text) == exact_tokens(second.text):
            parent[root(ids[b])] = root(ids[a])
    groups: dict[str, list[MemoryRow]] = {}
    for i in ids:
        groups.setdefault(root(i), []).append(rows[i])
    twins: dict[str, str] = {}
    for members in groups.values():
        newest = max(members, key=lambda r: (r.ts_end, r.id))
        twins.update((r.id, newest.id) for r in members if r.id != newest.id)
    return twins

