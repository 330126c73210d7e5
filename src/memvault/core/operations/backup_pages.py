"""The pages a backup is read in (``core/operations/backup.py`` drives them across cron invocations): rows of
the shared database's tables, messages of each vault, and the full bodies of long brain facts.
Each reads one bounded page, appends its lines and moves the backup's ``state`` past it."""

from __future__ import annotations

from typing import Any

from memvault.core.brain.rows import blob_key_of
from memvault.core.deps import Deps
from memvault.core.memory.read.export import vault_messages
from memvault.core.memory.transfer import message_record, page_messages, vault_label
from memvault.core.operations.backup_format import TABLES, Table, blob_line, message_line, row_line

# Bodies read per page: each is one read of the blob store (an R2 request on Workers).
BODIES_PER_PAGE = 50


def start_state(state: dict[str, Any]) -> None:
    """Where the vaults' messages and the bodies stand (set for a backup begun before they were backed up too)."""
    for name, start in (("vault", None), ("last_vault", None), ("message_after", 0), ("messages", 0),
                        ("vaults_done", False), ("body_after", 0), ("bodies", 0), ("bodies_done", False)):
        state.setdefault(name, start)


def stage_of(state: dict[str, Any]) -> str | None:
    """What the backup reads next: ``tables``, ``messages``, ``bodies``, or None once all is read."""
    if state["table"] < len(TABLES):
        return "tables"
    if not state["vaults_done"]:
        return "messages"
    return None if state["bodies_done"] else "bodies"


def stopped_at(state: dict[str, Any]) -> str:
    stage = stage_of(state)
    if stage == "tables":
        return f"{TABLES[state['table']].name} after rowid {state['after']}"
    if stage == "messages":
        if state["vault"] is not None:
            return f"{state['vault'][1]} after message {state['message_after']}"
        return f"vaults after {state['last_vault'][1] if state['last_vault'] else 'none'}"
    return f"fact bodies after seq {state['body_after']}"


async def table_page(deps: Deps, state: dict[str, Any], lines: list[str], columns: dict[str, list[str]]) -> None:
    table = TABLES[state["table"]]
    if table.name not in columns:
        columns[table.name] = await table_columns(deps, table.name)
    limit = deps.tuning.backup_page_rows
    rows = await _rows(deps, table, columns[table.name], state["watermark"], state["after"], limit)
    for row in rows:
        state["after"] = row.pop("_rowid")
        lines.append(row_line(table.name, row))
        state["rows"][table.name] = state["rows"].get(table.name, 0) + 1
    if len(rows) < limit:
        state["table"], state["after"] = state["table"] + 1, 0


async def message_page(deps: Deps, state: dict[str, Any], lines: list[str]) -> None:
    """The next page of the current vault's messages (finding the next vault first); vaults in
    (key id, vault name) order, each registered by the watermark."""
    if state["vault"] is None:
        state["vault"] = await _next_vault(deps, state["watermark"], state["last_vault"])
        if state["vault"] is None:
            state["vaults_done"] = True
            return
    key_id, name = state["vault"]
    page = await vault_messages(deps, name, state["message_after"], deps.tuning.backup_page_rows)
    for message, said_again, last_said in page_messages(page):
        lines.append(message_line(key_id, vault_label(name), message_record(message, said_again, last_said)))
        state["messages"] += 1
    state["message_after"] = page.after
    if page.complete:
        state["last_vault"], state["vault"], state["message_after"] = state["vault"], None, 0


async def body_page(deps: Deps, state: dict[str, Any], lines: list[str]) -> None:
    """The next long facts' full bodies (facts up to the watermark), from the blob store."""
    found = await deps.db.query(
        "SELECT seq, body_uri FROM memory WHERE body_uri IS NOT NULL AND seq > ? AND seq <= ? ORDER BY seq LIMIT ?",
        [state["body_after"], state["watermark"]["memory"], BODIES_PER_PAGE],
    )
    for row in found:
        key = blob_key_of(str(row["body_uri"]))
        data = await deps.blobs.get(key)
        if data is not None:  # a body already lost is reported by the reads of its fact, not here
            lines.append(blob_line(key, data))
            state["bodies"] += 1
        state["body_after"] = int(row["seq"])
    if len(found) < BODIES_PER_PAGE:
        state["bodies_done"] = True


async def _next_vault(deps: Deps, watermark: dict[str, Any], last: list[str] | None) -> list[str] | None:
    key_id, name = last or ("", "")
    found = await deps.db.query(
        "SELECT key_id, vault FROM vaults WHERE created_at <= ? AND (key_id > ? OR (key_id = ? AND vault > ?)) "
        "ORDER BY key_id, vault LIMIT 1",
        [watermark["at"], key_id, key_id, name],
    )
    return [str(found[0]["key_id"]), str(found[0]["vault"])] if found else None


async def _rows(deps: Deps, table: Table, columns: list[str], watermark: dict[str, Any], after: int,
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
