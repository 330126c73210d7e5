"""The mirror: a copy of every vault's rows and pending buffer in the shared database (D1 in
production). It answers searches when a vault cannot, and is written only by the write path (``write.py``)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from memvault.core.memory.names import vault_name
from memvault.core.memory.rows import ROW_COLUMNS, row_from_sql, row_values
from memvault.core.memory.search_plan import mirror_table, search_plan
from memvault.core.models import AppendResult, Candidate, ForgetResult, MemoryRow, Message, SearchQuery
from memvault.core.ports import Database
from memvault.core.sql import in_batches, placeholders, run_async
from memvault.core.vectors import pack


class MirrorStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def write(
        self, key_id: str, vault: str, rows: Sequence[MemoryRow], now: float, state: AppendResult | None
    ) -> None:
        """Upsert rows and, given the vault's state, its buffer: an older buffer never replaces a newer one."""
        statements: list[tuple[str, Sequence[Any]]] = [
            ("INSERT OR IGNORE INTO vaults (key_id, vault, created_at) VALUES (?, ?, ?)", (key_id, vault, now))
        ]
        statements += [self._row_statement(key_id, vault, row) for row in rows]
        if state is not None:
            statements.append(self._buffer_statement(key_id, vault, state, now))
        await self._db.batch(statements)

    async def forget(
        self, key_id: str, vault: str, message_ids: Sequence[str], forgotten: ForgetResult, now: float
    ) -> None:
        """Apply a vault's forget in one batch: drop the rows it removed, and also (so a retry after a
        failed mirror write still reaches them) every row of these messages and every chunk holding
        them; then add the chunks it cut again and its buffer."""
        owner = "key_id = ? AND vault = ?"
        statements: list[tuple[str, Sequence[Any]]] = []
        for batch in in_batches(list(forgotten.removed)):
            marks = placeholders(len(batch))
            statements.append((f"DELETE FROM mirror_rows WHERE {owner} AND id IN ({marks})", (key_id, vault, *batch)))
        for batch in in_batches(list(message_ids)):
            marks = placeholders(len(batch))
            messages = tuple(json.dumps([i]) for i in batch)
            holders = (
                "SELECT c.id FROM mirror_rows c, json_each(c.source_ids) AS source "
                f"WHERE c.key_id = ? AND c.vault = ? AND c.kind = 'chunk' AND source.value IN ({marks})"
            )
            statements += [
                (f"DELETE FROM mirror_rows WHERE {owner} AND kind = 'message' AND source_ids IN ({marks})",
                 (key_id, vault, *messages)),
                (f"DELETE FROM mirror_rows WHERE {owner} AND id IN ({holders})", (key_id, vault, key_id, vault, *batch)),
            ]
        statements += [self._row_statement(key_id, vault, row) for row in forgotten.state.rows]
        statements.append(self._buffer_statement(key_id, vault, forgotten.state, now))
        await self._db.batch(statements)

    @staticmethod
    def _row_statement(key_id: str, vault: str, row: MemoryRow) -> tuple[str, Sequence[Any]]:
        return (
            f"INSERT INTO mirror_rows (key_id, vault, {ROW_COLUMNS}, embedding) VALUES (?, ?, {placeholders(12)}) "
            "ON CONFLICT (key_id, vault, id) DO UPDATE SET embedding = COALESCE(excluded.embedding, embedding)",
            (key_id, vault, *row_values(row)),
        )

    @staticmethod
    def _buffer_statement(key_id: str, vault: str, state: AppendResult, now: float) -> tuple[str, Sequence[Any]]:
        return (
            "INSERT INTO mirror_buffers (key_id, vault, messages, tokens, version, updated_at) VALUES (?, ?, ?, ?, ?, ?) "
            "ON CONFLICT (key_id, vault) DO UPDATE SET messages = excluded.messages, tokens = excluded.tokens, "
            "version = excluded.version, updated_at = CASE WHEN excluded.messages = mirror_buffers.messages "
            "THEN mirror_buffers.updated_at ELSE excluded.updated_at END WHERE excluded.version > mirror_buffers.version",
            (
                key_id,
                vault,
                json.dumps([m.to_dict() for m in state.buffer]),
                state.buffered_tokens,
                state.buffer_version,
                now,
            ),
        )

    async def attach_embeddings(self, key_id: str, vault: str, embeddings: dict[str, list[float]]) -> None:
        await self._db.batch(
            [
                (
                    "UPDATE mirror_rows SET embedding = ? WHERE key_id = ? AND vault = ? AND id = ?",
                    (pack(v), key_id, vault, i),
                )
                for i, v in embeddings.items()
            ]
        )

    async def known_ids(self, key_id: str, vault: str, ids: Sequence[str]) -> set[str]:
        known: set[str] = set()
        for batch in in_batches(list(ids)):
            found = await self._db.query(
                f"SELECT id FROM mirror_rows WHERE key_id = ? AND vault = ? AND id IN ({placeholders(len(batch))})",
                (key_id, vault, *batch),
            )
            known.update(r["id"] for r in found)
        return known

    async def search(self, key_id: str, vault: str, query: SearchQuery) -> list[Candidate]:
        return await run_async(search_plan(mirror_table(key_id, vault), query), self._db.query)

    async def buffer(self, key_id: str, vault: str) -> list[Message]:
        found = await self._db.query(
            "SELECT messages FROM mirror_buffers WHERE key_id = ? AND vault = ?", (key_id, vault)
        )
        return [Message.from_dict(m) for m in json.loads(found[0]["messages"])] if found else []

    async def idle_buffers(self, key_id: str, idle_before: float) -> list[str]:
        """Vaults of the key whose non-empty buffer was last written before ``idle_before``."""
        found = await self._db.query(
            "SELECT vault FROM mirror_buffers WHERE key_id = ? AND tokens > 0 AND updated_at < ? ORDER BY vault",
            (key_id, idle_before),
        )
        return [r["vault"] for r in found]

    async def recent_messages(self, key_id: str, vault: str, limit: int, offset: int) -> list[MemoryRow]:
        """Stored messages of one vault, newest first."""
        found = await self._db.query(
            f"SELECT {ROW_COLUMNS} FROM mirror_rows WHERE key_id = ? AND vault = ? AND kind = 'message' "
            "ORDER BY ts_end DESC, id DESC LIMIT ? OFFSET ?",
            (key_id, vault, limit, offset),
        )
        return [row_from_sql(d) for d in found]

    async def vaults_of(self, key_id: str) -> list[str]:
        """Every vault of the key: its core vault, and each vault it has ever written to."""
        found = await self._db.query("SELECT vault FROM vaults WHERE key_id = ?", (key_id,))
        return sorted({vault_name(key_id, None), *(r["vault"] for r in found)})

    async def clear(self, key_id: str, vault: str) -> None:
        await self._db.batch(
            [
                ("DELETE FROM mirror_rows WHERE key_id = ? AND vault = ?", (key_id, vault)),
                ("DELETE FROM mirror_buffers WHERE key_id = ? AND vault = ?", (key_id, vault)),
            ]
        )

    async def delete_older_than(self, key_id: str, vault: str, cutoff: float) -> int:
        return await self._db.execute(
            "DELETE FROM mirror_rows WHERE key_id = ? AND vault = ? AND ts_end < ?", (key_id, vault, cutoff)
        )

    async def counts(self, key_id: str, vault: str) -> dict[str, int]:
        rows = await self._db.query(
            "SELECT COUNT(*) AS n FROM mirror_rows WHERE key_id = ? AND vault = ?", (key_id, vault)
        )
        buffered = await self._db.query(
            "SELECT tokens FROM mirror_buffers WHERE key_id = ? AND vault = ?", (key_id, vault)
        )
        return {"rows": int(rows[0]["n"]), "buffered_tokens": int(buffered[0]["tokens"]) if buffered else 0}
