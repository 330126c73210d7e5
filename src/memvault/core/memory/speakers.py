"""Who said a message, for memory of conversations between several people stored with each line
opening on its speaker's name ("Alice: ..."), and which of those speakers a query is about.

A question about a person ("what does Alice do to relax?") is answered by what that person said;
the lines of others that merely address or mention them share the name's keyword and the topic's
vector, and would spend the budget on replies."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

# A label is one or two capitalised words and a colon at the very start of a message.
_LABEL = re.compile(r"([A-Z][\w'-]*(?: [A-Z][\w'-]*)?): \S")
_CAPITALISED = re.compile(r"\b([A-Z][\w-]*?)(?:'s|s'|\u2019s)?\b")
# A label seen on fewer messages than this is a heading ("Note: ..."), not a speaker.
MIN_LINES = 2


def speaker_of(text: str) -> str | None:
    """The label a message opens with, lower-cased; None for a message without one."""
    match = _LABEL.match(text)
    return match[1].lower() if match else None


def named_among(query: str, labels: Iterable[str | None]) -> frozenset[str]:
    """The speakers among ``labels`` (the ``speaker_of`` of each text found) whose first name the
    query writes (capitalised, as names are)."""
    written = {name.lower() for name in _CAPITALISED.findall(query)}
    if not written:
        return frozenset()
    lines = Counter(label for label in labels if label is not None)
    return frozenset(label for label, count in lines.items() if count >= MIN_LINES and label.split()[0] in written)
