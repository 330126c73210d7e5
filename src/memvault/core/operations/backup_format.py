"""The backup's tables and line format, shared by the export (``core/operations/backup.py``) and the restore
(``core/operations/restore.py``): one place says what a backup holds and how each table's rows are bounded by
the watermark.

A backup is JSONL: a header line ``{"backup": {...}}`` (format, watermark, tables), one line
``{"table": name, "row": {...}}`` per row of the shared database (bytes as ``{"$b64": "..."}``),
then one line ``{"message": {"key_id": ..., "vault": ..., ...}}`` per message every vault holds
(the record ``core/memory/transfer.py`` reads), one line ``{"blob": {"key": ..., "data": {"$b64":
...}}}`` per long brain fact's full body, and an end line ``{"end": {"rows": {table: count},
"messages": count, "bodies": count}}``; split across part objects ``part-00001.jsonl``, … whose
concatenation is the backup. Format 1 (before messages and bodies were in backups) has neither."""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any

FORMAT = 2
READABLE_FORMATS = (1, 2)
BACKUP_PREFIX = "backups/"
INDEX_KEY = BACKUP_PREFIX + "index.json"


@dataclass(frozen=True)
class Table:
    name: str
    # How the watermark bounds the table: rows inserted after it are left out.
    # "seq": an AUTOINCREMENT key (never reused) at most the watermark's; "time": this column at
    # most the watermark's time; None: every row (derived or side data, see README "Backup").
    bound: str | None
    column: str = ""


TABLES: tuple[Table, ...] = (
    Table("memory_keys", "time", "created_at"),
    Table("vaults", "time", "created_at"),
    Table("mirror_rows", None),
    Table("mirror_buffers", "time", "updated_at"),
    Table("mirror_buffer_vectors", None),
    Table("memory", "seq", "seq"),
    Table("fact_passages", "seq", "seq"),
    Table("fact_links", "time", "created_at"),
    Table("fact_signals", None),
    Table("fact_retirements", "time", "retired_at"),
    Table("proposals", "time", "created_at"),
    Table("event_log", "seq", "seq"),
    Table("skills", "time", "created_at"),
    Table("skill_proposals", "time", "created_at"),
    Table("cache_generations", None),
)
TABLE_NAMES = frozenset(t.name for t in TABLES)


def encode_value(value: Any) -> Any:
    if isinstance(value, bytes | bytearray | memoryview):
        return {"$b64": base64.b64encode(bytes(value)).decode("ascii")}
    return value


def decode_value(value: Any) -> Any:
    if isinstance(value, dict) and set(value) == {"$b64"}:
        return base64.b64decode(value["$b64"])
    return value


def line(obj: dict[str, Any]) -> str:
    return json.dumps(obj, separators=(",", ":"), sort_keys=True) + "\n"


def row_line(table: str, row: dict[str, Any]) -> str:
    return line({"table": table, "row": {k: encode_value(v) for k, v in row.items()}})


def message_line(key_id: str, vault: str, record: dict[str, Any]) -> str:
    return line({"message": {"key_id": key_id, "vault": vault, **record}})


def blob_line(key: str, data: bytes) -> str:
    return line({"blob": {"key": key, "data": encode_value(data)}})


def part_key(backup_id: str, number: int) -> str:
    return f"{BACKUP_PREFIX}{backup_id}/part-{number:05d}.jsonl"
