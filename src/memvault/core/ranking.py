"""Ranking: keyword query building and rank fusion of the search channels."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from memvault.core.models import Candidate, MemoryRow

RRF_K = 60
# How many of the best-ranked chunks lend their messages to a search as context.
CONTEXT_CHUNKS = 8

_WORD = re.compile(r"[\w$#%.@'-]+", re.UNICODE)
STOPWORDS = frozenset(
    ["a", "an", "and", "are", "as", "at", "be", "been", "but", "by", "can", "could", "did", "do", "does", "for", "from", "had", "has", "have", "he", "her", "hers", "him", "his", "how", "i", "if", "in", "into", "is", "it", "its", "just", "me", "my", "no", "not", "of", "on", "or", "our", "she", "so", "than", "that", "the", "their", "them", "then", "there", "these", "they", "this", "to", "too", "us", "was", "we", "were", "what", "when", "where", "which", "who", "whom", "why", "will", "with", "would", "you", "your", "about", "after", "all", "also", "am", "any", "because", "before", "being", "both", "during", "each", "few", "further", "here", "more", "most", "other", "over", "own", "same", "should", "some", "such", "through", "under", "until", "up", "very", "while", "yours", "yourself", "ever"]
)


def query_terms(text: str) -> list[str]:
    """Distinct searchable terms of a query, in order: lower-cased, stopwords dropped."""
    seen: dict[str, None] = {}
    for raw in _WORD.findall(text.lower()):
        term = raw.strip(".'-")
        if term and term not in STOPWORDS:
            seen.setdefault(term, None)
    return list(seen)


def fts_match_expression(text: str) -> str | None:
    """An FTS5 MATCH expression that ORs the query's terms, each quoted so no term is syntax."""
    terms = [t for t in (re.sub(r"[^\w]", " ", term).strip() for term in query_terms(text)) if t]
    if not terms:
        return None
    quoted: list[str] = []
    for term in terms:
        quoted.extend(f'"{word}"' for word in term.split())
    return " OR ".join(dict.fromkeys(quoted))


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[str]], k: int = RRF_K, weights: Sequence[float] | None = None
) -> list[tuple[str, float]]:
    """Fuse ranked id lists: each id scores sum(weight / (k + rank)), rank counted from 1."""
    scores: dict[str, float] = {}
    for index, ranking in enumerate(rankings):
        weight = 1.0 if weights is None else weights[index]
        for rank, item_id in enumerate(ranking, start=1):
            scores[item_id] = scores.get(item_id, 0.0) + weight / (k + rank)
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))


@dataclass(frozen=True)
class FusionWeights:
    message: float = 1.0
    chunk: float = 0.6
    k: int = RRF_K


def fuse_candidates(
    candidates: Iterable[Candidate], weights: FusionWeights = FusionWeights()
) -> list[tuple[MemoryRow, float]]:
    """Score every message row found: its own ranks in each channel, plus the ranks of the chunk it
    belongs to (a chunk hit lends its score to the messages it holds). Chunks are not returned
    themselves: a message is the unit that fits a small budget."""
    rows: dict[str, MemoryRow] = {}
    message_score: dict[str, float] = {}
    chunk_score: dict[str, float] = {}
    for candidate in candidates:
        row = candidate.row
        contribution = 1.0 / (weights.k + candidate.rank)
        if row.kind == "chunk":
            chunk_score[row.id] = chunk_score.get(row.id, 0.0) + contribution
            continue
        rows.setdefault(row.id, row)
        if candidate.channel != "context":
            message_score[row.id] = message_score.get(row.id, 0.0) + contribution
    scored = []
    for row_id, row in rows.items():
        own = message_score.get(row_id, 0.0)
        lent = chunk_score.get(row.parent_id, 0.0) if row.parent_id else 0.0
        scored.append((row, weights.message * own + weights.chunk * lent))
    scored.sort(key=lambda item: (-item[1], -item[0].ts_end, item[0].id))
    return scored


def best_chunk_ranks(candidates: Iterable[Candidate], count: int = CONTEXT_CHUNKS) -> dict[str, int]:
    """The best rank of each chunk found, for the ``count`` best chunks, best first."""
    best: dict[str, int] = {}
    for candidate in candidates:
        if candidate.row.kind == "chunk":
            best[candidate.row.id] = min(best.get(candidate.row.id, candidate.rank), candidate.rank)
    return dict(sorted(best.items(), key=lambda item: item[1])[:count])
