"""What the usage and limits operations answer, on every surface (HTTP, the CLI, the portal)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memvault.core.shapes import doc
from memvault.core.usage.meter import COUNTS, CallUsage

_NO_LIMIT = " null: none."


@dataclass(frozen=True)
class UsageRow(CallUsage):
    """One group's counts: the group's own field is set, the others are null."""

    day: str | None = field(default=None, metadata=doc("The UTC day (YYYY-MM-DD), when grouped by day."))
    model: str | None = field(default=None, metadata=doc(
        "The model the calls named (\"\" for searches and stores), when grouped by model."))
    key_id: str | None = field(default=None, metadata=doc("The memory key's id, when grouped by key."))


@dataclass(frozen=True)
class UsageReport:
    """Usage over a span of UTC days, grouped."""

    from_day: str = field(metadata=doc("The first day counted (YYYY-MM-DD, UTC)."))
    to_day: str = field(metadata=doc("The last day counted (YYYY-MM-DD, UTC)."))
    group_by: str = field(metadata=doc("day, model or key."))
    rows: tuple[UsageRow, ...] = field(metadata=doc("One row per group that used anything, in the group's order."))
    total: CallUsage = field(metadata=doc("Every row added up."))


@dataclass(frozen=True)
class KeyLimits:
    """A memory key's limits."""

    id: str = field(metadata=doc("The key's id (key_…)."))
    requests_per_minute: int | None = field(metadata=doc("Calls admitted per UTC minute;" + _NO_LIMIT))
    provider_tokens_per_day: int | None = field(metadata=doc(
        "Provider input plus output tokens per UTC day;" + _NO_LIMIT))
    memory_tokens_per_day: int | None = field(metadata=doc("Memory tokens injected per UTC day;" + _NO_LIMIT))


def counts(row: dict[str, Any]) -> dict[str, int]:
    return {name: int(row.get(name) or 0) for name in COUNTS}


def report(first_day: str, last_day: str, group_by: str, found: list[dict[str, Any]]) -> UsageReport:
    column = {"key": "key_id"}.get(group_by, group_by)
    rows = tuple(_row(counts(row), column, str(row[column])) for row in found)
    total = sum((CallUsage(**counts(row)) for row in found), CallUsage())
    return UsageReport(first_day, last_day, group_by, rows, total)


def _row(summed: dict[str, int], column: str, value: str) -> UsageRow:
    named: dict[str, Any] = {**summed, column: value}
    return UsageRow(**named)
