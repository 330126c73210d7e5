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


def clip_to_tokens(text: str, tokens: int) -> str:
    """The head of ``text`` cut at a word boundary so that it, with an ellipsis, estimates at most
    ``tokens`` tokens."""
    if estimate_tokens(text) <= tokens:
        return text
    words = text.split()
    low, high = 0, len(words)
    while low < high:  # the most words whose cut still fits
        middle = (low + high + 1) // 2
        if estimate_tokens(" ".join(words[:middle]) + " …") <= tokens:
            low = middle
        else:
            high = middle - 1
    return " ".join(words[:low]) + " …" if low else ""
