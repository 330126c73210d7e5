"""Recall fills its budget with the right things: one ranking (relevance with recency folded in),
filled in order so a budget's items are the start of a larger budget's; the same text said again
is one memory; near-duplicates collapse; the router never injects what the request already says."""

from __future__ import annotations

import asyncio
import sqlite3
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from memory_support import Memvault, settings_for
from test_memory_api import NOW, search, store

from memvault.adapters.local.vaults import vault_filename
from memvault.core import memory
from memvault.core.credentials.keys import create_key
from memvault.core.memory import chat_calls
from memvault.core.memory.chat_calls import (
    Conversation,
    MemoryOptions,
    Reply,
    Turn,
    context_lines,
    prepare,
    turn_messages,
)
from memvault.core.memory.recall_query import QUERY_CHARS, recall_query, refers_back
from memvault.core.models import Message
from memvault.core.settings import load_settings
from memvault.runtime.local import build_local_deps, close_local_deps

VOCABULARY = "harbour lamp copper meadow violin glacier pepper saddle orchid tunnel falcon ember quartz willow kite".split()
sentences = st.lists(st.sampled_from(VOCABULARY), min_size=3, max_size=40).map(" ".join)


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    memories=st.lists(st.tuples(sentences, st.floats(0, 400 * 86400)), min_size=1, max_size=60),
    query=st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=5).map(" ".join),
    budget=st.integers(20, 600),
)
def test_what_a_budget_returns_is_the_start_of_what_twice_that_returns(
    memories: list[tuple[str, float]], query: str, budget: int
) -> None:
    async def check(data: Path) -> None:
        deps = build_local_deps(load_settings(settings_for(data)))
        try:
            key, _ = await create_key(deps.db, "p", NOW)
            messages = [Message("user", text, NOW - age, f"m{i}") for i, (text, age) in enumerate(memories)]
            await memory.store_conversation(deps, key.id, messages)
            small = await memory.search_memory(deps, key.id, query, budget_tokens=budget, now=NOW)
            large = await memory.search_memory(deps, key.id, query, budget_tokens=2 * budget, now=NOW)
            assert small.tokens <= budget and large.tokens <= 2 * budget
            ids = [item.source_ids for item in small.items]
            assert ids == [item.source_ids for item in large.items][: len(ids)]
            scores = [item.score for item in large.items]
            assert scores == sorted(scores, reverse=True)
        finally:
            await close_local_deps(deps)

    with tempfile.TemporaryDirectory() as data:
        asyncio.run(check(Path(data)))


async def test_the_budget_not_an_item_count_bounds_a_search(memvault: Memvault) -> None:
    notes = [{"role": "user", "content": f"The lamp in room {i} is copper.", "timestamp": NOW - i, "id": f"n{i}"} for i in range(80)]
    await store(memvault, notes)
    found = await search(memvault, "copper lamp room", budget_tokens=2000)
    assert len(found["items"]) > 40 and found["tokens"] <= 2000
    assert len((await search(memvault, "copper lamp room", budget_tokens=2000, limit=7))["items"]) == 7


async def test_the_same_text_said_again_is_one_memory_with_its_count(memvault: Memvault) -> None:
    for attempt in range(8):
        await store(memvault, [{"role": "user", "content": "What is my cat called?" if attempt % 2 else "what is my CAT called", "timestamp": NOW + attempt, "id": f"q{attempt}"}])
    stats = await memvault.deps.vaults.vault(f"{memvault.key_id}:core").stats()
    assert stats.messages + stats.buffered_messages == 1
    path = Path(memvault.deps.settings.data_dir) / "vaults" / vault_filename(f"{memvault.key_id}:core")
    with sqlite3.connect(path) as conn:
        assert conn.execute("SELECT occurrences, ts FROM buffer").fetchall() == [(8, NOW + 7)]
    # Any of its ids names it: forgetting one forgets the text.
    assert (await memory.forget(memvault.deps, memvault.key_id, ["q5"]))["forgotten"] == ["q5"]
    stats = await memvault.deps.vaults.vault(f"{memvault.key_id}:core").stats()
    assert stats.messages + stats.buffered_messages == 0


async def test_a_question_asked_again_and_again_never_crowds_out_its_answer(memvault: Memvault) -> None:
    deps = memvault.deps
    filler = [{"role": "user", "content": f"Note {i}: the tram was late again on line {i}.", "timestamp": NOW - 9000 + i} for i in range(40)]
    await store(memvault, [*filler, {"role": "user", "content": "My cat is called Biscuit.", "timestamp": NOW - 8000}])
    options = MemoryOptions("auto", True, True, 300, None)
    question = Conversation((Turn("user", "What is my cat called?"),))
    for _ in range(8):
        turn = turn_messages(question, Reply("I am not sure."), options, deps.clock())
        await memory.store_conversation(deps, memvault.key_id, turn)
    context = (await prepare(deps, memvault.key_id, question, options)).context
    lines = context_lines(context)
    assert "Biscuit" in context and lines
    assert not any("What is my cat called" in line for line in lines)
    assert len(lines) == len(set(lines))


async def test_near_duplicates_collapse_into_the_newest(memvault: Memvault) -> None:
    base = "The ferry to Skye leaves at nine from the Mallaig pier every weekday morning in summer"
    await store(memvault, [
        {"role": "user", "content": base + ".", "timestamp": NOW - 5000, "id": "old"},
        {"role": "user", "content": base + " too.", "timestamp": NOW - 10, "id": "new"},
        {"role": "user", "content": "The ferry to Skye leaves at ten from the Mallaig pier every weekday morning in summer.", "timestamp": NOW - 20, "id": "other"},
        *({"role": "user", "content": f"Filler {i} about gardens and sheds.", "timestamp": NOW - 9000 + i} for i in range(40)),
    ])
    texts = [item["text"] for item in (await search(memvault, "ferry Skye Mallaig pier"))["items"]]
    assert base + " too." in texts and base + "." not in texts
    assert any("at ten" in t for t in texts)  # a different number is a different fact


async def test_a_follow_up_brings_what_it_refers_to(memvault: Memvault) -> None:
    facts = [
        "My sister Anna lives in Lisbon.",
        "Anna works as a paediatric nurse at Santa Maria hospital.",
        "My brother Tom is a carpenter in Leeds.",
        "Tom has two daughters, Ruby and Jess.",
    ]
    filler = [f"Note {i}: the weather in the valley was mild and the orchard needed pruning." for i in range(30)]
    await store(memvault, [{"role": "user", "content": t, "timestamp": NOW - 100 + i} for i, t in enumerate([*filler, *facts])])
    follow_up = Conversation((Turn("user", "What does Tom do?"), Turn("assistant", "Tom is a carpenter."), Turn("user", "does he have kids?")))
    context = (await prepare(memvault.deps, memvault.key_id, follow_up, MemoryOptions("auto", True, True, 120, None))).context
    assert "Ruby and Jess" in context


def test_a_question_that_stands_alone_is_searched_as_it_is() -> None:
    for text in ("Where does Anna live?", "What did I say this morning?", "Remind me of the Lisbon flat address", "What is my cat called?"):
        assert not refers_back(text)
        assert recall_query([("user", "earlier question"), ("assistant", "An answer about Porto."), ("user", text)]) == text


def test_a_question_that_leans_on_the_last_turns_takes_their_words() -> None:
    for text in ("and her sister?", "What does she do?", "why?", "Tell me more", "Which one was cheaper?"):
        assert refers_back(text), text
    query = recall_query([("user", "Where does my sister Anna live?"), ("assistant", "Anna lives in Lisbon."), ("user", "and what does she do?")])
    assert query.endswith("and what does she do?") and "anna" in query and "lisbon" in query


async def test_a_recall_that_hangs_is_given_up_and_the_call_goes_on_without_memory(memvault: Memvault) -> None:
    """The guard over a hung store: past the race's timeout and a second, the call is prepared
    without memory (``degraded``), and the hung recall is cancelled, not left running."""
    deps = memvault.deps
    deps.settings = deps.settings.replace(race_timeout_ms=50)
    cancelled = asyncio.Event()

    async def hangs(query: str, exclude: Sequence[str]) -> Any:
        try:
            await asyncio.Event().wait()
        finally:
            cancelled.set()

    question = Conversation((Turn("user", "What is my cat called?"),))
    prepared = await prepare(deps, memvault.key_id, question, MemoryOptions("auto", True, True, 300, None), hangs)
    assert prepared.status == "degraded" and not prepared.context and prepared.retrieval_ms >= 1000
    assert cancelled.is_set()


async def test_an_answer_resumed_while_its_first_part_is_being_stored_never_recalls_that_part(
    memvault: Memvault, monkeypatch: Any
) -> None:
    # Gemini's SDK asks for the rest of a cut answer at once; the call that began it stores the
    # question and the first part in the background, so they may land while the continuation recalls.
    deps, key_id = memvault.deps, memvault.key_id
    said = deps.clock() - 60
    await store(memvault, [{"role": "user", "content": "My sourdough starter Clint lives in the fridge.", "timestamp": said}])
    question = "Write me a long guide to my sourdough starter Clint."
    part = "Chapter one: Clint the sourdough starter is fed with rye flour."
    options = MemoryOptions("auto", True, True, 300, None)
    resumed = Conversation((Turn("user", question),), resumes_an_answer=True)
    searched = memory.search_memory
    landed = asyncio.Event()

    async def first_part_lands_then_search(*args: Any, **kwargs: Any) -> Any:
        if not landed.is_set():
            landed.set()
            turn = turn_messages(Conversation((Turn("user", question),)), Reply(part), options, deps.clock())
            await memory.store_conversation(deps, key_id, turn)
        return await searched(*args, **kwargs)

    monkeypatch.setattr(chat_calls, "search_memory", first_part_lands_then_search)
    context = (await prepare(deps, key_id, resumed, options)).context
    assert landed.is_set() and "fridge" in context
    assert "Chapter one" not in context


def test_a_message_of_megabytes_is_searched_by_its_end_alone() -> None:
    """A pasted document with a question after it: the query is the question's end of it, bounded,
    so recalling for it costs every call on the server the same as a short one."""
    pasted = "lorem ipsum dolor sit amet " * 200_000 + "So what did the plumber say about the boiler?"
    query = recall_query([("user", pasted)])
    assert len(query) <= QUERY_CHARS and query.endswith("what did the plumber say about the boiler?")
