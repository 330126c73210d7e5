"""What the usage and limits operations take, checked in one place (``Spec.values``): a query
string, a JSON body or argv becomes a typed command, or ``InvalidField`` naming the field."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

from memvault.core.contract import Choice, Identifier, Rule, Spec, WholeNumber
from memvault.core.errors import InvalidField
from memvault.core.usage.ledger import day_of

MAX_DAYS = 400
KEY_GROUPS = ("day", "model")
ADMIN_GROUPS = ("day", "model", "key")


@dataclass(frozen=True)
class Day(Rule):
    """A UTC day written YYYY-MM-DD."""

    def parse(self, value: object, where: str) -> str:
        try:
            if not isinstance(value, str) or len(value) != 10:
                raise ValueError(value)
            return date.fromisoformat(value).isoformat()
        except ValueError:
            raise InvalidField(f"{where} must be a day written YYYY-MM-DD") from None

    def schema(self) -> dict[str, Any]:
        return {"type": "string", "format": "date"}


def _usage_spec(name: str, groups: tuple[str, ...]) -> Spec:
    return Spec(name, (
        Day("from", "The first day counted, YYYY-MM-DD (UTC); default: `to`, or today."),
        Day("to", "The last day counted, YYYY-MM-DD (UTC), at most 400 days after `from`; default: today."),
        Choice("group_by", f"One row per {', per '.join(groups)} (default: day).", options=groups, default="day"),
    ))


USAGE_REQUEST = _usage_spec("UsageRequest", KEY_GROUPS)
ADMIN_USAGE_REQUEST = _usage_spec("AdminUsageRequest", ADMIN_GROUPS)
_LIMIT = "null or left out: no limit."
LIMITS_REQUEST = Spec("LimitsRequest", (
    Identifier("id", "The memory key's id (key_…).", required=True, stored=True),
    WholeNumber("requests_per_minute", f"Calls admitted per UTC minute; {_LIMIT}", least=1),
    WholeNumber("provider_tokens_per_day", f"Provider input plus output tokens per UTC day; {_LIMIT}", least=1),
    WholeNumber("memory_tokens_per_day", f"Memory tokens injected per UTC day; {_LIMIT}", least=1),
), description="Every limit of the key, replacing those it had.",
    examples=({"id": "key_0123456789abcdef", "requests_per_minute": 60, "provider_tokens_per_day": 2_000_000},))
KEY_ID_REQUEST = Spec("KeyIdRequest", (Identifier("id", "The memory key's id (key_…).", required=True, stored=True),))


@dataclass(frozen=True)
class UsageQuery:
    first_day: str
    last_day: str
    group_by: str


@dataclass(frozen=True)
class SetLimits:
    id: str
    requests_per_minute: int | None = None
    provider_tokens_per_day: int | None = None
    memory_tokens_per_day: int | None = None


@dataclass(frozen=True)
class KeyId:
    id: str


def _usage_query(spec: Spec, data: object, now: float, text: bool) -> UsageQuery:
    values = spec.values(data, text=text)
    last = values["to"] or (values["from"] if values["from"] and values["from"] > day_of(now) else day_of(now))
    first = values["from"] or last
    if first > last:
        raise InvalidField("from must not be after to")
    if date.fromisoformat(last) - date.fromisoformat(first) > timedelta(days=MAX_DAYS):
        raise InvalidField(f"from and to must be at most {MAX_DAYS} days apart")
    return UsageQuery(first, last, values["group_by"])


def parse_usage(data: object, now: float, text: bool = False) -> UsageQuery:
    return _usage_query(USAGE_REQUEST, data, now, text)


def parse_admin_usage(data: object, now: float, text: bool = False) -> UsageQuery:
    return _usage_query(ADMIN_USAGE_REQUEST, data, now, text)


def parse_limits(data: object, text: bool = False) -> SetLimits:
    return SetLimits(**LIMITS_REQUEST.values(data, text=text))


def parse_key_id(data: object, text: bool = False) -> KeyId:
    return KeyId(**KEY_ID_REQUEST.values(data, text=text))
