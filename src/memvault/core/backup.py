"""The nightly backup: a JSONL export of everything the shared database holds (D1 in production),
then of every message each vault holds, to the blob store (R2; a folder locally), written in pages
across cron invocations; the database's rows are consistent as of a watermark taken when it starts
(see README, "Backup and restore", for the guarantee).

Vaults are read through the vault port, a page of messages at a time in the order each vault took
them (``VaultClient.messages``), in (key id, vault name) order, each vault registered by the
watermark. State between invocations lives in the maintenance cursor: the watermark, the table and
rowid reached, the vault and message position reached, the part objects written. Each part is
written whole before the cursor moves past its rows, so an invocation that dies re-writes the same
part. ``backups/index.json`` lists the complete backups; once a new one is complete the oldest past
``backup_keep`` are deleted."""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import asdict, dataclass
from typing import Any

from memvault.core.backup_format import FORMAT, INDEX_KEY, TABLES, Table, line, message_line, part_key, row_line
from memvault.core.deps import Deps
from memvault.core.maintenance_cursor import Budget, CountingDatabase
from memvault.core.memory.read import vault_messages
from memvault.core.memory.transfer import message_record, page_messages, vault_label

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

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


async def backup_step(deps: Deps, budget: Budget, state: dict[str, Any], now: float) -> BackupProgress:
    """Carry the backup on from ``state`` (empty: start one, taking the watermark now) until it is
    complete or the budget is spent; ``state`` is updated to resume from."""
    if "watermark" not in state:
        state.update(backup_id=time.strftime("%Y-%m-%dT%H%M%SZ", time.gmtime(now)),
                     watermark=await take_watermark(deps, now), table=0, after=0, parts=0, rows={})
    # Where the vaults' messages stand (set here too for a backup begun before they were backed up).
    for name, start in (("vault", None), ("last_vault", None), ("message_after", 0), ("messages", 0)):
        state.setdefault(name, start)
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
    while True:
        if budget.spent:
            await _write_part(deps, state, parts)
            return _progress(state, complete=False)
        if state["vault"] is None:
            state["vault"] = await _next_vault(deps, state["watermark"], state["last_vault"])
            if state["vault"] is None:
                break
        size += await _message_page(deps, state, parts, page_rows)
        budget.units += 1
        budget.vaults_tended += 1  # a page of a vault's messages is one call to its Durable Object
        if size >= PART_BYTES:
            await _write_part(deps, state, parts)
            parts, size = [], 0
    parts.append(line({"end": {"rows": state["rows"], "messages": state["messages"]}}))
    await _write_part(deps, state, parts)
    await _record_complete(deps, state, now)
    return _progress(state, complete=True)


async def _next_vault(deps: Deps, watermark: dict[str, Any], last: list[str] | None) -> list[str] | None:
    """The registered vault after ``last`` in (key id, vault name) order, among those registered by the watermark."""
    key_id, name = last or ("", "")
    found = await deps.db.query(
        "SELECT key_id, vault FROM vaults WHERE created_at <= ? AND (key_id > ? OR (key_id = ? AND vault > ?)) "
        "ORDER BY key_id, vault LIMIT 1",
        [watermark["at"], key_id, key_id, name],
    )
    return [str(found[0]["key_id"]), str(found[0]["vault"])] if found else None


async def _message_page(deps: Deps, state: dict[str, Any], parts: list[str], limit: int) -> int:
    """Add the next page of the current vault's messages to ``parts``; the characters added."""
    key_id, name = state["vault"]
    page = await vault_messages(deps, name, state["message_after"], limit)
    size = 0
    for message, said_again, last_said in page_messages(page):
        text = message_line(key_id, vault_label(name), message_record(message, said_again, last_said))
        parts.append(text)
        size += len(text)
        state["messages"] += 1
    state["message_after"] = page.after
    if page.complete:
        state["last_vault"], state["vault"], state["message_after"] = state["vault"], None, 0
    return size


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
        if state["table"] < len(TABLES):
            stopped = f"{TABLES[state['table']].name} after rowid {state['after']}"
        elif state["vault"] is not None:
            stopped = f"{state['vault'][1]} after message {state['message_after']}"
        else:
            stopped = f"vaults after {state['last_vault'][1] if state['last_vault'] else 'none'}"
        state["after_label"] = stopped
    return BackupProgress(state["backup_id"], complete, state["parts"], dict(state["rows"]), stopped,
                          state["messages"])


async def backups_index(deps: Deps) -> list[dict[str, Any]]:
    raw = await deps.blobs.get(INDEX_KEY)
    return list(json.loads(raw)["backups"]) if raw else []


async def _record_complete(deps: Deps, state: dict[str, Any], now: float) -> None:
    entries = [e for e in await backups_index(deps) if e["id"] != state["backup_id"]]
    entries.append({"id": state["backup_id"], "parts": state["parts"], "rows": state["rows"],
                    "messages": state["messages"], "watermark": state["watermark"], "completed_at": now})
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
