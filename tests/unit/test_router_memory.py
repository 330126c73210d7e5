"""The router pipeline's pure parts: option headers, the context block, the turn to store."""

from __future__ import annotations

import pytest

from memvault.api.memory_options import parse_options
from memvault.api.providers import CODECS
from memvault.core.errors import InvalidInput
from memvault.core.memory.chat_calls import (
    Conversation,
    MemoryOptions,
    Reply,
    Turn,
    context_lines,
    render_context,
    turn_messages,
)
from memvault.core.models import SearchItem
from memvault.core.times import parse_time
from memvault.core.tokens import estimate_tokens


def options(**headers: str) -> MemoryOptions:
    return parse_options({k.lower(): v for k, v in headers.items()}, 800)


def test_defaults_read_and_write() -> None:
    parsed = options()
    assert parsed == MemoryOptions("auto", True, True, 800, None)
    assert parsed.reads and parsed.writes


@pytest.mark.parametrize(
    ("mode", "reads", "writes"),
    [("auto", True, True), ("read", True, False), ("write", False, True), ("off", False, False)],
)
def test_modes(mode: str, reads: bool, writes: bool) -> None:
    parsed = options(**{"X-Memory-Mode": mode.upper()})
    assert (parsed.reads, parsed.writes) == (reads, writes)


def test_store_flags_limit_and_session() -> None:
    parsed = options(
        **{
            "X-Memory-Store": "no",
            "X-Memory-Store-Response": "false",
            "X-Memory-Context-Limit": "0",
            "X-Session-ID": "s1",
        }
    )
    assert not parsed.writes and not parsed.store_response and not parsed.reads
    assert parsed.session_id == "s1"


@pytest.mark.parametrize("session", ["x" * 200, "ü/?#% ☕ chat", "50%"])
def test_the_router_takes_every_session_id_the_memory_api_takes(session: str) -> None:
    # As the server hands a header over: its UTF-8 bytes, each read as one Latin-1 character.
    assert options(**{"X-Session-ID": session.encode().decode("latin-1")}).session_id == session


@pytest.mark.parametrize(
    "headers",
    [
        {"X-Memory-Mode": "sometimes"},
        {"X-Memory-Store": "maybe"},
        {"X-Memory-Context-Limit": "-5"},
        {"X-Memory-Context-Limit": "lots"},
        {"X-Session-ID": "x" * 201},
    ],
)
def test_bad_values_are_refused(headers: dict[str, str]) -> None:
    with pytest.raises(InvalidInput):
        options(**headers)


def test_context_block_lists_items_under_their_day() -> None:
    item = SearchItem("My cat is  called\nBiscuit.", 1.0, "hot", 0.0, 86400.0, ["m1"], "user", 6, "vault")
    block, count = render_context([item])
    assert count == 1 and block.splitlines()[1:] == ["1970-01-02", "My cat is called Biscuit."]
    assert context_lines(block) == ["My cat is called Biscuit."]
    assert render_context([]) == ("", 0)


def test_context_block_shows_days_oldest_first_and_writes_each_date_once() -> None:
    day = 86400.0
    items = [
        SearchItem("third", 0.9, "", 3 * day, 3 * day + 5, ["c"], "user", 1, "vault"),
        SearchItem("first", 0.8, "", day, day + 9, ["a"], "assistant", 1, "vault"),
        SearchItem("second", 0.7, "", day, day + 1, ["b"], "user", 1, "vault"),
    ]
    block, count = render_context(items)
    assert count == 3
    assert block.splitlines()[1:] == ["1970-01-02", "second", "assistant: first", "1970-01-04", "third"]
    assert context_lines(block) == ["second", "assistant: first", "third"]


def test_context_block_dates_memory_from_the_ends_of_the_calendar() -> None:
    last = parse_time("9999-12-31T23:59:59.999999Z", "timestamp")
    first = parse_time("0001-01-01T00:00:00Z", "timestamp")
    assert last is not None and first is not None
    items = [SearchItem("late", 0.9, "", last, last, ["b"], "user", 1, "vault"),
             SearchItem("early", 0.8, "", first, first, ["a"], "user", 1, "vault")]
    block, _ = render_context(items)
    assert block.splitlines()[1:] == ["0001-01-01", "early", "9999-12-31", "late"]


def test_context_block_keeps_within_the_token_limit_and_takes_items_in_rank_order() -> None:
    long = SearchItem("word " * 200, 1.0, "hot", 0.0, 0.0, ["a"], "user", 200, "vault")
    short = SearchItem("short fact", 0.5, "hot", 0.0, 0.0, ["b"], "assistant", 2, "vault")
    block, count = render_context([short, long], 80)
    assert count == 2 and "short fact" in block and "word word" in block and block.endswith("…")
    assert estimate_tokens(block) <= 80
    block, count = render_context([long, short], 80)
    assert count == 1 and "short fact" not in block and estimate_tokens(block) <= 80
    assert render_context([long], 10) == ("", 0)


def conversation(last_remember: bool = True) -> Conversation:
    return Conversation((Turn("user", "earlier"), Turn("assistant", "ok"), Turn("user", "now", last_remember)), "m")


def test_the_stored_turn_is_the_last_user_message_and_the_answer() -> None:
    stored = turn_messages(conversation(), Reply("answer"), options(), 100.0)
    assert [(m.role, m.content, m.model) for m in stored] == [("user", "now", "m"), ("assistant", "answer", "m")]
    assert stored[0].timestamp < stored[1].timestamp and stored[0].id != stored[1].id


def test_what_is_not_stored() -> None:
    assert turn_messages(conversation(last_remember=False), Reply("answer"), options(), 1.0) == []
    assert turn_messages(conversation(), Reply("answer"), options(**{"X-Memory-Mode": "read"}), 1.0) == []
    only_user = turn_messages(conversation(), Reply("answer"), options(**{"X-Memory-Store-Response": "0"}), 1.0)
    assert [m.role for m in only_user] == ["user"]
    cut = turn_messages(conversation(), Reply("partial", complete=False), options(), 1.0)
    assert [m.role for m in cut] == ["user"]


# One agent's tool loop as each API carries it: the user's question, the model's tool call, the
# tool's result; the question is that of the loop's first call, which stored it.
TOOL_LOOPS = {
    "openai": {"messages": [
        {"role": "user", "content": "What is the weather in Lisbon?"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function"}]},
        {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
    ]},
    "anthropic": {"messages": [
        {"role": "user", "content": "What is the weather in Lisbon?"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "weather", "input": {}}]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "sunny"}]},
    ]},
    "gemini": {"contents": [
        {"role": "user", "parts": [{"text": "What is the weather in Lisbon?"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "weather", "args": {}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "weather", "response": {}}}]},
    ]},
    "openai-responses": {"input": [
        {"role": "user", "content": "What is the weather in Lisbon?"},
        {"type": "function_call", "call_id": "c1", "name": "weather", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
    ]},
}


@pytest.mark.parametrize("provider", sorted(TOOL_LOOPS))
def test_a_tool_loops_later_calls_store_their_answer_alone(provider: str) -> None:
    looped = CODECS[provider].extract(TOOL_LOOPS[provider])
    assert looped.query() == "What is the weather in Lisbon?"
    stored = turn_messages(looped, Reply("Sunny in Lisbon."), options(), 1.0)
    assert [(m.role, m.content) for m in stored] == [("assistant", "Sunny in Lisbon.")]
    # The user's words after the tool's result are a new message, stored with the answer.
    said = Conversation((*looped.turns, Turn("user", "And in Porto?")))
    assert [m.role for m in turn_messages(said, Reply("Rain."), options(), 1.0)] == ["user", "assistant"]
