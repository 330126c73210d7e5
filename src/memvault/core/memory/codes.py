"""A vault's vector codes held in memory (one bit a dimension and a row number per row), which its
vector channel searches first: built on a vault's first search, grown as vectors are stored, and
let go past the memory budget (searches then read the codes from SQL in pages)."""

from __future__ import annotations

from collections.abc import Sequence

from memvault.core.memory.tables import VAULT_TABLE
from memvault.core.memory.vector_channel import codes_plan
from memvault.core.ports import SyncSql
from memvault.core.sql import in_batches, placeholders, run_sync
from memvault.core.vectors import CodeIndex, code_of


class VaultCodes:
    def __init__(self, sql: SyncSql, memory_bytes: int, page_rows: int) -> None:
        self._sql = sql
        self._budget = memory_bytes
        self._page_rows = page_rows
        self._index: CodeIndex | None = None

    def index(self, dimension: int | None) -> CodeIndex | None:
        """The codes in memory, built on first use for vectors of ``dimension``; None when the vault
        holds no vectors or its codes would not fit the budget."""
        if self._index is None:
            if dimension is None:
                return None
            self._fill_missing()
            width = (dimension + 7) // 8
            count = int(self._sql.execute("SELECT COUNT(*) AS n FROM rows WHERE code IS NOT NULL")[0]["n"])
            if count * (8 + width) > self._budget:
                return None
            self._index = run_sync(codes_plan(VAULT_TABLE, width, self._page_rows), self._sql.execute)
        return self._index

    def add(self, row_ids: Sequence[str]) -> None:
        """Add these rows' stored codes, if the index is built (and they are of its width)."""
        if self._index is None or not row_ids:
            return
        rowids: list[int] = []
        codes: list[bytes] = []
        for batch in in_batches(list(dict.fromkeys(row_ids))):
            for r in self._sql.execute(
                f"SELECT rowid AS rid, code FROM rows WHERE code IS NOT NULL AND id IN ({placeholders(len(batch))})", batch
            ):
                if len(bytes(r["code"])) == self._index.width:
                    rowids.append(int(r["rid"]))
                    codes.append(bytes(r["code"]))
        self._index.add(rowids, codes)
        if self._index.memory_bytes > self._budget:
            self._index = None  # grown past the budget: searches read the codes in pages from now on

    def drop(self) -> None:
        """Let go of the codes (rows were deleted, or changed by another process); the next search reads them again."""
        self._index = None

    @property
    def memory_bytes(self) -> int:
        return 0 if self._index is None else self._index.memory_bytes

    def _fill_missing(self) -> None:
        """Codes of vectors stored before codes were (unlogged: the mirror computes its own)."""
        while found := self._sql.execute(
            "SELECT rowid AS rid, embedding FROM rows WHERE code IS NULL AND embedding IS NOT NULL LIMIT 500"
        ):
            for row in found:
                self._sql.execute("UPDATE rows SET code = ? WHERE rowid = ?", (code_of(row["embedding"]), row["rid"]))
