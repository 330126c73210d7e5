"""The official SDKs talk to memvault with only their base URL changed, and get memory."""

from __future__ import annotations

import json
from typing import Any

import anthropic
import openai
from google import genai
from google.genai import types

from conftest import Router
from memvault.core.memory.read.export import export_memory

SYSTEM = "You are terse."


def openai_client(router: Router, secret: str, **headers: str) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=f"{router.url}/v1",
        api_key="sk-test-openai",
        max_retries=0,
        default_headers={"X-Memory-Key": secret, **headers},
    )


def anthropic_client(router: Router, secret: str, **headers: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(
        base_url=router.url,
        api_key="sk-ant-test",
        max_retries=0,
        default_headers={"X-Memory-Key": secret, **headers},
    )


def gemini_client(router: Router, secret: str, **headers: str) -> genai.Client:
    options = types.HttpOptions(base_url=router.url, headers={"X-Memory-Key": secret, **headers})
    return genai.Client(api_key="g-test-key", http_options=options)


def test_openai_non_streaming(router: Router, key: tuple[str, str]) -> None:
    key_id, secret = key
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "My dog is called Biscuit."}]
    raw = openai_client(router, secret).chat.completions.with_raw_response.create(
        model="gpt-test",
        messages=messages,
        temperature=0.3,  # type: ignore[arg-type]
    )
    completion = raw.parse()
    assert completion.choices[0].message.content == router.upstream.answer
    assert raw.http_response.content == router.upstream.sent[-1]
    assert raw.headers["x-memory-status"] == "ok"
    received = router.upstream.received[-1]
    assert received.path == "/v1/chat/completions"
    assert received.headers["authorization"] == "Bearer sk-test-openai"
    assert "x-memory-key" not in received.headers
    assert received.json == {"model": "gpt-test", "messages": messages, "temperature": 0.3}
    router.wait_stored(key_id, "My dog is called Biscuit.", router.upstream.answer)


def test_openai_streaming_stores_the_assembled_answer(router: Router, key: tuple[str, str]) -> None:
    key_id, secret = key
    stream = openai_client(router, secret).chat.completions.create(
        model="gpt-test",
        messages=[{"role": "user", "content": "Remember that my locker number is 4711."}],
        stream=True,
        stream_options={"include_usage": True},
    )
    text = "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)
    assert text == router.upstream.answer
    assert router.upstream.received[-1].json["stream"] is True
    router.wait_stored(key_id, "Remember that my locker number is 4711.", router.upstream.answer)


def test_anthropic_non_streaming_and_streaming(router: Router, key: tuple[str, str]) -> None:
    key_id, secret = key
    client = anthropic_client(router, secret)
    message = client.messages.create(
        model="claude-test", max_tokens=64, system=SYSTEM, messages=[{"role": "user", "content": "I live in Lisbon."}]
    )
    assert message.content[0].type == "text" and message.content[0].text == router.upstream.answer
    received = router.upstream.received[-1]
    assert received.path == "/v1/messages"
    # anthropic 2.x sends its API key as a bearer token; either way it is forwarded as sent.
    assert received.headers["authorization"] == "Bearer sk-ant-test"
    assert received.headers["anthropic-version"]
    with client.messages.stream(
        model="claude-test", max_tokens=64, messages=[{"role": "user", "content": "My sister is Ana."}]
    ) as stream:
        streamed = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert streamed == router.upstream.answer and final.usage.output_tokens > 0
    router.wait_stored(key_id, "I live in Lisbon.", "My sister is Ana.")


def test_gemini_non_streaming_and_streaming(router: Router, key: tuple[str, str]) -> None:
    key_id, secret = key
    client = gemini_client(router, secret)
    config = types.GenerateContentConfig(system_instruction=SYSTEM, temperature=0.5)
    response = client.models.generate_content(model="gemini-test", contents="I play the cello.", config=config)
    assert response.text == router.upstream.answer
    received = router.upstream.received[-1]
    assert received.path.endswith("/models/gemini-test:generateContent")
    assert received.headers["x-goog-api-key"] == "g-test-key"
    chunks = client.models.generate_content_stream(model="gemini-test", contents="My car is a red Fiat.")
    assert "".join(chunk.text or "" for chunk in chunks) == router.upstream.answer
    assert router.upstream.received[-1].query == "alt=sse"
    router.wait_stored(key_id, "I play the cello.", "My car is a red Fiat.")


def test_memory_stored_through_openai_is_recalled_through_anthropic_and_gemini(
    router: Router, key: tuple[str, str]
) -> None:
    key_id, secret = key
    fact = "My favourite climbing crag is Sintra Peninha."
    openai_client(router, secret).chat.completions.create(
        model="gpt-test", messages=[{"role": "user", "content": fact}]
    )
    router.wait_stored(key_id, fact)

    question = "Which climbing crag is my favourite?"
    raw = anthropic_client(router, secret).messages.with_raw_response.create(
        model="claude-test", max_tokens=64, system=SYSTEM, messages=[{"role": "user", "content": question}]
    )
    assert int(raw.headers["x-memory-items"]) >= 1
    sent = router.upstream.received[-1].json
    assert sent["system"].startswith(f"{SYSTEM}\n\n") and "Sintra Peninha" in sent["system"]
    assert sent["messages"] == [{"role": "user", "content": question}]

    gemini = gemini_client(router, secret)  # kept: a collected client closes its connection mid-stream
    chunks = gemini.models.generate_content_stream(model="gemini-test", contents=question)
    assert "".join(chunk.text or "" for chunk in chunks) == router.upstream.answer
    sent = router.upstream.received[-1].json
    assert "Sintra Peninha" in sent["systemInstruction"]["parts"][-1]["text"]
    assert sent["contents"] == [{"role": "user", "parts": [{"text": question}]}]

    completion = openai_client(router, secret).chat.completions.create(
        model="gpt-test", messages=[{"role": "user", "content": question}]
    )
    assert completion.choices[0].message.content == router.upstream.answer
    sent = router.upstream.received[-1].json
    assert sent["messages"][0]["role"] == "system" and "Sintra Peninha" in sent["messages"][0]["content"]
    assert sent["messages"][1:] == [{"role": "user", "content": question}]


def test_model_listing_is_passed_through(router: Router, key: tuple[str, str]) -> None:
    _, secret = key
    assert [m.id for m in openai_client(router, secret).models.list()] == ["fake-model"]
    assert router.upstream.received[-1].headers["authorization"] == "Bearer sk-test-openai"
    assert [m.id for m in anthropic_client(router, secret).models.list()] == ["fake-model"]
    assert router.upstream.received[-1].headers["authorization"] == "Bearer sk-ant-test"


def test_sdk_sees_upstream_errors_as_sent(router: Router, key: tuple[str, str]) -> None:
    _, secret = key
    body = b'{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}'
    router.upstream.reply_next_with(429, body)
    try:
        openai_client(router, secret).chat.completions.create(
            model="gpt-test", messages=[{"role": "user", "content": "hi"}]
        )
    except openai.RateLimitError as exc:
        assert exc.status_code == 429 and exc.response.content == body
    else:
        raise AssertionError("expected a rate-limit error")
    body = b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
    router.upstream.reply_next_with(529, body)
    try:
        anthropic_client(router, secret).messages.create(
            model="claude-test", max_tokens=8, messages=[{"role": "user", "content": "hi"}]
        )
    except anthropic.APIStatusError as exc:
        assert exc.status_code == 529 and exc.response.content == body
    else:
        raise AssertionError("expected an overloaded error")


def test_sdk_messages_marked_memory_false_are_forwarded_without_the_flag_and_never_stored(
    router: Router, key: tuple[str, str]
) -> None:
    key_id, secret = key
    private = {"role": "user", "content": "My PIN is 8642, keep it out of memory.", "memory": False}
    openai_client(router, secret).chat.completions.create(model="gpt-test", messages=[private])  # type: ignore[list-item]
    assert router.upstream.received[-1].json["messages"] == [{k: v for k, v in private.items() if k != "memory"}]
    with anthropic_client(router, secret).messages.stream(
        model="claude-test",
        max_tokens=16,
        messages=[private],  # type: ignore[list-item]
    ) as stream:
        stream.until_done()
    assert b'"memory"' not in router.upstream.received[-1].body
    openai_client(router, secret).chat.completions.create(
        model="gpt-test", messages=[{"role": "user", "content": "This one may be kept."}]
    )
    assert not any("8642" in text for text in router.wait_stored(key_id, "This one may be kept."))


def tool_call_stream() -> bytes:
    """A streamed answer that is a tool call, its arguments in two deltas, as OpenAI sends it."""
    head = {"id": "chatcmpl-tool", "object": "chat.completion.chunk", "created": 1700000000, "model": "gpt-test"}
    call = {"index": 0, "id": "call_w1", "type": "function", "function": {"name": "weather", "arguments": ""}}
    deltas = [
        ({"role": "assistant", "content": None, "tool_calls": [call]}, None),
        ({"tool_calls": [{"index": 0, "function": {"arguments": '{"city":'}}]}, None),
        ({"tool_calls": [{"index": 0, "function": {"arguments": '"Lisbon"}'}}]}, None),
        ({}, "tool_calls"),
    ]
    chunks = [{**head, "choices": [{"index": 0, "delta": d, "finish_reason": f}]} for d, f in deltas]
    return b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks) + b"data: [DONE]\n\n"


def test_an_openai_tool_loop_stores_the_question_once_and_the_answer(router: Router, key: tuple[str, str]) -> None:
    key_id, secret = key
    client = openai_client(router, secret)
    tools: list[Any] = [{"type": "function", "function": {"name": "weather", "parameters": {"type": "object"}}}]
    messages: list[Any] = [{"role": "user", "content": "What is the weather in Lisbon today?"}]
    router.upstream.reply_next_with(200, tool_call_stream(), "text/event-stream")
    with client.chat.completions.stream(model="gpt-test", messages=messages, tools=tools) as stream:
        called = stream.get_final_completion().choices[0].message
    (call,) = called.tool_calls or []
    assert (call.id, call.function.name, call.function.arguments) == ("call_w1", "weather", '{"city":"Lisbon"}')
    # As the SDK's docs run a tool loop: the model's message, then the tool's result.
    messages += [called, {"role": "tool", "tool_call_id": call.id, "content": "Sunny, 21 C."}]
    answer = client.chat.completions.create(model="gpt-test", messages=messages, tools=tools)
    assert answer.choices[0].message.content == router.upstream.answer
    assert router.upstream.received[-1].json["messages"][1]["tool_calls"][0]["id"] == "call_w1"
    router.wait_stored(key_id, "What is the weather in Lisbon today?", router.upstream.answer)

    async def exported() -> list[dict[str, Any]]:
        return [record async for record in export_memory(router.deps, key_id)]

    (asked,) = [r for r in router.run(exported) if r.get("content") == "What is the weather in Lisbon today?"]
    assert not asked.get("said_again"), "the loop's second call stored the question again"
