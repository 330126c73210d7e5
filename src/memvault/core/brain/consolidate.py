"""Consolidation: the brain looked over as a whole, scope by scope, never across scopes. It
re-embeds facts whose text changed since they were embedded, reports broken or cyclic
supersession chains, and finds clusters among the current facts with the write-time bands —
the same text once normalised, near-duplicates with the same exact tokens, and (with the brain's
LLM) updates, merges and contradictions — and skills of one slug family likewise. What it finds
becomes proposals (``proposals.py``); no fact changes until one is accepted.

``dry_run`` (the default) only answers what a run would do: nothing is embedded, hashed or stored."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from memvault.core.brain.bands import JUDGED, NEIGHBOURS, PARALLEL
from memvault.core.brain.commands import Consolidate
from memvault.core.brain.fact_input import norm_hash
from memvault.core.brain.fact_vectors import EMBED_GROUP, embed_pending, full_text, parent_of
from memvault.core.brain.judge import Judgement, judge
from memvault.core.brain.proposals import Proposal, current_rows, mark_stale, store_proposals
from memvault.core.brain.results import Chains, Consolidation
from memvault.core.brain.scopes import Credential, scope_filter
from memvault.core.brain.skills import COLUMNS as SKILL_COLUMNS
from memvault.core.deps import Deps
from memvault.core.ranking import exact_tokens
from memvault.core.sql import in_batches, placeholders
from memvault.core.vectors import cosine

log = logging.getLogger("memvault.brain")
Row = dict[str, Any]
FACT_COLUMNS = ("id, scope, source, content, valid_from, updated_at, body_uri, pinned, source_tier, norm_hash, "
                "entry_type, importance")
# A chain longer than this is reported as cyclic: no real chain of versions gets near it.
MAX_CHAIN = 64
REPORTED = 100
# Version and copy marks a slug family ignores: deploy-worker, deploy-worker-v2, deploy-worker.old.
_FAMILY_MARK = re.compile(r"[-_.](?:v?\d+|old|new|copy|draft|final|bak|backup|alt|tmp)$")


def slug_family(slug: str) -> str:
    while (stripped := _FAMILY_MARK.sub("", slug)) not in ("", slug):
        slug = stripped
    return slug


async def consolidate(deps: Deps, credential: Credential, command: Consolidate) -> Consolidation:
    """A writer over its own scopes (or some of them); the nightly cron over all of them."""
    credential.require_writer()
    dry_run, scopes = command.dry_run, list(command.scopes or credential.ordered_scopes)
    for scope in scopes:
        credential.require_scope(scope)
    scoped = Credential(credential.name, frozenset(scopes), True)
    to_reembed = await _unembedded(deps, scoped) if dry_run else None
    reembedded = None if dry_run else await embed_pending(deps, scoped, deps.tuning.consolidate_batch)
    chains = await chain_report(deps, scoped)
    finding = Finding()
    for scope in scopes:
        await _fact_clusters(deps, scope, dry_run, finding)
        await _skill_clusters(deps, scope, finding)
    stale = None if dry_run else await mark_stale(deps, scopes)
    stored = None if dry_run else await store_proposals(deps, finding.proposals)
    return Consolidation(
        dry_run=dry_run, scopes=scopes, chains=chains, proposals=[p.out() for p in finding.proposals],
        to_reembed=to_reembed, reembedded=reembedded, stale=stale, stored=stored,
        hashed=None if dry_run else finding.hashed, degraded=["vector"] if finding.degraded else None)


@dataclass
class Finding:
    proposals: list[Proposal] = field(default_factory=list)
    claimed: set[str] = field(default_factory=set)  # named by a proposal of this run already
    degraded: bool = False
    hashed: int = 0

    def propose(self, proposal: Proposal) -> None:
        named = {*proposal.fact_ids, *filter(None, [proposal.keep_id])}
        if named & self.claimed:
            return
        self.claimed |= named
        self.proposals.append(proposal)


async def _unembedded(deps: Deps, credential: Credential) -> int:
    wall, params = scope_filter(credential)
    rows = await deps.db.query(
        f"SELECT count(*) AS n FROM memory WHERE {wall} AND superseded_at IS NULL "
        "AND (embedded_at IS NULL OR embedded_at < updated_at)", params)
    return int(rows[0]["n"])


async def chain_report(deps: Deps, credential: Credential) -> Chains:
    """Facts whose successor is missing (or that name one while current), and facts on a cycle.
    The walk stops at the wall, so how a chain goes on behind it changes nothing reported."""
    wall, params = scope_filter(credential, "m.scope")
    next_wall, _ = scope_filter(credential, "n.scope")
    broken = await deps.db.query(
        f"SELECT m.id FROM memory m LEFT JOIN memory s ON s.id = m.superseded_by WHERE {wall} "
        "AND m.superseded_by IS NOT NULL AND (s.id IS NULL OR m.superseded_at IS NULL) ORDER BY m.id LIMIT ?",
        [*params, REPORTED])
    cyclic = await deps.db.query(
        "WITH RECURSIVE walk (start, at, depth) AS ("
        f" SELECT m.id, m.superseded_by, 1 FROM memory m WHERE {wall} AND m.superseded_by IS NOT NULL"
        " UNION ALL"
        " SELECT w.start, n.superseded_by, w.depth + 1 FROM walk w JOIN memory n ON n.id = w.at"
        f" WHERE {next_wall} AND n.superseded_by IS NOT NULL AND w.at != w.start AND w.depth < ?)"
        " SELECT DISTINCT start AS id FROM walk WHERE at = start OR depth >= ? ORDER BY start LIMIT ?",
        [*params, *params, MAX_CHAIN, MAX_CHAIN, REPORTED])
    return Chains(broken=[r["id"] for r in broken], cyclic=[r["id"] for r in cyclic])


def _keeper(rows: Sequence[Row]) -> Row:
    """Of facts saying the same: the pinned, most authoritative, newest one."""
    return max(rows, key=lambda r: (int(r["pinned"]), -int(r["source_tier"]), float(r["valid_from"]),
                                    float(r["updated_at"]), r["id"]))


def _age(row: Row) -> tuple[float, float, str]:
    return float(row["valid_from"]), float(row["updated_at"]), row["id"]


async def _norm_hashes(deps: Deps, rows: Sequence[Row], dry_run: bool, finding: Finding) -> dict[str, str]:
    """Each row's normalised-text hash; rows from before the column have theirs computed (and
    stored, unless a dry run)."""
    hashes: dict[str, str] = {}
    missing: list[tuple[str, str]] = []
    for row in rows:
        if row["norm_hash"]:
            hashes[row["id"]] = row["norm_hash"]
            continue
        text = await full_text(deps, row)
        if text is not None:
            hashes[row["id"]] = norm_hash(text)
            missing.append((row["id"], hashes[row["id"]]))
    if missing and not dry_run:
        await deps.db.batch([("UPDATE memory SET norm_hash = ? WHERE id = ? AND norm_hash IS NULL", (h, fid))
                             for fid, h in missing])
        finding.hashed += len(missing)
    return hashes


async def _fact_clusters(deps: Deps, scope: str, dry_run: bool, finding: Finding) -> None:
    batch = deps.tuning.consolidate_batch
    current = f"SELECT {FACT_COLUMNS} FROM memory WHERE scope = ? AND superseded_at IS NULL AND entry_type != 'skill' "
    rows = await deps.db.query(f"{current} ORDER BY updated_at DESC, id LIMIT ?", [scope, batch])
    # Rows from before the hash column, however old, are hashed a batch a run so every row is
    # eventually compared by its normalised text with the whole scope.
    unhashed = await deps.db.query(f"{current} AND norm_hash IS NULL ORDER BY updated_at, id LIMIT ?", [scope, batch])
    exact = list({row["id"]: row for row in [*rows, *unhashed]}.values())
    hashes = await _norm_hashes(deps, exact, dry_run, finding)
    await _same_text(deps, scope, exact, hashes, finding)
    rest = [row for row in rows if row["id"] not in finding.claimed]
    try:
        vectors = await _embed(deps, [row["content"] for row in rest])
        gate = asyncio.Semaphore(PARALLEL)
        near = await asyncio.gather(*(_neighbours(deps, scope, row["id"], v, gate) for row, v in zip(rest, vectors, strict=True)))
    except Exception as exc:  # the exact pass has run; the rest waits for the next run
        log.warning("consolidation of %s past exact duplicates skipped: %s", scope, type(exc).__name__)
        finding.degraded = True
        return
    others = await _current(deps, scope, {fid for found in near for fid in found} - {r["id"] for r in rest})
    by_id = {**others, **{row["id"]: row for row in rest}}
    similar: dict[str, dict[str, float]] = {row["id"]: dict(found) for row, found in zip(rest, near, strict=True)}
    for i, (a, va) in enumerate(zip(rest, vectors, strict=True)):
        for b, vb in zip(rest[i + 1:], vectors[i + 1:], strict=True):
            score = cosine(va, vb)
            similar[a["id"]][b["id"]] = max(score, similar[a["id"]].get(b["id"], -1.0))
            similar[b["id"]][a["id"]] = max(score, similar[b["id"]].get(a["id"], -1.0))
    await _banded(deps, scope, rest, by_id, similar, finding)


async def _same_text(deps: Deps, scope: str, rows: Sequence[Row], hashes: dict[str, str], finding: Finding) -> None:
    groups: dict[str, dict[str, Row]] = {}
    for row in rows:
        if row["id"] in hashes:
            groups.setdefault(hashes[row["id"]], {})[row["id"]] = row
    for batch in in_batches(sorted(groups), 90):
        for row in await deps.db.query(
            f"SELECT {FACT_COLUMNS} FROM memory WHERE scope = ? AND superseded_at IS NULL AND entry_type != 'skill' "
            f"AND norm_hash IN ({placeholders(len(batch))})", [scope, *batch]):
            groups[row["norm_hash"]].setdefault(row["id"], row)
    for members in groups.values():
        if len(members) > 1:
            keep = _keeper(list(members.values()))
            finding.propose(Proposal("retire", scope, tuple(sorted(fid for fid in members if fid != keep["id"])),
                                     f"says the same as {keep['id']} once case, spacing and punctuation are set aside",
                                     keep_id=keep["id"]))


async def _embed(deps: Deps, texts: Sequence[str]) -> list[list[float]]:
    vectors: list[list[float]] = []
    for start in range(0, len(texts), EMBED_GROUP):
        vectors += await deps.embedder.embed(list(texts[start : start + EMBED_GROUP]))
    return vectors


async def _neighbours(deps: Deps, scope: str, fact_id: str, vector: list[float], gate: asyncio.Semaphore) -> dict[str, float]:
    async with gate:
        matches = await deps.vectors.query(vector, top_k=NEIGHBOURS, metadata_filter={"scope": {"$eq": scope}})
    best: dict[str, float] = {}
    for match in matches:
        parent = parent_of(match.id)
        if parent != fact_id and match.score > best.get(parent, -1.0):
            best[parent] = match.score
    return best


async def _current(deps: Deps, scope: str, ids: set[str]) -> dict[str, Row]:
    """Re-read through the database: the index may hold a fact retired since, or a skill's."""
    found = await current_rows(deps, "memory", FACT_COLUMNS, scope, sorted(ids))
    return {fid: row for fid, row in found.items() if row["entry_type"] != "skill"}


def _near_duplicate(a: Row, b: Row, score: float, deps: Deps) -> bool:
    """The block band: vectors see hooks, so only two facts without a body qualify."""
    return (score >= deps.tuning.brain_block_similarity and not a["body_uri"] and not b["body_uri"]
            and exact_tokens(a["content"]) == exact_tokens(b["content"]))


async def _banded(deps: Deps, scope: str, rows: Sequence[Row], by_id: dict[str, Row],
                  similar: dict[str, dict[str, float]], finding: Finding) -> None:
    """Each fact against the older facts near it, newest first: near-duplicates directly, the flag
    and candidate bands through the judge (all asked at once, their answers applied in order)."""
    tuning = deps.tuning
    asks: list[tuple[Row, list[Row], bool]] = []
    for row in rows:
        older = sorted(((by_id[fid], score) for fid, score in similar[row["id"]].items()
                        if fid in by_id and _age(by_id[fid]) < _age(row) and score >= tuning.brain_candidate_similarity),
                       key=lambda pair: (-pair[1], pair[0]["id"]))
        twins = [other for other, score in older if _near_duplicate(row, other, score, deps)]
        if twins:
            keep = _keeper([row, *twins])
            finding.propose(Proposal("retire", scope, tuple(sorted(r["id"] for r in [row, *twins] if r is not keep)),
                                     f"near-duplicate of {keep['id']}: the same numbers, codes and names, "
                                     "and nearly the same words", keep_id=keep["id"]))
            continue
        flagged = [other for other, score in older if score >= tuning.brain_flag_similarity][:JUDGED]
        if deps.llm is not None and older:
            asks.append((row, flagged or [other for other, _ in older][:JUDGED], bool(flagged)))
    for row, judgement in await _judge_all(deps, asks):
        proposal = _proposal_of(scope, row, judgement)
        if proposal is not None:
            finding.propose(proposal)


async def _judge_all(deps: Deps, asks: Sequence[tuple[Row, list[Row], bool]]) -> list[tuple[Row, Judgement]]:
    llm = deps.llm
    if llm is None or not asks:
        return []
    gate = asyncio.Semaphore(PARALLEL)
    timeout = deps.settings.brain_llm_timeout_ms / 1000.0

    async def one(row: Row, cands: list[Row], full: bool) -> tuple[Row, Judgement]:
        async with gate:
            return row, await judge(llm, row["content"], {c["id"]: c["content"] for c in cands}, full, timeout)

    return list(await asyncio.gather(*(one(*ask) for ask in asks)))


def _proposal_of(scope: str, row: Row, judgement: Judgement, kinds: tuple[str, str] = ("retire", "merge")) -> Proposal | None:
    """What the judge's answer about ``row`` (newer) and some older facts proposes."""
    retire, merge = kinds
    older = tuple(sorted(fid for fid in judgement.ids if fid != row["id"]))
    if not older:
        return None
    if judgement.decision == "replace":
        return Proposal(retire, scope, older, f"outdated by the newer {row['id']} (the brain's LLM: replace)",
                        keep_id=row["id"])
    if judgement.decision == "contradiction":
        return Proposal(retire, scope, older, f"contradicted by the newer {row['id']}; reject this to keep the "
                        "older one (the brain's LLM: contradiction)", keep_id=row["id"])
    if judgement.decision == "merge" and judgement.text:
        ids = tuple(sorted({row["id"], *older}))
        return Proposal(merge, scope, ids, "these say parts of one thing (the brain's LLM: merge)",
                        keep_id=row["id"] if merge == "skill_merge" else None, text=judgement.text)
    return None


async def _skill_clusters(deps: Deps, scope: str, finding: Finding) -> None:
    """Current skills of one slug family compared like facts: the same content, near-duplicates,
    and (with the LLM) updates, merges and contradictions."""
    skills = await deps.db.query(
        f"SELECT {SKILL_COLUMNS} FROM skills WHERE scope = ? AND superseded_at IS NULL ORDER BY slug", [scope])
    families: dict[str, list[Row]] = {}
    for skill in skills:
        families.setdefault(slug_family(skill["slug"]), []).append(skill)
    for members in families.values():
        if len(members) > 1:
            await _skill_family(deps, scope, members, finding)


def _skill_row(skill: Row, hook_chars: int) -> Row:
    """A skill in the shape the fact bands compare: its instructions as the text (not its name,
    which differs within a family by design), its time as its age."""
    return {"id": skill["id"], "content": skill["content"][:hook_chars],
            "body_uri": None, "valid_from": skill["created_at"], "updated_at": skill["created_at"], "pinned": 0,
            "source_tier": 0, "slug": skill["slug"]}


async def _skill_family(deps: Deps, scope: str, members: Sequence[Row], finding: Finding) -> None:
    by_text: dict[str, list[Row]] = {}
    for skill in members:
        by_text.setdefault(norm_hash(skill["content"]), []).append(_skill_row(skill, deps.tuning.brain_hook_chars))
    for same in by_text.values():
        if len(same) > 1:
            keep = max(same, key=_age)
            finding.propose(Proposal("skill_retire", scope, tuple(sorted(r["id"] for r in same if r is not keep)),
                                     f"the same instructions as {keep['slug']}", keep_id=keep["id"]))
    rows = [_skill_row(s, deps.tuning.brain_hook_chars) for s in members if s["id"] not in finding.claimed]
    if len(rows) < 2:
        return
    try:
        vectors = await _embed(deps, [row["content"] for row in rows])
    except Exception as exc:
        log.warning("consolidation of %s skills skipped: %s", scope, type(exc).__name__)
        finding.degraded = True
        return
    tuning = deps.tuning
    asks: list[tuple[Row, list[Row], bool]] = []
    for row, vector in sorted(zip(rows, vectors, strict=True), key=lambda pair: _age(pair[0]), reverse=True):
        older = sorted(((other, cosine(vector, v)) for other, v in zip(rows, vectors, strict=True)
                        if _age(other) < _age(row)), key=lambda pair: -pair[1])
        older = [(other, score) for other, score in older if score >= tuning.brain_candidate_similarity]
        twins = [other for other, score in older if _near_duplicate(row, other, score, deps)]
        if twins:
            finding.propose(Proposal("skill_retire", scope, tuple(sorted(t["id"] for t in twins)),
                                     f"near-duplicate of {row['slug']}", keep_id=row["id"]))
        elif deps.llm is not None and older:
            flagged = [other for other, score in older if score >= tuning.brain_flag_similarity][:JUDGED]
            asks.append((row, flagged or [other for other, _ in older][:JUDGED], bool(flagged)))
    for row, judgement in await _judge_all(deps, asks):
        proposal = _proposal_of(scope, row, judgement, ("skill_retire", "skill_merge"))
        if proposal is not None:
            finding.propose(proposal)
