"""A vault's messages in the order it took them, page by page, for backups and exports.

Positions are the stored rows' rowids: a row is inserted once (a message moving from the pending
buffer into a row gets a position after every earlier one), so reading on from the last position
seen never skips a message stored since, even when pages are read hours apart."""

from __future__ import annotations

import json

from memvault.core.memory import changelog
from memvault.core.memory.rows import ROW_COLUMNS, row_from_sql
from memvault.core.models import MessagePage
from memvault.core.ports import SyncSql
from memvault.core.sql import in_batches, placeholders


def message_page(sql: SyncSql, after: int, limit: int) -> MessagePage:
    """Up to ``limit`` stored messages after position ``after``; the pending buffer too once the
    stored ones are exhausted. Call inside one transaction."""
    found = sql.execute(
        f"SELECT rowid AS position, {ROW_COLUMNS}, metadata FROM rows "
        "WHERE kind = 'message' AND rowid > ? ORDER BY rowid LIMIT ?",
        (after, limit),
    )
    rows = tuple(row_from_sql(data) for data in found)
    complete = len(found) < limit
    pending = changelog.buffer_state(sql).messages if complete else ()
    ids = [row.source_ids[0] for row in rows] + [message.id for message in pending]
    return MessagePage(
        rows=rows,
        after=int(found[-1]["position"]) if found else after,
        complete=complete,
        pending=pending,
        said_again=_said_again(sql, ids),
    )


def _said_again(sql: SyncSql, ids: list[str]) -> dict[str, list[str]]:
    """The other ids each of ``ids`` was said again under, in the order they were."""
    again: dict[str, list[str]] = {}
    for batch in in_batches(ids):
        for entry in sql.execute(
            f"SELECT canonical, json_group_array(message_id) AS ids FROM "
            f"(SELECT canonical, message_id FROM aliases WHERE canonical IN ({placeholders(len(batch))}) ORDER BY rowid) "
            "GROUP BY canonical",
            batch,
        ):
            again[str(entry["canonical"])] = [str(i) for i in json.loads(entry["ids"])]
    return again
