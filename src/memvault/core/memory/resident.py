"""A vault's rows held in memory for its searches: every row's search columns and its vector, so
the part of a search that waits for the query's vector (exact scores over every vector, the rows
of the best, their chunks' messages, near-duplicates) reads nothing from SQL.

The copy follows the vault's change log, as the mirror does: before a search it applies the
entries written since the head it last saw (rows re-read in their current stored form, deletions,
clears), so a row forgotten or replaced is never answered from memory, whoever wrote the change
(this vault, or another process writing its file). A vault whose rows do not fit its memory
budget is not held; its searches read rows from SQL as before."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from memvault.core.memory import changelog
from memvault.core.memory.rows import ROW_COLUMNS, row_from_sql
from memvault.core.memory.vector_channel import NEAR_DUPLICATE, compared_for_twins, twins_among
from memvault.core.models import Candidate, MemoryRow, SearchQuery
from memvault.core.ports import SyncSql
from memvault.core.sql import Row, in_batches, placeholders
from memvault.core.vectors import VectorSlots

# Rows read into memory a search (in its keyword stage, while the query is embedded): about 25 ms
# of work on a 2-core machine, so a vault of thousands of rows is read over its first searches.
LOAD_ROWS = 500
# What a row costs beside its text and vector: the row object, its other strings and the maps over
# it (tracemalloc over the 472 rows of a LoCoMo conversation held: 1,073 bytes a row).
ROW_BYTES = 1100


class ResidentSet:
    """The rows (without vectors) by id, their ids by chunk, and their unit vectors."""

    def __init__(self, dimension: int | None) -> None:
        self.rows: dict[str, MemoryRow] = {}
        self._children: dict[str, set[str]] = {}
        self.vectors = None if dimension is None else VectorSlots(dimension)
        self._text_bytes = 0

    @property
    def memory_bytes(self) -> int:
        vectors = 0 if self.vectors is None else self.vectors.memory_bytes
        return self._text_bytes + ROW_BYTES * len(self.rows) + vectors

    def put(self, found: Sequence[Row]) -> None:
        """Hold these SQL rows (``ROW_COLUMNS`` and the packed vector as ``vector``)."""
        rows = [row_from_sql(data) for data in found]
        self.remove([row.id for row in rows])
        for row in rows:
            self.rows[row.id] = row
            self._text_bytes += len(row.text)
            if row.parent_id is not None:
                self._children.setdefault(row.parent_id, set()).add(row.id)
        if self.vectors is not None:
            self.vectors.put([(str(data["id"]), bytes(data["vector"])) for data in found if data["vector"] is not None])

    def remove(self, ids: Iterable[str]) -> None:
        gone = [row for row in (self.rows.pop(i, None) for i in ids) if row is not None]
        for row in gone:
            self._text_bytes -= len(row.text)
            if row.parent_id is not None:
                siblings = self._children.get(row.parent_id)
                if siblings is not None:
                    siblings.discard(row.id)
                    if not siblings:
                        del self._children[row.parent_id]
        if self.vectors is not None:
            self.vectors.remove([row.id for row in gone])

    def vector_candidates(self, query: SearchQuery) -> list[Candidate]:
        """The ``depth`` rows nearest the query's vector, best first (``vector_plan``'s answer,
        scored exactly over every vector rather than over the codes' preselection)."""
        if query.vector is None or self.vectors is None:
            return []
        ranked = self.vectors.top(query.vector, query.depth)
        return [Candidate(self.rows[i], "vector", rank, score) for rank, (i, score) in enumerate(ranked, start=1)]

    def twins(self, candidates: Sequence[Candidate]) -> dict[str, str]:
        """``twins_plan``'s answer, from the vectors held."""
        rows = compared_for_twins(candidates)
        if len(rows) < 2 or self.vectors is None:
            return {}
        ids, pairs = self.vectors.similar_pairs(list(rows), NEAR_DUPLICATE)
        return twins_among(rows, ids, pairs) if pairs else {}

    def children(self, parents: Iterable[str]) -> list[MemoryRow]:
        """The rows of these chunks (``rows_plan`` over ``parent_id``)."""
        return [self.rows[i] for parent in parents for i in sorted(self._children.get(parent, ()))]


@dataclass
class _Loading:
    """A copy being read in pages: the rows so far, the last row number read, and the log's head
    when the reading began (what changed since is re-read once the last page is in)."""

    held: ResidentSet
    after: int
    began: int


class ResidentRows:
    """One vault's ``ResidentSet``, kept at its change log's head within ``budget`` bytes. It is
    read ``LOAD_ROWS`` rows a search, so opening a large vault costs no single search much;
    searches read from SQL until the whole copy is in."""

    def __init__(self, sql: SyncSql, budget: int) -> None:
        self._sql = sql
        self._budget = budget
        self._held: ResidentSet | None = None
        self._head: int | None = None  # the log's head the held rows (or the verdict "too big") are at
        self._loading: _Loading | None = None
        self._dimension: int | None = None

    @property
    def memory_bytes(self) -> int:
        return (0 if self._held is None else self._held.memory_bytes) + (
            0 if self._loading is None else self._loading.held.memory_bytes)

    def drop(self) -> None:
        self._held, self._head, self._loading = None, None, None

    def current(self, dimension: int | None, load: bool = True, head: int | None = None) -> ResidentSet | None:
        """The vault's rows as its log's head (``head``, read when not given) says they are now;
        None while they are being read (``load``: read one more page now) or when they do not fit."""
        head = changelog.head(self._sql) if head is None else head
        if dimension != self._dimension:
            self.drop()
            self._dimension = dimension
        if self._head is None and self._loading is None:
            self._loading = _Loading(ResidentSet(dimension), -1, head)
        if self._loading is not None:
            if load:
                self._read_page(head)
            return self._held if self._loading is None else None
        if self._head == head:
            return self._held
        changes = None if self._head is None else self._since(self._head, head)
        if changes is None or (self._held is None and changes[0]):
            # The log cannot say what changed, or rows went from a copy too big: read it again.
            self.drop()
            return self.current(dimension, load, head)
        if self._held is not None:
            self._apply(self._held, changes[1])
            if self._held.memory_bytes > self._budget:
                self._held = None
        self._head = head
        return self._held

    def _read_page(self, head: int) -> None:
        loading = self._loading
        assert loading is not None
        page = self._sql.execute(
            f"SELECT rowid AS rid, {ROW_COLUMNS}, embedding AS vector FROM rows WHERE rowid > ? ORDER BY rowid LIMIT ?",
            (loading.after, LOAD_ROWS),
        )
        loading.held.put(page)
        if loading.held.memory_bytes > self._budget:
            self._loading, self._held, self._head = None, None, head
            return
        if len(page) == LOAD_ROWS:
            loading.after = int(page[-1]["rid"])
            return
        self._loading = None
        changes = self._since(loading.began, head)
        if changes is None:
            self._loading = _Loading(ResidentSet(self._dimension), -1, head)
            return
        self._apply(loading.held, changes[1])
        fits = loading.held.memory_bytes <= self._budget
        self._held, self._head = (loading.held if fits else None), head

    def _since(self, after: int, head: int) -> tuple[bool, set[str]] | None:
        """Whether rows were deleted since ``after``, and the ids of rows written since; None when
        the log no longer holds every entry since (trimmed), or went back (the file was replaced)."""
        if head < after or changelog.floor(self._sql) > after:
            return None
        shrank, written = False, set[str]()
        for entry in self._sql.execute("SELECT kind, ids FROM changes WHERE seq > ? ORDER BY seq", (after,)):
            if entry["kind"] == changelog.CLEAR:
                return None
            if entry["kind"] == changelog.DELETE:
                shrank = True
                written.update(json.loads(entry["ids"]))  # re-read: absent now means removed
            elif entry["kind"] == changelog.ROWS:
                written.update(json.loads(entry["ids"]))
        return shrank, written

    def _apply(self, held: ResidentSet, ids: set[str]) -> None:
        found: list[Row] = []
        for batch in in_batches(sorted(ids)):
            found += self._sql.execute(
                f"SELECT {ROW_COLUMNS}, embedding AS vector FROM rows WHERE id IN ({placeholders(len(batch))})", batch)
        present = {str(data["id"]) for data in found}
        held.remove([i for i in ids if i not in present])
        held.put(found)
