"""Fusion of one vault's search candidates into scored messages. A row's relevance is a weighted
sum of its two channels' scores, each scaled to this search; a message then borrows from the
chunk that holds it and from the messages said just before and after it, and messages are what a
search returns."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from memvault.core.models import Candidate, MemoryRow

# How many of the best-ranked chunks lend their messages to a search as context.
CONTEXT_CHUNKS = 8


@dataclass(frozen=True)
class FusionWeights:
    """Measured on the LoCoMo dev split through the router (scripts/bench_locomo.py): weighing the
    channels' scores ranked evidence better than reciprocal-rank fusion of their ranks, which
    forgets how far apart two hits are (recall@1000 0.831 -> 0.864, @2000 0.899 -> 0.906, with 200
    candidates a channel), and borrowing from the turns beside a hit brings the answer that follows
    a question. Neighbours are found in time, not inside one chunk: a question ending one chunk and
    its answer opening the next lend to each other too (@1000 0.864 -> 0.867, @2000 0.906 -> 0.915).
    Nearby settings score within 0.01 of these."""

    vector: float = 0.4
    keyword: float = 0.6
    chunk: float = 0.5  # of the holding chunk's relevance
    neighbour: float = 0.5  # of the best relevance among the messages beside it
    reach: int = 2  # how many messages found either side count as beside it
    gap: float = 1800.0  # seconds: messages further apart than this are not of one conversation


def fuse_candidates(
    candidates: Iterable[Candidate], weights: FusionWeights = FusionWeights()
) -> list[tuple[MemoryRow, float]]:
    """Score every message row found, best first: its own relevance, plus shares of its chunk's
    and of its neighbours' (the messages found within ``reach`` places of it in time order, said
    within ``gap`` of it). Chunks are not returned themselves: a message is the unit that fits a
    small budget. Near-duplicates collapse into the newest of them, which keeps the best score
    among them."""
    found = list(candidates)
    relevance = _relevance(found, weights)
    rows: dict[str, MemoryRow] = {}
    stands_for: dict[str, str] = {}
    for candidate in found:
        if candidate.row.kind == "chunk":
            continue
        rows.setdefault(candidate.row.id, candidate.row)
        if candidate.twin_of is not None:
            stands_for[candidate.row.id] = candidate.twin_of
    ordered = sorted(rows.values(), key=lambda r: (r.ts_end, r.id))
    own = [relevance.get(row.id, 0.0) for row in ordered]
    # A message stored without a chunk (one longer than a chunk is its own) borrows from none.
    lent = [relevance.get(row.parent_id, 0.0) if row.parent_id else 0.0 for row in ordered]
    best: dict[str, float] = {}
    for row, score in zip(ordered, with_borrowed(own, [r.ts_end for r in ordered], lent, weights), strict=True):
        twin = stands_for.get(row.id)
        keeper = twin if twin is not None and twin in rows else row.id
        if score > best.get(keeper, 0.0) or keeper not in best:
            best[keeper] = max(score, 0.0)
    scored = [(rows[row_id], score) for row_id, score in best.items()]
    scored.sort(key=lambda item: (-item[1], -item[0].ts_end, item[0].id))
    return scored


def _relevance(candidates: list[Candidate], weights: FusionWeights) -> dict[str, float]:
    """Each row's own relevance in [0, 1]: cosine scaled so this search's best vector hit is 1 and
    its worst 0 (hits all equally alike count as alike as they are), BM25 as a share of this search's
    best (none above zero: no keyword evidence), weighted by channel. A pending message's keyword
    evidence comes as the share of the query's terms it holds (``terms``, see ``buffer_channel.py``)."""
    vector = {c.row.id: c.score for c in candidates if c.channel == "vector"}
    keyword = {c.row.id: c.score for c in candidates if c.channel == "keyword"}
    low, high = min(vector.values(), default=0.0), max(vector.values(), default=0.0)
    top = max(keyword.values(), default=0.0)
    relevance: dict[str, float] = {}
    for row_id, cosine in vector.items():
        scaled = (cosine - low) / (high - low) if high > low else max(high, 0.0)
        relevance[row_id] = weights.vector * scaled
    for row_id, bm25 in keyword.items():
        relevance[row_id] = relevance.get(row_id, 0.0) + weights.keyword * (max(bm25, 0.0) / top if top > 0 else 0.0)
    for candidate in candidates:
        if candidate.channel == "terms":
            relevance[candidate.row.id] = relevance.get(candidate.row.id, 0.0) + weights.keyword * candidate.score
    return relevance


def with_borrowed(
    own: Sequence[float], times: Sequence[float], chunk: Sequence[float], weights: FusionWeights = FusionWeights()
) -> list[float]:
    """The scores of messages given in time order with their own relevance, their times and their
    chunks' relevance: each adds a share of its chunk's and of the best own relevance among the
    ``reach`` messages either side of it said within ``gap`` of it."""
    reach, gap, count = weights.reach, weights.gap, len(own)
    scores = []
    for i, mine in enumerate(own):
        when, beside = times[i], 0.0
        for j in range(max(0, i - reach), min(count, i + reach + 1)):
            if j != i and own[j] > beside and abs(times[j] - when) <= gap:
                beside = own[j]
        scores.append(mine + weights.chunk * chunk[i] + weights.neighbour * beside)
    return scores


def best_chunk_ranks(candidates: Iterable[Candidate], count: int = CONTEXT_CHUNKS) -> dict[str, int]:
    """The best rank of each chunk found, for the ``count`` best chunks, best first."""
    best: dict[str, int] = {}
    for candidate in candidates:
        row = candidate.row
        if row.kind == "chunk" and (row.id not in best or candidate.rank < best[row.id]):
            best[row.id] = candidate.rank
    return dict(sorted(best.items(), key=lambda item: item[1])[:count])
