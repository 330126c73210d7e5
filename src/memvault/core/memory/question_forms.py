"""What a question's form says about the memory that answers it.

"What activities does Alice do?", "Which books has Bob read?": a question whose first words ask
for things in the plural wants several things a person did or said, at different times and mostly
in words the question does not use ("pottery", "swimming"). Relevance alone finds one or two of
them; who said a line finds the rest (see ``SPEAKER_WEIGHT`` in ``assemble.py``)."""

from __future__ import annotations

import re

_WORD = re.compile(r"[a-z]+")
_ASKING = frozenset({"what", "which"})
# Words after "what" that end in "s" without being plural.
_NOT_PLURAL = frozenset({"is", "was", "does", "has", "this"})


def asks_for_several(query: str) -> bool:
    """Whether the query opens "what" or "which" followed by a plural ("what books", "which
    cities", "what kinds of"), as a question asking for several things does."""
    words = _WORD.findall(query.lower())
    if len(words) < 2 or words[0] not in _ASKING:
        return False
    second = words[1]
    return len(second) > 1 and second.endswith("s") and second not in _NOT_PLURAL
