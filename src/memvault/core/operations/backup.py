"""The nightly backup: a JSONL export of everything the shared database holds (D1 in production),
of every message each vault holds and of the long brain facts' full bodies, to the blob store (R2;
a folder locally), written in pages across cron invocations; the database's rows are consistent as
of a watermark taken when it starts (see README, "Backup and restore", for the guarantee).

Vaults are read through the vault port (``core/operations/backup_pages.py``). State between invocations lives
in the maintenance cursor: the watermark, where each stage stands, the part objects written. Each
part is written whole before the cursor moves past its lines, so an invocation that dies re-writes
the same part. ``backups/index.json`` lists the complete backups; once a new one is complete the
oldest past ``backup_keep`` are deleted."""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import asdict, dataclass
from typing import Any

from memvault.core.deps import Deps
from memvault.core.operations.backup_format import FORMAT, INDEX_KEY, TABLES, line, part_key
from memvault.core.operations.backup_pages import body_page, message_page, stage_of, start_state, stopped_at, table_page
from memvault.core.operations.maintenance_cursor import Budget, CountingDatabase

# A part is written once it holds this much (or the invocation stops): bounded memory per run.
PART_BYTES = 8 * 1024 * 1024


@dataclass
class BackupProgress:
    backup_id: str
    complete: bool
    parts: int
    rows: dict[str, int]
    stopped_at: str | None
    messages: int = 0
    bodies: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


async def backup_step(deps: Deps, budget: Budget, state: dict[str, Any], now: float) -> BackupProgress:
    """Carry the backup on from ``state`` (empty: start one, taking the watermark now) until it is
    complete or the budget is spent; ``state`` is updated to resume from."""
    if "watermark" not in state:
        state.update(backup_id=time.strftime("%Y-%m-%dT%H%M%SZ", time.gmtime(now)),
                     watermark=await take_watermark(deps, now), table=0, after=0, parts=0, rows={})
    start_state(state)
    lines: list[str] = []
    if state["parts"] == 0 and state["table"] == 0 and state["after"] == 0:
        lines.append(line({"backup": {"format": FORMAT, "id": state["backup_id"], "watermark": state["watermark"],
                                      "tables": [t.name for t in TABLES]}}))
    columns: dict[str, list[str]] = {}  # each table's, read once per invocation, not once per page
    size = 0
    while (stage := stage_of(state)) is not None:
        if budget.spent:
            await _write_part(deps, state, lines)
            return _progress(state, complete=False)
        held = len(lines)
        if stage == "tables":
            await table_page(deps, state, lines, columns)
        elif stage == "messages":
            await message_page(deps, state, lines)
            budget.vaults_tended += 1  # a page of a vault's messages is one call to its Durable Object
        else:
            await body_page(deps, state, lines)
        budget.units += 1
        size += sum(len(text) for text in lines[held:])
        if size >= PART_BYTES:
            await _write_part(deps, state, lines)
            lines, size = [], 0
    lines.append(line({"end": {"rows": state["rows"], "messages": state["messages"], "bodies": state["bodies"]}}))
    await _write_part(deps, state, lines)
    await _record_complete(deps, state, now)
    return _progress(state, complete=True)


async def backup_now(deps: Deps, now: float) -> BackupProgress:
    """A complete backup now, apart from the nightly pass (``memvault backup``): the pass's bounded
    steps, one after another, each with a fresh budget."""
    state: dict[str, Any] = {}
    while True:
        counted = CountingDatabase(deps.db)
        budget = Budget(counted, deps.settings.cron_query_budget, deps.settings.cron_vault_budget)
        progress = await backup_step(dataclasses.replace(deps, db=counted), budget, state, now)
        if progress.complete:
            return progress


async def take_watermark(deps: Deps, now: float) -> dict[str, Any]:
    """The moment the backup stands for: a time, and the highest key of each AUTOINCREMENT table."""
    mark: dict[str, Any] = {"at": now}
    for table in TABLES:
        if table.bound == "seq":
            found = await deps.db.query(f"SELECT MAX({table.column}) AS top FROM {table.name}")
            mark[table.name] = int(found[0]["top"] or 0)
    return mark


async def _write_part(deps: Deps, state: dict[str, Any], lines: list[str]) -> None:
    if not lines:
        return
    state["parts"] += 1
    await deps.blobs.put(part_key(state["backup_id"], state["parts"]), "".join(lines).encode("utf-8"),
                         "application/jsonl")


def _progress(state: dict[str, Any], complete: bool) -> BackupProgress:
    stopped = None
    if not complete:
        stopped = state["after_label"] = stopped_at(state)
    return BackupProgress(state["backup_id"], complete, state["parts"], dict(state["rows"]), stopped,
                          state["messages"], state["bodies"])


async def backups_index(deps: Deps) -> list[dict[str, Any]]:
    raw = await deps.blobs.get(INDEX_KEY)
    return list(json.loads(raw)["backups"]) if raw else []


async def _record_complete(deps: Deps, state: dict[str, Any], now: float) -> None:
    entries = [e for e in await backups_index(deps) if e["id"] != state["backup_id"]]
    entries.append({"id": state["backup_id"], "parts": state["parts"], "rows": state["rows"],
                    "messages": state["messages"], "bodies": state["bodies"], "watermark": state["watermark"], "completed_at": now})
    keep = deps.settings.backup_keep
    old, kept = entries[:-keep], entries[-keep:]
    await deps.blobs.put(INDEX_KEY, json.dumps({"backups": kept}, sort_keys=True).encode("utf-8"), "application/json")
    for entry in old:
        for number in range(1, int(entry["parts"]) + 1):
            await deps.blobs.delete(part_key(entry["id"], number))
