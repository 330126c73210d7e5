"""What a receipt holds, on every surface: the query, the memories injected (or returned) with their
scores and token counts, the ones that ranked but did not fit, the budget, the latency split, what
the secret gate changed at recall, and the provider's usage once the answer is complete."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from memvault.core.models import SearchItem
from memvault.core.shapes import doc

MESSAGE, FACT = "message", "fact"
BRAIN_VAULT = "brain"
# The items ranked just past the budget a receipt names: enough to see what nearly made it.
CUT_SHOWN = 10


@dataclass(frozen=True)
class ReceiptItem:
    """One recalled item: a conversation passage (one or more messages) or a brain fact."""

    kind: str = field(metadata=doc("message (a passage of conversation) or fact (a brain fact)."))
    vault: str = field(metadata=doc("core or session for messages; brain for facts."))
    ids: tuple[str, ...] = field(metadata=doc("The message (or fact) ids the item was made of, less those since forgotten."))
    forgotten: int = field(metadata=doc("How many of the item's ids were forgotten since."))
    score: float = field(metadata=doc("Its rank score."))
    tokens: int = field(metadata=doc("Tokens it took (or would have taken)."))
    timestamp: float = field(metadata=doc("When its newest message was said (a fact: since when it holds), in epoch seconds."))


@dataclass(frozen=True)
class Latency:
    embedding_ms: float | None = field(metadata=doc("Embedding the query (null: answered from cache or failed)."))
    vault_ms: float | None = field(metadata=doc("The vaults (raced against the mirror) answering."))
    ranking_ms: float | None = field(metadata=doc("Fusing, ranking and filling the budget."))
    forwarding_ms: float | None = field(metadata=doc(
        "Routed calls: until the provider's response headers arrived (null for a search, or until the answer completed)."
    ))
    total_ms: float = field(metadata=doc("Recall as a whole, from query to items."))


@dataclass(frozen=True)
class Usage:
    """What the provider reported for the answer (routed calls, once the answer completed)."""

    input_tokens: int | None = field(metadata=doc("Tokens the provider counted in the request."))
    output_tokens: int | None = field(metadata=doc("Tokens the provider counted in the answer."))


@dataclass(frozen=True)
class Receipt:
    """Why the model knew what it knew: what one routed call or memory search recalled."""

    id: str = field(metadata=doc("The receipt's id (named by a routed call's response, or `receipt` in a search result)."))
    surface: str = field(metadata=doc("search, or router:<provider> for a routed call."))
    created_at: float = field(metadata=doc("When the call was made, in epoch seconds."))
    day: str = field(metadata=doc("The UTC day it belongs to, YYYY-MM-DD."))
    session_id: str | None = field(metadata=doc("The session vault searched beside the core vault, if any."))
    query: str | None = field(metadata=doc(
        "The query recalled for, as the secret gate left it; null once the message it came from was forgotten."
    ))
    status: str = field(metadata=doc("ok, degraded (answered without memory) or off."))
    budget_tokens: int = field(metadata=doc("The token budget the items had to fit."))
    tokens: int = field(metadata=doc("Tokens the injected (or returned) items took."))
    items: tuple[ReceiptItem, ...] = field(metadata=doc("The items injected (or returned), best first."))
    cut: tuple[ReceiptItem, ...] = field(metadata=doc("Items that ranked next but did not fit the budget, best first."))
    redacted: int = field(metadata=doc("How many of the items the secret gate changed at recall (stored before a rule existed)."))
    latency: Latency = field(metadata=doc("Where the time went, in milliseconds."))
    usage: Usage | None = field(metadata=doc("The provider's usage (routed calls, once the answer completed)."))


# What a named memory is now. A message: kept or gone. A fact, as the reading key's grant shows it:
# current, superseded or retired (its version still readable), unreadable (behind the wall), gone.
KEPT, GONE = "kept", "gone"
CURRENT, SUPERSEDED, RETIRED, UNREADABLE = "current", "superseded", "retired", "unreadable"


@dataclass(frozen=True)
class RecalledMemory:
    """A message or a brain fact a receipt names, as the stores hold it now and the reading key may see it."""

    id: str = field(metadata=doc("The message id, or the fact's id (mem-…)."))
    kind: str = field(metadata=doc("message or fact, as the receipt's item naming it."))
    state: str = field(metadata=doc(
        "A message: kept (still stored) or gone (purged or cleared since). A fact: current; superseded (a newer"
        " version replaced it) or retired (ended with no successor the key may read); unreadable (its scope is no"
        " longer granted to the key: nothing but the id is shown); gone (no longer in the brain)."
    ))
    role: str | None = field(metadata=doc("Who said it, when kept."))
    text: str | None = field(metadata=doc(
        "Its text now, through the secret gate: a kept message; a fact the key may read (the version the receipt"
        " names, also once superseded or retired)."
    ))
    timestamp: float | None = field(metadata=doc("When a kept message was said; since when a readable fact holds."))
    scope: str | None = field(default=None, metadata=doc("A readable fact's brain scope."))
    ended_at: float | None = field(default=None, metadata=doc("When a superseded or retired fact stopped holding."))
    replaced_by: str | None = field(default=None, metadata=doc(
        "The id of the version that superseded the fact (null when retired)."
    ))


@dataclass(frozen=True)
class ReceiptView:
    """A receipt with the memories it names resolved at read time."""

    receipt: Receipt = field(metadata=doc("The receipt as recorded (less ids forgotten since)."))
    memories: tuple[RecalledMemory, ...] = field(metadata=doc(
        "Each fact and message id it still names, as stored now, in the order the receipt names them."
    ))


@dataclass(frozen=True)
class ReceiptDay:
    """A memory key's receipts of one UTC day, newest first."""

    day: str = field(metadata=doc("The day, YYYY-MM-DD."))
    receipts: tuple[Receipt, ...] = field(metadata=doc("Newest first."))


def items_of(found: Sequence[SearchItem]) -> tuple[ReceiptItem, ...]:
    return tuple(
        ReceiptItem(MESSAGE, item.vault, tuple(item.source_ids), 0, item.score, item.tokens, item.ts_end) for item in found
    )


class FactRecalled(Protocol):
    """What a receipt keeps of a recalled brain fact (``core.answers`` recalls them)."""

    @property
    def id(self) -> str: ...
    @property
    def score(self) -> float: ...
    @property
    def tokens(self) -> int: ...
    @property
    def valid_from(self) -> float: ...


def fact_items(facts: Sequence[FactRecalled]) -> tuple[ReceiptItem, ...]:
    return tuple(ReceiptItem(FACT, BRAIN_VAULT, (fact.id,), 0, fact.score, fact.tokens, fact.valid_from) for fact in facts)


def cut_entries(found: Sequence[SearchItem]) -> list[dict[str, Any]]:
    """Items that did not fit, as a search's metrics carry them to the receipt."""
    return [
        {"vault": i.vault, "ids": list(i.source_ids), "score": i.score, "tokens": i.tokens, "timestamp": i.ts_end}
        for i in found[:CUT_SHOWN]
    ]


def cut_items(entries: Sequence[dict[str, Any]]) -> tuple[ReceiptItem, ...]:
    return tuple(
        ReceiptItem(str(e.get("kind", MESSAGE)), str(e["vault"]), tuple(e["ids"]), 0, float(e["score"]),
                    int(e["tokens"]), float(e["timestamp"]))
        for e in entries
    )
