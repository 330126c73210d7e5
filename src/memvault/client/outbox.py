"""The agent's own storage for ``LazyMemory``: saves queued until memvault acknowledges them, the
last view of each session, and saves memvault refused for good. It lives in the agent's Durable
Object storage (``ctx.storage.sql``) on Workers and in a SQLite file locally, both behind the
``SyncSql`` port, so a queued save survives the agent's eviction and is sent on its next start.

Nothing here runs at construction: the tables are created on first use."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memvault.core.ports import SyncSql

_TABLES = (
    """CREATE TABLE IF NOT EXISTS memvault_outbox (
        seq INTEGER PRIMARY KEY,
        session TEXT NOT NULL,
        messages TEXT NOT NULL,
        metadata TEXT,
        queued_at REAL NOT NULL
    )""",
    "CREATE TABLE IF NOT EXISTS memvault_views (session TEXT PRIMARY KEY, messages TEXT NOT NULL)",
    """CREATE TABLE IF NOT EXISTS memvault_refused (
        seq INTEGER PRIMARY KEY,
        session TEXT NOT NULL,
        messages TEXT NOT NULL,
        metadata TEXT,
        reason TEXT NOT NULL
    )""",
)


def _session_key(session_id: str | None) -> str:
    # The key's core vault has no session id; an empty session id is never a valid one.
    return session_id or ""


@dataclass(frozen=True)
class QueuedSave:
    seqs: tuple[int, ...]
    session_id: str | None
    messages: tuple[dict[str, Any], ...]
    metadata: dict[str, Any] | None


class Outbox:
    def __init__(self, sql: SyncSql) -> None:
        self._sql = sql
        self._ready = False

    def _tables(self) -> SyncSql:
        if not self._ready:
            for statement in _TABLES:
                self._sql.execute(statement)
            self._ready = True
        return self._sql

    def queue(
        self,
        session_id: str | None,
        messages: Sequence[Mapping[str, Any]],
        metadata: Mapping[str, Any] | None,
        now: float,
        view: Sequence[Mapping[str, Any]],
    ) -> None:
        """Queue a save and keep the session's view, in one transaction."""
        sql = self._tables()
        meta = None if metadata is None else json.dumps(dict(metadata))

        def work() -> None:
            sql.execute(
                "INSERT INTO memvault_outbox (seq, session, messages, metadata, queued_at) "
                "VALUES ((SELECT COALESCE(MAX(seq), 0) + 1 FROM memvault_outbox), ?, ?, ?, ?)",
                (_session_key(session_id), json.dumps(list(messages)), meta, now),
            )
            self._keep_view(session_id, view)

        sql.transaction(work)

    def next_batch(self, max_messages: int) -> QueuedSave | None:
        """The oldest queued saves that go out as one call: consecutive, of one session and one
        metadata object, at most ``max_messages`` messages (the first save whole, however long)."""
        rows = self._tables().execute(
            "SELECT seq, session, messages, metadata FROM memvault_outbox ORDER BY seq LIMIT 100"
        )
        if not rows:
            return None
        first = rows[0]
        seqs: list[int] = []
        messages: list[dict[str, Any]] = []
        for row in rows:
            if (row["session"], row["metadata"]) != (first["session"], first["metadata"]):
                break
            more = json.loads(row["messages"])
            if seqs and len(messages) + len(more) > max_messages:
                break
            seqs.append(int(row["seq"]))
            messages.extend(more)
        return QueuedSave(
            seqs=tuple(seqs),
            session_id=str(first["session"]) or None,
            messages=tuple(messages),
            metadata=None if first["metadata"] is None else json.loads(first["metadata"]),
        )

    def pending_count(self) -> int:
        return int(self._tables().execute("SELECT COUNT(*) AS n FROM memvault_outbox")[0]["n"])

    def pending_messages(self, session_id: str | None) -> list[dict[str, Any]]:
        rows = self._tables().execute(
            "SELECT messages FROM memvault_outbox WHERE session = ? ORDER BY seq", (_session_key(session_id),)
        )
        return [message for row in rows for message in json.loads(row["messages"])]

    def delivered(self, batch: QueuedSave) -> None:
        self._drop(batch.seqs)

    def refused(self, batch: QueuedSave, reason: str) -> None:
        """Set aside saves memvault will never take (bad input, a conflicting id), so those after
        them are not held back; they stay here for the bot's operator to look at."""
        sql = self._tables()

        def work() -> None:
            for seq in batch.seqs:
                sql.execute(
                    "INSERT INTO memvault_refused (seq, session, messages, metadata, reason) "
                    "SELECT seq, session, messages, metadata, ? FROM memvault_outbox WHERE seq = ?",
                    (reason, seq),
                )
            self._drop(batch.seqs)

        sql.transaction(work)

    def _drop(self, seqs: Sequence[int]) -> None:
        for seq in seqs:
            self._tables().execute("DELETE FROM memvault_outbox WHERE seq = ?", (seq,))

    def view(self, session_id: str | None) -> list[dict[str, Any]] | None:
        found = self._tables().execute(
            "SELECT messages FROM memvault_views WHERE session = ?", (_session_key(session_id),)
        )
        return None if not found else list(json.loads(found[0]["messages"]))

    def keep_view(self, session_id: str | None, view: Sequence[Mapping[str, Any]]) -> None:
        self._tables()
        self._keep_view(session_id, view)

    def _keep_view(self, session_id: str | None, view: Sequence[Mapping[str, Any]]) -> None:
        self._sql.execute(
            "INSERT INTO memvault_views (session, messages) VALUES (?, ?) "
            "ON CONFLICT (session) DO UPDATE SET messages = excluded.messages",
            (_session_key(session_id), json.dumps(list(view))),
        )
