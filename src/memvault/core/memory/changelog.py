"""A vault's change log: the transactional outbox the mirror is derived from.

Every vault mutation appends entries in its own transaction, numbered by a per-vault counter that
never goes back (trimming does not reuse numbers). Entries name what changed, not how it looks:
``rows`` lists row ids and is resolved to the rows' current stored form when read, so the log
never holds a second copy of texts or vectors. The mirror applies entries in order and remembers
the last number it applied; the vault trims what was applied. Each batch read carries the pending
buffer as it is then, with its messages' vectors. A ``usage`` entry holds the counts a write owes
its key's usage ledger, which the mirror's batch applying it adds."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace

from memvault.core.memory.rows import ROW_COLUMNS, row_from_sql
from memvault.core.memory.vault_vectors import buffer_vectors
from memvault.core.models import BufferState, Change, ChangeBatch, MemoryRow, Message, UsageNote
from memvault.core.ports import SyncSql
from memvault.core.sql import in_batches, placeholders
from memvault.core.tokens import estimate_tokens

ROWS, DELETE, BUFFER, CLEAR, USAGE = "rows", "delete", "buffer", "clear", "usage"
# Ids per entry, so one purge of a large vault does not make one huge entry.
IDS_PER_ENTRY = 500


def _counter(sql: SyncSql, key: str) -> int:
    found = sql.execute("SELECT value FROM meta WHERE key = ?", (key,))
    return int(found[0]["value"]) if found else 0


def _set_counter(sql: SyncSql, key: str, value: int) -> None:
    sql.execute(
        "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (key, str(value)),
    )


def log(sql: SyncSql, kind: str, ids: Sequence[str] = ()) -> None:
    """Append an entry (several for many ids). Call inside the mutation's transaction."""
    if kind in (ROWS, DELETE) and not ids:
        return
    groups = [list(group) for group in in_batches(list(dict.fromkeys(ids)), IDS_PER_ENTRY)] or [[]]
    seq = _counter(sql, "log_head")
    for group in groups:
        seq += 1
        sql.execute("INSERT INTO changes (seq, kind, ids) VALUES (?, ?, ?)", (seq, kind, json.dumps(group)))
    _set_counter(sql, "log_head", seq)


def log_usage(sql: SyncSql, note: UsageNote) -> None:
    """Append the usage a write owes (its ``ids`` hold the note). Call inside the write's transaction."""
    seq = _counter(sql, "log_head") + 1
    sql.execute("INSERT INTO changes (seq, kind, ids) VALUES (?, ?, ?)", (seq, USAGE, json.dumps(note.to_dict())))
    _set_counter(sql, "log_head", seq)


def head(sql: SyncSql) -> int:
    return _counter(sql, "log_head")


def floor(sql: SyncSql) -> int:
    """The last entry trimmed: every entry after it is still in the log."""
    return _counter(sql, "log_floor")


def read(sql: SyncSql, after: int, max_entries: int, max_rows: int) -> ChangeBatch:
    """Entries after ``after``, oldest first: as many as fit ``max_entries`` and (but for the first)
    ``max_rows`` resolved rows."""
    entries = sql.execute("SELECT seq, kind, ids FROM changes WHERE seq > ? ORDER BY seq LIMIT ?", (after, max_entries))
    taken: list[tuple[int, str, list[str]]] = []
    notes: dict[int, UsageNote] = {}
    rows_needed = 0
    for entry in entries:
        if entry["kind"] == USAGE:
            notes[int(entry["seq"])] = UsageNote.from_dict(json.loads(entry["ids"]))
            taken.append((int(entry["seq"]), USAGE, []))
            continue
        ids = [str(i) for i in json.loads(entry["ids"])]
        cost = len(ids) if entry["kind"] == ROWS else 0
        if taken and rows_needed + cost > max_rows:
            break
        taken.append((int(entry["seq"]), str(entry["kind"]), ids))
        rows_needed += cost
    current = _rows(sql, [i for _, kind, ids in taken if kind == ROWS for i in ids])
    changes = tuple(
        Change(seq=seq, kind=kind, rows=tuple(current[i] for i in ids if i in current))
        if kind == ROWS
        else Change(seq=seq, kind=kind, usage=notes[seq])
        if kind == USAGE
        else Change(seq=seq, kind=kind, ids=tuple(ids))
        for seq, kind, ids in taken
    )
    buffer = replace(buffer_state(sql), vectors=buffer_vectors(sql))
    return ChangeBatch(changes=changes, buffer=buffer, head=head(sql), floor=floor(sql))


def trim(sql: SyncSql, upto: int) -> None:
    """Drop entries the mirror has applied."""
    if upto <= _counter(sql, "log_floor"):
        return
    sql.execute("DELETE FROM changes WHERE seq <= ?", (upto,))
    _set_counter(sql, "log_floor", min(upto, head(sql)))


def buffer_messages(sql: SyncSql) -> tuple[Message, ...]:
    """The pending messages, in the order they came."""
    return tuple(
        Message(role=r["role"], content=r["content"], timestamp=float(r["ts"]), id=r["id"], model=r["model"],
                metadata=r["metadata"])
        for r in sql.execute("SELECT id, role, content, ts, model, metadata FROM buffer ORDER BY seq")
    )


def buffer_state(sql: SyncSql) -> BufferState:
    messages = buffer_messages(sql)
    return BufferState(
        messages=messages,
        tokens=sum(estimate_tokens(m.content) for m in messages),
        version=_counter(sql, "buffer_version"),
    )


def _rows(sql: SyncSql, ids: Sequence[str]) -> dict[str, MemoryRow]:
    found: dict[str, MemoryRow] = {}
    for batch in in_batches(list(dict.fromkeys(ids))):
        for data in sql.execute(
            f"SELECT {ROW_COLUMNS}, embedding FROM rows WHERE id IN ({placeholders(len(batch))})", batch
        ):
            found[str(data["id"])] = row_from_sql(data)
    return found
