"""Where a vault's rows live (its own tables, or its slice of the shared mirror) and the statements
both search executors run over them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memvault.core.memory.rows import ROW_COLUMNS, row_from_sql
from memvault.core.models import MemoryRow
from memvault.core.sql import MAX_IN_PARAMS, Plan, Statement, in_batches, placeholders

# The mirror is a fallback: its vector channel reads the codes of a vault's newest rows only, so a
# very large vault costs a bounded scan there (in pages); its keyword channel covers every row.
MIRROR_VECTOR_SCAN = 50_000
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

    def keyword(self, expression: str, depth: int, from_rowid: int | None = None, ids_only: bool = False) -> Statement:
        """The best ``depth`` rows for an FTS expression with their scores; ``ids_only`` reads their
        ids alone (for a reader holding the rows)."""
        # Ties in score are broken by id, so every copy of the same rows ranks them alike.
        condition = f"{self.fts} MATCH ?" + ("" if from_rowid is None else f" AND {self.fts}.rowid >= ?")
        columns = "r.id" if ids_only else _COLUMNS
        return (
            f"SELECT {columns}, {self.fts}.rank AS score FROM {self.fts} JOIN {self.rows} r ON r.rowid = {self.fts}.rowid "
            f"WHERE {self.where(condition)} ORDER BY {self.fts}.rank, r.id LIMIT ?",
            (*self.owner_params, expression, *(() if from_rowid is None else (from_rowid,)), depth),
        )

    def postings(self, terms: Sequence[str], cap: int) -> Statement:
        """How many rows hold each term (columns ``n0``, ``n1``, ...), each counted up to ``cap``.
        Counted over the whole keyword index (every vault the table holds): it is the work a
        match costs that they bound."""
        counts = (f"(SELECT count(*) FROM (SELECT rowid FROM {self.fts} WHERE {self.fts} MATCH ? LIMIT ?)) AS n{i}"
                  for i in range(len(terms)))
        return f"SELECT {', '.join(counts)}", tuple(value for term in terms for value in (term, cap))

    def newest_posting(self, term: str, offset: int) -> Statement:
        """The row number of the ``offset``-th newest row holding ``term`` (0 is the newest)."""
        return (
            f"SELECT rowid AS rid FROM {self.fts} WHERE {self.fts} MATCH ? ORDER BY rowid DESC LIMIT 1 OFFSET ?",
            (term, offset),
        )

    def codes(self, width: int, after: int, limit: int) -> Statement:
        """Codes of ``width`` bytes with their row numbers, in row order from after ``after``."""
        return (
            f"SELECT r.rowid AS rid, r.code FROM {self.rows} r WHERE {self.where('length(r.code) = ? AND r.rowid > ?')} "
            "ORDER BY r.rowid LIMIT ?",
            (*self.owner_params, width, after, limit),
        )

    def codes_page(self, width: int, before: tuple[float, str] | None, limit: int) -> Statement:
        """One page of codes, newest rows first, after the (ts_end, id) the last page ended at."""
        condition, params = "length(r.code) = ?", list[Any]([width])
        if before is not None:
            condition += " AND (r.ts_end < ? OR (r.ts_end = ? AND r.id < ?))"
            params += [before[0], before[0], before[1]]
        return (
            f"SELECT r.rowid AS rid, r.code, r.ts_end, r.id FROM {self.rows} r WHERE {self.where(condition)} "
            "ORDER BY r.ts_end DESC, r.id DESC LIMIT ?",
            (*self.owner_params, *params, limit),
        )

    def vectors_of(self, rowids: Sequence[int]) -> Statement:
        """The ids and stored vectors of these rows (their other columns are read for the few kept)."""
        condition = f"r.rowid IN ({placeholders(len(rowids))}) AND r.embedding IS NOT NULL"
        return f"SELECT r.id, r.embedding FROM {self.rows} r WHERE {self.where(condition)}", (*self.owner_params, *rowids)

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


def rows_plan(table: RowTable, column: str, values: Sequence[Any]) -> Plan[list[MemoryRow]]:
    """Rows whose ``column`` is one of ``values``, in as many statements as the parameter limit needs."""
    rows: list[MemoryRow] = []
    for batch in in_batches(list(values), table.batch):
        rows += [row_from_sql(data) for data in (yield table.rows_where(column, batch))]
    return rows
