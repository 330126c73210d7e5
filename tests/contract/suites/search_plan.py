"""Contract of the one search plan: the same rows and pending messages searched inside a vault
(synchronous SQL) and in the vault's slice of the mirror (the asynchronous shared database) give
the same candidates.

A factory returns ``SqlPair(sql, db)``: a fresh ``SyncSql`` and a fresh, migrated ``Database``."""

from __future__ import annotations

import hashlib
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from memvault.core.memory.buffer_channel import is_pending
from memvault.core.memory.mirror import MirrorStore
from memvault.core.memory.store import VaultLimits, VaultStore
from memvault.core.models import BufferState, Candidate, Change, ChangeBatch, Message, SearchQuery
from memvault.core.tuning import Tuning

KEY = "key_plan"
VAULT = f"{KEY}:core"
DIMENSION = 16
# Chunks of a few turns, so a short conversation is chunked and leaves a pending tail.
SMALL_CHUNKS = Tuning(chunk_tokens=80, chunk_overlap_tokens=10)
WORDS = "harbour lantern copper meadow violin glacier pepper saddle orchid tunnel falcon ember quartz willow".split()


@dataclass
class SqlPair:
    sql: Any
    db: Any


def vector_of(text: str) -> list[float]:
    """A deterministic bag-of-words vector, so texts sharing words are close."""
    vector = [0.0] * DIMENSION
    for word in text.lower().split():
        digest = hashlib.sha256(word.strip(".,").encode()).digest()
        vector[digest[0] % DIMENSION] += 1.0 if digest[1] % 2 else -1.0
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]


def conversation(count: int, prefix: str = "m", start: float = 1_000_000.0) -> list[Message]:
    return [
        Message(
            role="user" if i % 2 == 0 else "assistant",
            content=f"Turn {i} of {prefix}: the {WORDS[i % len(WORDS)]} near the {WORDS[(i * 5) % len(WORDS)]}. " * 2,
            timestamp=start + i * 60,
            id=f"{prefix}{i}",
        )
        for i in range(count)
    ]


async def _filled(pair: SqlPair, count: int = 30) -> tuple[VaultStore, MirrorStore]:
    store = VaultStore(pair.sql, VaultLimits(1 << 26, SMALL_CHUNKS))
    state = store.append(conversation(count))
    store.attach_embeddings(
        "bag-of-words",
        {row.id: vector_of(row.text) for row in state.rows},
        {job.id: vector_of(job.text) for job in state.to_embed if job.pending},
    )
    mirror = MirrorStore(pair.db)
    await mirror.apply(KEY, VAULT, 0, store.changes(0, 10_000, 100_000), 0.0)
    return store, mirror


def _shape(candidates: list[Candidate]) -> list[tuple[str, str, int, float]]:
    return sorted((c.row.id, c.channel, c.rank, round(c.score, 4)) for c in candidates)


def _query(text: str, depth: int = 20, vector: list[float] | None = None) -> SearchQuery:
    return SearchQuery(text=text, vector=tuple(vector_of(text) if vector is None else vector), depth=depth)


async def same_candidates_from_vault_and_mirror(pair: SqlPair) -> None:
    store, mirror = await _filled(pair)
    pending = [m.content for m in store.pending()]
    assert pending
    for text in ("copper lantern", "Turn 7", "glacier willow ember", "what about the falcon?", pending[-1]):
        query = _query(text)
        from_vault, from_mirror = store.search(query), await mirror.search(KEY, VAULT, query, SMALL_CHUNKS)
        assert {c.channel for c in from_vault} >= {"keyword", "vector", "context"}, text
        assert _shape(from_vault) == _shape(from_mirror), text
    # A pending message's own words: it is the best vector hit, in the vault and the mirror alike.
    best = next(c for c in from_mirror if c.channel == "vector")
    assert is_pending(best.row) and best.row.text == pending[-1] and best.rank == 1


async def lookups_larger_than_one_statement_allows_agree(pair: SqlPair) -> None:
    store, mirror = await _filled(pair, count=100)
    query = _query("harbour lantern copper meadow violin glacier pepper", depth=150)
    from_vault, from_mirror = store.search(query), await mirror.search(KEY, VAULT, query, SMALL_CHUNKS)
    assert sum(1 for c in from_vault if c.channel == "vector") > 100  # more ids than one statement may bind
    assert _shape(from_vault) == _shape(from_mirror)


async def a_query_vector_of_another_dimension_uses_keywords_only(pair: SqlPair) -> None:
    store, mirror = await _filled(pair)
    query = _query("copper lantern", vector=[1.0] * (DIMENSION + 3))
    for found in (store.search(query), await mirror.search(KEY, VAULT, query, SMALL_CHUNKS)):
        assert found and {c.channel for c in found} <= {"keyword", "terms", "context"}


async def another_vaults_rows_never_appear_in_the_mirror_slice(pair: SqlPair) -> None:
    _, mirror = await _filled(pair)
    strangers = Change(seq=1, kind="rows", rows=tuple(_stranger_rows(conversation(40, prefix="x"))))
    await mirror.apply("key_other", "key_other:core", 0, ChangeBatch((strangers,), BufferState((), 0, 0), 1, 0), 0.0)
    found = await mirror.search(KEY, VAULT, _query("copper lantern Turn of x", depth=100), SMALL_CHUNKS)
    assert found and all(s.startswith("m") for c in found for s in c.row.source_ids)


def _stranger_rows(messages: list[Message]) -> list[Any]:
    from memvault.core.memory.rows import message_hash
    from memvault.core.models import MemoryRow

    return [
        MemoryRow(
            id=f"m-x{m.id}", kind="message", text=m.content, role=m.role, model=None, ts_start=m.timestamp,
            ts_end=m.timestamp, token_count=10, source_ids=(m.id,), content_hash=message_hash(m),
            embedding=tuple(vector_of(m.content)),
        )
        for m in messages
    ]


CHECKS: list[Callable[[SqlPair], Awaitable[None]]] = [
    same_candidates_from_vault_and_mirror,
    lookups_larger_than_one_statement_allows_agree,
    a_query_vector_of_another_dimension_uses_keywords_only,
    another_vaults_rows_never_appear_in_the_mirror_slice,
]
