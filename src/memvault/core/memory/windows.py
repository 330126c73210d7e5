"""Recency windows ("KRONOS"): hot, working and long-term each get a share of the result budget;
what is left is backfilled by score, whatever the age."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

# A window's reserved share only admits items at least this relevant, relative to the best item:
# recency earns a place for relevant memories, not for whatever happens to be recent.
RELEVANCE_FLOOR = 0.5
WINDOWS = ("hot", "working", "long_term")
ARCHIVE = "archive"


@dataclass(frozen=True)
class WindowPolicy:
    hot_seconds: float
    working_seconds: float
    long_term_seconds: float
    shares: tuple[float, ...]

    def window_of(self, timestamp: float, now: float) -> str:
        age = now - timestamp
        if age <= self.hot_seconds:
            return "hot"
        if age <= self.working_seconds:
            return "working"
        if age <= self.long_term_seconds:
            return "long_term"
        return ARCHIVE


@dataclass(frozen=True)
class Ranked:
    key: str
    tokens: int
    score: float
    window: str


def fill_budget(ranked: Sequence[Ranked], policy: WindowPolicy, budget_tokens: int, limit: int) -> list[Ranked]:
    """Pick items: first each window's best items up to its share of the budget, then the best of
    the rest by score. Returns them in score order (best first)."""
    chosen: dict[str, Ranked] = {}
    spent = 0
    by_score = sorted(ranked, key=lambda r: -r.score)
    floor = RELEVANCE_FLOOR * by_score[0].score if by_score else 0.0
    for window, share in zip(WINDOWS, policy.shares, strict=True):
        allowance = int(budget_tokens * share)
        used = 0
        for item in by_score:
            if len(chosen) >= limit:
                break
            if item.window != window or item.key in chosen or item.score < floor:
                continue
            if used + item.tokens > allowance or spent + item.tokens > budget_tokens:
                continue
            chosen[item.key] = item
            used += item.tokens
            spent += item.tokens
    for item in by_score:
        if len(chosen) >= limit:
            break
        if item.key in chosen or spent + item.tokens > budget_tokens:
            continue
        chosen[item.key] = item
        spent += item.tokens
    return sorted(chosen.values(), key=lambda r: -r.score)
