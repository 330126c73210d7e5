"""Ranking signals beside relevance: how recently a fact became true (faded by a half-life of its
entry type), how often it has been recalled, and its importance. Recall counts live in a side
table, so a read never changes a fact row, its ``updated_at``, the event log or an export.

Hybrid scores are rank-fusion scores, where neighbouring ranks differ by a few percent, so each
signal moves a fact by a few percent too: enough to order near-equals, never to lift an
irrelevant fact over a relevant one."""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from typing import Any

from memvault.core.brain.rows import walled_side_rows
from memvault.core.brain.scopes import Credential
from memvault.core.deps import Deps

log = logging.getLogger("memvault.brain")
Row = dict[str, Any]
# The most each signal may take off or add to a score.
RECENCY_SPAN = 0.10
IMPORTANCE_STEP = 0.02  # per point away from the middle rating, 3
FREQUENCY_STEP, FREQUENCY_CAP = 0.02, 0.06
DEFAULT_HALF_LIFE = 365 * 86400.0


async def record_recalls(deps: Deps, fact_ids: Sequence[str]) -> None:
    now = deps.clock()
    await deps.db.batch([
        ("INSERT INTO fact_signals (fact_id, recall_count, last_recalled_at) VALUES (?, 1, ?) "
         "ON CONFLICT (fact_id) DO UPDATE SET recall_count = recall_count + 1, last_recalled_at = excluded.last_recalled_at",
         (fact_id, now))
        for fact_id in dict.fromkeys(fact_ids)
    ])


def count_recalls(deps: Deps, fact_ids: Sequence[str]) -> None:
    """After the answer: a failed count costs a little ranking signal, never the read."""
    if not fact_ids:
        return

    async def work() -> None:
        try:
            await record_recalls(deps, fact_ids)
        except Exception as exc:  # the read has been answered; only the count is lost
            log.warning("recall counts not recorded: %s", type(exc).__name__)

    deps.background.run(work)


async def _recall_counts(deps: Deps, credential: Credential, fact_ids: Sequence[str]) -> dict[str, int]:
    rows = await walled_side_rows(deps, credential, "fact_signals", "t.fact_id, t.recall_count", "fact_id", fact_ids)
    return {row["fact_id"]: int(row["recall_count"]) for row in rows}


def signal_factor(row: Row, recalls: int, now: float, half_lives: dict[str, float]) -> float:
    age = max(0.0, now - float(row["valid_from"]))
    faded = 1.0 - 0.5 ** (age / half_lives.get(row["entry_type"], DEFAULT_HALF_LIFE))
    recency = 1.0 - RECENCY_SPAN * faded
    importance = 1.0 + IMPORTANCE_STEP * (int(row.get("importance") or 3) - 3)
    frequency = 1.0 + min(FREQUENCY_CAP, FREQUENCY_STEP * math.log1p(recalls))
    return float(recency * importance * frequency)


def successors_first(hits: list[tuple[Row, float]]) -> list[tuple[Row, float]]:
    """A superseded fact never ranks above its successor when both are in one answer."""
    order = [row["id"] for row, _ in hits]
    by_id = {row["id"]: (row, score) for row, score in hits}
    for row, _ in hits:
        heir = row.get("superseded_by")
        if heir in by_id and order.index(heir) > order.index(row["id"]):
            order.remove(row["id"])
            order.insert(order.index(heir) + 1, row["id"])
    return [by_id[fid] for fid in order]


async def rerank(deps: Deps, credential: Credential, hits: list[tuple[Row, float]], now: float) -> list[tuple[Row, float]]:
    if not deps.tuning.brain_rerank or not hits:
        return successors_first(hits)
    counts = await _recall_counts(deps, credential, [row["id"] for row, _ in hits])
    half_lives = dict(deps.tuning.brain_half_life_seconds)
    scored = [(row, score * signal_factor(row, counts.get(row["id"], 0), now, half_lives)) for row, score in hits]
    scored.sort(key=lambda hit: -hit[1])
    return successors_first(scored)
