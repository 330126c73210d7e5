"""The usage and limits operations as every surface calls them: ``perform(deps, caller,
OPERATION, data)`` parses ``data`` with the operation's one parser and runs it for the caller (a
memory key for ``USAGE``, the admin for the rest)."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from memvault.core.admin.credential import Admin
from memvault.core.contract import Spec
from memvault.core.credentials import keys
from memvault.core.deps import Deps
from memvault.core.usage import commands as c
from memvault.core.usage.ledger import usage_rows
from memvault.core.usage.results import KeyLimits, UsageReport, report

A = TypeVar("A")
C = TypeVar("C")
R = TypeVar("R")
_EVENT = ("INSERT INTO event_log (at, actor, action, memory_id, scope, source, detail) "
          "VALUES (?, ?, ?, NULL, NULL, 'admin', ?)")


@dataclass(frozen=True)
class UsageOperation(Generic[A, C, R]):
    """One operation: its name, what it takes (``request``), its one parser, what it does for its
    caller, and what it answers (``result``)."""

    name: str
    request: Spec
    parse: Callable[[object, float, bool], C]
    run: Callable[[Deps, A, C], Awaitable[R]]
    result: type


async def perform(deps: Deps, caller: A, operation: UsageOperation[A, C, R], data: object, text: bool = False) -> R:
    """Parse ``data`` as ``operation`` takes it (nothing runs if it is refused), then run it."""
    return await operation.run(deps, caller, operation.parse(data, deps.clock(), text))


async def _usage(deps: Deps, key: keys.MemoryKey, query: c.UsageQuery) -> UsageReport:
    found = await usage_rows(deps.db, query.first_day, query.last_day, [query.group_by], key.id)
    return report(query.first_day, query.last_day, query.group_by, found)


async def _admin_usage(deps: Deps, admin: Admin, query: c.UsageQuery) -> UsageReport:
    found = await usage_rows(deps.db, query.first_day, query.last_day, [query.group_by])
    return report(query.first_day, query.last_day, query.group_by, found)


def _limits(key: keys.MemoryKey) -> KeyLimits:
    return KeyLimits(key.id, key.requests_per_minute, key.provider_tokens_per_day, key.memory_tokens_per_day)


async def _set_limits(deps: Deps, admin: Admin, command: c.SetLimits) -> KeyLimits:
    limits = {column: getattr(command, column) for column in keys.LIMIT_COLUMNS}
    event = (_EVENT, (deps.clock(), admin.actor, "key.limits", json.dumps({"id": command.id, **limits}, sort_keys=True)))
    return _limits(await keys.set_limits(deps.db, command.id, limits, deps.reads, also=[event]))


async def _get_limits(deps: Deps, admin: Admin, command: c.KeyId) -> KeyLimits:
    return _limits(await keys.active_key(deps.db, command.id))


def _untimed(parse: Callable[[object, bool], C]) -> Callable[[object, float, bool], C]:
    def parse_at(data: object, now: float, text: bool = False) -> C:
        return parse(data, text)

    parse_at.__name__ = parse.__name__
    return parse_at


USAGE = UsageOperation("usage", c.USAGE_REQUEST, c.parse_usage, _usage, UsageReport)
ADMIN_USAGE = UsageOperation("admin_usage", c.ADMIN_USAGE_REQUEST, c.parse_admin_usage, _admin_usage, UsageReport)
SET_LIMITS = UsageOperation("set_limits", c.LIMITS_REQUEST, _untimed(c.parse_limits), _set_limits, KeyLimits)
GET_LIMITS = UsageOperation("get_limits", c.KEY_ID_REQUEST, _untimed(c.parse_key_id), _get_limits, KeyLimits)
OPERATIONS: tuple[UsageOperation[Any, Any, Any], ...] = (USAGE, ADMIN_USAGE, SET_LIMITS, GET_LIMITS)
