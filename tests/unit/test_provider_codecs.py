"""Provider codecs: pure translation between each provider's JSON and the router's shapes."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from memvault.api.providers import CODECS
from memvault.api.providers.base import TOOL_TURN, SseEvent
from memvault.core.errors import InvalidInput
from memvault.core.memory.chat_calls import Reply, Turn

CONTEXT = "Relevant memory: the user likes teal."

OPENAI = {
    "model": "gpt-x",
    "stream": True,
    "temperature": 0.2,
    "messages": [
        {"role": "system", "content": "Be brief."},
        {
            "role": "user",
            "content": [{"type": "text", "text": "Look"}, {"type": "image_url", "image_url": {"url": "u"}}],
        },
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function"}]},
        {"role": "tool", "tool_call_id": "c1", "content": "42"},
        {"role": "user", "content": "secret", "memory": False},
    ],
}
ANTHROPIC = {
    "model": "claude-x",
    "max_tokens": 64,
    "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
    "messages": [
        {"role": "user", "content": "Hello"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "hmm", "signature": "s"},
                {"type": "text", "text": "Hi"},
                {"type": "tool_use", "id": "t1", "name": "f", "input": {}},
            ],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}], "memory": True},
    ],
}
GEMINI = {
    "contents": [
        {"role": "user", "parts": [{"text": "Hi"}, {"inlineData": {"mimeType": "image/png", "data": "AA=="}}]},
        {"role": "model", "parts": [{"text": "plan", "thought": True}, {"text": "Hello"}]},
        {"parts": [{"text": "again"}], "memory": False},
    ],
    "generationConfig": {"temperature": 0.1},
}


def without(body: dict[str, Any], field: str) -> dict[str, Any]:
    return {k: v for k, v in body.items() if k != field}


def test_openai_extracts_user_and_assistant_text_with_flags() -> None:
    conversation = CODECS["openai"].extract(OPENAI)
    assert conversation.model == "gpt-x" and conversation.stream
    assert conversation.turns == (Turn("user", "Look"), Turn("assistant", ""), TOOL_TURN, TOOL_TURN, Turn("user", "secret", False))
    # One word is too little to search with: the user turn before it lends its words.
    assert conversation.query() == "look secret"


def test_anthropic_reads_text_blocks_only() -> None:
    conversation = CODECS["anthropic"].extract(ANTHROPIC)
    assert not conversation.stream
    assert conversation.turns == (Turn("user", "Hello"), Turn("assistant", "Hi"), TOOL_TURN, TOOL_TURN, Turn("user", ""))
    assert conversation.query() == "Hello"


def test_gemini_maps_model_role_and_skips_thoughts() -> None:
    conversation = CODECS["gemini"].extract(GEMINI, stream=True)
    assert conversation.stream
    assert conversation.turns == (Turn("user", "Hi"), Turn("assistant", "Hello"), Turn("user", "again", False))


@pytest.mark.parametrize(
    ("provider", "body"),
    [
        ("openai", {"model": "m"}),
        ("openai", {"messages": []}),
        ("openai", {"messages": ["hi"]}),
        ("openai", {"messages": [{"role": "user", "content": "x", "memory": "no"}]}),
        ("anthropic", {"messages": [{"role": "user", "content": "x"}], "system": 3}),
        ("gemini", {"contents": [{"role": "system", "parts": []}]}),
        ("gemini", {"contents": "hi"}),
        ("openai-responses", {"input": 3}),
        ("openai-responses", {"input": ["hi"]}),
        ("openai-responses", {"input": "hi", "instructions": ["be brief"]}),
        ("openai-responses", {"input": [{"role": "user", "content": "x", "memory": 1}]}),
    ],
)
def test_bad_input_is_rejected(provider: str, body: dict[str, Any]) -> None:
    with pytest.raises(InvalidInput):
        CODECS[provider].extract(body)


@pytest.mark.parametrize(
    ("provider", "body", "field"),
    [("openai", OPENAI, "messages"), ("anthropic", ANTHROPIC, "messages"), ("gemini", GEMINI, "contents")],
)
def test_memory_flags_are_stripped_and_nothing_else(provider: str, body: dict[str, Any], field: str) -> None:
    original = copy.deepcopy(body)
    stripped, changed = CODECS[provider].strip_memory_flags(body)
    assert changed
    assert body == original
    assert without(stripped, field) == without(body, field)
    assert [{k: v for k, v in m.items() if k != "memory"} for m in body[field]] == stripped[field]
    assert CODECS[provider].strip_memory_flags(stripped) == (stripped, False)


def test_openai_injects_into_the_leading_system_message() -> None:
    injected = CODECS["openai"].inject(OPENAI, CONTEXT)
    assert injected["messages"][0] == {"role": "system", "content": f"Be brief.\n\n{CONTEXT}"}
    assert injected["messages"][1:] == OPENAI["messages"][1:]
    assert without(injected, "messages") == without(OPENAI, "messages")


def test_openai_adds_a_system_message_when_there_is_none() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}
    assert CODECS["openai"].inject(body, CONTEXT)["messages"] == [
        {"role": "system", "content": CONTEXT},
        {"role": "user", "content": "hi"},
    ]
    parts = {"messages": [{"role": "developer", "content": [{"type": "text", "text": "d"}]}]}
    assert CODECS["openai"].inject(parts, CONTEXT)["messages"][0]["content"][-1] == {"type": "text", "text": CONTEXT}


def test_anthropic_injects_into_system_string_blocks_or_nothing() -> None:
    codec = CODECS["anthropic"]
    blocks = codec.inject(ANTHROPIC, CONTEXT)
    assert blocks["system"] == [*ANTHROPIC["system"], {"type": "text", "text": CONTEXT}]
    assert without(blocks, "system") == without(ANTHROPIC, "system")
    assert codec.inject({**ANTHROPIC, "system": "Be brief."}, CONTEXT)["system"] == f"Be brief.\n\n{CONTEXT}"
    assert codec.inject(without(ANTHROPIC, "system"), CONTEXT)["system"] == CONTEXT


def test_gemini_injects_into_system_instruction() -> None:
    codec = CODECS["gemini"]
    fresh = codec.inject(GEMINI, CONTEXT)
    assert fresh["systemInstruction"] == {"parts": [{"text": CONTEXT}]}
    assert without(fresh, "systemInstruction") == GEMINI
    snake = codec.inject({**GEMINI, "system_instruction": {"parts": [{"text": "S"}]}}, CONTEXT)
    assert snake["system_instruction"] == {"parts": [{"text": "S"}, {"text": CONTEXT}]}
    assert "systemInstruction" not in snake


def test_gemini_takes_one_entry_where_a_list_of_one_is_meant() -> None:
    # Gemini's JSON reads a repeated field given one entry; REST callers send it so.
    codec = CODECS["gemini"]
    single = {"contents": {"role": "user", "parts": {"text": "My dog is Rex."}, "memory": False},
              "system_instruction": {"parts": {"text": "You are a cat."}}}
    assert codec.extract(single).turns == (Turn("user", "My dog is Rex.", False),)
    injected = codec.inject(single, CONTEXT)
    assert injected["system_instruction"] == {"parts": [{"text": "You are a cat."}, {"text": CONTEXT}]}
    stripped, changed = codec.strip_memory_flags(single)
    assert changed and stripped["contents"] == {"role": "user", "parts": {"text": "My dog is Rex."}}
    as_text = codec.inject({**GEMINI, "systemInstruction": "Be brief."}, CONTEXT)
    assert as_text["systemInstruction"] == {"parts": [{"text": "Be brief."}, {"text": CONTEXT}]}
    # A system field of a shape not known here stays the caller's; the memory leads the user's turn.
    odd = codec.inject({**GEMINI, "systemInstruction": {"role": "system"}}, CONTEXT)
    assert odd["systemInstruction"] == {"role": "system"}
    assert CONTEXT in json.dumps(odd["contents"])


def test_replies_and_usage_from_whole_bodies() -> None:
    openai_body = {"choices": [{"message": {"content": "A"}}], "usage": {"prompt_tokens": 3, "completion_tokens": 1}}
    assert CODECS["openai"].reply(openai_body) == Reply("A", 3, 1)
    anthropic_body = {
        "content": [{"type": "thinking", "thinking": "x"}, {"type": "text", "text": "B"}],
        "usage": {"input_tokens": 5, "output_tokens": 2},
    }
    assert CODECS["anthropic"].reply(anthropic_body) == Reply("B", 5, 2)
    gemini_body = {
        "candidates": [{"content": {"parts": [{"text": "C"}]}, "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": 7, "candidatesTokenCount": 4},
    }
    assert CODECS["gemini"].reply(gemini_body) == Reply("C", 7, 4)


def events(*payloads: Any, event: str = "message") -> list[SseEvent]:
    return [SseEvent(event, p if isinstance(p, str) else json.dumps(p)) for p in payloads]


def test_anthropic_stream_assembles_text_deltas() -> None:
    stream = [
        SseEvent("message_start", json.dumps({"type": "message_start", "message": {"usage": {"input_tokens": 9}}})),
        SseEvent("ping", json.dumps({"type": "ping"})),
        SseEvent(
            "content_block_delta",
            json.dumps({"type": "content_block_delta", "delta": {"type": "thinking_delta", "thinking": "x"}}),
        ),
        SseEvent(
            "content_block_delta",
            json.dumps({"type": "content_block_delta", "delta": {"type": "text_delta", "text": "Hi "}}),
        ),
        SseEvent(
            "content_block_delta",
            json.dumps({"type": "content_block_delta", "delta": {"type": "input_json_delta", "partial_json": "{"}}),
        ),
        SseEvent(
            "content_block_delta",
            json.dumps({"type": "content_block_delta", "delta": {"type": "text_delta", "text": "you"}}),
        ),
        SseEvent("message_delta", json.dumps({"type": "message_delta", "usage": {"output_tokens": 2}})),
    ]
    assert CODECS["anthropic"].stream_reply(stream) == Reply("Hi you", 9, 2, complete=False)
    stop = SseEvent("message_stop", json.dumps({"type": "message_stop"}))
    assert CODECS["anthropic"].stream_reply([*stream, stop]).complete


def test_openai_stream_reads_choice_zero_and_usage() -> None:
    stream = events(
        {"choices": [{"index": 0, "delta": {"role": "assistant", "content": ""}}]},
        {"choices": [{"index": 1, "delta": {"content": "other"}}]},
        {"choices": [{"index": 0, "delta": {"content": "Yes"}, "finish_reason": "stop"}]},
        {"choices": [], "usage": {"prompt_tokens": 4, "completion_tokens": 1}},
        "[DONE]",
    )
    assert CODECS["openai"].stream_reply(stream) == Reply("Yes", 4, 1, complete=True)


def test_gemini_stream_concatenates_candidates() -> None:
    stream = events(
        {"candidates": [{"content": {"parts": [{"text": "Hel"}], "role": "model"}}]},
        {
            "candidates": [{"content": {"parts": [{"text": "lo"}], "role": "model"}, "finishReason": "STOP"}],
            "usageMetadata": {"promptTokenCount": 2, "candidatesTokenCount": 2},
        },
    )
    assert CODECS["gemini"].stream_reply(stream) == Reply("Hello", 2, 2, complete=True)


def test_a_gemini_stream_cut_after_a_checkpoint_is_its_answer_up_to_the_checkpoint() -> None:
    # google-genai resumes such a stream from its last continuation token, which sends again
    # what came after it.
    def chunk(text: str, **more: Any) -> dict[str, Any]:
        return {"candidates": [{"content": {"parts": [{"text": text}], "role": "model"}, **more}]}

    cut = events(chunk("One, "), chunk("two, ", continuationToken="t1"), chunk("three"))
    assert CODECS["gemini"].stream_reply(cut) == Reply("One, two, ", complete=True)
    whole = events(chunk("One, ", continuationToken="t1"), chunk("two.", finishReason="STOP"))
    assert CODECS["gemini"].stream_reply(whole) == Reply("One, two.", complete=True)
    assert CODECS["gemini"].stream_reply(events(chunk("One, "), chunk("two"))) == Reply("One, two", complete=False)


# Per provider: events that do not end a stream, then the one that does.
STREAM_ENDS: dict[str, tuple[list[SseEvent], SseEvent]] = {
    "openai": (
        events(
            {"choices": [{"index": 0, "delta": {"content": "Hi"}, "finish_reason": None}]},
            {"choices": [{"index": 0, "delta": {"content": "data: [DONE]"}, "finish_reason": None}]},
            # The answer is complete here, but a usage chunk may still follow.
            {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
            {"choices": [], "usage": {"prompt_tokens": 1, "completion_tokens": 1}},
            "",
        ),
        events("[DONE]")[0],
    ),
    "openai-responses": (
        events(
            {"type": "response.output_text.delta", "delta": "Hi"},
            {"type": "response.output_text.delta", "delta": " (a stream ends with response.completed)"},
            {"type": "response.output_text.done", "text": "Hi"},
            {"type": "response.output_item.done", "item": {}},
            {"type": "response.in_progress", "response": {"status": "in_progress"}},
        ),
        events({"type": "response.completed", "response": {"status": "completed", "output": []}})[0],
    ),
    "anthropic": (
        events(
            {"type": "content_block_delta", "delta": {"type": "text_delta", "text": "Hi"}},
            {"type": "content_block_delta", "delta": {"type": "text_delta", "text": ", message_stop ends it"}},
            {"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 1}},
            "not json",
        ),
        events({"type": "message_stop"})[0],
    ),
    "gemini": (
        events(
            {"candidates": [{"content": {"parts": [{"text": "Hi"}], "role": "model"}}]},
            {"candidates": [{"content": {"parts": [{"text": "the finishReason field"}], "role": "model"}}]},
            {"candidates": [{"content": {"parts": [{"text": "!"}], "role": "model"}, "finishReason": None}]},
            [{"finishReason": "STOP"}],
        ),
        events({"candidates": [{"content": {"parts": [{"text": ""}]}, "finishReason": "STOP"}]})[0],
    ),
}


@pytest.mark.parametrize("provider", sorted(STREAM_ENDS))
def test_only_the_providers_last_event_ends_a_stream(provider: str) -> None:
    codec = CODECS[provider]
    before, last = STREAM_ENDS[provider]
    assert [codec.ends_stream(event) for event in [*before, last]] == [False] * len(before) + [True]
    # A stream that reached its end is a complete answer.
    assert codec.stream_reply([*before, last]).complete


def test_an_openai_stream_is_complete_at_its_finish_reason_before_its_done() -> None:
    before, _ = STREAM_ENDS["openai"]
    assert CODECS["openai"].stream_reply(before[:3]) == Reply("Hidata: [DONE]", complete=True)
    assert not CODECS["openai"].stream_reply(before[:2]).complete


@pytest.mark.parametrize("status", [400, 401, 413, 502])
def test_errors_use_each_providers_envelope(status: int) -> None:
    openai_error = CODECS["openai"].error_body(status, "bad")
    assert openai_error["error"]["message"] == "bad" and "type" in openai_error["error"]
    anthropic_error = CODECS["anthropic"].error_body(status, "bad")
    assert anthropic_error["type"] == "error" and anthropic_error["error"]["message"] == "bad"
    assert anthropic_error["error"]["type"].endswith("error") or anthropic_error["error"]["type"] == "request_too_large"
    gemini_error = CODECS["gemini"].error_body(status, "bad")
    assert gemini_error["error"]["code"] == status and gemini_error["error"]["status"].isupper()


@pytest.mark.parametrize(("provider", "body"), [("openai", OPENAI), ("anthropic", ANTHROPIC), ("gemini", GEMINI)])
def test_inject_leaves_the_callers_body_untouched(provider: str, body: dict[str, Any]) -> None:
    original = copy.deepcopy(body)
    CODECS[provider].inject(body, CONTEXT)
    CODECS[provider].inject({**body, "system": "S", "systemInstruction": {"parts": [{"text": "S"}]}}, CONTEXT)
    assert body == original


def test_responses_input_as_string_or_items() -> None:
    codec = CODECS["openai-responses"]
    assert codec.extract({"input": "Where is it?"}).turns == (Turn("user", "Where is it?"),)
    items = {
        "model": "gpt-x",
        "stream": True,
        "input": [
            {"role": "developer", "content": "Be brief."},
            {"role": "user", "content": [{"type": "input_text", "text": "Hi"}, {"type": "input_image", "image_url": "x"}]},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Hello"}]},
            {"type": "function_call", "call_id": "c", "name": "f", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c", "output": "{}"},
            {"role": "user", "content": "keep out", "memory": False},
        ],
    }
    conversation = codec.extract(items)
    assert conversation.model == "gpt-x" and conversation.stream
    assert conversation.turns == (Turn("user", "Hi"), Turn("assistant", "Hello"), TOOL_TURN, TOOL_TURN, Turn("user", "keep out", False))
    only_tools = codec.extract({"input": items["input"][3:5], "previous_response_id": "r"})
    assert only_tools.turns == (TOOL_TURN, TOOL_TURN) and only_tools.query() == ""


def test_responses_memory_follows_the_callers_instructions() -> None:
    codec = CODECS["openai-responses"]
    assert codec.inject({"input": "x"}, "MEM") == {"input": "x", "instructions": "MEM"}
    assert codec.inject({"input": "x", "instructions": "Be brief."}, "MEM")["instructions"] == "Be brief.\n\nMEM"


def test_responses_reply_from_body_and_stream() -> None:
    codec = CODECS["openai-responses"]
    body = {
        "status": "completed",
        "output": [
            {"type": "reasoning", "summary": []},
            {"type": "message", "content": [{"type": "output_text", "text": "Done."}]},
        ],
        "usage": {"input_tokens": 5, "output_tokens": 2},
    }
    assert codec.reply(body) == Reply("Done.", 5, 2)
    assert not codec.reply({**body, "status": "failed"}).complete
    deltas = events(
        {"type": "response.created", "response": {"status": "in_progress"}},
        {"type": "response.output_text.delta", "delta": "Do"},
        {"type": "response.output_text.delta", "delta": "ne."},
    )
    assert codec.stream_reply(deltas) == Reply("Done.", complete=False)
    assert codec.stream_reply([*deltas, *events({"type": "response.completed", "response": body})]) == Reply("Done.", 5, 2)


def test_gemini_tool_turns_are_accepted_and_cached_content_keeps_its_system_instruction_out() -> None:
    codec = CODECS["gemini"]
    body = {
        "cachedContent": "cachedContents/c",
        "contents": [
            {"role": "user", "parts": [{"text": "weather?"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "w", "args": {}}}]},
            {"role": "tool", "parts": [{"functionResponse": {"name": "w", "response": {}}}]},
        ],
    }
    assert codec.extract(body).turns == (Turn("user", "weather?"), Turn("assistant", ""), TOOL_TURN, TOOL_TURN)
    injected = codec.inject(body, "MEM")
    assert "systemInstruction" not in injected
    assert injected["contents"][0]["parts"] == [{"text": "MEM"}, {"text": "weather?"}]
    assert injected["contents"][1:] == body["contents"][1:]
    tools_only = {"cachedContent": "c", "contents": body["contents"][2:]}
    assert codec.inject(tools_only, "MEM")["contents"] == [{"role": "user", "parts": [{"text": "MEM"}]}, *tools_only["contents"]]


def test_openai_memory_joins_a_system_message_that_is_not_first() -> None:
    body = {"messages": [{"role": "user", "content": "a"}, {"role": "system", "content": [{"type": "text", "text": "S"}]}]}
    injected = CODECS["openai"].inject(body, "MEM")
    assert injected["messages"][0] == {"role": "user", "content": "a"}
    assert injected["messages"][1]["content"] == [{"type": "text", "text": "S"}, {"type": "text", "text": "MEM"}]
