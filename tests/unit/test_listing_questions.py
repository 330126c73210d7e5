"""A question asking for several things a person did ("what hobbies does Alice have?") is answered
by that person's own lines, each in its own words, before the replies of others that repeat the
question's words to them."""

from __future__ import annotations

import pytest

from memvault.core import memory
from memvault.core.credentials.keys import create_key
from memvault.core.deps import Deps
from memvault.core.memory.question_forms import asks_for_several
from memvault.core.models import Message

NOW = 1_800_000_000.0
DAY = 86400.0
# Alice tells of three pastimes without the word "hobby"; Bob names her and says "hobbies" each time.
ALICE = [
    ("Alice: Sunday I was at the pottery wheel all afternoon.", 20 * DAY),
    ("Alice: Swam forty lengths before work this morning.", 13 * DAY),
    ("Alice: Finished the birdhouse I was building in the shed.", 6 * DAY),
]
BOB = [
    ("Bob: Alice, hobbies matter, my hobbies are chess and fishing.", 20 * DAY - 5),
    ("Bob: Alice, I read about hobbies that people have in a magazine.", 13 * DAY - 5),
    ("Bob: Alice, does everyone have hobbies? Mine keep me sane.", 6 * DAY - 5),
]


async def ask(deps: Deps, question: str) -> list[str]:
    key, _ = await create_key(deps.db, "friends", NOW)
    turns = sorted(ALICE + BOB, key=lambda turn: -turn[1])
    messages = [Message("user", text, NOW - age, f"t{i}") for i, (text, age) in enumerate(turns)]
    await memory.store_conversation(deps, key.id, messages)
    found = await memory.search_memory(deps, key.id, question, budget_tokens=2000, now=NOW, exclude=[question])
    return [item.text for item in found.items]


async def test_a_question_asking_for_several_things_gets_all_the_persons_own_lines_first(deps: Deps) -> None:
    found = await ask(deps, "What hobbies does Alice have?")
    assert sorted(found[:3]) == sorted(text for text, _ in ALICE)
    assert sorted(found[3:]) == sorted(text for text, _ in BOB)


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("What activities does Melanie partake in?", True),
        ("Which books has Bob read?", True),
        ("what kinds of music does Alice like?", True),
        ("What is Alice's hobby?", False),
        ("What does Alice do on Sundays?", False),
        ("What was the name of Bob's dog?", False),
        ("What's Alice's favourite dish?", False),  # "what's" is "what is"
        ("What\u2019s on Bob's mind?", False),
        ("When did Alice go swimming?", False),
        ("Books Alice read?", False),
        ("What", False),
        ("", False),
    ],
)
def test_which_questions_ask_for_several_things(query: str, expected: bool) -> None:
    assert asks_for_several(query) is expected
