"""What every brain read shares: the visibility predicate (scope wall + point in time), the
public shape of a fact, and input parsing helpers that give clear errors."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from memvault.core.brain.scopes import Credential, scope_filter
from memvault.core.errors import InvalidInput


class EntryType(StrEnum):
    """What kind of entry a brain row is. The HTTP schemas list these same values."""

    USER = "user"
    FEEDBACK = "feedback"
    PROJECT = "project"
    REFERENCE = "reference"
    FACT = "fact"
    SKILL = "skill"
    LOOP = "loop"


ENTRY_TYPES = tuple(kind.value for kind in EntryType)
FACT_COLUMNS = (
    "id, entry_type, scope, source, source_tier, content, confidence, valid_from, superseded_at, "
    "superseded_by, body_uri, embed_id, content_hash, embedded_at, updated_at, created_at, pinned, redacted"
)
BODY_PREFIX = "blob:"


def visible(credential: Credential, as_of: float | None, alias: str = "") -> tuple[str, list[Any]]:
    """The WHERE fragment every brain read carries: the credential's scopes, and either the
    current rows or the rows valid at ``as_of``."""
    prefix = f"{alias}." if alias else ""
    wall, params = scope_filter(credential, f"{prefix}scope")
    params_out: list[Any] = list(params)
    if as_of is None:
        return f"{wall} AND {prefix}superseded_at IS NULL", params_out
    when = (
        f"{prefix}valid_from <= ? AND ({prefix}superseded_at IS NULL OR {prefix}superseded_at > ?)"
    )
    return f"{wall} AND {when}", [*params_out, as_of, as_of]


def fact_out(row: dict[str, Any], **extra: Any) -> dict[str, Any]:
    """The public, JSON-able shape of a fact row."""
    return {
        "id": row["id"],
        "entry_type": row["entry_type"],
        "scope": row["scope"],
        "source": row["source"],
        "source_tier": row["source_tier"],
        "content": row["content"],
        "confidence": row["confidence"],
        "valid_from": row["valid_from"],
        "superseded_at": row["superseded_at"],
        "superseded_by": row["superseded_by"],
        "has_body": bool(row["body_uri"]),
        "content_hash": row["content_hash"],
        "updated_at": row["updated_at"],
        "pinned": bool(row["pinned"]),
        "redacted": [k for k in str(row.get("redacted") or "").split(",") if k],
        **extra,
    }


def parse_bounded_int(value: Any, name: str, default: int, maximum: int) -> int:
    """An integer query parameter in [1, maximum]; absent or empty means ``default``."""
    if value is None or value == "":
        return default
    try:
        number = int(value)
    except (TypeError, ValueError) as exc:
        raise InvalidInput(f"{name} must be an integer") from exc
    if not 1 <= number <= maximum:
        raise InvalidInput(f"{name} must be between 1 and {maximum}")
    return number


def parse_limit(value: Any, default: int, maximum: int = 200) -> int:
    return parse_bounded_int(value, "limit", default, maximum)


def parse_entry_type(value: Any) -> str | None:
    if value is None or value == "":
        return None
    if value not in ENTRY_TYPES:
        raise InvalidInput(f"type must be one of {', '.join(ENTRY_TYPES)}")
    return str(value)


def body_key(content_hash: str) -> str:
    return f"brain/bodies/{content_hash}.md"


def blob_key_of(body_uri: str) -> str:
    return body_uri.removeprefix(BODY_PREFIX)
