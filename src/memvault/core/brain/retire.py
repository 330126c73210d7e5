"""``retire_fact``: a writer ends a fact by hand. The fact is superseded by nothing and never
deleted: it stays readable ``as_of`` any moment before, and its history shows the retirement with
the reason (kept in ``fact_retirements``; the event log holds no text). Nothing else changes: no
other fact, no proposal, no skill."""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from typing import Any

from memvault.core.brain.commands import CheckedRetirement
from memvault.core.brain.fact_vectors import retire_vectors
from memvault.core.brain.freshness import bumps
from memvault.core.brain.plan import Statement
from memvault.core.brain.results import FactRetired, FactRetirement
from memvault.core.brain.rows import readable_ids
from memvault.core.brain.scopes import Credential, scope_filter
from memvault.core.brain.skills import skill_source
from memvault.core.deps import Deps
from memvault.core.errors import Conflict, NotFound
from memvault.core.sql import in_batches, placeholders

_STILL_CURRENT = "WHERE EXISTS (SELECT 1 FROM memory WHERE id = ? AND superseded_at IS NULL)"
_COLUMNS = "fact_id, reason, retired_at, retired_by, redacted"


async def retire_fact(deps: Deps, credential: Credential, command: CheckedRetirement) -> FactRetired:
    row = await _current_row(deps, credential, command.id)
    now, claim = deps.clock(), secrets.token_hex(8)
    redacted = ",".join(command.redacted)
    # The reason and the event are written only while the fact is still current, in the same
    # transaction that ends it, so of two requests racing only the first leaves its reason.
    statements: list[Statement] = [
        (f"INSERT INTO fact_retirements ({_COLUMNS}, claim) SELECT ?, ?, ?, ?, ?, ? {_STILL_CURRENT} "
         "ON CONFLICT (fact_id) DO UPDATE SET reason = excluded.reason, retired_at = excluded.retired_at, "
         "retired_by = excluded.retired_by, redacted = excluded.redacted, claim = excluded.claim",
         (row["id"], command.reason, now, credential.name, redacted, claim, row["id"])),
        ("INSERT INTO event_log (at, actor, action, memory_id, scope, source, detail) "
         f"SELECT ?, ?, 'retired', ?, ?, ?, ? {_STILL_CURRENT}",
         (now, credential.name, row["id"], row["scope"], row["source"],
          json.dumps({"by_hand": True, "redacted": list(command.redacted), "superseded_by": None}, sort_keys=True),
          row["id"])),
        ("UPDATE memory SET superseded_at = ?, superseded_by = NULL, updated_at = ? "
         "WHERE id = ? AND superseded_at IS NULL", (now, now, row["id"])),
        *bumps([row["scope"]]),
    ]
    await deps.db.batch(statements)
    mine = await deps.db.query("SELECT 1 FROM fact_retirements WHERE fact_id = ? AND claim = ?", [row["id"], claim])
    if not mine:
        raise Conflict(f"fact {row['id']} was retired or superseded by another request")
    await retire_vectors(deps)
    return FactRetired(row["id"], "retired", FactRetirement(command.reason, now, credential.name,
                                                            list(command.redacted)))


async def _current_row(deps: Deps, credential: Credential, fact_id: str) -> dict[str, Any]:
    wall, params = scope_filter(credential)
    rows = await deps.db.query(
        f"SELECT id, scope, source, entry_type, superseded_at, superseded_by FROM memory WHERE {wall} AND id = ?",
        [*params, fact_id])
    if not rows:
        # The same answer for "absent" and "behind a wall".
        raise NotFound("no such fact")
    row = rows[0]
    if row["superseded_at"] is not None:
        raise Conflict(await _ended(deps, credential, row))
    if str(row["source"]).startswith(skill_source(row["scope"], "")):
        raise Conflict(f"fact {fact_id} mirrors a skill; the skill's own versions replace it")
    return row


async def _ended(deps: Deps, credential: Credential, row: dict[str, Any]) -> str:
    # A successor past the caller's wall is not named, nor told apart from none: such a fact reads
    # as retired, as its history shows it.
    successor = row["superseded_by"]
    if successor is not None and successor in await readable_ids(deps, credential, [successor]):
        return f"fact {row['id']} is already superseded by {successor}"
    return f"fact {row['id']} is already retired"


async def retirements_of(deps: Deps, rows: Sequence[dict[str, Any]]) -> dict[str, FactRetirement]:
    """The standing hand retirements of ``rows`` (fact rows already read through the wall): only
    one whose moment is the row's end, so a fact revived and later superseded shows no old reason."""
    ended = {row["id"]: row["superseded_at"] for row in rows
             if row["superseded_at"] is not None and row["superseded_by"] is None}
    found: dict[str, FactRetirement] = {}
    for group in in_batches(sorted(ended)):
        for r in await deps.db.query(
                f"SELECT {_COLUMNS} FROM fact_retirements WHERE fact_id IN ({placeholders(len(group))})", list(group)):
            if float(r["retired_at"]) == float(ended[r["fact_id"]]):
                found[r["fact_id"]] = FactRetirement(r["reason"], float(r["retired_at"]), r["retired_by"],
                                                     [k for k in str(r["redacted"]).split(",") if k])
    return found
