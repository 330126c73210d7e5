"""What the memory router searches with. A last user message that stands on its own is searched
as it is, alone. One that leans on what came before ("and her sister?", "why?", "what does she
do?") or is too short to search with gets the turns before it added, each cut short."""

from __future__ import annotations

import re
from collections.abc import Sequence

from memvault.core.ranking import exact_tokens, normalize_text, query_terms
from memvault.core.tokens import clip_to_tokens

# Words that point back at something said earlier, when the message names nothing itself.
POINTERS = frozenset(
    "he she it they him her them his hers its their theirs this that these those there one ones same other".split()
)
OPENERS = ("and", "but", "also", "so", "then", "or", "what about", "how about", "same", "why", "really")
# "this morning", "that week": a time, not a pointer.
_MOMENTS = re.compile(r"\b(?:this|that|these|those|last|next) (?:morning|afternoon|evening|night|day|week|weekend|month|year|time|summer|winter|spring|autumn|fall)s?\b")
# A message with fewer searchable terms than this cannot find much alone.
MIN_TERMS = 2
# How much of each earlier turn joins the query.
EARLIER_TURN_TOKENS = 60
# Characters of the last user message searched with, from its end (where a question after a pasted
# document stands): the query's embedding reads 256 tokens at most, and a megabyte message would
# otherwise be read whole by the keyword channel on every call's path.
QUERY_CHARS = 4000


def refers_back(text: str) -> bool:
    words = _MOMENTS.sub(" ", normalize_text(text)).split()
    if len(query_terms(text)) < MIN_TERMS:
        return True
    if any(words[: len(opener.split())] == opener.split() for opener in OPENERS):
        return True
    return bool(POINTERS & set(words)) and not exact_tokens(text)


def recall_query(turns: Sequence[tuple[str, str]]) -> str:
    """The query for ``turns`` ((role, text), oldest first): the last user text, and when it refers
    back, what it refers to: the searchable words of the user turn before it and the names in the
    answer between them. Whole earlier sentences would outweigh the question itself."""
    spoken = [(role, text) for role, text in turns if text.strip()]
    last = next((i for i in range(len(spoken) - 1, -1, -1) if spoken[i][0] == "user"), None)
    if last is None:
        return ""
    text = spoken[last][1][-QUERY_CHARS:]
    if not refers_back(text):
        return text
    context: list[str] = []
    for role, earlier in spoken[max(0, last - 2) : last]:
        clipped = clip_to_tokens(earlier, EARLIER_TURN_TOKENS)
        context += query_terms(clipped) if role == "user" else [t for t in exact_tokens(clipped) if t.isalpha()]
    return " ".join([*dict.fromkeys(context), text])
