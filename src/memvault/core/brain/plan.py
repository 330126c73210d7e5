"""The statements of one brain write, gathered so they run as one atomic batch, each change with
its ``event_log`` row."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from memvault.core.brain.fact_input import FactInput
from memvault.core.brain.fact_vectors import passage_statements
from memvault.core.brain.results import Decision

Statement = tuple[str, Sequence[Any]]
DEFAULT_IMPORTANCE = 3


def event(at: float, actor: str, action: str, row_id: str, scope: str, source: str, **detail: Any) -> Statement:
    return (
        "INSERT INTO event_log (at, actor, action, memory_id, scope, source, detail) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (at, actor, action, row_id, scope, source, json.dumps(detail, sort_keys=True)),
    )


def event_of_change(at: float, actor: str, action: str, row_id: str, scope: str, source: str,
                    **detail: Any) -> Statement:
    """``event`` for the update just before it, which must have changed its row: if a concurrent
    write got there first (the row was already retired), the actor is NULL, which ``event_log``
    refuses, so the whole batch is rolled back and the write is planned again on what is stored."""
    sql, params = event(at, actor, action, row_id, scope, source, **detail)
    return (sql.replace("VALUES (?, ?, ?,", "VALUES (?, CASE WHEN changes() > 0 THEN ? END, ?,"), params)


class Plan:
    """A write's statements and counts, the facts whose vectors follow it, and the verdict given
    each incoming fact."""

    def __init__(self, now: float, actor: str) -> None:
        self.now, self.actor = now, actor
        self.statements: list[Statement] = []
        self.counts = dict.fromkeys(
            ("written", "unchanged", "updated", "revived", "superseded", "retired", "linked", "blocked"), 0)
        self.touched: list[FactInput] = []
        self.incoming: list[FactInput] = []  # the write's facts, each under the id it is stored by
        self.decisions: list[Decision] = []
        self.vectors: dict[str, list[float]] = {}  # hook vectors the bands computed
        self.scopes: set[str] = set()  # written to, so their cached reads move on

    def _add(self, action: str, sql: str, params: Sequence[Any], row_id: str, scope: str, source: str,
             *, must_change: bool = False, **detail: Any) -> None:
        self.statements.append((sql, params))
        logged = event_of_change if must_change else event
        self.statements.append(logged(self.now, self.actor, action, row_id, scope, source, **detail))
        self.counts[action] += 1
        self.scopes.add(scope)

    def insert(self, item: FactInput, content: str, body_uri: str | None, hook_chars: int) -> None:
        self._add("written",
                  "INSERT INTO memory (id, entry_type, scope, source, source_tier, content, confidence, valid_from, "
                  "body_uri, content_hash, updated_at, created_at, pinned, redacted, norm_hash, importance) "
                  "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                  (item.id, item.entry_type, item.scope, item.source, item.source_tier, content, item.confidence,
                   self._valid_from(item), body_uri, item.content_hash, self.now, self.now, int(item.pinned),
                   ",".join(item.redacted), item.norm_hash, item.importance or DEFAULT_IMPORTANCE),
                  item.id, item.scope, item.source, content_hash=item.content_hash, redacted=list(item.redacted))
        self.statements += passage_statements(item.id, item.content, hook_chars)
        self.touched.append(item)

    def link(self, item: FactInput, other: dict[str, Any], kind: str) -> None:
        self._add("linked",
                  "INSERT OR IGNORE INTO fact_links (fact_id, other_id, kind, created_at) VALUES (?, ?, ?, ?)",
                  (item.id, other["id"], kind, self.now),
                  item.id, item.scope, item.source, other=other["id"], kind=kind)

    def revive(self, item: FactInput) -> None:
        # A retired fact sent again starts a new validity period under the same id.
        self._add("revived",
                  "UPDATE memory SET superseded_at = NULL, superseded_by = NULL, valid_from = ?, updated_at = ?, "
                  "entry_type = ?, source_tier = ?, confidence = ?, pinned = ?, importance = ? WHERE id = ?",
                  (self._valid_from(item), self.now, item.entry_type, item.source_tier, item.confidence,
                   int(item.pinned), item.importance or DEFAULT_IMPORTANCE, item.id),
                  item.id, item.scope, item.source)
        self.touched.append(item)

    def update(self, item: FactInput) -> None:
        self._add("updated",
                  "UPDATE memory SET entry_type = ?, source_tier = ?, confidence = ?, pinned = ?, updated_at = ? "
                  "WHERE id = ?",
                  (item.entry_type, item.source_tier, item.confidence, int(item.pinned), self.now, item.id),
                  item.id, item.scope, item.source)
        self.touched.append(item)

    def retire(self, action: str, row: dict[str, Any], until: float, heir: str | None) -> None:
        self._add(action,
                  "UPDATE memory SET superseded_at = ?, superseded_by = ?, updated_at = ? "
                  "WHERE id = ? AND superseded_at IS NULL",
                  (until, heir, self.now, row["id"]),
                  row["id"], row["scope"], row["source"], must_change=True, superseded_by=heir)

    @property
    def replaced(self) -> bool:
        """Whether the write supersedes or retires facts, whose vectors then have to go."""
        return bool(self.counts["superseded"] or self.counts["retired"])

    def _valid_from(self, item: FactInput) -> float:
        return item.valid_from if item.valid_from is not None else self.now
