"""The mirror: every vault's rows and pending buffer in the shared database (D1 in production),
derived from each vault's change log and never written beside it. It answers searches when a
vault cannot. Every batch that changes a vault's mirror also moves that vault's ``synced_seq``
from the value it read (a compare-and-set the database enforces), so racing syncs cannot apply
entries twice or out of order."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memvault.core.memory.buffer_channel import with_buffer
from memvault.core.memory.names import vault_name
from memvault.core.memory.rows import ROW_COLUMNS, row_from_sql, row_values
from memvault.core.memory.search_plan import search_plan
from memvault.core.memory.tables import mirror_table
from memvault.core.models import BufferState, Candidate, ChangeBatch, MemoryRow, Message, SearchQuery, UsageNote
from memvault.core.ports import Database
from memvault.core.retry import is_transient_storage, retry
from memvault.core.sql import in_batches, placeholders, run_async
from memvault.core.tuning import Tuning
from memvault.core.usage.ledger import day_of, usage_statement
from memvault.core.usage.meter import CallUsage, noted_usage
from memvault.core.vectors import binary_code, pack

Statement = tuple[str, Sequence[Any]]
_UPDATES = ", ".join(f"{c.strip()} = excluded.{c.strip()}" for c in [*ROW_COLUMNS.split(",")[1:], "embedding", "code"])
_OWNER = "key_id = ? AND vault = ?"
VECTORS_PER_STATEMENT = 20  # four parameters each, within D1's 100 a statement


@dataclass(frozen=True)
class SyncState:
    synced_seq: int  # negative while a rebuild holds the vault's mirror
    rebuild_started: float | None


def usage_statements(key_id: str, notes: Sequence[UsageNote]) -> list[Statement]:
    """The ledger statements for the usage vault writes logged: one a UTC day."""
    days: dict[str, tuple[float, CallUsage]] = {}
    for note in notes:
        moment, usage = days.get(day_of(note.at), (note.at, CallUsage()))
        days[day_of(note.at)] = (moment, usage + noted_usage(note))
    return [usage_statement(key_id, moment, None, usage) for moment, usage in days.values()]


class MirrorStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def register(self, key_id: str, vault: str, now: float) -> None:
        """List a vault under its key before anything is written to it, so clear, purge and the
        nightly run always reach it."""
        await retry(
            lambda: self._db.execute(
                "INSERT OR IGNORE INTO vaults (key_id, vault, created_at) VALUES (?, ?, ?)", (key_id, vault, now)
            ),
            is_transient_storage,
        )

    async def sync_state(self, key_id: str, vault: str) -> SyncState:
        found = await self._db.query(f"SELECT synced_seq, rebuild_started FROM vaults WHERE {_OWNER}", (key_id, vault))
        if not found:
            return SyncState(0, None)
        started = found[0]["rebuild_started"]
        return SyncState(int(found[0]["synced_seq"]), None if started is None else float(started))

    def _claim(self, key_id: str, vault: str, expected: int, new: int, now: float) -> list[Statement]:
        """The compare-and-set that opens every mirror batch (it aborts the batch if ``expected``
        is no longer the vault's ``synced_seq``)."""
        started = now if new < 0 else None
        return [
            ("INSERT OR IGNORE INTO vaults (key_id, vault, created_at) VALUES (?, ?, ?)", (key_id, vault, now)),
            (
                f"UPDATE vaults SET synced_seq = ?, claimed_seq = ?, rebuild_started = ? WHERE {_OWNER}",
                (new, expected, started, key_id, vault),
            ),
        ]

    async def apply(self, key_id: str, vault: str, expected: int, batch: ChangeBatch, now: float) -> None:
        """Apply log entries in order, with the buffer, in one batch (the usage they hold to the
        key's ledger too)."""
        statements = self._claim(key_id, vault, expected, batch.changes[-1].seq, now)
        for change in batch.changes:
            if change.kind == "rows":
                statements += [self._upsert(key_id, vault, row) for row in change.rows]
            elif change.kind == "delete":
                statements += self._deletes(key_id, vault, change.ids)
            elif change.kind == "clear":
                statements += self._clear(key_id, vault)
        statements += self._buffer(key_id, vault, batch.buffer, now)
        # The claim above makes the counts land once, with the writes that logged them.
        statements += usage_statements(key_id, [change.usage for change in batch.changes if change.usage is not None])
        await self._write(statements)

    async def begin_rebuild(self, key_id: str, vault: str, expected: int, token: int, now: float) -> None:
        """Claim the vault's mirror for a rebuild (``token`` > 0 names it) and empty it."""
        await self._write([*self._claim(key_id, vault, expected, -token, now), *self._clear(key_id, vault)])

    async def rebuild_rows(self, key_id: str, vault: str, token: int, rows: Sequence[MemoryRow], now: float) -> None:
        claim = self._claim(key_id, vault, -token, -token, now)
        await self._write([*claim, *(self._upsert(key_id, vault, row) for row in rows)])

    async def finish_rebuild(
        self, key_id: str, vault: str, token: int, head: int, buffer: BufferState, now: float,
        usage: Sequence[UsageNote] = (),
    ) -> None:
        """End the rebuild at the log's ``head``, adding the ``usage`` the log held up to it."""
        await self._write([*self._claim(key_id, vault, -token, head, now), *self._buffer(key_id, vault, buffer, now),
                           *usage_statements(key_id, usage)])

    async def _write(self, statements: Sequence[Statement]) -> None:
        # Every batch opens with its compare-and-set claim: one that landed though its answer was
        # lost fails its claim when repeated, which sync_mirror already takes as "moved on".
        await retry(lambda: self._db.batch(statements), is_transient_storage)

    @staticmethod
    def _upsert(key_id: str, vault: str, row: MemoryRow) -> Statement:
        code = None if row.embedding is None else binary_code(row.embedding)
        return (
            f"INSERT INTO mirror_rows (key_id, vault, {ROW_COLUMNS}, embedding, code) VALUES (?, ?, {placeholders(13)}) "
            f"ON CONFLICT (key_id, vault, id) DO UPDATE SET {_UPDATES}",
            (key_id, vault, *row_values(row), code),
        )

    @staticmethod
    def _deletes(key_id: str, vault: str, ids: Sequence[str]) -> list[Statement]:
        return [
            (f"DELETE FROM mirror_rows WHERE {_OWNER} AND id IN ({placeholders(len(batch))})", (key_id, vault, *batch))
            for batch in in_batches(list(ids))
        ]

    @staticmethod
    def _clear(key_id: str, vault: str) -> list[Statement]:
        return [
            (f"DELETE FROM mirror_rows WHERE {_OWNER}", (key_id, vault)),
            (f"DELETE FROM mirror_buffers WHERE {_OWNER}", (key_id, vault)),
            (f"DELETE FROM mirror_buffer_vectors WHERE {_OWNER}", (key_id, vault)),
        ]

    @staticmethod
    def _buffer(key_id: str, vault: str, buffer: BufferState, now: float) -> list[Statement]:
        """The buffer as the vault has it: its messages, then their vectors (those of messages
        that left it deleted, the others written where they changed)."""
        # updated_at moves only when the buffer's content does: the nightly run flushes idle buffers by it.
        statements: list[Statement] = [
            (
                "INSERT INTO mirror_buffers (key_id, vault, messages, tokens, version, updated_at) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (key_id, vault) DO UPDATE SET messages = excluded.messages, tokens = excluded.tokens, "
                "version = excluded.version, updated_at = CASE WHEN excluded.messages = mirror_buffers.messages "
                "THEN mirror_buffers.updated_at ELSE excluded.updated_at END",
                (key_id, vault, json.dumps([m.to_dict() for m in buffer.messages]), buffer.tokens, buffer.version, now),
            ),
            (
                f"DELETE FROM mirror_buffer_vectors WHERE {_OWNER} AND id NOT IN (SELECT value FROM json_each(?))",
                (key_id, vault, json.dumps([v.id for v in buffer.vectors])),
            ),
        ]
        for batch in in_batches(list(buffer.vectors), VECTORS_PER_STATEMENT):
            statements.append((
                "INSERT INTO mirror_buffer_vectors (key_id, vault, id, embedding) VALUES "
                f"{', '.join('(?, ?, ?, ?)' for _ in batch)} ON CONFLICT (key_id, vault, id) DO UPDATE SET "
                "embedding = excluded.embedding WHERE mirror_buffer_vectors.embedding IS NOT excluded.embedding",
                tuple(value for v in batch for value in (key_id, vault, v.id, pack(v.embedding))),
            ))
        return statements

    async def search(self, key_id: str, vault: str, query: SearchQuery, tuning: Tuning) -> list[Candidate]:
        """The vault's search over its mirror: the same plan over its rows, then its pending buffer."""
        found, pending, vectors = await asyncio.gather(
            run_async(search_plan(mirror_table(key_id, vault), query, tuning), self._db.query),
            self.buffer(key_id, vault),
            self.buffer_vectors(key_id, vault),
        )
        return with_buffer(found, pending, vectors, query)

    async def buffer(self, key_id: str, vault: str) -> list[Message]:
        found = await self._db.query(f"SELECT messages FROM mirror_buffers WHERE {_OWNER}", (key_id, vault))
        return [Message.from_dict(m) for m in json.loads(found[0]["messages"])] if found else []

    async def buffer_vectors(self, key_id: str, vault: str) -> dict[str, bytes]:
        """The packed vectors of the mirrored buffer's messages, by message id."""
        found = await self._db.query(f"SELECT id, embedding FROM mirror_buffer_vectors WHERE {_OWNER}", (key_id, vault))
        return {str(r["id"]): bytes(r["embedding"]) for r in found}

    async def idle_buffers(self, key_id: str, idle_before: float) -> list[str]:
        """Vaults of the key whose non-empty buffer was last written before ``idle_before``."""
        found = await self._db.query(
            "SELECT vault FROM mirror_buffers WHERE key_id = ? AND tokens > 0 AND updated_at < ? ORDER BY vault",
            (key_id, idle_before),
        )
        return [r["vault"] for r in found]

    async def vaults_of(self, key_id: str) -> list[str]:
        """Every vault of the key: its core vault, and each vault ever registered for it."""
        found = await self._db.query("SELECT vault FROM vaults WHERE key_id = ?", (key_id,))
        return sorted({vault_name(key_id, None), *(r["vault"] for r in found)})

    async def registered(self, key_id: str, vault: str) -> bool:
        """Whether anything was ever written to the vault (a read of one that was not answers empty
        without creating it)."""
        return bool(await self._db.query(f"SELECT 1 FROM vaults WHERE {_OWNER}", (key_id, vault)))

    async def all_vaults(self) -> list[tuple[str, str]]:
        """Every registered (key id, vault), for startup and nightly syncs."""
        found = await self._db.query("SELECT key_id, vault FROM vaults ORDER BY key_id, vault")
        return [(str(r["key_id"]), str(r["vault"])) for r in found]

    async def rows(self, key_id: str, vault: str, after: str | None, limit: int) -> list[MemoryRow]:
        """The mirrored rows of one vault by id, embeddings included (for comparing with the vault)."""
        found = await self._db.query(
            f"SELECT {ROW_COLUMNS}, embedding FROM mirror_rows WHERE {_OWNER} AND id > ? ORDER BY id LIMIT ?",
            (key_id, vault, after or "", limit),
        )
        return [row_from_sql(d) for d in found]

    async def counts(self, key_id: str, vault: str) -> dict[str, int]:
        rows = await self._db.query(f"SELECT COUNT(*) AS n FROM mirror_rows WHERE {_OWNER}", (key_id, vault))
        buffered = await self._db.query(f"SELECT tokens FROM mirror_buffers WHERE {_OWNER}", (key_id, vault))
        return {"rows": int(rows[0]["n"]), "buffered_tokens": int(buffered[0]["tokens"]) if buffered else 0}
