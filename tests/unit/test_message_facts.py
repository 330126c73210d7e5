"""What ranking reads off a found message's text is worked out once per text and remembered, within
bounds: a count of texts, and no text longer than ``LONGEST_REMEMBERED`` kept at all."""

from __future__ import annotations

from typing import Any

from memvault.core.memory import message_facts
from memvault.core.memory.message_facts import (
    LONGEST_REMEMBERED,
    REMEMBERED_FACTS,
    REMEMBERED_RETURNED,
    MessageFacts,
    facts_of,
    line_tokens,
    normalised,
)
from memvault.core.ranking import normalize_text
from memvault.core.tokens import estimate_tokens


def test_a_texts_facts_are_the_same_when_remembered_as_when_worked_out() -> None:
    texts = ["Alice: Where did you go?", "Bob: Paris! \u201d", "no label here?) ", "Note: NFKC \uff21\uff22 text"]
    first = [facts_of(text) for text in texts]
    again = [facts_of("".join(list(text))) for text in texts]  # equal texts, other objects
    assert first == again == [
        MessageFacts("alice", True), MessageFacts("bob", False), MessageFacts(None, True), MessageFacts("note", False)
    ]
    assert [normalised(text) for text in texts] == [normalize_text(text) for text in texts]
    assert [line_tokens(text) for text in texts] == [estimate_tokens(text) for text in texts]


def test_each_memory_holds_at_most_its_count_of_texts() -> None:
    for index in range(REMEMBERED_FACTS + 10):
        facts_of(f"Carol: line {index}?")
    for index in range(REMEMBERED_RETURNED + 10):
        normalised(f"Line {index}.")
        line_tokens(f"line {index}")
    assert message_facts._remembered_facts.cache_info().currsize == REMEMBERED_FACTS
    assert message_facts._remembered_normalised.cache_info().currsize == REMEMBERED_RETURNED
    assert message_facts._remembered_tokens.cache_info().currsize == REMEMBERED_RETURNED
    assert facts_of(f"Carol: line {REMEMBERED_FACTS + 9}?") == MessageFacts("carol", True)


def test_a_long_text_is_worked_out_each_time_and_never_kept() -> None:
    long = "Dana: " + "word " * LONGEST_REMEMBERED + "?"
    kept = [memory.cache_info() for memory in _memories()]
    assert facts_of(long) == MessageFacts("dana", True)
    assert normalised(long) == normalize_text(long)
    assert line_tokens(long) == estimate_tokens(long)
    after = [memory.cache_info() for memory in _memories()]
    assert [(info.currsize, info.misses, info.hits) for info in after] == [
        (info.currsize, info.misses, info.hits) for info in kept
    ]


def _memories() -> list[Any]:
    return [message_facts._remembered_facts, message_facts._remembered_normalised, message_facts._remembered_tokens]
