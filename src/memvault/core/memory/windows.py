"""Recency ("KRONOS"): the hot, working and long-term windows label how old an item is, and fold
into its score as one recency component, so relevance and recency are ranked once together. The
result is then filled in that order until the budget is spent."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, replace

from memvault.core.models import SearchItem
from memvault.core.tokens import clip_to_tokens, estimate_tokens

ARCHIVE = "archive"
# The `hot` label only names the last few hours (recency itself is the working window's halving).
HOT_SECONDS = 4 * 3600.0
# The last item is cut to the budget left only when at least this much is left for it.
MIN_CLIPPED_TOKENS = 24


@dataclass(frozen=True)
class WindowPolicy:
    working_seconds: float
    long_term_seconds: float
    recency_weight: float

    def window_of(self, timestamp: float, now: float) -> str:
        age = now - timestamp
        if age <= HOT_SECONDS:
            return "hot"
        if age <= self.working_seconds:
            return "working"
        if age <= self.long_term_seconds:
            return "long_term"
        return ARCHIVE

    def recency_factors(self, timestamps: Iterable[float], now: float) -> list[float]:
        """How much recency lifts each memory of ``timestamps``: 1 for an old one, up to ``1 +
        recency_weight`` for one from just now. The boost halves with every working window of age,
        so hot items get nearly all of it, long-term ones little (a search scores hundreds at once)."""
        weight, halving, power = self.recency_weight, self.working_seconds, math.pow
        # The age is ``max(now - timestamp, 0.0)`` (NaN and infinities alike) without a call per row.
        return [1.0 + weight * power(0.5, (0.0 if timestamp > now else now - timestamp) / halving)
                for timestamp in timestamps]


def fill_in_order(ranked: Iterable[SearchItem], budget_tokens: int, limit: int | None) -> list[SearchItem]:
    """Take items best first while they fit. At the first that does not, take its head cut to
    the budget left (if enough is left to be worth reading) and stop: so what a budget returns
    is always the start of what a larger budget returns."""
    chosen: list[SearchItem] = []
    spent = 0
    for item in ranked:
        if limit is not None and len(chosen) >= limit:
            break
        if spent + item.tokens <= budget_tokens:
            chosen.append(item)
            spent += item.tokens
            continue
        left = budget_tokens - spent
        text = clip_to_tokens(item.text, left) if left >= MIN_CLIPPED_TOKENS else ""
        if text:
            chosen.append(replace(item, text=text, tokens=estimate_tokens(text)))
        break
    return chosen
