"""What a search reads off a found message's text that no query changes: who said it, whether it
asks something, its normalised form and its tokens as a line of the context block. A vault's
resident rows are the same objects from search to search while a search scores hundreds of them,
so each text's facts are worked out once and remembered by the text (its hash is cached on it,
and the same object compares at once).

Every memory here is bounded: by a count of texts, and a text longer than ``LONGEST_REMEMBERED`` is
worked out each time, never kept (a row can hold megabytes)."""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

from memvault.core.memory.speakers import speaker_of
from memvault.core.ranking import normalize_text
from memvault.core.tokens import estimate_tokens

# A few vaults' messages: a search touches ~250 of a vault's messages, a LoCoMo conversation ~700.
REMEMBERED_FACTS = 4096
# The texts a few dozen searches return (a budget takes a few dozen items), and the turns of the
# conversations they were for (a chat call carries its whole conversation, each turn left out of
# what is returned).
REMEMBERED_RETURNED = 1024
# Characters: a longer text is worked out each time (``speaker_of`` and ``asks`` read only its ends).
LONGEST_REMEMBERED = 4096
_CLOSERS = "\"')]\u201d\u2019"


class MessageFacts(NamedTuple):
    speaker: str | None  # ``speakers.speaker_of``
    asks: bool


def asks(text: str) -> bool:
    """Whether a message ends asking something (a question mark, then only spaces, quotes or brackets)."""
    while True:
        stripped = text.rstrip().rstrip(_CLOSERS)
        if stripped == text:
            return text.endswith("?")
        text = stripped


def facts_of(text: str) -> MessageFacts:
    """The query-independent facts of a message's ``text``, remembered."""
    return _remembered_facts(text) if len(text) <= LONGEST_REMEMBERED else _facts(text)


def normalised(text: str) -> str:
    """``ranking.normalize_text`` of ``text``, remembered."""
    return _remembered_normalised(text) if len(text) <= LONGEST_REMEMBERED else normalize_text(text)


def line_tokens(line: str) -> int:
    """``tokens.estimate_tokens`` of a line of the context block, remembered."""
    return _remembered_tokens(line) if len(line) <= LONGEST_REMEMBERED else estimate_tokens(line)


def _facts(text: str) -> MessageFacts:
    return MessageFacts(speaker_of(text), asks(text))


_remembered_facts = lru_cache(maxsize=REMEMBERED_FACTS)(_facts)
_remembered_normalised = lru_cache(maxsize=REMEMBERED_RETURNED)(normalize_text)
_remembered_tokens = lru_cache(maxsize=REMEMBERED_RETURNED)(estimate_tokens)
