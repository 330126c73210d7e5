"""Receipts in the shared database (D1 on Workers, the local mirror's sqlite file locally): one row
per receipt, one per message id an item named. A receipt and its items are written in one batch;
forgetting a message turns its id into a forgotten mark (``ref`` NULL) in every receipt naming it.

A receipt is written after its recall, so a forget may come between the two: the forget's batch
also keeps the ids it found (``forgotten_refs``, migration 0020) for ``FORGOTTEN_KEPT_SECONDS``,
and a receipt's own batch marks those among its ids forgotten. Either the forget's batch runs
first and the receipt's finds its ids, or the receipt's runs first and the forget's reaches it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from memvault.core.ports import Database
from memvault.core.receipts.model import Latency, Receipt, ReceiptItem, Usage
from memvault.core.sql import D1_MAX_BOUND_PARAMETERS, Row, in_batches, placeholders

Statement = tuple[str, Sequence[Any]]
_ITEM_COLUMNS = "receipt_id, position, injected, kind, vault, ref, score, tokens, ts"
_ITEM_WIDTH = 10  # the columns above and the key's id
# Longer than a receipt's write can trail its recall (retries included); a message stored again
# under a forgotten id and recalled within it shows as forgotten in that receipt.
FORGOTTEN_KEPT_SECONDS = 3600.0
_FORGOTTEN_WIDTH = 4


class ReceiptStore:
    def __init__(self, db: Database) -> None:
        self._db = db

    async def save(self, key_id: str, receipt: Receipt, query_ref: str | None, also: Sequence[Statement] = ()) -> None:
        """Keep ``receipt``, in one batch with the statements ``also`` names."""
        await self._db.batch([*saving(key_id, receipt, query_ref), *also])

    async def get(self, key_id: str, receipt_id: str) -> Receipt | None:
        rows = await self._db.query("SELECT * FROM receipts WHERE id = ? AND key_id = ?", (receipt_id, key_id))
        found = await self._with_items(rows)
        return found[0] if found else None

    async def day(self, key_id: str, day: str, limit: int) -> list[Receipt]:
        rows = await self._db.query(
            "SELECT * FROM receipts WHERE key_id = ? AND day = ? ORDER BY created_at DESC, id LIMIT ?", (key_id, day, limit)
        )
        return await self._with_items(rows)

    async def forget(self, key_id: str, ids: Sequence[str], session_id: str | None, found: Sequence[str],
                     now: float) -> None:
        """Forgotten messages leave every receipt of the key (or, for a session's, the receipts made
        in that session): their ids become forgotten marks, and a query taken from one is dropped.
        The ids ``found`` in memory are kept for receipts written after this."""
        statements: list[Statement] = []
        for batch in in_batches(list(ids)):
            marks = placeholders(len(batch))
            if session_id is None:
                statements.append((f"UPDATE receipt_items SET ref = NULL WHERE key_id = ? AND ref IN ({marks})",
                                   (key_id, *batch)))
            else:
                statements.append((
                    f"UPDATE receipt_items SET ref = NULL WHERE key_id = ? AND vault = 'session' AND ref IN ({marks}) "
                    "AND receipt_id IN (SELECT id FROM receipts WHERE key_id = ? AND session_id = ?)",
                    (key_id, *batch, key_id, session_id),
                ))
            statements.append((f"UPDATE receipts SET query = NULL WHERE key_id = ? AND query_ref IN ({marks})",
                               (key_id, *batch)))
        statements.append(("DELETE FROM forgotten_refs WHERE key_id = ? AND forgotten_at < ?",
                           (key_id, now - FORGOTTEN_KEPT_SECONDS)))
        rows = [(key_id, ref, session_id or "", now) for ref in dict.fromkeys(found)]
        for part in in_batches(rows, D1_MAX_BOUND_PARAMETERS // _FORGOTTEN_WIDTH):
            values = ", ".join(f"({placeholders(_FORGOTTEN_WIDTH)})" for _ in part)
            statements.append((f"INSERT INTO forgotten_refs (key_id, ref, session_id, forgotten_at) VALUES {values} "
                               "ON CONFLICT (key_id, ref, session_id) DO UPDATE SET forgotten_at = excluded.forgotten_at",
                               [value for row in part for value in row]))
        await self._db.batch(statements)

    async def clear(self, key_id: str, session_id: str | None) -> None:
        """A cleared key keeps no receipt; a cleared session keeps none made in it."""
        which = "key_id = ?" + ("" if session_id is None else " AND session_id = ?")
        params = (key_id,) if session_id is None else (key_id, session_id)
        await self._db.batch([
            (f"DELETE FROM receipt_items WHERE receipt_id IN (SELECT id FROM receipts WHERE {which})", params),
            (f"DELETE FROM receipts WHERE {which}", params),
        ])

    async def delete_before(self, before: float, key_id: str | None = None) -> int:
        """Delete receipts made before ``before`` (of one key, or of all); how many went."""
        of_key = "" if key_id is None else " AND key_id = ?"
        which = "created_at < ?" + of_key
        params = (before,) if key_id is None else (before, key_id)
        gone = await self._db.query(f"SELECT COUNT(*) AS n FROM receipts WHERE {which}", params)
        await self._db.batch([
            (f"DELETE FROM receipt_items WHERE receipt_id IN (SELECT id FROM receipts WHERE {which})", params),
            (f"DELETE FROM receipts WHERE {which}", params),
            (f"DELETE FROM forgotten_refs WHERE forgotten_at < ?{of_key}", params),
        ])
        return int(gone[0]["n"]) if gone else 0

    async def _with_items(self, rows: list[Row]) -> list[Receipt]:
        if not rows:
            return []
        items: dict[str, list[Row]] = {}
        for batch in in_batches([str(row["id"]) for row in rows]):
            for entry in await self._db.query(
                f"SELECT {_ITEM_COLUMNS} FROM receipt_items WHERE receipt_id IN ({placeholders(len(batch))}) "
                "ORDER BY receipt_id, injected DESC, position, rowid",
                batch,
            ):
                items.setdefault(str(entry["receipt_id"]), []).append(entry)
        return [_receipt(row, items.get(str(row["id"]), [])) for row in rows]



def saving(key_id: str, receipt: Receipt, query_ref: str | None) -> list[Statement]:
    """The statements that keep ``receipt``: its row, and its items ten to a statement (within
    D1's parameter limit)."""
    details = {
        "status": receipt.status, "budget_tokens": receipt.budget_tokens, "tokens": receipt.tokens,
        "redacted": receipt.redacted, "latency": asdict(receipt.latency),
        "usage": None if receipt.usage is None else asdict(receipt.usage),
    }
    statements: list[Statement] = [(
        "INSERT INTO receipts (id, key_id, day, created_at, surface, session_id, query, query_ref, details) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (receipt.id, key_id, receipt.day, receipt.created_at, receipt.surface, receipt.session_id, receipt.query,
         query_ref, json.dumps(details)),
    )]
    rows = [
        (key_id, receipt.id, position, injected, item.kind, item.vault, ref, item.score, item.tokens, item.timestamp)
        for injected, items in ((1, receipt.items), (0, receipt.cut))
        for position, item in enumerate(items)
        for ref in item.ids or (None,)
    ]
    for batch in in_batches(rows, D1_MAX_BOUND_PARAMETERS // _ITEM_WIDTH):
        values = ", ".join(f"({placeholders(_ITEM_WIDTH)})" for _ in batch)
        statements.append((f"INSERT INTO receipt_items (key_id, {_ITEM_COLUMNS}) VALUES {values}",
                           [value for row in batch for value in row]))
    if any(row[6] is not None for row in rows):  # the ref
        # Ids a forget found while this receipt's recall was on its way here.
        statements.append((
            "UPDATE receipt_items SET ref = NULL WHERE receipt_id = ? AND ref IN (SELECT ref FROM forgotten_refs "
            "WHERE key_id = ? AND (session_id = '' OR (session_id = ? AND receipt_items.vault = 'session')))",
            (receipt.id, key_id, receipt.session_id or "")))
    return statements


def completion(receipt_id: str, usage: Usage | None, forwarding_ms: float,
               condition: Statement | None = None) -> Statement:
    """The statement that adds what is known once a routed call's answer is complete; only while
    ``condition`` (an SQL expression and its parameters) holds, when one is given."""
    sql = ("UPDATE receipts SET details = json_set(details, '$.usage', json(?), '$.latency.forwarding_ms', ?) "
           "WHERE id = ?")
    params: list[Any] = [json.dumps(None if usage is None else asdict(usage)), forwarding_ms, receipt_id]
    if condition is not None:
        sql += f" AND {condition[0]}"
        params += condition[1]
    return sql, params


def _receipt(row: Row, entries: list[Row]) -> Receipt:
    details = json.loads(str(row["details"]))
    grouped: dict[tuple[int, int], list[Row]] = {}
    for entry in entries:
        grouped.setdefault((int(entry["injected"]), int(entry["position"])), []).append(entry)
    made = {place: _item(group) for place, group in grouped.items()}
    usage = details.get("usage")
    return Receipt(
        id=str(row["id"]), surface=str(row["surface"]), created_at=float(row["created_at"]), day=str(row["day"]),
        session_id=row["session_id"], query=row["query"], status=str(details["status"]),
        budget_tokens=int(details["budget_tokens"]), tokens=int(details["tokens"]),
        items=tuple(item for (injected, _), item in sorted(made.items()) if injected == 1),
        cut=tuple(item for (injected, _), item in sorted(made.items()) if injected == 0),
        redacted=int(details["redacted"]), latency=Latency(**details["latency"]),
        usage=None if usage is None else Usage(**usage),
    )


def _item(group: list[Row]) -> ReceiptItem:
    first = group[0]
    refs = [entry["ref"] for entry in group]
    return ReceiptItem(
        kind=str(first["kind"]), vault=str(first["vault"]), ids=tuple(str(ref) for ref in refs if ref is not None),
        forgotten=sum(1 for ref in refs if ref is None), score=float(first["score"]), tokens=int(first["tokens"]),
        timestamp=float(first["ts"]),
    )
