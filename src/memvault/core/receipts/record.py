"""Making a receipt from what a search found, and keeping it. A receipt fails open: when it cannot
be kept the call still answers, without one, and the failure is logged."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from typing import Any

from memvault.core.deps import Deps
from memvault.core.models import SearchItem, SearchResult
from memvault.core.receipts.commands import day_of
from memvault.core.receipts.model import (
    CUT_SHOWN,
    FactRecalled,
    Latency,
    Receipt,
    cut_entries,
    cut_items,
    fact_items,
    items_of,
)
from memvault.core.receipts.store import ReceiptStore, Statement
from memvault.core.redaction import redact

log = logging.getLogger(__name__)
SEARCH_SURFACE = "search"
# Kept in a search's metrics only until its receipt is made.
CUT_METRIC = "cut"


def new_receipt_id() -> str:
    return uuid.uuid4().hex


def router_surface(provider: str) -> str:
    return f"router:{provider}"


def receipt_of(
    receipt_id: str, now: float, surface: str, query: str, session_id: str | None, budget_tokens: int,
    found: SearchResult | None, total_ms: float, injected: int | None = None, status: str = "ok",
    facts: Sequence[FactRecalled] = (),
) -> Receipt:
    """The receipt of one recall: ``found`` is the conversation search's result (None when nothing
    was searched), of which the first ``injected`` items (all, when None) went in and the rest were
    cut; ``facts`` are the brain facts that went in beside them, named first as the context shows them."""
    items: Sequence[SearchItem] = found.items if found is not None else ()
    taken = len(items) if injected is None else injected
    metrics: dict[str, Any] = found.metrics if found is not None else {}
    # A result the read cache answered spent nothing on embedding, vaults or ranking this time.
    fresh = not metrics.get("cached")
    latency = Latency(
        embedding_ms=metrics.get("embed_ms") if fresh else None, vault_ms=metrics.get("vault_ms") if fresh else None,
        ranking_ms=metrics.get("rank_ms") if fresh else None, forwarding_ms=None, total_ms=round(total_ms, 2),
    )
    chosen = items[:taken]
    return Receipt(
        id=receipt_id, surface=surface, created_at=now, day=day_of(now), session_id=session_id,
        query=redact(query).text if query else None, status=status, budget_tokens=budget_tokens,
        tokens=sum(item.tokens for item in chosen) + sum(fact.tokens for fact in facts),
        items=fact_items(facts) + items_of(chosen),
        cut=(items_of(items[taken:]) + cut_items(metrics.get(CUT_METRIC, ())))[:CUT_SHOWN],
        redacted=int(metrics.get("redacted", 0)), latency=latency, usage=None,
    )


async def keep(
    deps: Deps, key_id: str, receipt: Receipt, query_ref: str | None = None, also: Sequence[Statement] = ()
) -> bool:
    """Store ``receipt`` (in one batch with ``also``); whether it was stored."""
    try:
        await ReceiptStore(deps.db).save(key_id, receipt, query_ref, also)
    except Exception as exc:  # the call itself answered; only its receipt is lost
        log.warning("could not keep a receipt: %s", type(exc).__name__)
        return False
    return True


async def keep_search(
    deps: Deps, key_id: str, query: str, session_id: str | None, budget_tokens: int | None, found: SearchResult,
    facts: Sequence[FactRecalled], total_ms: float, also: Sequence[Statement] = (),
) -> str | None:
    """Keep a search's receipt (in one batch with ``also``): every item and fact it returns; its
    id, or None if it could not be kept."""
    receipt_id = new_receipt_id()
    budget = deps.settings.search_budget_tokens if budget_tokens is None else budget_tokens
    receipt = receipt_of(receipt_id, deps.clock(), SEARCH_SURFACE, query, session_id, budget, found, total_ms,
                         facts=facts)
    return receipt_id if await keep(deps, key_id, receipt, also=also) else None


def without_cut(metrics: dict[str, Any]) -> dict[str, Any]:
    """A search's metrics as its caller sees them, once its receipt has what was cut."""
    return {name: value for name, value in metrics.items() if name != CUT_METRIC}


async def keep_routed(
    deps: Deps, receipt_id: str, key_id: str, provider: str, query: str, session_id: str | None, budget_tokens: int,
    found: SearchResult | None, total_ms: float, injected: int, status: str, facts: Sequence[FactRecalled] = (),
    also: Sequence[Statement] = (),
) -> bool:
    """Keep a routed call's receipt (its usage follows once the answer is complete), in one batch
    with ``also``; whether it was kept. The turn the call stores is ``rt-<id>-u``/``-a``:
    forgetting its user message drops the query text taken from it."""
    receipt = receipt_of(receipt_id, deps.clock(), router_surface(provider), query, session_id, budget_tokens, found,
                         total_ms, injected, status, facts)
    return await keep(deps, key_id, receipt, f"rt-{receipt_id}-u", also)


__all__ = [
    "CUT_METRIC", "cut_entries", "keep", "keep_routed", "keep_search", "new_receipt_id", "receipt_of",
    "without_cut",
]
