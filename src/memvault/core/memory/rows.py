"""How a memory row maps to and from a SQL row (the vault and the mirror share the columns)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from memvault.core.models import MemoryRow, Message
from memvault.core.vectors import pack, unpack

ROW_COLUMNS = "id, kind, text, role, model, ts_start, ts_end, token_count, source_ids, content_hash, parent_id"


def content_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def message_hash(message: Message) -> str:
    return content_hash(f"{message.role}\n{message.timestamp:.3f}\n{message.content}")


def row_from_sql(data: dict[str, Any]) -> MemoryRow:
    blob = data.get("embedding")
    return MemoryRow.from_dict(
        {**data, "source_ids": json.loads(data["source_ids"]), "embedding": None if blob is None else unpack(blob)}
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
