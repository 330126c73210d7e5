"""Brain reads beside search and recall: a fact's full body, its supersession chain, export of
everything a credential may read, and push/pull sync. Every query carries the scope wall."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memvault.core.brain.fact_vectors import full_text
from memvault.core.brain.facts import ingest_facts
from memvault.core.brain.rows import FACT_COLUMNS, fact_out, readable_links
from memvault.core.brain.scopes import Credential, scope_filter
from memvault.core.deps import Deps
from memvault.core.errors import InvalidInput, NotFound
from memvault.core.times import parse_time

MAX_CHAIN = 200
PAGE = 200
Row = dict[str, Any]


def _fact_id(value: Any) -> str:
    if not isinstance(value, str) or not value.startswith("mem-") or len(value) > 64:
        raise InvalidInput("id must be a fact id (mem-...)")
    return value


async def _row(deps: Deps, credential: Credential, fact_id: str) -> Row | None:
    wall, params = scope_filter(credential)
    rows = await deps.db.query(f"SELECT {FACT_COLUMNS} FROM memory WHERE {wall} AND id = ?", [*params, fact_id])
    return rows[0] if rows else None


async def _full_text(deps: Deps, row: Row) -> str:
    text = await full_text(deps, row)
    if text is None:
        raise NotFound(f"the body of {row['id']} is missing from the blob store")
    return text


async def get_body(deps: Deps, credential: Credential, fact_id: Any) -> dict[str, Any]:
    row = await _row(deps, credential, _fact_id(fact_id))
    if row is None:
        # The same answer for "absent" and "behind a wall", so the wall leaks nothing.
        raise NotFound("no such fact")
    return {"id": row["id"], "content_hash": row["content_hash"], "body": await _full_text(deps, row)}


async def history(deps: Deps, credential: Credential, fact_id: Any) -> dict[str, Any]:
    start = await _row(deps, credential, _fact_id(fact_id))
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
    return {"id": start["id"], "chain": [fact_out(r, readable, current=r["superseded_at"] is None) for r in ordered]}


async def export_rows(
    deps: Deps, credential: Credential, source_prefix: Any = None, since: float | None = None, current_only: bool = False
) -> list[dict[str, Any]]:
    """Everything the credential may read under a source prefix, oldest first; current rows with a
    body carry it whole, so an export is enough to rebuild a folder."""
    if source_prefix is not None and not isinstance(source_prefix, str):
        raise InvalidInput("source_prefix must be text")
    wall, params = scope_filter(credential)
    where, extra = wall, list[Any](params)
    if source_prefix:
        where, extra = f"{where} AND substr(source, 1, ?) = ?", [*extra, len(source_prefix), source_prefix]
    if since is not None:
        where, extra = f"{where} AND updated_at > ?", [*extra, since]
    if current_only:
        where += " AND superseded_at IS NULL"
    out: list[dict[str, Any]] = []
    after = 0
    while True:
        page = await deps.db.query(
            f"SELECT seq, {FACT_COLUMNS} FROM memory WHERE {where} AND seq > ? ORDER BY seq LIMIT ?", [*extra, after, PAGE]
        )
        readable = await readable_links(deps, credential, page)
        for row in page:
            current = row["superseded_at"] is None
            body = await _full_text(deps, row) if current and row["body_uri"] else None
            out.append(fact_out(row, readable, current=current, body=body))
        if len(page) < PAGE:
            return out
        after = page[-1]["seq"]


async def sync(deps: Deps, credential: Credential, payload: Any) -> dict[str, Any]:
    """``push`` writes ``items`` under ``source`` and retires what that source no longer holds;
    ``pull`` returns what changed under ``source`` since ``since``: current rows and retirements."""
    if not isinstance(payload, Mapping):
        raise InvalidInput("the body must be a JSON object")
    unknown = set(payload) - {"direction", "source", "since", "items"}
    if unknown:
        raise InvalidInput(f"unknown sync fields: {', '.join(sorted(unknown))}")
    direction, source = payload.get("direction"), payload.get("source")
    if not isinstance(source, str) or not source.strip():
        raise InvalidInput("source (a source prefix such as files:) is required")
    if direction == "push":
        items = payload.get("items")
        if not isinstance(items, list):
            raise InvalidInput("push needs items, a list of facts")
        # A folder push mirrors the folder: its files are kept as they are, never merged by the bands.
        result = await ingest_facts(
            deps, credential, {"facts": items, "reconcile": True, "source_prefix": source}, bands=False)
        return {"direction": "push", **result}
    if direction != "pull":
        raise InvalidInput("direction must be push or pull")
    since = parse_time(payload.get("since"), "since")
    now = deps.clock()
    changed = await export_rows(deps, credential, source, since)
    return {
        "direction": "pull",
        "now": now,
        "items": [row for row in changed if row["current"]],
        "retired": [
            {"id": r["id"], "source": r["source"], "superseded_at": r["superseded_at"], "superseded_by": r["superseded_by"]}
            for r in changed
            if not r["current"]
        ],
    }
