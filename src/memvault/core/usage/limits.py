"""Per-key limits and the gate every call of a limited key passes before anything of it runs.

A key's limits travel with the key (the lookup that authenticates a call reads them), so a key
without limits costs its calls no statement at all. A limited key's call is admitted by one
statement in the shared database that counts it in the key's current UTC minute only while the
minute's count is under the limit and the day's tokens are under theirs: concurrent calls are
serialised by the database, so no call is admitted past a limit however many arrive at once."""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Any, NoReturn

from memvault.core.credentials.keys import MemoryKey
from memvault.core.errors import RateLimited
from memvault.core.ports import Database
from memvault.core.usage.ledger import day_of, tokens_today

log = logging.getLogger("memvault.usage")
MINUTE, DAY = 60, 86_400
_TODAY_SUM = "(SELECT COALESCE(SUM({sum}), 0) FROM usage_days WHERE key_id = ? AND day = ?) < ?"
_PROVIDER, _MEMORY = "input_tokens + output_tokens", "memory_tokens"


@dataclass(frozen=True)
class Limits:
    requests_per_minute: int | None = None
    provider_tokens_per_day: int | None = None
    memory_tokens_per_day: int | None = None

    @property
    def any(self) -> bool:
        return any(value is not None for value in (self.requests_per_minute, self.provider_tokens_per_day,
                                                   self.memory_tokens_per_day))


def limits_of(key: MemoryKey) -> Limits:
    return Limits(key.requests_per_minute, key.provider_tokens_per_day, key.memory_tokens_per_day)


async def admit(db: Database, key: MemoryKey, now: float) -> None:
    """Count the call against ``key``'s limits, or refuse it with ``RateLimited`` (not counted)."""
    limits = limits_of(key)
    if not limits.any:
        return
    if limits.requests_per_minute is None:
        _refuse_if_spent(limits, *await tokens_today(db, key.id, now), now)
        return
    sql, params = _admit_statement(key.id, limits, now)
    if not await db.query(sql, params):
        _refuse_if_spent(limits, *await tokens_today(db, key.id, now), now)
        _refuse(f"{limits.requests_per_minute} requests a minute", _seconds_left(now, MINUTE))


async def admit_call(db: Database, key: MemoryKey | None, now: float) -> None:
    """``admit`` for the memory router, which fails open: a call whose key could not be looked up
    (``None``), or whose count the database could not take, goes through, as it would go through
    without memory."""
    if key is None:
        return
    try:
        await admit(db, key, now)
    except RateLimited:
        raise
    except Exception as exc:
        log.warning("checking the key's limits failed, admitting the call: %s", type(exc).__name__)


def _admit_statement(key_id: str, limits: Limits, now: float) -> tuple[str, list[Any]]:
    conditions, params = ["1"], [key_id, int(now // MINUTE)]
    for total, limit in ((_PROVIDER, limits.provider_tokens_per_day), (_MEMORY, limits.memory_tokens_per_day)):
        if limit is not None:
            conditions.append(_TODAY_SUM.format(sum=total))
            params += [key_id, day_of(now), limit]
    sql = (
        "INSERT INTO usage_minutes (key_id, minute, calls) SELECT ?, ?, 1 WHERE " + " AND ".join(conditions) +
        " ON CONFLICT (key_id) DO UPDATE SET"
        " calls = CASE WHEN minute = excluded.minute THEN calls + 1 ELSE 1 END, minute = excluded.minute"
        " WHERE minute <> excluded.minute OR calls < ? RETURNING calls"
    )
    return sql, [*params, limits.requests_per_minute]


def _refuse_if_spent(limits: Limits, provider: int, memory: int, now: float) -> None:
    for spent, limit, what in ((provider, limits.provider_tokens_per_day, "provider tokens"),
                               (memory, limits.memory_tokens_per_day, "memory tokens")):
        if limit is not None and spent >= limit:
            _refuse(f"{limit} {what} a day (UTC)", _seconds_left(now, DAY))


def _refuse(limit: str, retry_after: int) -> NoReturn:
    # The wait is in the message too: an RPC or MCP caller gets the message without the header.
    raise RateLimited(f"this memory key's limit of {limit} is reached; try again in {retry_after} s", retry_after)


def _seconds_left(now: float, period: int) -> int:
    """Whole seconds until the current UTC minute or day ends (at least 1)."""
    return max(1, math.ceil((now // period + 1) * period - now))
