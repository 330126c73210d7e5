"""The chunker: message boundaries first, sentences second, overlap between chunks."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from memvault.core.memory.chunking import plan_chunks, tail_for_overlap
from memvault.core.models import Message
from memvault.core.passages import split_sentences
from memvault.core.tokens import estimate_tokens


def message(i: int, words: int) -> Message:
    return Message(role="user", content=" ".join(f"word{i}x{j}." if j % 9 == 8 else f"word{i}x{j}" for j in range(words)), timestamp=float(i), id=f"m{i}")


def test_nothing_is_cut_below_the_target() -> None:
    plans, pending, carry = plan_chunks([message(0, 20), message(1, 30)], "", 300, 30)
    assert plans == [] and [m.id for m in pending] == ["m0", "m1"] and carry == ""


def test_short_messages_are_never_split() -> None:
    buffer = [message(i, 40) for i in range(20)]
    plans, pending, _ = plan_chunks(buffer, "", 300, 30)
    assert plans
    for plan in plans:
        for m in plan.messages:
            assert m.content in plan.text
    covered = [m.id for plan in plans for m in plan.messages]
    assert len(covered) == len(set(covered)) and covered + [m.id for m in pending] == [m.id for m in buffer]


def test_a_long_message_is_cut_at_sentences_into_several_chunks() -> None:
    long = message(0, 900)
    plans, pending, _ = plan_chunks([long], "", 300, 30)
    assert len(plans) >= 3 and pending == []
    assert all(plan.messages == (long,) for plan in plans)
    assert all(estimate_tokens(plan.text) <= 300 + 40 for plan in plans)


def test_next_chunk_opens_with_the_tail_of_the_previous() -> None:
    buffer = [message(i, 60) for i in range(12)]
    plans, _, carry = plan_chunks(buffer, "", 300, 30)
    assert len(plans) >= 2
    for before, after in itertools.pairwise(plans):
        tail = after.text.split("\n")[0]
        assert tail and tail in before.text
        assert estimate_tokens(tail) <= 30
    assert carry and carry in plans[-1].text


def test_flush_cuts_whatever_is_pending() -> None:
    plans, pending, _ = plan_chunks([message(0, 5)], "", 300, 30, flush=True)
    assert len(plans) == 1 and pending == []


def test_sentence_split_and_overlap_tail() -> None:
    assert split_sentences("One. Two! Three?\nFour") == ["One.", "Two!", "Three?", "Four"]
    assert tail_for_overlap("First sentence is long enough. Second one.", 5) == "Second one."


@settings(max_examples=60, deadline=None)
@given(st.lists(st.integers(min_value=1, max_value=500), min_size=1, max_size=40))
def test_every_message_is_covered_once_in_order(sizes: list[int]) -> None:
    buffer = [message(i, words) for i, words in enumerate(sizes)]
    plans, pending, _ = plan_chunks(buffer, "", 300, 30)
    covered: list[str] = []
    for plan in plans:
        for m in plan.messages:
            if not covered or covered[-1] != m.id:
                covered.append(m.id)
    assert covered + [m.id for m in pending] == [m.id for m in buffer]
    assert sum(estimate_tokens(m.content) for m in pending) < 300 or not pending
