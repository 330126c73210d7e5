"""The official SDKs used the way their own READMEs and docs show, beyond a plain call and its
stream: structured outputs, tool loops, retries, chats, system blocks with cache control, images,
thinking, automatic function calling and automatic continuation. Each call gets the SDK's own
types back, memory where the provider keeps its system text, and its turn stored once."""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import anthropic
import httpx
import openai
import pytest
import websockets
from anthropic import beta_tool
from fake_upstream import gemini_response, openai_response, responses_response
from google.genai import types
from pydantic import BaseModel
from test_router_endpoints import remember
from test_sdk_clients import anthropic_client, gemini_client, openai_client

from conftest import Router
from memvault.core.memory.read.export import export_memory
from memvault.core.redaction import redact


class Pet(BaseModel):
    name: str
    species: str


PET = Pet(name="Biscuit", species="dog")


def said_once(router: Router, key_id: str, text: str) -> bool:
    """Whether the vault holds ``text`` as one message, never counted as said again."""

    async def exported() -> list[dict[str, Any]]:
        return [record async for record in export_memory(router.deps, key_id)]

    found = [record for record in router.run(exported) if record.get("content") == text]
    return len(found) == 1 and not found[0].get("said_again")


def body(answer: tuple[int, str, list[bytes]]) -> bytes:
    """A fake provider answer's bytes, whole."""
    return b"".join(answer[2])


def test_openai_structured_outputs_parse_into_the_callers_model(router: Router, key: tuple[str, str]) -> None:
    key_id, secret = key
    remember(router, key, "My dog is called Biscuit.")
    client = openai_client(router, secret)
    router.upstream.reply_next_with(200, body(openai_response({"model": "gpt-test"}, [PET.model_dump_json()])))
    completion = client.chat.completions.parse(
        model="gpt-test",
        messages=[{"role": "developer", "content": "Extract the pet."}, {"role": "user", "content": "Describe my dog."}],
        response_format=Pet,
    )
    assert completion.choices[0].message.parsed == PET
    sent = router.upstream.received[-1].json
    assert sent["response_format"]["type"] == "json_schema" and sent["response_format"]["json_schema"]["name"] == "Pet"
    developer = sent["messages"][0]
    assert developer["role"] == "developer" and developer["content"].startswith("Extract the pet.\n\n")
    assert "Biscuit" in developer["content"]
    router.wait_stored(key_id, "Describe my dog.", PET.model_dump_json())

    router.upstream.reply_next_with(200, body(responses_response({"model": "gpt-test"}, [PET.model_dump_json()])))
    parsed = client.responses.parse(
        model="gpt-test", instructions="Extract the pet.", input="What pet do I have?", text_format=Pet
    )
    assert parsed.output_parsed == PET
    sent = router.upstream.received[-1].json
    assert sent["text"]["format"]["type"] == "json_schema"
    assert sent["instructions"].startswith("Extract the pet.\n\n") and "Biscuit" in sent["instructions"]


def test_openai_streamed_structured_output_through_the_stream_helper(router: Router, key: tuple[str, str]) -> None:
    key_id, secret = key
    words = [piece + " " for piece in PET.model_dump_json().split(" ")]
    words[-1] = words[-1].rstrip()
    router.upstream.reply_next_with(
        200, body(openai_response({"model": "gpt-test", "stream": True}, words)), "text/event-stream"
    )
    with openai_client(router, secret).chat.completions.stream(
        model="gpt-test", messages=[{"role": "user", "content": "My cat Miso is a tabby."}], response_format=Pet
    ) as stream:
        kinds = {event.type for event in stream}
        final = stream.get_final_completion()
    assert {"content.delta", "content.done"} <= kinds
    assert final.choices[0].message.parsed == PET
    router.wait_stored(key_id, "My cat Miso is a tabby.", PET.model_dump_json())


def test_openai_raw_and_streaming_responses_show_memorys_headers_and_the_request_id(
    router: Router, key: tuple[str, str]
) -> None:
    _, secret = key
    client = openai_client(router, secret)
    router.upstream.reply_next_with(
        200, body(openai_response({"model": "gpt-test"}, ["Hi."])), headers={"x-request-id": "req_fake1"}
    )
    with client.chat.completions.with_streaming_response.create(
        model="gpt-test", messages=[{"role": "user", "content": "Hello."}]
    ) as response:
        # Readable before a byte of the body is.
        assert response.headers["x-memory-status"] == "ok" and response.headers["x-memory-receipt"]
        completion = response.parse()
    assert completion.choices[0].message.content == "Hi." and completion._request_id == "req_fake1"


def test_a_responses_function_call_round_trip_stores_the_question_once(router: Router, key: tuple[str, str]) -> None:
    key_id, secret = key
    call = {"type": "function_call", "id": "fc_1", "call_id": "call_h1", "name": "horoscope",
            "arguments": '{"sign":"Aquarius"}', "status": "completed"}
    first = json.loads(body(responses_response({"model": "gpt-test"}, ["x"])))
    first["output"] = [call]
    router.upstream.reply_next_with(200, json.dumps(first).encode())
    client = openai_client(router, secret)
    tools: list[Any] = [{"type": "function", "name": "horoscope", "parameters": {"type": "object"}, "strict": False}]
    question = "What is my horoscope? I am an Aquarius."
    # As the SDK's function-calling guide runs it: the whole input again, the model's call and its output added.
    items: list[Any] = [{"role": "user", "content": question}]
    response = client.responses.create(model="gpt-test", input=items, tools=tools)
    (function_call,) = response.output
    assert function_call.type == "function_call" and function_call.call_id == "call_h1"
    items += [*response.output, {"type": "function_call_output", "call_id": "call_h1", "output": "A good day."}]
    answered = client.responses.create(model="gpt-test", input=items, tools=tools)
    assert answered.output_text == router.upstream.answer
    assert [item.get("type", "message") for item in router.upstream.received[-1].json["input"]] == [
        "message", "function_call", "function_call_output"]
    router.wait_stored(key_id, question, router.upstream.answer)
    assert said_once(router, key_id, question)


def test_async_openai_calls_gathered_are_each_answered_and_stored_once(router: Router, key: tuple[str, str]) -> None:
    key_id, secret = key
    facts = [f"My locker number at gym {n} is {n * 111}." for n in range(1, 6)]

    async def run() -> list[str]:
        async with openai.AsyncOpenAI(
            base_url=f"{router.url}/v1", api_key="sk-test-openai", max_retries=0, default_headers={"X-Memory-Key": secret}
        ) as client:
            calls = [client.chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": fact}])
                     for fact in facts]
            return [completion.choices[0].message.content or "" for completion in await asyncio.gather(*calls)]

    assert asyncio.run(run()) == [router.upstream.answer] * len(facts)
    router.wait_stored(key_id, *facts)
    assert all(said_once(router, key_id, fact) for fact in facts)


def test_sdk_retries_after_a_providers_429_or_overload_store_the_turn_once(
    router: Router, key: tuple[str, str]
) -> None:
    key_id, secret = key
    quick = {"retry-after-ms": "5"}  # both SDKs honour it; a test need not wait their default backoff
    calls = len(router.upstream.received)
    limited = b'{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}'
    router.upstream.reply_next_with(429, limited, headers=quick)
    retrying = openai_client(router, secret).with_options(max_retries=2)
    question = "My bicycle lock code is 3141."
    completion = retrying.chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": question}])
    assert completion.choices[0].message.content == router.upstream.answer
    first, second = router.upstream.received[calls:]
    assert first.json == second.json and second.headers["x-stainless-retry-count"] == "1"

    overloaded = b'{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}'
    router.upstream.reply_next_with(529, overloaded, headers=quick)
    other = "My canoe is called Heron."
    message = anthropic_client(router, secret).with_options(max_retries=2).messages.create(
        model="claude-test", max_tokens=16, messages=[{"role": "user", "content": other}]
    )
    assert message.content[0].type == "text" and message.content[0].text == router.upstream.answer
    router.wait_stored(key_id, question, other)
    assert said_once(router, key_id, question) and said_once(router, key_id, other)


def test_anthropic_system_blocks_keep_their_cache_control_ahead_of_memory(router: Router, key: tuple[str, str]) -> None:
    key_id, secret = key
    remember(router, key, "My boat is moored in Cascais.")
    manual = {"type": "text", "text": "The harbour manual, many pages long.", "cache_control": {"type": "ephemeral"}}
    terse = {"type": "text", "text": "Answer in one line."}
    message = anthropic_client(router, secret).messages.create(
        model="claude-test", max_tokens=32, system=[manual, terse],  # type: ignore[list-item]
        messages=[{"role": "user", "content": "Where is my boat moored?"}],
    )
    assert message.content[0].type == "text"
    system = router.upstream.received[-1].json["system"]
    # The cached prefix is byte for byte the caller's; memory comes after it, with no breakpoint
    # of its own (a request may hold only four).
    assert system[:2] == [manual, terse]
    (added,) = system[2:]
    assert added["type"] == "text" and "Cascais" in added["text"] and "cache_control" not in added
    router.wait_stored(key_id, "Where is my boat moored?")


def test_anthropic_tool_use_round_trip_stores_the_question_once_and_the_answer(
    router: Router, key: tuple[str, str]
) -> None:
    key_id, secret = key
    remember(router, key, "I always cycle when it is sunny.")
    client = anthropic_client(router, secret)
    tools: list[Any] = [{"name": "weather", "description": "Today's weather in a city.",
                         "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}]
    tool_use = {"id": "msg_tool", "type": "message", "role": "assistant", "model": "claude-test",
                "content": [{"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Lisbon"}}],
                "stop_reason": "tool_use", "stop_sequence": None, "usage": {"input_tokens": 20, "output_tokens": 9}}
    router.upstream.reply_next_with(200, json.dumps(tool_use).encode())
    question = "Should I cycle in Lisbon today?"
    messages: list[Any] = [{"role": "user", "content": question}]
    asked = client.messages.create(model="claude-test", max_tokens=64, tools=tools, messages=messages)
    (call,) = asked.content
    assert call.type == "tool_use" and call.input == {"city": "Lisbon"}
    messages += [{"role": "assistant", "content": asked.content},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "Sunny."}]}]
    answered = client.messages.create(model="claude-test", max_tokens=64, tools=tools, messages=messages)
    assert answered.content[0].type == "text" and answered.content[0].text == router.upstream.answer
    sent = router.upstream.received[-1].json
    assert sent["messages"][1]["content"][0]["id"] == "toolu_1"
    # The tool result's call recalls for the user's question.
    assert "always cycle" in sent["system"]
    router.wait_stored(key_id, question, router.upstream.answer)
    assert said_once(router, key_id, question)


def test_anthropic_tool_runner_loops_through_memvault_and_stores_the_question_once(
    router: Router, key: tuple[str, str]
) -> None:
    key_id, secret = key
    looked_up: list[str] = []

    @beta_tool
    def tide(harbour: str) -> str:
        """Today's high tide in a harbour.

        Args:
            harbour: The harbour's name.
        """
        looked_up.append(harbour)
        return "High tide at 14:05."

    tool_use = {"id": "msg_tide", "type": "message", "role": "assistant", "model": "claude-test",
                "content": [{"type": "tool_use", "id": "toolu_tide", "name": "tide", "input": {"harbour": "Ericeira"}}],
                "stop_reason": "tool_use", "stop_sequence": None, "usage": {"input_tokens": 20, "output_tokens": 9}}
    router.upstream.reply_next_with(200, json.dumps(tool_use).encode())
    question = "When can I launch my kayak at Ericeira today?"
    runner = anthropic_client(router, secret).beta.messages.tool_runner(
        model="claude-test", max_tokens=64, tools=[tide], messages=[{"role": "user", "content": question}]
    )
    final = runner.until_done()
    assert looked_up == ["Ericeira"]
    assert final.content[0].type == "text" and final.content[0].text == router.upstream.answer
    sent = router.upstream.received[-1].json
    assert sent["messages"][-1]["content"][0]["type"] == "tool_result"
    router.wait_stored(key_id, question, router.upstream.answer)
    assert said_once(router, key_id, question)


def test_images_go_to_the_provider_and_only_the_words_are_stored(
    router: Router, key: tuple[str, str]
) -> None:
    key_id, secret = key
    image = base64.b64encode(bytes(range(256)) * 4).decode()
    content: list[Any] = [
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": image}},
        {"type": "text", "text": "This is a photo of my garden shed."},
    ]
    anthropic_client(router, secret).messages.create(
        model="claude-test", max_tokens=32, messages=[{"role": "user", "content": content}]
    )
    assert router.upstream.received[-1].json["messages"][0]["content"] == content
    # OpenAI's vision input, in the Responses API and in chat, as the SDK's README shows it.
    url = f"data:image/png;base64,{image}"
    client = openai_client(router, secret)
    client.responses.create(model="gpt-test", input=[{"role": "user", "content": [
        {"type": "input_text", "text": "This is my shed's new roof."}, {"type": "input_image", "image_url": url}]}])
    client.chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": [
        {"type": "text", "text": "And this is its door."}, {"type": "image_url", "image_url": {"url": url}}]}])
    assert router.upstream.received[-1].json["messages"][-1]["content"][1]["image_url"]["url"] == url
    stored = router.wait_stored(key_id, "This is a photo of my garden shed.", "This is my shed's new roof.",
                                "And this is its door.")
    assert not any(image[:40] in text for text in stored)


def thinking_stream(thought: str, answer: str) -> bytes:
    """A streamed Anthropic answer with extended thinking: a thinking block, its signature, then text."""
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": {
            "id": "msg_think", "type": "message", "role": "assistant", "model": "claude-test", "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 15, "output_tokens": 1}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "thinking", "thinking": "", "signature": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "thinking_delta", "thinking": thought}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "signature_delta", "signature": "c2lnbmF0dXJl"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "text_delta", "text": answer}},
        {"type": "content_block_stop", "index": 1},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
         "usage": {"output_tokens": 30}},
        {"type": "message_stop"},
    ]
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def test_anthropic_streamed_thinking_reaches_the_sdk_and_only_the_answer_is_stored(
    router: Router, key: tuple[str, str]
) -> None:
    key_id, secret = key
    thought, answer = "The user wants a plant for a shady balcony.", "Try a fern."
    router.upstream.reply_next_with(200, thinking_stream(thought, answer), "text/event-stream")
    with anthropic_client(router, secret).messages.stream(
        model="claude-test", max_tokens=2048, thinking={"type": "enabled", "budget_tokens": 1024},
        messages=[{"role": "user", "content": "Which plant suits my shady balcony?"}],
    ) as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_message()
    assert "thinking" in kinds and "signature" in kinds
    assert [block.type for block in final.content] == ["thinking", "text"]
    assert router.upstream.received[-1].json["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    stored = router.wait_stored(key_id, "Which plant suits my shady balcony?", answer)
    assert not any(thought in text for text in stored)


def test_gemini_chat_sends_its_history_and_each_message_is_stored_once(router: Router, key: tuple[str, str]) -> None:
    key_id, secret = key
    gemini = gemini_client(router, secret)  # kept: a collected client closes its connection mid-stream
    chat = gemini.chats.create(model="gemini-test", config=types.GenerateContentConfig(system_instruction="Be kind."))
    first, second = "My rabbit is called Pudding.", "She likes dandelion leaves."
    assert chat.send_message(first).text == router.upstream.answer
    assert "".join(chunk.text or "" for chunk in chat.send_message_stream(second)) == router.upstream.answer
    sent = router.upstream.received[-1].json
    assert [c["role"] for c in sent["contents"]] == ["user", "model", "user"]
    assert sent["systemInstruction"]["parts"][0] == {"text": "Be kind."}
    router.wait_stored(key_id, first, second)
    assert said_once(router, key_id, first) and said_once(router, key_id, second)


def test_gemini_async_generate_content(router: Router, key: tuple[str, str]) -> None:
    key_id, secret = key

    async def run() -> str | None:
        async with gemini_client(router, secret).aio as client:
            return (await client.models.generate_content(model="gemini-test", contents="My tortoise is 41.")).text

    assert asyncio.run(run()) == router.upstream.answer
    router.wait_stored(key_id, "My tortoise is 41.", router.upstream.answer)


def gemini_function_call(name: str, args: dict[str, Any]) -> bytes:
    candidate = {"content": {"role": "model", "parts": [{"functionCall": {"name": name, "args": args}}]},
                 "finishReason": "STOP", "index": 0}
    usage = {"promptTokenCount": 20, "candidatesTokenCount": 5, "totalTokenCount": 25}
    return json.dumps({"candidates": [candidate], "usageMetadata": usage, "modelVersion": "gemini-test"}).encode()


def test_gemini_automatic_function_calling_stores_the_question_once_and_the_answer(
    router: Router, key: tuple[str, str]
) -> None:
    key_id, secret = key
    remember(router, key, "I take an umbrella whenever it rains in Porto.")
    called: list[str] = []

    def get_current_weather(location: str) -> str:
        """Returns the current weather.

        Args:
            location: The city, e.g. Porto
        """
        called.append(location)
        return "rain"

    router.upstream.reply_next_with(200, gemini_function_call("get_current_weather", {"location": "Porto"}))
    gemini = gemini_client(router, secret)
    question = "Do I need anything for my walk in Porto today?"
    response = gemini.models.generate_content(
        model="gemini-test", contents=question, config=types.GenerateContentConfig(tools=[get_current_weather])
    )
    assert response.text == router.upstream.answer and called == ["Porto"]
    sent = router.upstream.received[-1].json
    # The SDK sends the function's result as a user turn of its own.
    assert [c["role"] for c in sent["contents"]] == ["user", "model", "user"]
    assert sent["contents"][2]["parts"][0]["functionResponse"]["name"] == "get_current_weather"
    assert "umbrella" in sent["systemInstruction"]["parts"][-1]["text"]
    router.wait_stored(key_id, question, router.upstream.answer)
    assert said_once(router, key_id, question)


def continued(text: str, token: str) -> bytes:
    """A Gemini answer cut at the per-request token limit, to be continued with ``token``."""
    candidate = {"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "CONTINUATION",
                 "continuationToken": token, "index": 0}
    usage = {"promptTokenCount": 11, "candidatesTokenCount": 4, "totalTokenCount": 15}
    return json.dumps({"candidates": [candidate], "usageMetadata": usage, "modelVersion": "gemini-test"}).encode()


@pytest.mark.parametrize("question", [
    "Write me a long guide to my sourdough starter, Clint.",
    # Stored through the secret gate, the question is no longer the text the request holds.
    "Write me a long guide to my sourdough starter, Clint; the bakery wifi password is Tr0ub4dor&3x-Kq.",
])
def test_gemini_automatic_continuation_is_one_turn(router: Router, key: tuple[str, str], question: str) -> None:
    key_id, secret = key
    remember(router, key, "My sourdough starter Clint lives in the fridge.")
    token = base64.b64encode(b"resume-here").decode()
    part = "Chapter one: Clint the sourdough starter. "
    router.upstream.reply_next_with(200, continued(part, token))
    calls = len(router.upstream.received)
    gemini = gemini_client(router, secret)
    response = gemini.models.generate_content(model="gemini-test", contents=question)
    assert response.text == part + router.upstream.answer
    first, second = router.upstream.received[calls:]
    assert "continuationToken" not in first.json and second.json["continuationToken"] == token
    # The model resumes the prompt it began with: its own first part does not come back as memory.
    assert "fridge" in first.json["systemInstruction"]["parts"][0]["text"]
    assert second.json["systemInstruction"] == first.json["systemInstruction"]
    # The continuation asks for the rest of the same turn: its question is not said again.
    stored_question = redact(question).text
    stored = router.wait_stored(key_id, stored_question, router.upstream.answer)
    assert said_once(router, key_id, stored_question)
    assert part in stored


def test_gemini_automatic_continuation_of_a_stream_is_one_turn(router: Router, key: tuple[str, str]) -> None:
    key_id, secret = key
    token = base64.b64encode(b"resume-stream").decode()
    router.upstream.reply_next_with(200, b"data: " + continued("Part one. ", token) + b"\r\n\r\n", "text/event-stream")
    gemini = gemini_client(router, secret)  # kept: a collected client closes its connection mid-stream
    question = "Tell me the whole story of my grandfather's lighthouse."
    chunks = gemini.models.generate_content_stream(model="gemini-test", contents=question)
    assert "".join(chunk.text or "" for chunk in chunks) == "Part one. " + router.upstream.answer
    assert router.upstream.received[-1].json["continuationToken"] == token
    router.wait_stored(key_id, question, "Part one. ", router.upstream.answer)
    assert said_once(router, key_id, question)


def test_an_sdk_timeout_retries_then_raises_and_nothing_is_stored(router: Router, key: tuple[str, str]) -> None:
    _, secret = key
    calls, served = len(router.upstream.received), router.served(secret)
    router.upstream.answer_delay = 1.0
    try:
        client = openai_client(router, secret).with_options(timeout=0.3, max_retries=1)
        try:
            client.chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": "Too slow for me."}])
        except openai.APITimeoutError:
            pass
        else:
            raise AssertionError("expected a timeout")
        router.wait_served(secret, served + 2)  # both late answers came and were judged
    finally:
        router.upstream.answer_delay = 0.0
    assert len(router.upstream.received) == calls + 2
    assert remember(router, key, "Waited for this one.") == ["Waited for this one.", router.upstream.answer]


def test_websockets_are_refused_in_the_providers_envelope_before_they_reach_it(
    router: Router, key: tuple[str, str]
) -> None:
    _, secret = key
    calls = len(router.upstream.received)

    async def realtime() -> None:
        async with openai.AsyncOpenAI(
            base_url=f"{router.url}/v1", api_key="sk-test-openai", default_headers={"X-Memory-Key": secret}
        ) as client, client.realtime.connect(model="gpt-realtime") as connection:
            await connection.session.update(session={"type": "realtime", "output_modalities": ["text"]})

    async def live() -> None:
        # Gemini's Live API, at the path google-genai opens (it always asks for TLS, so by hand here).
        path = "/ws/google.ai.generativelanguage.v1beta.GenerativeService.BidiGenerateContent"
        async with websockets.connect(f"ws{router.url.removeprefix('http')}{path}",
                                      additional_headers={"X-Memory-Key": secret, "x-goog-api-key": "g"}):
            raise AssertionError("the WebSocket was accepted")

    with pytest.raises(websockets.exceptions.InvalidStatus) as refused:
        asyncio.run(realtime())
    response = refused.value.response
    assert response.status_code == 400 and "relays HTTP only" in json.loads(response.body)["error"]["message"]
    with pytest.raises(websockets.exceptions.InvalidStatus) as refused:
        asyncio.run(live())
    assert json.loads(refused.value.response.body)["error"]["status"] == "INVALID_ARGUMENT"
    # A runtime that takes no WebSockets itself hands the handshake on as a plain GET.
    handshake = {"X-Memory-Key": secret, "Upgrade": "websocket", "Sec-WebSocket-Version": "13"}
    plain = httpx.get(f"{router.url}/v1/realtime?model=gpt-realtime", headers=handshake)
    assert plain.status_code == 400 and "relays HTTP only" in plain.json()["error"]["message"]
    assert len(router.upstream.received) == calls


def test_the_async_clients_on_aiohttp_as_their_readmes_offer(router: Router, key: tuple[str, str]) -> None:
    key_id, secret = key
    said = ["My allotment shed is green.", "My allotment is plot 9.", "My allotment neighbour is Rui.",
            "My allotment grows leeks."]
    headers = {"X-Memory-Key": secret}

    async def run() -> list[str]:
        async with (
            openai.AsyncOpenAI(base_url=f"{router.url}/v1", api_key="sk-test-openai", max_retries=0,
                               default_headers=headers, http_client=openai.DefaultAioHttpClient()) as gpt,
            anthropic.AsyncAnthropic(base_url=router.url, api_key="sk-ant-test", max_retries=0,
                                     default_headers=headers, http_client=anthropic.DefaultAioHttpClient()) as claude,
        ):
            whole = await gpt.chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": said[0]}])
            stream = await gpt.chat.completions.create(
                model="gpt-test", messages=[{"role": "user", "content": said[1]}], stream=True)
            streamed = "".join([chunk.choices[0].delta.content or "" async for chunk in stream if chunk.choices])
            message = await claude.messages.create(
                model="claude-test", max_tokens=16, messages=[{"role": "user", "content": said[2]}])
            async with claude.messages.stream(
                model="claude-test", max_tokens=16, messages=[{"role": "user", "content": said[3]}]
            ) as events:
                text = "".join([piece async for piece in events.text_stream])
            first = message.content[0]
            return [whole.choices[0].message.content or "", streamed, first.text if first.type == "text" else "", text]

    assert asyncio.run(run()) == [router.upstream.answer] * 4
    router.wait_stored(key_id, *said)
    assert all(said_once(router, key_id, text) for text in said)


def test_gemini_json_response_schema_parses_into_the_callers_model(router: Router, key: tuple[str, str]) -> None:
    key_id, secret = key
    router.upstream.reply_next_with(200, body(gemini_response("gemini-test", False, [PET.model_dump_json()])))
    config = types.GenerateContentConfig(response_mime_type="application/json", response_schema=Pet)
    gemini = gemini_client(router, secret)
    response = gemini.models.generate_content(model="gemini-test", contents="Describe my dog Biscuit.", config=config)
    assert response.parsed == PET
    assert router.upstream.received[-1].json["generationConfig"]["responseMimeType"] == "application/json"
    router.wait_stored(key_id, "Describe my dog Biscuit.", PET.model_dump_json())
