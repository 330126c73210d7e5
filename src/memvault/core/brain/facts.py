"""``ingest_facts``: the one brain write path (HTTP, RPC, sync and skills all use it). Idempotent
by id, atomic in the database, source-scoped reconcile, an ``event_log`` row for every change.
Bodies longer than the hook go to the blob store first; embeddings follow the database write and,
if they fail, are left for the nightly re-embed rather than failing the write."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from functools import partial
from typing import Any

from memvault.core.brain.fact_input import FactInput, WriteRequest, parse_write
from memvault.core.brain.freshness import bumps
from memvault.core.brain.rows import BODY_PREFIX, body_key, readable_ids
from memvault.core.brain.scopes import Credential, scope_filter
from memvault.core.deps import Deps
from memvault.core.errors import Conflict, InvalidInput
from memvault.core.retry import is_transient_storage, retry
from memvault.core.sql import in_batches, placeholders

log = logging.getLogger(__name__)
Statement = tuple[str, Sequence[Any]]
_META = ("entry_type", "source_tier", "confidence", "pinned")


def hook_of(content: str, limit: int) -> str:
    """The part of a long body kept inline: cut at a word boundary when one is near."""
    if len(content) <= limit:
        return content
    cut = content[: max(limit - 1, 1)]
    space = cut.rfind(" ")
    if space > limit * 0.6:
        cut = cut[:space]
    return cut.rstrip() + "…"


def event(at: float, actor: str, action: str, row_id: str, scope: str, source: str, **detail: Any) -> Statement:
    return (
        "INSERT INTO event_log (at, actor, action, memory_id, scope, source, detail) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (at, actor, action, row_id, scope, source, json.dumps(detail, sort_keys=True)),
    )


async def _existing(deps: Deps, ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    # Identity check of the write path: it returns no content, only whether an id is taken.
    found: dict[str, dict[str, Any]] = {}
    for group in in_batches(list(ids)):
        sql = f"SELECT id, scope, superseded_at, {', '.join(_META)} FROM memory WHERE id IN ({placeholders(len(group))})"
        for row in await deps.db.query(sql, list(group)):
            found[row["id"]] = row
    return found


async def _retire_candidates(deps: Deps, credential: Credential, request: WriteRequest) -> list[dict[str, Any]]:
    wall, params = scope_filter(credential)
    base = f"SELECT id, scope, source FROM memory WHERE {wall} AND superseded_at IS NULL"
    if request.source_prefix is not None:
        prefix = request.source_prefix
        rows = await deps.db.query(f"{base} AND substr(source, 1, ?) = ?", [*params, len(prefix), prefix])
    else:
        rows = []
        for group in in_batches(list(request.sources)):
            rows += await deps.db.query(f"{base} AND source IN ({placeholders(len(group))})", [*params, *group])
    keep = {item.id for item in request.items}
    return [row for row in rows if row["id"] not in keep]


async def _superseded_targets(deps: Deps, credential: Credential, items: Sequence[FactInput]) -> dict[str, Any]:
    """The facts named by ``supersedes`` that still need retiring. One already superseded by the
    same new fact is fine (the batch is being re-sent); one superseded by another is a conflict."""
    wanted = {i.supersedes: i.id for i in items if i.supersedes and i.supersedes != i.id}
    if not wanted:
        return {}
    wall, params = scope_filter(credential)
    found: dict[str, Any] = {}
    for group in in_batches(sorted(wanted)):
        for row in await deps.db.query(
            f"SELECT id, scope, source, valid_from, superseded_at, superseded_by FROM memory WHERE {wall} "
            f"AND id IN ({placeholders(len(group))})",
            [*params, *group],
        ):
            found[row["id"]] = row
    missing = sorted(fid for fid in wanted if fid not in found)
    if missing:
        raise InvalidInput(f"supersedes names no fact this credential may write: {', '.join(missing)}")
    pending = {}
    for fid, row in sorted(found.items()):
        if row["superseded_at"] is None:
            pending[fid] = row
        elif row["superseded_by"] != wanted[fid]:
            raise Conflict(await _already_superseded(deps, credential, fid, row["superseded_by"]))
    return pending


async def _already_superseded(deps: Deps, credential: Credential, fid: str, successor: str | None) -> str:
    # The successor may sit in a scope this credential cannot read (a writer of several scopes
    # superseded across them); then the message reads as it does with no successor at all.
    if successor and successor in await readable_ids(deps, credential, [successor]):
        return f"{fid} is already superseded by {successor}; supersede that fact instead"
    return f"{fid} is already superseded"


class _Plan:
    """The statements of one write, gathered so they run as one atomic batch, with the counts."""

    def __init__(self, now: float, actor: str) -> None:
        self.now, self.actor = now, actor
        self.statements: list[Statement] = []
        self.counts = dict.fromkeys(("written", "unchanged", "updated", "revived", "superseded", "retired"), 0)
        self.touched: list[FactInput] = []
        self.scopes: set[str] = set()

    def _add(self, action: str, sql: str, params: Sequence[Any], row_id: str, scope: str, source: str,
             **detail: Any) -> None:
        self.statements.append((sql, params))
        self.statements.append(event(self.now, self.actor, action, row_id, scope, source, **detail))
        self.counts[action] += 1
        self.scopes.add(scope)

    def insert(self, item: FactInput, content: str, body_uri: str | None) -> None:
        self._add("written",
                  "INSERT INTO memory (id, entry_type, scope, source, source_tier, content, confidence, valid_from, "
                  "body_uri, content_hash, updated_at, created_at, pinned, redacted) "
                  "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                  (item.id, item.entry_type, item.scope, item.source, item.source_tier, content, item.confidence,
                   self._valid_from(item), body_uri, item.content_hash, self.now, self.now, int(item.pinned),
                   ",".join(item.redacted)),
                  item.id, item.scope, item.source, content_hash=item.content_hash, redacted=list(item.redacted))
        self.touched.append(item)

    def revive(self, item: FactInput) -> None:
        # A retired fact sent again starts a new validity period under the same id.
        self._add("revived",
                  "UPDATE memory SET superseded_at = NULL, superseded_by = NULL, valid_from = ?, updated_at = ?, "
                  "entry_type = ?, source_tier = ?, confidence = ?, pinned = ? WHERE id = ?",
                  (self._valid_from(item), self.now, item.entry_type, item.source_tier, item.confidence,
                   int(item.pinned), item.id),
                  item.id, item.scope, item.source)
        self.touched.append(item)

    def update(self, item: FactInput) -> None:
        self._add("updated",
                  "UPDATE memory SET entry_type = ?, source_tier = ?, confidence = ?, pinned = ?, updated_at = ? "
                  "WHERE id = ?",
                  (item.entry_type, item.source_tier, item.confidence, int(item.pinned), self.now, item.id),
                  item.id, item.scope, item.source)
        self.touched.append(item)

    def retire(self, action: str, row: dict[str, Any], until: float, heir: str | None) -> None:
        self._add(action,
                  "UPDATE memory SET superseded_at = ?, superseded_by = ?, updated_at = ? "
                  "WHERE id = ? AND superseded_at IS NULL",
                  (until, heir, self.now, row["id"]),
                  row["id"], row["scope"], row["source"], superseded_by=heir)

    def _valid_from(self, item: FactInput) -> float:
        return item.valid_from if item.valid_from is not None else self.now


def _meta_changed(item: FactInput, row: dict[str, Any]) -> bool:
    return (item.entry_type, item.source_tier, float(item.confidence), int(item.pinned)) != (
        row["entry_type"], row["source_tier"], float(row["confidence"]), int(row["pinned"]))


async def _store_body(deps: Deps, item: FactInput) -> tuple[str, str | None]:
    """The row's content (the hook) and body URI; a long body goes to the blob store first."""
    content = hook_of(item.content, deps.settings.brain_hook_chars)
    if content == item.content:
        return content, None
    key = body_key(item.content_hash)
    await deps.blobs.put(key, item.content.encode("utf-8"), "text/markdown; charset=utf-8")
    return content, BODY_PREFIX + key


async def ingest_facts(deps: Deps, credential: Credential, payload: Any) -> dict[str, Any]:
    async def plan_and_write() -> tuple[WriteRequest, _Plan]:
        request, plan = await plan_facts(deps, credential, payload)
        if plan.statements:
            await deps.db.batch(plan.statements)
        return request, plan

    # Planned again on each try: a batch that landed though its answer was lost is then seen as
    # unchanged rather than written twice (its rows, still unembedded, go to the nightly re-embed).
    request, plan = await retry(plan_and_write, is_transient_storage)
    hook_chars = deps.settings.brain_hook_chars
    embedding = await embed_facts(deps, [(i.id, hook_of(i.content, hook_chars), i.scope, i.entry_type)
                                         for i in plan.touched])
    redacted = [{"id": i.id, "kinds": list(i.redacted)} for i in request.items if i.redacted]
    return {**plan.counts, "ids": [i.id for i in request.items], "redacted": redacted, "embedding": embedding}


def _taken_elsewhere(credential: Credential, item: FactInput, scope: str) -> str:
    """Ids are md5(source|fact) across scopes, so the same source and text cannot live in two
    scopes. The refusal names the caller's own id, and the other scope only if it may read it."""
    where = f"in scope {scope!r}" if scope in credential.scopes else "in another scope"
    return f"fact {item.id} already exists {where}; give it another source to store it in {item.scope!r}"


def _sole_successors(items: Sequence[FactInput]) -> dict[str, str]:
    """A source whose new version is exactly one fact (a file, a skill) gets a supersession chain."""
    by_source: dict[str, list[str]] = {}
    for item in items:
        by_source.setdefault(item.source, []).append(item.id)
    return {source: ids[0] for source, ids in by_source.items() if len(ids) == 1}


async def plan_facts(deps: Deps, credential: Credential, payload: Any) -> tuple[WriteRequest, _Plan]:
    """Every check, read and blob write of a brain write, returning its statements unrun: ``ingest_facts``
    runs them as one batch, skill registration inside its own batch; ``plan.touched`` is embedded after."""
    request = parse_write(payload, credential, deps.settings.brain_max_batch)
    existing = await _existing(deps, [item.id for item in request.items])
    for item in request.items:
        row = existing.get(item.id)
        if row is not None and row["scope"] != item.scope:
            raise Conflict(_taken_elsewhere(credential, item, row["scope"]))
    targets = await _superseded_targets(deps, credential, request.items)
    retiring = await _retire_candidates(deps, credential, request) if request.reconcile else []
    plan = _Plan(deps.clock(), credential.name)
    for item in request.items:
        row = existing.get(item.id)
        if row is None:
            plan.insert(item, *await _store_body(deps, item))
        elif row["superseded_at"] is not None:
            plan.revive(item)
        elif _meta_changed(item, row):
            plan.update(item)
        else:
            plan.counts["unchanged"] += 1
        target = targets.get(item.supersedes or "")
        if target is not None:
            # Valid time: the old fact stops being true when the new one starts, if that is known.
            later = item.valid_from is not None and item.valid_from > target["valid_from"]
            plan.retire("superseded", target, item.valid_from if later and item.valid_from else plan.now, item.id)
    successor = _sole_successors(request.items)
    for row in retiring:
        if row["id"] not in targets:
            plan.retire("retired", row, plan.now, successor.get(row["source"]))
    plan.statements += bumps(plan.scopes)
    return request, plan


async def embed_facts(deps: Deps, rows: Sequence[tuple[str, str, str, str]]) -> str:
    """Embed ``(id, text, scope, entry_type)`` rows into the vector index; scope travels as
    metadata so vector search can be walled before the database re-check."""
    if not rows:
        return "none"
    try:
        for group in in_batches(list(rows), 32):
            vectors = await deps.embedder.embed([text for _, text, _, _ in group])
            await deps.vectors.upsert([(row_id, vector, {"scope": scope, "entry_type": kind})
                                       for (row_id, _, scope, kind), vector in zip(group, vectors, strict=True)])
            now = deps.clock()
            marks: list[tuple[str, Sequence[Any]]] = [
                ("UPDATE memory SET embed_id = ?, embedded_at = ? WHERE id = ?", (row_id, now, row_id))
                for row_id, _, _, _ in group
            ]
            marks += bumps(scope for _, _, scope, _ in group)  # hybrid answers change with the vectors
            await retry(partial(deps.db.batch, marks), is_transient_storage)
    except Exception as exc:  # the write has landed; the nightly re-embed picks these rows up
        log.warning("brain embedding deferred for %d rows: %s", len(rows), type(exc).__name__)
        return "deferred"
    return "done"


async def embed_pending(deps: Deps, credential: Credential, limit: int) -> int:
    """For the nightly cron: embed current rows never embedded or changed since."""
    wall, params = scope_filter(credential)
    rows = await deps.db.query(
        f"SELECT id, content, scope, entry_type FROM memory WHERE {wall} AND superseded_at IS NULL "
        "AND (embedded_at IS NULL OR embedded_at < updated_at) ORDER BY updated_at LIMIT ?", [*params, limit])
    await embed_facts(deps, [(r["id"], r["content"], r["scope"], r["entry_type"]) for r in rows])
    return len(rows)
