"""Turning a pending buffer of messages into ~300-token chunks.

Cuts fall on message boundaries first; only a message longer than a whole chunk is cut, and then
at sentence boundaries. Consecutive chunks share about ``overlap`` tokens: the tail sentences of
one chunk open the next, so a fact that straddles a cut is still whole somewhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memvault.core.models import Message
from memvault.core.passages import split_sentences
from memvault.core.tokens import estimate_tokens


@dataclass(frozen=True)
class ChunkPlan:
    messages: tuple[Message, ...]
    text: str  # overlap prefix (if any) plus the messages' text
    carry_chars: int = 0  # how much of ``text`` is the overlap prefix, its newline included


def message_tokens(message: Message) -> int:
    return estimate_tokens(message.content)


def tail_for_overlap(text: str, overlap_tokens: int) -> str:
    """The last whole sentences of ``text`` that fit in ``overlap_tokens`` (or its last words)."""
    if overlap_tokens <= 0:
        return ""
    tail: list[str] = []
    used = 0
    for sentence in reversed(split_sentences(text)):
        cost = estimate_tokens(sentence)
        if used + cost > overlap_tokens:
            break
        tail.insert(0, sentence)
        used += cost
    if tail:
        return " ".join(tail)
    words = text.split()
    keep = max(1, (overlap_tokens * 3) // 4)
    return " ".join(words[-keep:])


def _pieces_of_long_message(content: str, target: int) -> list[str]:
    pieces: list[str] = []
    current: list[str] = []
    used = 0
    for sentence in split_sentences(content):
        for part in _split_oversized_sentence(sentence, target):
            cost = estimate_tokens(part)
            if current and used + cost > target:
                pieces.append(" ".join(current))
                current, used = [], 0
            current.append(part)
            used += cost
    if current:
        pieces.append(" ".join(current))
    return pieces


def _split_oversized_sentence(sentence: str, target: int) -> list[str]:
    if estimate_tokens(sentence) <= target:
        return [sentence]
    words = sentence.split()
    step = max(1, (target * 3) // 4)
    return [" ".join(words[i : i + step]) for i in range(0, len(words), step)]


def _take_prefix(buffer: Sequence[Message], target: int) -> int:
    """How many leading messages form the next chunk: as many whole ones as fit, at least one."""
    used = 0
    for index, message in enumerate(buffer):
        cost = message_tokens(message)
        if index > 0 and used + cost > target:
            return index
        used += cost
    return len(buffer)


def plan_chunks(
    buffer: Sequence[Message], carry: str, target: int, overlap: int, *, flush: bool = False
) -> tuple[list[ChunkPlan], list[Message], str]:
    """Cut ready chunks off the front of ``buffer``.

    Returns the chunks, the messages left pending, and the overlap text the next chunk opens with.
    Without ``flush`` a chunk is cut only once the buffer holds at least ``target`` tokens.
    """
    pending = list(buffer)
    plans: list[ChunkPlan] = []
    left = sum(message_tokens(m) for m in pending)
    while pending and (flush or left >= target):
        count = _take_prefix(pending, target)
        taken, pending = pending[:count], pending[count:]
        left -= sum(message_tokens(m) for m in taken)
        if count == 1 and message_tokens(taken[0]) > target:
            texts = _pieces_of_long_message(taken[0].content, target)
        else:
            texts = ["\n".join(m.content for m in taken)]
        for body in texts:
            text = f"{carry}\n{body}" if carry else body
            plans.append(ChunkPlan(messages=tuple(taken), text=text, carry_chars=len(carry) + 1 if carry else 0))
            carry = tail_for_overlap(body, overlap)
    return plans, pending, carry
