"""Ranking primitives both wings use: query terms, FTS5 match expressions, reciprocal rank fusion."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

RRF_K = 60

_WORD = re.compile(r"[\w$#%.@'-]+", re.UNICODE)
STOPWORDS = frozenset(
    ["a", "an", "and", "are", "as", "at", "be", "been", "but", "by", "can", "could", "did", "do", "does", "for", "from", "had", "has", "have", "he", "her", "hers", "him", "his", "how", "i", "if", "in", "into", "is", "it", "its", "just", "me", "my", "no", "not", "of", "on", "or", "our", "she", "so", "than", "that", "the", "their", "them", "then", "there", "these", "they", "this", "to", "too", "us", "was", "we", "were", "what", "when", "where", "which", "who", "whom", "why", "will", "with", "would", "you", "your", "about", "after", "all", "also", "am", "any", "because", "before", "being", "both", "during", "each", "few", "further", "here", "more", "most", "other", "over", "own", "same", "should", "some", "such", "through", "under", "until", "up", "very", "while", "yours", "yourself", "ever"]
)


def query_terms(text: str) -> list[str]:
    """Distinct searchable terms of a query, in order: lower-cased, possessives and stopwords dropped."""
    seen: dict[str, None] = {}
    for raw in _WORD.findall(text.lower().replace("\u2019", "'")):
        term = raw.strip(".'-")
        term = term[:-2] if term.endswith("'s") and len(term) > 2 else term  # "Mia's" is Mia
        if term and term not in STOPWORDS:
            seen.setdefault(term, None)
    return list(seen)


def fts_terms(text: str) -> list[str]:
    """The query's terms as FTS5 MATCH terms, each quoted so no term is syntax."""
    terms = [t for t in (re.sub(r"[^\w]", " ", term).strip() for term in query_terms(text)) if t]
    return list(dict.fromkeys(f'"{word}"' for term in terms for word in term.split()))


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


_NOT_WORD = re.compile(r"[\W_]+", re.UNICODE)
_SENTENCE_START = re.compile(r"(?:^|[.!?]\s+)(\w+)")
_TOKEN = re.compile(r"[\w.,:/-]*\w", re.UNICODE)


def normalize_text(text: str) -> str:
    """Case, width, punctuation and spacing folded away: how "the same text" is told."""
    return " ".join(_NOT_WORD.sub(" ", unicodedata.normalize("NFKC", text).casefold()).split())


def exact_tokens(text: str) -> frozenset[str]:
    """The tokens two texts must share to say the same thing however close their meaning: numbers
    and codes (anything with a digit) and names (capitalised words not opening a sentence)."""
    openers = {match.group(1) for match in _SENTENCE_START.finditer(text)}
    found = set()
    for token in _TOKEN.findall(text):
        if any(c.isdigit() for c in token):
            found.add(token.strip(".,:/-").casefold())
        elif token[:1].isupper() and token != "I" and token not in openers:
            found.add(token.casefold())
    return frozenset(found)
