"""A receipt's brain facts as the brain holds them now, beside the messages conversation memory
resolves: the one reader of a receipt every surface runs (``operations.RECEIPT``).

The brain's walls apply when the receipt is read, not when it was made: a fact resolves through
the reading key's grant as it stands today (``grants.credential_of``), so once a scope is no
longer granted (the grant, or the deployment's scopes, narrowed) its facts show their ids alone.
A fact the key may still read shows its text through the secret gate, its scope and validity, and,
once ended, when and how: superseded (naming the version that replaced it) or retired. A successor
behind the wall is not named, so a fact superseded across the wall reads as retired, as the
brain's own history shows it. A fact no longer in the brain at all is gone."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any

from memvault.core.answers.grants import credential_of
from memvault.core.brain.rows import readable_ids
from memvault.core.brain.scopes import Credential, scope_filter
from memvault.core.credentials.keys import MemoryKey
from memvault.core.deps import Deps
from memvault.core.receipts.model import (
    CURRENT,
    FACT,
    GONE,
    RETIRED,
    SUPERSEDED,
    UNREADABLE,
    RecalledMemory,
    ReceiptView,
)
from memvault.core.redaction.recall import recalled
from memvault.core.sql import in_batches, placeholders

Row = dict[str, Any]


async def with_facts(deps: Deps, key: MemoryKey, view: ReceiptView) -> ReceiptView:
    """``view`` (its messages resolved) with the facts its receipt names resolved first, as its items name them."""
    receipt = view.receipt
    named = list(dict.fromkeys(ref for item in (*receipt.items, *receipt.cut) if item.kind == FACT for ref in item.ids))
    if not named:
        return view
    facts = await recalled_facts(deps, credential_of(key, deps.settings), named)
    return ReceiptView(receipt, (*facts, *view.memories))


async def recalled_facts(deps: Deps, credential: Credential | None, ids: Sequence[str]) -> list[RecalledMemory]:
    """Each of ``ids`` as ``credential`` (None: a key granted no scope now) may see it today."""
    held = await _held(deps, ids)
    rows = await _readable_rows(deps, credential, ids) if credential is not None else {}
    successors = {row["superseded_by"] for row in rows.values() if row["superseded_by"]}
    named = await readable_ids(deps, credential, successors) if credential is not None and successors else set()
    return [_resolved(fact_id, rows.get(fact_id), fact_id in held, named) for fact_id in ids]


def _resolved(fact_id: str, row: Row | None, held: bool, named_successors: Collection[str]) -> RecalledMemory:
    if row is None:
        return RecalledMemory(fact_id, FACT, UNREADABLE if held else GONE, None, None, None)
    text = recalled(str(row["content"])).text
    ended, successor = row["superseded_at"], row["superseded_by"]
    if ended is None:
        return RecalledMemory(fact_id, FACT, CURRENT, None, text, float(row["valid_from"]), str(row["scope"]))
    replaced_by = successor if successor in named_successors else None
    return RecalledMemory(fact_id, FACT, SUPERSEDED if replaced_by else RETIRED, None, text, float(row["valid_from"]),
                          str(row["scope"]), float(ended), replaced_by)


async def _held(deps: Deps, ids: Sequence[str]) -> set[str]:
    """Which of ``ids`` the brain still holds, in any scope: ids alone, so nothing of a walled fact is read."""
    found: set[str] = set()
    for batch in in_batches(list(ids)):
        rows = await deps.db.query(f"SELECT id FROM memory WHERE id IN ({placeholders(len(batch))})", batch)
        found.update(str(row["id"]) for row in rows)
    return found


async def _readable_rows(deps: Deps, credential: Credential, ids: Sequence[str]) -> dict[str, Row]:
    """The rows of ``ids`` in the credential's scopes, current or not (the versions the key may read)."""
    wall, params = scope_filter(credential)
    found: dict[str, Row] = {}
    for batch in in_batches(list(ids)):
        for row in await deps.db.query(
            "SELECT id, scope, content, valid_from, superseded_at, superseded_by FROM memory "
            f"WHERE {wall} AND id IN ({placeholders(len(batch))})", [*params, *batch],
        ):
            found[str(row["id"])] = row
    return found
