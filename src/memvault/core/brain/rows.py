"""What every brain read shares: the visibility predicate (scope wall + point in time) and the
public fields of a fact with its links walled."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from enum import StrEnum
from typing import Any

from memvault.core.brain.scopes import Credential, scope_filter
from memvault.core.deps import Deps
from memvault.core.sql import in_batches, placeholders


class EntryType(StrEnum):
    """What kind of entry a brain row is. The HTTP schemas list these same values."""

    USER = "user"
    FEEDBACK = "feedback"
    PROJECT = "project"
    REFERENCE = "reference"
    FACT = "fact"
    SKILL = "skill"
    LOOP = "loop"


FACT_COLUMNS = (
    "id, entry_type, scope, source, source_tier, content, confidence, valid_from, superseded_at, "
    "superseded_by, body_uri, embed_id, content_hash, embedded_at, updated_at, created_at, pinned, redacted, importance"
)
BODY_PREFIX = "blob:"
BODY_CONTENT_TYPE = "text/markdown; charset=utf-8"


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


async def readable_ids(deps: Deps, credential: Credential, ids: Iterable[str]) -> set[str]:
    """Which of ``ids`` name a row (current or not) in the credential's scopes."""
    wall, params = scope_filter(credential)
    found: set[str] = set()
    for group in in_batches(sorted(set(ids))):
        sql = f"SELECT id FROM memory WHERE {wall} AND id IN ({placeholders(len(group))})"
        found.update(row["id"] for row in await deps.db.query(sql, [*params, *group]))
    return found


async def walled_side_rows(
    deps: Deps, credential: Credential, table: str, columns: str, key: str, values: Iterable[str]
) -> list[dict[str, Any]]:
    """Rows of a table beside ``memory`` (aliased ``t``, tied to a fact by ``t.fact_id``) whose
    ``t.<key>`` is among ``values`` and whose fact the credential may read."""
    wall, params = scope_filter(credential, "m.scope")
    found: list[dict[str, Any]] = []
    for group in in_batches(sorted(set(values))):
        found += await deps.db.query(
            f"SELECT {columns} FROM {table} t CROSS JOIN memory m ON m.id = t.fact_id "
            f"WHERE {wall} AND t.{key} IN ({placeholders(len(group))})", [*params, *group])
    return found


async def readable_links(deps: Deps, credential: Credential, rows: Sequence[dict[str, Any]]) -> set[str]:
    """The ids ``fact_fields`` may show as links of ``rows``, which were read through the wall. A
    writer holding several scopes may supersede a fact from another scope, so a link can point
    past the reader's wall; such a link is shown as null, never as the other row's id."""
    own = {row["id"] for row in rows}
    linked = {row["superseded_by"] for row in rows if row["superseded_by"]} - own
    return own | await readable_ids(deps, credential, linked)


def fact_fields(row: dict[str, Any], readable: Collection[str]) -> dict[str, Any]:
    """The fields of ``results.Fact`` from a fact row; ``readable`` comes from ``readable_links``."""
    successor = row["superseded_by"]
    return {
        "id": row["id"],
        "entry_type": row["entry_type"],
        "scope": row["scope"],
        "source": row["source"],
        "source_tier": row["source_tier"],
        "content": row["content"],
        # D1 hands a whole number over as an int: these are floats on every runtime.
        "confidence": float(row["confidence"]),
        "valid_from": float(row["valid_from"]),
        "superseded_at": None if row["superseded_at"] is None else float(row["superseded_at"]),
        "superseded_by": successor if successor in readable else None,
        "has_body": bool(row["body_uri"]),
        "content_hash": row["content_hash"],
        "updated_at": float(row["updated_at"]),
        "pinned": bool(row["pinned"]),
        "importance": row.get("importance", 3),
        "redacted": [k for k in str(row.get("redacted") or "").split(",") if k],
    }


def body_key(content_hash: str) -> str:
    return f"brain/bodies/{content_hash}.md"


def blob_key_of(body_uri: str) -> str:
    return body_uri.removeprefix(BODY_PREFIX)
