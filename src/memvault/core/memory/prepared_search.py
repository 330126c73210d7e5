"""Keyword candidates a vault found ahead of a search: the router and every search surface ask a
vault to run a search's keyword stage while the query is still being embedded, and the search
that follows (the same text and depth, the vault unchanged since) goes on from them. So a
vault's keyword work costs a search no time beyond the embedding it has to wait for anyway."""

from __future__ import annotations

from collections import OrderedDict

from memvault.core.models import Candidate

# Searches prepared at once in one vault: a few concurrent calls' worth. Each holds up to a
# search's depth of rows (a few hundred KB of text at most) until its search takes it; one whose
# search never came (the mirror answered first) waits only until newer ones push it out.
PREPARED_KEPT = 4

# The search's text, its depth and the vault's generation when the keyword stage began.
PreparedKey = tuple[str, int, int]


class PreparedSearches:
    def __init__(self, size: int = PREPARED_KEPT) -> None:
        self._size = size
        self._found: OrderedDict[PreparedKey, list[Candidate]] = OrderedDict()

    def __bool__(self) -> bool:
        return bool(self._found)

    def keep(self, key: PreparedKey, candidates: list[Candidate]) -> None:
        self._found[key] = candidates
        self._found.move_to_end(key)
        while len(self._found) > self._size:
            self._found.popitem(last=False)

    def take(self, key: PreparedKey) -> list[Candidate] | None:
        """The candidates kept for ``key``, once (None when none are)."""
        return self._found.pop(key, None)
