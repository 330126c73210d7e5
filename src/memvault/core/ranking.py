"""Ranking primitives both wings use: query terms, FTS5 match expressions, reciprocal rank fusion."""

from __future__ import annotations

import re
from collections.abc import Sequence

RRF_K = 60

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
