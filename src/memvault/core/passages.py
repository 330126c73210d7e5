"""Text cut at sentence boundaries: conversation chunks and a brain fact's passages both start
from the same sentences."""

from __future__ import annotations

import re

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def split_sentences(text: str) -> list[str]:
    return [part for part in (p.strip() for p in _SENTENCE_END.split(text)) if part]


def _pieces(sentence: str, target_chars: int) -> list[str]:
    """A sentence longer than a passage, cut between words (or inside a word only if it must)."""
    if len(sentence) <= target_chars:
        return [sentence]
    pieces, current = [], ""
    for word in sentence.split():
        while len(word) > target_chars:
            if current:
                pieces.append(current)
                current = ""
            pieces.append(word[:target_chars])
            word = word[target_chars:]
        if current and len(current) + 1 + len(word) > target_chars:
            pieces.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    if current:
        pieces.append(current)
    return pieces


def passages(text: str, target_chars: int, overlap_chars: int) -> list[str]:
    """Whole sentences gathered up to ``target_chars``; each passage after the first repeats the
    previous one's last sentences up to ``overlap_chars``, so a statement cut in two is whole in
    one of them."""
    units = [piece for sentence in split_sentences(text) for piece in _pieces(sentence, target_chars)]
    out: list[str] = []
    current: list[str] = []
    size = 0
    fresh = False  # whether ``current`` holds a unit the previous passage did not
    for unit in units:
        if current and fresh and size + 1 + len(unit) > target_chars:
            out.append(" ".join(current))
            current, size = _overlap(current, overlap_chars), 0
            size = sum(len(u) + 1 for u in current)
        current.append(unit)
        size += len(unit) + 1
        fresh = True
    if current and fresh:
        out.append(" ".join(current))
    return out


def _overlap(units: list[str], overlap_chars: int) -> list[str]:
    tail: list[str] = []
    used = 0
    for unit in reversed(units):
        if used + len(unit) > overlap_chars:
            break
        tail.insert(0, unit)
        used += len(unit) + 1
    return tail
