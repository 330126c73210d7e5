"""What a memory search answers for a key granted brain scopes: the conversation items as every
search gives them, and beside them the brain facts that fit the same budget. A key without a grant
gets ``facts: []``, so a client written before facts existed reads the same shape."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memvault.core.models import SearchItem
from memvault.core.shapes import doc


@dataclass(frozen=True)
class RecalledFact:
    """One brain fact recalled for the query: pinned (always recalled first) or relevant to it."""

    id: str = field(metadata=doc("The fact's id (mem-…), as the brain's routes name it."))
    text: str = field(metadata=doc("The fact (its hook for a long one), with the passage that matched after it."))
    scope: str = field(metadata=doc("The brain scope it lives in."))
    source: str = field(metadata=doc("Where it came from (a file, telegram:<chat id>, …)."))
    entry_type: str = field(metadata=doc("user, feedback, project, reference, fact, skill or loop."))
    valid_from: float = field(metadata=doc("Since when it holds, in epoch seconds."))
    pinned: bool = field(metadata=doc("A pinned core fact, recalled for every query."))
    score: float = field(metadata=doc("Its place in the joint ranking (higher first); pinned facts rank first."))
    tokens: int = field(metadata=doc("Tokens it spends of the budget."))


@dataclass
class SearchResult:
    items: list[SearchItem] = field(metadata=doc("Conversation memory that fits the budget, best first."))
    tokens: int = field(metadata=doc("Tokens the items and the facts spend together (at most the budget)."))
    metrics: dict[str, Any] = field(default_factory=dict, metadata=doc("Timings and which store answered."))
    facts: list[RecalledFact] = field(default_factory=list, metadata=doc(
        "Brain facts within the same budget (a key granted brain scopes only): pinned first, then the"
        " ones relevant to the query; current facts unless as_of."))
    receipt: str | None = field(default=None, metadata=doc(
        "The id of the receipt kept for this search (GET /v1/memory/receipts/{id}); null when none could be kept."))
