"""The usage ledger in the shared database (``usage_days``, migration 0016): a call's counts are
added to its (key, UTC day, model) row by one upsert, and read back summed by day, model or key."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from memvault.core.ports import Database
from memvault.core.usage.meter import COUNTS, CallUsage

_COLUMNS = ", ".join(COUNTS)
_VALUES = ", ".join("?" for _ in range(len(COUNTS) + 3))
_ON_CONFLICT = " ON CONFLICT (key_id, day, model) DO UPDATE SET " + ", ".join(
    f"{name} = {name} + excluded.{name}" for name in COUNTS)
_UPSERT = f"INSERT INTO usage_days (key_id, day, model, {_COLUMNS}) VALUES ({_VALUES})" + _ON_CONFLICT
# SQLite reads an upsert's SELECT only with a WHERE clause, which the condition supplies.
_UPSERT_IF = f"INSERT INTO usage_days (key_id, day, model, {_COLUMNS}) SELECT {_VALUES} WHERE {{condition}}" + _ON_CONFLICT
GROUPS = {"day": "day", "model": "model", "key": "key_id"}


def day_of(moment: float) -> str:
    """The UTC day (YYYY-MM-DD) of an epoch time."""
    return datetime.fromtimestamp(moment, tz=UTC).date().isoformat()


def usage_statement(
    key_id: str, moment: float, model: str | None, usage: CallUsage,
    condition: tuple[str, Sequence[Any]] | None = None,
) -> tuple[str, Sequence[Any]]:
    """The one statement that adds ``usage`` to its row; only while ``condition`` (an SQL
    expression and its parameters) holds, when one is given."""
    values = (key_id, day_of(moment), model or "", *(getattr(usage, name) for name in COUNTS))
    if condition is None:
        return _UPSERT, values
    return _UPSERT_IF.format(condition=condition[0]), (*values, *condition[1])


async def add_usage(db: Database, key_id: str, moment: float, model: str | None, usage: CallUsage) -> None:
    if usage == CallUsage():
        return
    sql, params = usage_statement(key_id, moment, model, usage)
    await db.execute(sql, params)


async def usage_rows(
    db: Database, first_day: str, last_day: str, group_by: Sequence[str], key_id: str | None = None
) -> list[dict[str, Any]]:
    """Counts summed per group (``GROUPS`` names), days ``first_day``..``last_day`` included,
    ordered by the groups; only ``key_id``'s rows when it is given."""
    columns = [GROUPS[name] for name in group_by]
    where = "day >= ? AND day <= ?" + ("" if key_id is None else " AND key_id = ?")
    params: list[Any] = [first_day, last_day] + ([] if key_id is None else [key_id])
    sums = ", ".join(f"SUM({name}) AS {name}" for name in COUNTS)
    grouped = ", ".join(columns)
    return await db.query(
        f"SELECT {grouped}, {sums} FROM usage_days WHERE {where} GROUP BY {grouped} ORDER BY {grouped}", params)


async def tokens_today(db: Database, key_id: str, moment: float) -> tuple[int, int]:
    """The key's provider tokens and memory tokens so far on ``moment``'s UTC day."""
    found = await db.query(
        "SELECT COALESCE(SUM(input_tokens + output_tokens), 0) AS provider, COALESCE(SUM(memory_tokens), 0) AS memory"
        " FROM usage_days WHERE key_id = ? AND day = ?", (key_id, day_of(moment)))
    return (int(found[0]["provider"]), int(found[0]["memory"])) if found else (0, 0)
