"""Fusion of one vault's search candidates into scored messages. A row's relevance is a weighted
sum of its two channels' scores, each scaled to this search; a message then borrows from the
chunk that holds it and from the messages said just before and after it, and messages are what a
search returns."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import NamedTuple

from memvault.core.models import Candidate, MemoryRow

# How many of the best-ranked chunks lend their messages to a search as context.
CONTEXT_CHUNKS = 8
_in_time = attrgetter("ts_end", "id")


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


class Fused(NamedTuple):
    """One vault's candidates fused: each message row scored (``fuse``), in no particular order,
    and every message row found (twins too), by id, in the order first found."""

    scored: list[tuple[MemoryRow, float]]
    messages: dict[str, MemoryRow]


def fuse(candidates: Iterable[Candidate], weights: FusionWeights = FusionWeights()) -> Fused:
    """Score every message row found: its own relevance, plus shares of its chunk's and of its
    neighbours' (the messages found within ``reach`` places of it in time order, said within
    ``gap`` of it). Chunks are not scored themselves: a message is the unit that fits a small
    budget. Near-duplicates collapse into the newest of them, which keeps the best score among
    them. In no order: the caller ranks by a key of its own (``assemble.py``)."""
    vector: dict[str, float] = {}
    keyword: dict[str, float] = {}
    terms: list[Candidate] = []
    rows: dict[str, MemoryRow] = {}
    stands_for: dict[str, str] = {}
    for candidate in candidates:
        found, channel = candidate.row, candidate.channel
        row_id = found.id
        if channel == "vector":
            vector[row_id] = candidate.score
        elif channel == "keyword":
            keyword[row_id] = candidate.score
        elif channel == "terms":
            terms.append(candidate)
        if found.kind == "chunk":
            continue
        if row_id not in rows:
            rows[row_id] = found
        if candidate.twin_of is not None:
            stands_for[row_id] = candidate.twin_of
    relevance = _relevance(vector, keyword, terms, weights)
    ordered = sorted(rows.values(), key=_in_time)
    own = [relevance.get(row.id, 0.0) for row in ordered]
    # A message stored without a chunk (one longer than a chunk is its own) borrows from none.
    lent = [relevance.get(row.parent_id, 0.0) if row.parent_id else 0.0 for row in ordered]
    borrowed = with_borrowed(own, [row.ts_end for row in ordered], lent, weights)
    if not stands_for:
        # ``0.0 if x < 0.0 else x`` is ``max(x, 0.0)`` (-0.0 and NaN too) without a call per row.
        return Fused([(row, 0.0 if score < 0.0 else score) for row, score in zip(ordered, borrowed, strict=True)], rows)
    best: dict[str, float] = {}
    for row, score in zip(ordered, borrowed, strict=True):
        twin = stands_for.get(row.id)
        keeper = twin if twin is not None and twin in rows else row.id
        if keeper not in best or score > best[keeper]:
            best[keeper] = max(score, 0.0)
    return Fused([(rows[row_id], score) for row_id, score in best.items()], rows)


def _relevance(
    vector: dict[str, float], keyword: dict[str, float], terms: list[Candidate], weights: FusionWeights
) -> dict[str, float]:
    """Each row's own relevance in [0, 1] from its channels' scores (``vector`` and ``keyword`` by
    row id): cosine scaled so this search's best vector hit is 1 and its worst 0 (hits all equally
    alike count as alike as they are), BM25 as a share of this search's best (none above zero: no
    keyword evidence), weighted by channel. A pending message's keyword evidence comes as the share
    of the query's terms it holds (``terms``, see ``buffer_channel.py``)."""
    low, high = min(vector.values(), default=0.0), max(vector.values(), default=0.0)
    top = max(keyword.values(), default=0.0)
    share = weights.vector
    if high > low:
        spread = high - low
        relevance = {row_id: share * ((cosine - low) / spread) for row_id, cosine in vector.items()}
    else:
        relevance = dict.fromkeys(vector, share * max(high, 0.0))
    share = weights.keyword
    for row_id, bm25 in keyword.items():
        relevance[row_id] = relevance.get(row_id, 0.0) + share * ((0.0 if bm25 < 0.0 else bm25) / top if top > 0 else 0.0)
    for candidate in terms:
        relevance[candidate.row.id] = relevance.get(candidate.row.id, 0.0) + share * candidate.score
    return relevance


def with_borrowed(
    own: Sequence[float], times: Sequence[float], chunk: Sequence[float], weights: FusionWeights = FusionWeights()
) -> list[float]:
    """The scores of messages given in time order with their own relevance, their times and their
    chunks' relevance: each adds a share of its chunk's and of the best own relevance among the
    ``reach`` messages either side of it said within ``gap`` of it."""
    gap, count = weights.gap, len(own)
    beside = [0.0] * count
    # Each pair of messages ``step`` places apart is looked at once, for both of them.
    for step in range(1, weights.reach + 1):
        for earlier in range(count - step):
            later = earlier + step
            if abs(times[later] - times[earlier]) <= gap:
                if own[later] > beside[earlier]:
                    beside[earlier] = own[later]
                if own[earlier] > beside[later]:
                    beside[later] = own[earlier]
    chunk_share, neighbour_share = weights.chunk, weights.neighbour
    return [mine + chunk_share * lent + neighbour_share * near for mine, lent, near in zip(own, chunk, beside, strict=True)]


def best_chunk_ranks(candidates: Iterable[Candidate], count: int = CONTEXT_CHUNKS) -> dict[str, int]:
    """The best rank of each chunk found, for the ``count`` best chunks, best first."""
    best: dict[str, int] = {}
    for candidate in candidates:
        row = candidate.row
        if row.kind == "chunk" and (row.id not in best or candidate.rank < best[row.id]):
            best[row.id] = candidate.rank
    return dict(sorted(best.items(), key=lambda item: item[1])[:count])
