"""How a memory row maps to and from a SQL row (the vault and the mirror share the columns)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from memvault.core.models import MemoryRow, Message
from memvault.core.ports import SyncSql
from memvault.core.ranking import normalize_text
from memvault.core.sql import placeholders
from memvault.core.tokens import estimate_tokens
from memvault.core.vectors import binary_code, pack, unpack

ROW_COLUMNS = "id, kind, text, role, model, ts_start, ts_end, token_count, source_ids, content_hash, parent_id"


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def message_hash(message: Message) -> str:
    """The same normalised text from the same role is one message, whenever it was said."""
    return content_hash(f"{message.role}\n{normalize_text(message.content)}")


def source_ids(stored: str) -> tuple[str, ...]:
    """The ids a row was made of, from their stored JSON list. Most rows are one message, stored as
    ``["<id>"]``: an id without quotes or escapes is read as it stands, the rest through JSON."""
    if stored.startswith('["') and stored.endswith('"]') and '"' not in stored[2:-2] and "\\" not in stored:
        return (stored[2:-2],)
    return tuple(json.loads(stored))


def row_from_sql(data: dict[str, Any]) -> MemoryRow:
    # Positionally and converting only numbers (either SQL hands text columns over as str): a
    # search reads a few hundred rows, and keyword arguments with a str() each cost a third more.
    blob = data.get("embedding")
    return MemoryRow(
        data["id"],
        data["kind"],
        data["text"],
        data["role"],
        data["model"],
        float(data["ts_start"]),
        float(data["ts_end"]),
        int(data["token_count"]),
        source_ids(data["source_ids"]),
        data["content_hash"],
        data["parent_id"],
        None if blob is None else tuple(unpack(blob)),
        data.get("metadata"),
    )


def row_values(row: MemoryRow) -> tuple[Any, ...]:
    """Values in ``ROW_COLUMNS`` order, then the packed embedding (or None)."""
    return (
        row.id,
        row.kind,
        row.text,
        row.role,
        row.model,
        row.ts_start,
        row.ts_end,
        row.token_count,
        json.dumps(list(row.source_ids)),
        row.content_hash,
        row.parent_id,
        None if row.embedding is None else pack(row.embedding),
    )


def message_row(message: Message, parent_id: str, embedding: tuple[float, ...] | None = None) -> MemoryRow:
    digest = message_hash(message)
    return MemoryRow(
        id=f"m-{digest[:24]}",
        kind="message",
        text=message.content,
        role=message.role,
        model=message.model,
        ts_start=message.timestamp,
        ts_end=message.timestamp,
        token_count=estimate_tokens(message.content),
        source_ids=(message.id,),
        content_hash=digest,
        parent_id=parent_id,
        embedding=embedding,
        metadata=message.metadata,
    )


def chunk_row(text: str, messages: Sequence[Message]) -> MemoryRow:
    """The chunk of ``messages`` whose text (overlap included) is ``text``."""
    digest = content_hash(text)
    roles = {m.role for m in messages}
    return MemoryRow(
        id=f"c-{digest[:24]}",
        kind="chunk",
        text=text,
        role=roles.pop() if len(roles) == 1 else "mixed",
        model=next((m.model for m in messages if m.model), None),
        ts_start=min(m.timestamp for m in messages),
        ts_end=max(m.timestamp for m in messages),
        token_count=estimate_tokens(text),
        source_ids=tuple(m.id for m in messages),
        content_hash=digest,
    )


def insert_row(sql: SyncSql, row: MemoryRow, carry_chars: int = 0) -> bool:
    """Insert into a vault's rows unless the same content is stored already; whether it was new.
    ``carry_chars``: how much of a chunk's text is the overlap carried from the chunk before."""
    existing = sql.execute("SELECT id FROM rows WHERE kind = ? AND content_hash = ?", (row.kind, row.content_hash))
    if existing:
        return False
    message_id = row.source_ids[0] if row.kind == "message" else None
    code = None if row.embedding is None else binary_code(row.embedding)
    sql.execute(
        f"INSERT INTO rows ({ROW_COLUMNS}, embedding, message_id, carry_chars, metadata, code) VALUES ({placeholders(16)})",
        (*row_values(row), message_id, carry_chars, row.metadata, code),
    )
    return True
