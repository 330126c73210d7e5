"""The nightly backup: a JSONL export of everything the shared database holds (D1 in production)
to the blob store (R2; a folder locally), written in pages across cron invocations and consistent
as of a watermark taken when it starts (see README, "Backup and restore", for the guarantee).

State between invocations lives in the maintenance cursor: the watermark, the table and rowid
reached, the part objects written. Each part is written whole before the cursor moves past its
rows, so an invocation that dies re-writes the same part. ``backups/index.json`` lists the
complete backups; once a new one is complete the oldest past ``backup_keep`` are deleted."""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass
from typing import Any

from memvault.core.backup_format import FORMAT, INDEX_KEY, TABLES, Table, line, part_key, row_line
from memvault.core.deps import Deps
from memvault.core.maintenance_cursor import Budget

# A part is written once it holds this much (or the invocation stops): bounded memory per run.
PART_BYTES = 8 * 1024 * 1024


@dataclass
class BackupProgress:
    backup_id: str
    complete: bool
    parts: int
    rows: dict[str, int]
    stopped_at: str | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


async def backup_step(deps: Deps, budget: Budget, state: dict[str, Any], now: float) -> BackupProgress:
    """Carry the backup on from ``state`` (empty: start one, taking the watermark now) until it is
    complete or the budget is spent; ``state`` is updated to resume from."""
    if "watermark" not in state:
        state.update(backup_id=time.strftime("%Y-%m-%dT%H%M%SZ", time.gmtime(now)),
                     watermark=await take_watermark(deps, now), table=0, after=0, parts=0, rows={})
    parts: list[str] = []
    size = 0
    if state["parts"] == 0 and state["table"] == 0 and state["after"] == 0:
        parts.append(line({"backup": {"format": FORMAT, "id": state["backup_id"], "watermark": state["watermark"],
                                      "tables": [t.name for t in TABLES]}}))
    page_rows = deps.settings.backup_page_rows
    columns: dict[str, list[str]] = {}  # each table's, read once per invocation, not once per page
    while state["table"] < len(TABLES):
        if budget.spent:
            await _write_part(deps, state, parts)
            return _progress(state, complete=False)
        table = TABLES[state["table"]]
        if table.name not in columns:
            columns[table.name] = await table_columns(deps, table.name)
        rows = await _page(deps, table, columns[table.name], state["watermark"], state["after"], page_rows)
        budget.units += 1
        for row in rows:
            rowid = row.pop("_rowid")
            text = row_line(table.name, row)
            parts.append(text)
            size += len(text)
            state["after"] = rowid
            state["rows"][table.name] = state["rows"].get(table.name, 0) + 1
        if len(rows) < page_rows:
            state["table"], state["after"] = state["table"] + 1, 0
        if size >= PART_BYTES:
            await _write_part(deps, state, parts)
            parts, size = [], 0
    parts.append(line({"end": {"rows": state["rows"]}}))
    await _write_part(deps, state, parts)
    await _record_complete(deps, state, now)
    return _progress(state, complete=True)


async def take_watermark(deps: Deps, now: float) -> dict[str, Any]:
    """The moment the backup stands for: a time, and the highest key of each AUTOINCREMENT table."""
    mark: dict[str, Any] = {"at": now}
    for table in TABLES:
        if table.bound == "seq":
            found = await deps.db.query(f"SELECT MAX({table.column}) AS top FROM {table.name}")
            mark[table.name] = int(found[0]["top"] or 0)
    return mark


async def _page(deps: Deps, table: Table, columns: list[str], watermark: dict[str, Any], after: int,
                limit: int) -> list[dict[str, Any]]:
    where, params = "rowid > ?", [after]
    if table.bound == "seq":
        where, params = f"{where} AND {table.column} <= ?", [*params, watermark[table.name]]
    elif table.bound == "time":
        where, params = f"{where} AND {table.column} <= ?", [*params, watermark["at"]]
    select = ", ".join(f'"{c}"' for c in columns)
    return await deps.db.query(
        f"SELECT rowid AS _rowid, {select} FROM {table.name} WHERE {where} ORDER BY rowid LIMIT ?", [*params, limit]
    )


async def table_columns(deps: Deps, table: str) -> list[str]:
    """The table's stored columns (``pragma_table_info`` leaves generated columns out: the restore
    lets the database compute them again)."""
    found = await deps.db.query("SELECT name FROM pragma_table_info(?) ORDER BY cid", [table])
    return [str(row["name"]) for row in found]


async def _write_part(deps: Deps, state: dict[str, Any], lines: list[str]) -> None:
    if not lines:
        return
    state["parts"] += 1
    await deps.blobs.put(part_key(state["backup_id"], state["parts"]), "".join(lines).encode("utf-8"),
                         "application/jsonl")


def _progress(state: dict[str, Any], complete: bool) -> BackupProgress:
    stopped = None
    if not complete:
        table = TABLES[state["table"]].name if state["table"] < len(TABLES) else "end"
        stopped = f"{table} after rowid {state['after']}"
        state["after_label"] = stopped
    return BackupProgress(state["backup_id"], complete, state["parts"], dict(state["rows"]), stopped)


async def backups_index(deps: Deps) -> list[dict[str, Any]]:
    raw = await deps.blobs.get(INDEX_KEY)
    return list(json.loads(raw)["backups"]) if raw else []


async def _record_complete(deps: Deps, state: dict[str, Any], now: float) -> None:
    entries = [e for e in await backups_index(deps) if e["id"] != state["backup_id"]]
    entries.append({"id": state["backup_id"], "parts": state["parts"], "rows": state["rows"],
                    "watermark": state["watermark"], "completed_at": now})
    keep = deps.settings.backup_keep
    old, kept = entries[:-keep], entries[-keep:]
    await deps.blobs.put(INDEX_KEY, json.dumps({"backups": kept}, sort_keys=True).encode("utf-8"), "application/json")
    for entry in old:
        for number in range(1, int(entry["parts"]) + 1):
            await deps.blobs.delete(part_key(entry["id"], number))


async def read_backup(deps: Deps, backup_id: str) -> list[bytes]:
    """The part objects of one complete backup, in order (their concatenation is the JSONL)."""
    entry = next((e for e in await backups_index(deps) if e["id"] == backup_id), None)
    if entry is None:
        raise LookupError(f"no complete backup {backup_id}")
    parts = []
    for number in range(1, int(entry["parts"]) + 1):
        data = await deps.blobs.get(part_key(backup_id, number))
        if data is None:
            raise LookupError(f"backup {backup_id} is missing part {number}")
        parts.append(data)
    return parts
