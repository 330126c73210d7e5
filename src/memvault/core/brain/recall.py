"""``recall``: one bounded envelope from four tiers. Core (pinned entries, never searched),
recent (last-touched facts), archival (query-driven hybrid search) and, with ``as_of``, all of
them read at that moment. Every tier is packed into its share of the budget, so the total never
exceeds it; what core and recent leave unused goes to archival."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from memvault.core.brain.commands import Recall
from memvault.core.brain.freshness import cached_read
from memvault.core.brain.results import RecallCore, RecallEntry, Recollection
from memvault.core.brain.rows import FACT_COLUMNS, visible
from memvault.core.brain.scopes import Credential
from memvault.core.brain.search import hybrid_search
from memvault.core.brain.signals import count_recalls
from memvault.core.deps import Deps
from memvault.core.tokens import estimate_tokens

Row = dict[str, Any]


def _entry(row: Row, tokens: int, score: float | None = None) -> dict[str, Any]:
    entry = {
        "id": row["id"],
        "entry_type": row["entry_type"],
        "scope": row["scope"],
        "source": row["source"],
        "content": row["content"],
        "valid_from": row["valid_from"],
        "has_body": bool(row["body_uri"]),
        "tokens": tokens,
    }
    if row.get("snippet"):
        entry["snippet"] = row["snippet"]
    if score is not None:
        entry["score"] = round(score, 6)
    return entry


def pack(rows: Iterable[tuple[Row, float | None]], cap: int, taken: set[str]) -> tuple[list[dict[str, Any]], int]:
    """Greedy in rank order; an entry that does not fit is skipped, a smaller later one may fit."""
    entries, used = [], 0
    for row, score in rows:
        if row["id"] in taken:
            continue
        cost = estimate_tokens(row["content"]) + (estimate_tokens(row["snippet"]) if row.get("snippet") else 0)
        if used + cost > cap:
            continue
        taken.add(row["id"])
        entries.append(_entry(row, cost, score))
        used += cost
    return entries, used


def _add_passages(entries: list[dict[str, Any]], hits: Iterable[tuple[Row, float]], room: int) -> int:
    """A fact already in core or recent that matched the query deep in its body gets the matching
    passage too, as far as the archival share has room; returns the tokens spent."""
    snippets = {row["id"]: row["snippet"] for row, _ in hits if row.get("snippet")}
    spent = 0
    for entry in entries:
        snippet = snippets.get(entry["id"])
        cost = estimate_tokens(snippet) if snippet else 0
        if snippet and spent + cost <= room:
            entry["snippet"], entry["tokens"] = snippet, entry["tokens"] + cost
            spent += cost
    return spent


async def _tier_rows(deps: Deps, credential: Credential, when: float | None, pinned: bool) -> list[Row]:
    where, params = visible(credential, when, "m")
    # At a past moment, "last touched" means most recently valid; later edits are not yet known.
    order = "m.updated_at" if when is None else "m.valid_from"
    return await deps.db.query(
        f"SELECT {FACT_COLUMNS} FROM memory m WHERE {where} AND m.pinned = ? ORDER BY {order} DESC, m.id LIMIT 200",
        [*params, int(pinned)],
    )


async def recall(deps: Deps, credential: Credential, command: Recall) -> Recollection:
    """The envelope for the command; a repeated one comes from the read cache until a readable scope is written."""
    return await cached_read(deps, credential, "brain-recall", command, Recollection,
                             lambda: _envelope(deps, credential, command))


async def _envelope(deps: Deps, credential: Credential, command: Recall) -> Recollection:
    when = command.as_of
    settings = deps.settings
    tiers = (settings.recall_core_tokens, settings.recall_recent_tokens, settings.recall_archival_tokens)
    total = command.budget or sum(tiers)
    scale = min(1.0, total / max(sum(tiers), 1))
    core_cap, recent_cap, archival_cap = (int(t * scale) for t in tiers)
    taken: set[str] = set()

    core_entries, core_used = pack(((r, None) for r in await _tier_rows(deps, credential, when, True)), core_cap, taken)
    query = (command.query or "").strip()
    recent_cap += 0 if query else core_cap - core_used
    recent, recent_used = pack(((r, None) for r in await _tier_rows(deps, credential, when, False)), recent_cap, taken)
    facts: list[dict[str, Any]] = []
    archival_used = 0
    degraded: tuple[str, ...] = ()
    if query:
        archival_cap += (core_cap - core_used) + (recent_cap - recent_used)
        hits = await hybrid_search(deps, credential, query, 50, when)
        facts, archival_used = pack(hits.found, archival_cap, taken)
        archival_used += _add_passages([*core_entries, *recent], hits.found, archival_cap - archival_used)
        degraded = hits.degraded
        count_recalls(deps, [entry["id"] for entry in facts])
    version = hashlib.sha256("|".join(f"{e['id']}" for e in core_entries).encode()).hexdigest()[:16]
    sources = list(dict.fromkeys(e["source"] for e in [*core_entries, *recent, *facts]))
    return Recollection(
        core=RecallCore(version=version, entries=_entries(core_entries), tokens=core_used),
        recent=_entries(recent),
        facts=_entries(facts),
        as_of=when if when is not None else deps.clock(),
        budget=total,
        budget_used=core_used + recent_used + archival_used,
        sources=sources,
        degraded=list(degraded),
    )


def _entries(packed: list[dict[str, Any]]) -> list[RecallEntry]:
    return [RecallEntry(**entry) for entry in packed]
