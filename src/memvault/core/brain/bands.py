"""Write-time bands: each new fact is compared with the current facts of its own scope (never
another) through one embedding and one vector query, and given a verdict before anything is
stored —

- blocked: the same text once normalised, or a similarity at or above the block threshold with
  the same numbers, codes and names (invoice 1237 and invoice 1238 are different facts however
  close their vectors); a later duplicate of an earlier fact of the same batch likewise;
- flag band (at or above the flag threshold): the judge picks contradiction, replace, merge or
  keep_both;
- candidate band (at or above the candidate threshold): the judge checks for contradiction only;
- stored, below every band, or when no judge is configured.

The hook vectors computed here are the ones stored, so a fact is embedded once."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from memvault.core.brain.fact_input import FactInput
from memvault.core.brain.fact_vectors import parent_of
from memvault.core.brain.judge import judge, rate_importance
from memvault.core.brain.results import Decision
from memvault.core.deps import Deps
from memvault.core.ranking import exact_tokens
from memvault.core.sql import in_batches, placeholders
from memvault.core.vectors import cosine

log = logging.getLogger("memvault.brain")
# Closest current facts a new fact is compared with, and the most shown to the judge.
NEIGHBOURS = 8
JUDGED = 3
# Vector queries (and judge calls) in flight at once.
PARALLEL = 4


@dataclass(frozen=True)
class Candidate:
    id: str
    scope: str
    source: str
    content: str
    valid_from: float
    similarity: float


@dataclass(frozen=True)
class Verdict:
    decision: str  # stored | blocked | replace | merge | contradiction | keep_both
    existing: tuple[str, ...] = ()
    text: str | None = None  # a merge's wording
    fallback: str | None = None  # why the judge's reply was not used

    def out(self, fact_id: str | None) -> Decision:
        return Decision(fact_id, self.decision, list(self.existing), self.fallback or None)


STORED = Verdict("stored")


@dataclass
class Screening:
    verdicts: dict[str, Verdict] = field(default_factory=dict)  # by incoming fact id
    vectors: dict[str, list[float]] = field(default_factory=dict)  # hook vectors, by fact id
    rows: dict[str, Candidate] = field(default_factory=dict)  # every candidate a verdict names
    importance: dict[str, int] = field(default_factory=dict)
    degraded: bool = False  # the embedder or the index failed: only the exact band ran


async def _same_text(deps: Deps, items: Sequence[FactInput]) -> dict[tuple[str, str], str]:
    """(scope, normalised hash) -> id of a current fact saying it."""
    found: dict[tuple[str, str], str] = {}
    for scope in sorted({item.scope for item in items}):
        hashes = sorted({item.norm_hash for item in items if item.scope == scope})
        for group in in_batches(hashes, 90):
            for row in await deps.db.query(
                f"SELECT id, norm_hash FROM memory WHERE superseded_at IS NULL AND scope = ? "
                f"AND norm_hash IN ({placeholders(len(group))}) ORDER BY seq", [scope, *group]):
                found.setdefault((scope, row["norm_hash"]), row["id"])
    return found


async def _neighbours(deps: Deps, item: FactInput, vector: list[float], gate: asyncio.Semaphore) -> dict[str, float]:
    async with gate:
        matches = await deps.vectors.query(vector, top_k=NEIGHBOURS, metadata_filter={"scope": {"$eq": item.scope}})
    best: dict[str, float] = {}
    for match in matches:
        parent = parent_of(match.id)
        if parent != item.id and match.score > best.get(parent, -1.0):
            best[parent] = match.score
    return best


async def _current_rows(deps: Deps, ids: set[str], scopes: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Re-read through the database, within the incoming facts' scopes: the index may hold a fact
    retired since, or another scope's."""
    rows: dict[str, dict[str, Any]] = {}
    for group in in_batches(sorted(ids)):
        for row in await deps.db.query(
            f"SELECT id, scope, source, content, valid_from, body_uri FROM memory WHERE superseded_at IS NULL "
            f"AND scope IN (SELECT value FROM json_each(?)) AND id IN ({placeholders(len(group))})",
            [json.dumps(sorted(set(scopes))), *group]):
            rows[row["id"]] = row
    return rows


def _duplicate_of(item: FactInput, cands: Sequence[Candidate], rows: dict[str, dict[str, Any]], block: float,
                  hook_chars: int) -> str | None:
    """The first candidate close enough to block ``item`` that also holds the same exact tokens.
    Vectors see hooks only, so a fact longer than its hook (or a candidate with a body) is
    blocked only by its whole normalised text, never by a similar beginning."""
    if len(item.content) > hook_chars:
        return None
    for cand in cands:
        if cand.similarity < block:
            break
        if not rows[cand.id]["body_uri"] and exact_tokens(item.content) == exact_tokens(cand.content):
            return cand.id
    return None


async def screen(deps: Deps, items: Sequence[FactInput], hooks: dict[str, str]) -> Screening:
    """Verdicts for the new facts in ``items`` (``hooks``: id -> hook text, new facts only)."""
    tuning = deps.tuning
    screening = Screening()
    fresh = [item for item in items if item.id in hooks]
    same = await _same_text(deps, fresh)
    kept: list[FactInput] = []
    for item in fresh:
        earlier = next((k.id for k in kept if k.scope == item.scope and k.norm_hash == item.norm_hash), None)
        named = same.get((item.scope, item.norm_hash)) or earlier
        if named is not None:
            screening.verdicts[item.id] = Verdict("blocked", (named,))
        else:
            kept.append(item)
    if not kept:
        return screening
    try:
        vectors = await deps.embedder.embed([hooks[item.id] for item in kept])
        gate = asyncio.Semaphore(PARALLEL)
        near = await asyncio.gather(*(_neighbours(deps, i, v, gate) for i, v in zip(kept, vectors, strict=True)))
    except Exception as exc:  # the exact band has run; the rest waits for consolidation
        log.warning("brain bands skipped past the exact band: %s", type(exc).__name__)
        screening.degraded = True
        return screening
    rows = await _current_rows(deps, {fid for found in near for fid in found}, sorted({i.scope for i in kept}))
    judged: list[tuple[FactInput, list[Candidate], bool]] = []
    stored: list[tuple[FactInput, list[float]]] = []
    for item, vector, found in zip(kept, vectors, near, strict=True):
        screening.vectors[item.id] = vector
        twin = next((other.id for other, v in stored if other.scope == item.scope
                     and max(len(item.content), len(other.content)) <= tuning.brain_hook_chars
                     and cosine(vector, v) >= tuning.brain_block_similarity
                     and exact_tokens(item.content) == exact_tokens(other.content)), None)
        cands = sorted((Candidate(r["id"], r["scope"], r["source"], r["content"], float(r["valid_from"]), found[r["id"]])
                        for r in (rows.get(fid) for fid in found) if r is not None and r["scope"] == item.scope),
                       key=lambda c: (-c.similarity, c.id))
        named = twin or _duplicate_of(item, cands, rows, tuning.brain_block_similarity, tuning.brain_hook_chars)
        if named is not None:
            screening.verdicts[item.id] = Verdict("blocked", (named,))
            continue
        stored.append((item, vector))
        flagged = [c for c in cands if c.similarity >= tuning.brain_flag_similarity][:JUDGED]
        near_ones = [c for c in cands if c.similarity >= tuning.brain_candidate_similarity][:JUDGED]
        if deps.llm is not None and (flagged or near_ones):
            judged.append((item, flagged or near_ones, bool(flagged)))
    await _judge_all(deps, judged, hooks, screening)
    if deps.llm is not None:
        unrated = {i.id: hooks[i.id] for i, _ in stored if i.importance is None}
        screening.importance = await rate_importance(deps.llm, unrated, deps.settings.brain_llm_timeout_ms / 1000.0)
    return screening


async def _judge_all(deps: Deps, judged: Sequence[tuple[FactInput, list[Candidate], bool]], hooks: dict[str, str],
                     screening: Screening) -> None:
    llm = deps.llm
    if llm is None or not judged:
        return
    gate = asyncio.Semaphore(PARALLEL)
    timeout = deps.settings.brain_llm_timeout_ms / 1000.0

    async def one(item: FactInput, cands: list[Candidate], full: bool) -> None:
        async with gate:
            verdict = await judge(llm, hooks[item.id], {c.id: c.content for c in cands}, full, timeout)
        screening.verdicts[item.id] = Verdict(verdict.decision, verdict.ids, verdict.text, verdict.fallback)
        for cand in cands:
            screening.rows[cand.id] = cand

    await asyncio.gather(*(one(item, cands, full) for item, cands, full in judged))
