"""Forgetting messages inside one vault, within the caller's transaction.

A message lives in three places besides its own row: the pending buffer, the chunk that holds its
text, and the overlap a later chunk (or the next cut) carried from that chunk's tail. Each is
removed: the message row and buffer entry are deleted, a chunk holding the message is cut again
from its remaining messages (or dropped when none remain), and an overlap that quotes the message
is cut off. Re-cut chunks are new rows, so they get new embeddings and FTS entries."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from memvault.core.memory.rows import ROW_COLUMNS, chunk_row, insert_row, row_from_sql
from memvault.core.models import MemoryRow, Message
from memvault.core.passages import split_sentences
from memvault.core.ports import SyncSql
from memvault.core.sql import in_batches, placeholders


@dataclass(frozen=True)
class Forgotten:
    forgotten: tuple[str, ...]  # message ids found, in stored rows or in the buffer
    removed: tuple[str, ...]  # row ids deleted: the messages and the chunks cut again
    created: tuple[MemoryRow, ...]  # the chunks cut again without them
    moved: tuple[str, ...] = ()  # rows of remaining messages, now children of a chunk cut again


def forget_messages(sql: SyncSql, ids: Sequence[str], carry: str) -> tuple[Forgotten, str]:
    """Forget the messages ``ids``; ``carry`` is the overlap waiting for the next cut. Returns what
    was done and the carry to keep."""
    asked = list(dict.fromkeys(ids))
    # An id that repeated a stored text names that message: forgetting it forgets the text.
    aliases: dict[str, str] = {}
    for batch in in_batches(asked):
        for entry in sql.execute(
            f"SELECT message_id, canonical FROM aliases WHERE message_id IN ({placeholders(len(batch))})", batch
        ):
            aliases[str(entry["message_id"])] = str(entry["canonical"])
    wanted = list(dict.fromkeys([*asked, *aliases.values()]))
    messages = _select(sql, "message_id", wanted, "kind = 'message'")
    pending = _select_buffer(sql, wanted)
    texts = [row.text for row in messages] + [str(entry["content"]) for entry in pending]
    found = {row.source_ids[0] for row in messages} | {str(entry["id"]) for entry in pending}
    if not found:
        return Forgotten((), (), ()), carry
    for batch in in_batches(sorted(found)):
        sql.execute(f"DELETE FROM aliases WHERE canonical IN ({placeholders(len(batch))})", batch)
    found |= {alias for alias, canonical in aliases.items() if canonical in found}
    holders = _chunks_holding(sql, sorted(found))
    followers = [row for row in _chunks_after(sql, holders) if row.id not in {h.id for h in holders}]
    removed = [row.id for row in messages]
    created: list[MemoryRow] = []
    moved: list[str] = []
    for batch in in_batches([row.id for row in messages]):
        sql.execute(f"DELETE FROM rows WHERE id IN ({placeholders(len(batch))})", batch)
    for batch in in_batches(sorted(found)):
        sql.execute(f"DELETE FROM buffer WHERE id IN ({placeholders(len(batch))})", batch)
    for chunk, prefix in holders_with_carry(sql, holders):
        kept_prefix = "" if _quotes(prefix, texts) else prefix
        remaining = [m for m in _messages_of(sql, chunk) if m.id not in found]
        body = "\n".join(m.content for m in remaining)
        text = f"{kept_prefix}\n{body}" if kept_prefix else body
        moved += _replace(sql, chunk, text, remaining, kept_prefix, removed, created)
    for chunk, prefix in holders_with_carry(sql, followers):
        if prefix and _quotes(prefix, texts):
            remaining = _messages_of(sql, chunk)
            moved += _replace(sql, chunk, chunk.text[len(prefix) + 1 :], remaining, "", removed, created)
    done = Forgotten(tuple(sorted(found)), tuple(removed), tuple(created), tuple(moved))
    return done, "" if _quotes(carry, texts) else carry


def holders_with_carry(sql: SyncSql, chunks: Sequence[MemoryRow]) -> list[tuple[MemoryRow, str]]:
    """Each chunk with the overlap prefix it opens with ('' when none)."""
    if not chunks:
        return []
    found: dict[str, int] = {}
    for batch in in_batches([c.id for c in chunks]):
        for entry in sql.execute(f"SELECT id, carry_chars FROM rows WHERE id IN ({placeholders(len(batch))})", batch):
            found[str(entry["id"])] = int(entry["carry_chars"])
    return [(c, c.text[: max(found.get(c.id, 0) - 1, 0)]) for c in chunks]


def _replace(
    sql: SyncSql,
    chunk: MemoryRow,
    text: str,
    messages: Sequence[Message],
    prefix: str,
    removed: list[str],
    created: list[MemoryRow],
) -> list[str]:
    """Put ``text`` in place of ``chunk`` (nothing, when no message of it remains); returns the
    rows that now point at the replacement."""
    sql.execute("DELETE FROM rows WHERE id = ?", (chunk.id,))
    removed.append(chunk.id)
    if not messages or not text.strip():
        return []
    replacement = chunk_row(text, messages)
    if insert_row(sql, replacement, len(prefix) + 1 if prefix else 0):
        created.append(replacement)
    children = [str(r["id"]) for r in sql.execute("SELECT id FROM rows WHERE parent_id = ?", (chunk.id,))]
    sql.execute("UPDATE rows SET parent_id = ? WHERE parent_id = ?", (replacement.id, chunk.id))
    return children


def _quotes(prefix: str, texts: Sequence[str]) -> bool:
    """Whether an overlap prefix repeats any part of the forgotten texts: it is whole sentences
    of a chunk's tail, or its last words when no sentence fits."""
    if not prefix.strip():
        return False
    flat = " ".join(prefix.split())
    for text in texts:
        if flat in " ".join(text.split()):
            return True
        if any(" ".join(sentence.split()) in flat for sentence in split_sentences(text)):
            return True
    return False


def _select(sql: SyncSql, column: str, values: Sequence[Any], condition: str) -> list[MemoryRow]:
    rows: list[MemoryRow] = []
    for batch in in_batches(list(values)):
        rows += [
            row_from_sql(data)
            for data in sql.execute(
                f"SELECT {ROW_COLUMNS} FROM rows WHERE {condition} AND {column} IN ({placeholders(len(batch))})", batch
            )
        ]
    return rows


def _select_buffer(sql: SyncSql, ids: Sequence[str]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for batch in in_batches(list(ids)):
        found += sql.execute(f"SELECT id, content FROM buffer WHERE id IN ({placeholders(len(batch))})", batch)
    return found


def _chunks_holding(sql: SyncSql, ids: Sequence[str]) -> list[MemoryRow]:
    columns = ", ".join(f"c.{column.strip()}" for column in ROW_COLUMNS.split(","))
    chunks: dict[str, MemoryRow] = {}
    for batch in in_batches(list(ids)):
        for data in sql.execute(
            f"SELECT DISTINCT {columns} FROM rows c, json_each(c.source_ids) AS source "
            f"WHERE c.kind = 'chunk' AND source.value IN ({placeholders(len(batch))})",
            batch,
        ):
            chunks[str(data["id"])] = row_from_sql(data)
    return list(chunks.values())


def _chunks_after(sql: SyncSql, chunks: Sequence[MemoryRow]) -> list[MemoryRow]:
    """The chunk cut right after each of ``chunks``: the one that may carry its tail, which holds the
    message stored next after the chunk's last. Messages keep the rowid they were stored under, a
    chunk cut again does not, so the order is the messages'."""
    following: list[str] = []
    for chunk in chunks:
        following += [
            str(data["message_id"])
            for data in sql.execute(
                "SELECT message_id FROM rows WHERE kind = 'message' AND rowid > (SELECT MAX(rowid) FROM rows "
                "WHERE kind = 'message' AND message_id IS NOT NULL AND message_id IN (SELECT value FROM json_each(?))) "
                "ORDER BY rowid LIMIT 1",
                (json.dumps(list(chunk.source_ids)),),
            )
        ]
    return _chunks_holding(sql, following)


def _messages_of(sql: SyncSql, chunk: MemoryRow) -> list[Message]:
    """The stored messages a chunk was cut from, in their order."""
    rows = {row.source_ids[0]: row for row in _select(sql, "message_id", list(chunk.source_ids), "kind = 'message'")}
    return [
        Message(role=row.role, content=row.text, timestamp=row.ts_end, id=source, model=row.model)
        for source in chunk.source_ids
        if (row := rows.get(source)) is not None
    ]
