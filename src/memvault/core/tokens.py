"""The one token estimator: about four characters or 0.75 words per token, whichever is larger."""

from __future__ import annotations

import re

_WORD = re.compile(r"\S+")


def estimate_tokens(text: str) -> int:
    if not text:
        return 0
    by_chars = (len(text) + 3) // 4
    by_words = (len(_WORD.findall(text)) * 4 + 2) // 3
    return max(by_chars, by_words, 1)
