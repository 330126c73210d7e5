"""The joint recall: a key's conversation memory and its granted brain facts in one ranking, filled
into one budget. Pinned core facts come first (up to ``Tuning.answer_pinned_share`` of the budget);
then the relevant facts and the conversation items, each list in its own order, are interleaved by
reciprocal rank (a fact before an item of the same rank: facts are curated) and taken while they
fit. The first entry that does not fit is cut to what is left, and nothing after it is taken, as a
memory search alone does, so with no relevant fact the items are exactly what memory alone gives."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

from memvault.core.answers.facts import FactCandidates, Row, fact_candidates, fact_text, gated
from memvault.core.answers.results import RecalledFact, SearchResult
from memvault.core.brain.scopes import Credential
from memvault.core.deps import Deps
from memvault.core.errors import InvalidInput
from memvault.core.memory.read.search import search_memory
from memvault.core.memory.windows import MIN_CLIPPED_TOKENS
from memvault.core.models import SearchItem
from memvault.core.ranking import RRF_K
from memvault.core.receipts.model import cut_entries
from memvault.core.receipts.record import CUT_METRIC
from memvault.core.tokens import clip_to_tokens, estimate_tokens

log = logging.getLogger("memvault.answers")
PINNED_SCORE = 1.0  # above any reciprocal-rank score


@dataclass(frozen=True)
class Query:
    text: str
    budget_tokens: int | None = None
    limit: int | None = None
    now: float | None = None
    session_id: str | None = None
    as_of: float | None = None
    exclude: Sequence[str] = ()


async def search_answers(deps: Deps, key_id: str, credential: Credential, query: Query) -> SearchResult:
    """Conversation items and brain facts for ``query`` within its budget. A brain that cannot be
    read leaves the facts out (``metrics.brain.error``); conversation memory still answers."""
    budget = deps.settings.search_budget_tokens if query.budget_tokens is None else query.budget_tokens
    if not query.text.strip():
        raise InvalidInput("query must not be empty")
    started = time.perf_counter()
    memory, found = await asyncio.gather(
        search_memory(deps, key_id, query.text, limit=query.limit, budget_tokens=budget, now=query.now,
                      session_id=query.session_id, exclude=query.exclude),
        _facts(deps, credential, query),
        return_exceptions=True,
    )
    if isinstance(memory, BaseException):
        raise memory
    brain: dict[str, object] = {"ms": round((time.perf_counter() - started) * 1000.0, 1)}
    if isinstance(found, BaseException):
        log.warning("brain read failed in a joint recall: %s", type(found).__name__)
        brain["error"] = type(found).__name__
        found = FactCandidates([], [])
    found, changed = gated(found)
    items, facts = fill(found, memory.items, budget, deps.tuning.answer_pinned_share)
    facts_redacted = sum(1 for fact in facts if fact.id in changed)
    brain.update(pinned=len(found.pinned), relevant=len(found.relevant), degraded=list(found.degraded))
    # The items are a prefix of memory's ranking: those after it ranked but did not fit beside the facts.
    cut = cut_entries(memory.items[len(items):]) + list(memory.metrics.get(CUT_METRIC, ()))
    return SearchResult(items=items, tokens=sum(i.tokens for i in items) + sum(f.tokens for f in facts),
                        metrics={**memory.metrics, CUT_METRIC: cut, "brain": brain,
                                 "redacted": int(memory.metrics.get("redacted", 0)) + facts_redacted}, facts=facts)


async def _facts(deps: Deps, credential: Credential, query: Query) -> FactCandidates:
    return await fact_candidates(deps, credential, query.text, query.as_of)


def fill(found: FactCandidates, items: Sequence[SearchItem], budget: int,
         pinned_share: float) -> tuple[list[SearchItem], list[RecalledFact]]:
    facts: list[RecalledFact] = []
    pinned_cap, spent = int(budget * pinned_share), 0
    for row in found.pinned:  # greedy: a pinned fact too long for its share leaves room for a shorter one
        cost = estimate_tokens(fact_text(row))
        if spent + cost <= pinned_cap:
            facts.append(_recalled(row, fact_text(row), PINNED_SCORE, True))
            spent += cost
    ranked: list[tuple[float, int, SearchItem | Row]] = [
        *((1.0 / (RRF_K + rank), 0, row) for rank, row in enumerate(found.relevant, start=1)),
        *((1.0 / (RRF_K + rank), 1, item) for rank, item in enumerate(items, start=1)),
    ]
    ranked.sort(key=lambda entry: (-entry[0], entry[1]))
    chosen: list[SearchItem] = []
    for score, _, entry in ranked:
        text, cost = (entry.text, entry.tokens) if isinstance(entry, SearchItem) else _costed(fact_text(entry))
        if spent + cost > budget:
            left = budget - spent
            text = clip_to_tokens(text, left) if left >= MIN_CLIPPED_TOKENS else ""
            if text:
                _take(entry, text, score, chosen, facts)
            break
        _take(entry, text, score, chosen, facts)
        spent += cost
    return chosen, facts


def _costed(text: str) -> tuple[str, int]:
    return text, estimate_tokens(text)


def _take(entry: SearchItem | Row, text: str, score: float, chosen: list[SearchItem], facts: list[RecalledFact]) -> None:
    if isinstance(entry, SearchItem):
        chosen.append(entry if text == entry.text else replace(entry, text=text, tokens=estimate_tokens(text)))
    else:
        facts.append(_recalled(entry, text, score, False))


def _recalled(row: Row, text: str, score: float, pinned: bool) -> RecalledFact:
    return RecalledFact(id=str(row["id"]), text=text, scope=str(row["scope"]), source=str(row["source"]),
                        entry_type=str(row["entry_type"]), valid_from=float(row["valid_from"]), pinned=pinned,
                        score=round(score, 6), tokens=estimate_tokens(text))
