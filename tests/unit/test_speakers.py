"""A question about one person in a conversation of several, stored as "Name: text" lines, is
answered first by what that person said, not by the others' replies that name them."""

from __future__ import annotations

import pytest

from memvault.core import memory
from memvault.core.credentials.keys import create_key
from memvault.core.deps import Deps
from memvault.core.memory.speakers import named_among, speaker_of
from memvault.core.models import Message

NOW = 1_800_000_000.0
DAY = 86400.0
# Two sessions a week apart; in each, Alice tells a hobby and Bob says it back to her by name, so
# relevance alone (his line holds her name as well) would put his replies first.
CONVERSATION = [
    ("Alice: My hobby is pottery, clay keeps my hands busy.", 14 * DAY),
    ("Bob: Alice, your hobby is pottery, clay keeps your hands busy!", 14 * DAY - 5),
    ("Bob: My weekend was quiet, I fixed the fence.", 14 * DAY - 10),
    ("Alice: My hobby is hiking on the ridge every Sunday.", 7 * DAY),
    ("Bob: Alice, your hobby is hiking on the ridge every Sunday!", 7 * DAY - 5),
    ("Bob: I have been reading about boats all week.", 7 * DAY - 10),
]


async def ask(deps: Deps, question: str, budget: int) -> list[str]:
    key, _ = await create_key(deps.db, "friends", NOW)
    messages = [Message("user", text, NOW - age, f"t{i}") for i, (text, age) in enumerate(CONVERSATION)]
    await memory.store_conversation(deps, key.id, messages)
    found = await memory.search_memory(deps, key.id, question, budget_tokens=budget, now=NOW, exclude=[question])
    return [item.text for item in found.items]


async def test_a_question_about_a_person_gets_what_they_said_in_each_session_first(deps: Deps) -> None:
    first_two = (await ask(deps, "What hobbies does Alice have?", 400))[:2]
    assert sorted(first_two) == sorted(text for text, _ in CONVERSATION if text.startswith("Alice:"))


async def test_the_other_speaker_is_asked_about_just_the_same(deps: Deps) -> None:
    found = await ask(deps, "What has Bob been doing at the weekend with the fence?", 400)
    assert found[0] == "Bob: My weekend was quiet, I fixed the fence."


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("What do Alice's kids like?", {"alice"}),
        ("What do Alice and Bob have in common?", {"alice", "bob"}),
        ("what does alice like?", set()),  # a name is written capitalised
        ("What is in the Note?", set()),  # one labelled line is a heading, not a speaker
        ("Who is Carol?", set()),  # nobody of that name speaks
    ],
)
def test_the_speakers_a_query_names(query: str, expected: set[str]) -> None:
    texts = ["Alice: hello", "Alice: hi again", "Bob: hey Alice", "Bob: how are you", "Note: buy milk", "no label here"]
    assert named_among(query, (speaker_of(text) for text in texts)) == expected


def test_a_label_is_one_or_two_capitalised_words_opening_the_message() -> None:
    assert speaker_of("Mary Ann: yes") == "mary ann"
    assert speaker_of("Alice: yes") == "alice"
    assert speaker_of("alice: yes") is None
    assert speaker_of("It was 10:30 when Alice came") is None
    assert speaker_of("Alice:no space") is None
