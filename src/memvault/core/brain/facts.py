"""``write_facts``: the one brain write path (HTTP, RPC, sync and skills all use it). Idempotent
by id, screened by the write-time bands, atomic in the database, source-scoped reconcile, an
``event_log`` row for every change. Bodies longer than the hook go to the blob store first;
embeddings follow the database write and, if they fail, are left for the nightly re-embed rather
than failing the write."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from memvault.core.brain.bands import STORED, Screening, Verdict, screen
from memvault.core.brain.fact_input import FactInput, WriteFacts
from memvault.core.brain.fact_vectors import FactText, embed_facts
from memvault.core.brain.freshness import bumps
from memvault.core.brain.plan import Plan
from memvault.core.brain.results import FactsWritten, Redaction
from memvault.core.brain.rows import BODY_CONTENT_TYPE, BODY_PREFIX, body_key, readable_ids
from memvault.core.brain.scopes import Credential, scope_filter
from memvault.core.deps import Deps
from memvault.core.errors import Conflict, InvalidField
from memvault.core.retry import is_transient_or_raced, retry
from memvault.core.sql import in_batches, placeholders

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


async def _identified(
    deps: Deps, credential: Credential, items: Sequence[FactInput]
) -> tuple[dict[str, FactInput], dict[str, dict[str, Any]]]:
    """Each item (by the id it came with) under the id its scope already stores it by, and the
    stored rows by id. A fact stored before ids named their scope keeps its legacy id; any other
    takes its scoped id. Only rows of the item's own scope count, so what other scopes hold
    changes neither an item's id nor whether it is new."""
    wall, params = scope_filter(credential)
    wanted = sorted({i.id for i in items} | {i.legacy_id for i in items})
    rows: dict[str, dict[str, Any]] = {}
    for group in in_batches(wanted):
        sql = (f"SELECT id, scope, superseded_at, {', '.join(_META)} FROM memory WHERE {wall} "
               f"AND id IN ({placeholders(len(group))})")
        for row in await deps.db.query(sql, [*params, *group]):
            rows[row["id"]] = row
    named: dict[str, FactInput] = {}
    existing: dict[str, dict[str, Any]] = {}
    for item in items:
        stored = next((fid for fid in (item.legacy_id, item.id) if fid in rows and rows[fid]["scope"] == item.scope),
                      None)
        named[item.id] = item if stored in (None, item.id) else dataclasses.replace(item, id=stored)
        if stored is not None:
            existing[stored] = rows[stored]
    return named, existing


async def _retire_candidates(deps: Deps, credential: Credential, request: WriteFacts) -> list[dict[str, Any]]:
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
        raise InvalidField(f"supersedes names no fact this credential may write: {', '.join(missing)}")
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


def _meta_changed(item: FactInput, row: dict[str, Any]) -> bool:
    return (item.entry_type, item.source_tier, float(item.confidence), int(item.pinned)) != (
        row["entry_type"], row["source_tier"], float(row["confidence"]), int(row["pinned"]))


async def _store_body(deps: Deps, item: FactInput) -> tuple[str, str | None]:
    """The row's content (the hook) and body URI; a long body goes to the blob store first."""
    content = hook_of(item.content, deps.tuning.brain_hook_chars)
    if content == item.content:
        return content, None
    key = body_key(item.content_hash)
    await deps.blobs.put(key, item.content.encode("utf-8"), BODY_CONTENT_TYPE)
    return content, BODY_PREFIX + key


def _sole_successors(items: Sequence[FactInput]) -> dict[str, str]:
    """A source whose new version is exactly one fact (a file, a skill) gets a supersession chain."""
    by_source: dict[str, list[str]] = {}
    for item in items:
        by_source.setdefault(item.source, []).append(item.id)
    return {source: ids[0] for source, ids in by_source.items() if len(ids) == 1}


async def plan_facts(deps: Deps, credential: Credential, request: WriteFacts) -> Plan:
    """Every check, read and blob write of a brain write (no bands), returning its statements
    unrun, for a caller that runs them inside its own batch (skill registration)."""
    return await plan_request(deps, credential, request, bands=False)


def _screened(items: Sequence[FactInput], screening: Screening) -> list[tuple[FactInput, FactInput | None, Verdict]]:
    """Each incoming fact, what is stored for it (None when blocked; a merge's wording) and its verdict."""
    out: list[tuple[FactInput, FactInput | None, Verdict]] = []
    for item in items:
        verdict = screening.verdicts.get(item.id, STORED)
        stored: FactInput | None = item
        if verdict.decision == "blocked":
            stored = None
        elif verdict.decision == "merge" and verdict.text:
            stored = item.with_content(verdict.text)
        if stored is not None and stored.importance is None and item.id in screening.importance:
            stored = dataclasses.replace(stored, importance=screening.importance[item.id])
        out.append((item, stored, verdict))
    return out


async def plan_request(deps: Deps, credential: Credential, request: WriteFacts, bands: bool) -> Plan:
    named, existing = await _identified(deps, credential, request.items)
    incoming = [named[item.id] for item in request.items]
    screening = Screening()
    if bands:
        hook_chars = deps.tuning.brain_hook_chars
        hooks = {i.id: hook_of(i.content, hook_chars) for i in incoming if i.id not in existing}
        screening = await screen(deps, incoming, hooks)
    screened = _screened(incoming, screening)
    merged = [stored for item, stored, _ in screened if stored is not None and stored.id != item.id]
    if merged:
        renamed, found = await _identified(deps, credential, merged)
        existing.update(found)
        screened = [(item, renamed.get(stored.id, stored) if stored is not None else None, verdict)
                    for item, stored, verdict in screened]
    items = list(dict.fromkeys(stored for _, stored, _ in screened if stored is not None))
    request = dataclasses.replace(request, items=tuple(items))
    targets = await _superseded_targets(deps, credential, request.items)
    retiring = await _retire_candidates(deps, credential, request) if request.reconcile else []
    plan = Plan(deps.clock(), credential.name)
    plan.incoming = incoming
    plan.vectors = screening.vectors
    for item in request.items:
        row = existing.get(item.id)
        if row is None:
            plan.insert(item, *await _store_body(deps, item), deps.tuning.brain_hook_chars)
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
    _apply_verdicts(plan, screened, screening)
    plan.statements += bumps(plan.scopes)
    return plan


def _apply_verdicts(plan: Plan, screened: Sequence[tuple[FactInput, FactInput | None, Verdict]],
                    screening: Screening) -> None:
    """Replace and merge supersede the facts the judge named (their vectors retire once the new
    ones are stored); a contradiction keeps both and links them."""
    for _, stored, verdict in screened:
        plan.decisions.append(verdict.out(stored.id if stored else None))
        if stored is None:
            plan.counts["blocked"] += 1
            continue
        for other_id in verdict.existing:
            other = screening.rows[other_id]
            row = {"id": other.id, "scope": other.scope, "source": other.source}
            if verdict.decision in ("replace", "merge") and other.id != stored.id:
                plan.retire("superseded", row, plan.now, stored.id)
            elif verdict.decision == "contradiction":
                plan.link(stored, row, "contradicts")


async def write_facts(deps: Deps, credential: Credential, request: WriteFacts) -> FactsWritten:
    """The brain write of every surface: screened by the write-time bands (unless the command
    turns them off, as for bulk imports), stored as one batch, then embedded."""

    async def plan_and_write() -> Plan:
        plan = await plan_request(deps, credential, request, request.bands)
        if plan.statements:
            await deps.db.batch(plan.statements)
        return plan

    # Planned again on each try: a batch that landed though its answer was lost is then seen as
    # unchanged rather than written twice (its rows, still unembedded, go to the nightly re-embed),
    # and one that lost a race to a concurrent write sees that write (the same fact stored: unchanged;
    # the fact it supersedes superseded by another: a conflict).
    plan = await retry(plan_and_write, is_transient_or_raced)
    hook_chars = deps.tuning.brain_hook_chars
    embedding = await embed_facts(
        deps, [FactText(i.id, hook_of(i.content, hook_chars), i.scope, i.entry_type) for i in plan.touched], plan.vectors,
        plan.replaced)
    return written(plan, embedding)


def written(plan: Plan, embedding: str) -> FactsWritten:
    counts = plan.counts
    return FactsWritten(
        written=counts["written"], unchanged=counts["unchanged"], updated=counts["updated"],
        revived=counts["revived"], superseded=counts["superseded"], retired=counts["retired"],
        linked=counts["linked"], blocked=counts["blocked"],
        ids=list(dict.fromkeys(d.id for d in plan.decisions if d.id is not None)),
        redacted=[Redaction(i.id, list(i.redacted)) for i in plan.incoming if i.redacted],
        embedding=embedding, decisions=plan.decisions)


# The name the write had before it had one verb.
ingest_facts = write_facts
