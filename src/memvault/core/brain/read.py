"""Brain reads beside search and recall: a fact's full body, its supersession chain, export of
everything a credential may read, and push/pull sync. Every query carries the scope wall."""

from __future__ import annotations

from typing import Any

from memvault.core.brain.commands import ExportFacts, FactRef, Sync
from memvault.core.brain.fact_input import WriteFactsIn, check_batch
from memvault.core.brain.fact_vectors import full_text
from memvault.core.brain.facts import write_facts
from memvault.core.brain.results import (
    ExportedFact,
    ExportedFacts,
    FactBody,
    FactHistory,
    HistoryVersion,
    Retirement,
    SyncPulled,
    SyncPushed,
)
from memvault.core.brain.retire import retirements_of
from memvault.core.brain.rows import FACT_COLUMNS, fact_fields, readable_links
from memvault.core.brain.scopes import Credential, scope_filter
from memvault.core.deps import Deps
from memvault.core.errors import NotFound

MAX_CHAIN = 200
PAGE = 200
Row = dict[str, Any]


async def _row(deps: Deps, credential: Credential, fact_id: str) -> Row | None:
    wall, params = scope_filter(credential)
    rows = await deps.db.query(f"SELECT {FACT_COLUMNS} FROM memory WHERE {wall} AND id = ?", [*params, fact_id])
    return rows[0] if rows else None


async def _full_text(deps: Deps, row: Row) -> str:
    text = await full_text(deps, row)
    if text is None:
        raise NotFound(f"the body of {row['id']} is missing from the blob store")
    return text


async def fact_body(deps: Deps, credential: Credential, ref: FactRef) -> FactBody:
    row = await _row(deps, credential, ref.id)
    if row is None:
        # The same answer for "absent" and "behind a wall", so the wall leaks nothing.
        raise NotFound("no such fact")
    return FactBody(id=row["id"], content_hash=row["content_hash"], body=await _full_text(deps, row))


async def fact_history(deps: Deps, credential: Credential, ref: FactRef) -> FactHistory:
    start = await _row(deps, credential, ref.id)
    if start is None:
        raise NotFound("no such fact")
    wall, params = scope_filter(credential)
    chain: dict[str, Row] = {start["id"]: start}
    frontier = [start]
    while frontier and len(chain) < MAX_CHAIN:
        row = frontier.pop()
        found = await deps.db.query(
            f"SELECT {FACT_COLUMNS} FROM memory WHERE {wall} AND (superseded_by = ? OR id = ?)",
            [*params, row["id"], row["superseded_by"] or ""],
        )
        for nxt in found:
            if nxt["id"] not in chain:
                chain[nxt["id"]] = nxt
                frontier.append(nxt)
    ordered = sorted(chain.values(), key=lambda r: (float(r["valid_from"]), float(r["updated_at"]), r["id"]))
    # The walk stops at the wall; the last readable row's link past it reads as null.
    readable = await readable_links(deps, credential, ordered)
    retired = await retirements_of(deps, ordered)
    return FactHistory(id=start["id"], chain=[
        HistoryVersion(**fact_fields(r, readable), current=r["superseded_at"] is None, retirement=retired.get(r["id"]))
        for r in ordered])


async def export_facts(deps: Deps, credential: Credential, command: ExportFacts) -> ExportedFacts:
    return ExportedFacts(await _exported(deps, credential, command.source_prefix))


async def _exported(
    deps: Deps, credential: Credential, source_prefix: str | None, since: float | None = None
) -> list[ExportedFact]:
    """Everything the credential may read under a source prefix, oldest first; current rows with a
    body carry it whole, so an export is enough to rebuild a folder."""
    wall, params = scope_filter(credential)
    where, extra = wall, list[Any](params)
    if source_prefix:
        where, extra = f"{where} AND substr(source, 1, ?) = ?", [*extra, len(source_prefix), source_prefix]
    if since is not None:
        where, extra = f"{where} AND updated_at > ?", [*extra, since]
    out: list[ExportedFact] = []
    after = 0
    while True:
        page = await deps.db.query(
            f"SELECT seq, {FACT_COLUMNS} FROM memory WHERE {where} AND seq > ? ORDER BY seq LIMIT ?", [*extra, after, PAGE]
        )
        readable = await readable_links(deps, credential, page)
        for row in page:
            current = row["superseded_at"] is None
            body = await _full_text(deps, row) if current and row["body_uri"] else None
            out.append(ExportedFact(**fact_fields(row, readable), current=current, body=body))
        if len(page) < PAGE:
            return out
        after = page[-1]["seq"]


async def sync(deps: Deps, credential: Credential, command: Sync) -> SyncPushed | SyncPulled:
    """``push`` writes ``items`` under ``source`` and retires what that source no longer holds;
    ``pull`` returns what changed under ``source`` since ``since``: current rows and retirements."""
    if command.direction == "push":
        # A folder push mirrors the folder: its files are kept as they are, never merged by the bands.
        batch = WriteFactsIn(facts=command.items, reconcile=True, source_prefix=command.source, bands=False)
        result = await write_facts(deps, credential, check_batch(batch, credential, deps.settings, "items"))
        return SyncPushed(**vars(result), direction="push")
    now = deps.clock()
    changed = await _exported(deps, credential, command.source, command.since)
    return SyncPulled(
        direction="pull",
        now=now,
        items=[row for row in changed if row.current],
        retired=[Retirement(r.id, r.source, r.superseded_at, r.superseded_by) for r in changed if not r.current],
    )
