"""The memory router beyond the basic chat calls: the Responses API, the endpoints passed through
without memory, Gemini's tool turns, cached content and JSON-array streams, the provider body
limit, relay hygiene and options in the body. Official SDKs where they call the endpoint; raw
HTTP where the bytes themselves are the point."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from typing import Any

import anthropic
import httpx
import openai
import pytest
from google.genai import types
from test_sdk_clients import anthropic_client, gemini_client, openai_client

from conftest import Router
from memvault.core.settings import Settings


def remember(router: Router, key: tuple[str, str], fact: str) -> list[str]:
    """Say ``fact`` through the router and wait until it is stored; everything the key holds then."""
    key_id, secret = key
    openai_client(router, secret).chat.completions.create(model="gpt-test", messages=[{"role": "user", "content": fact}])
    return router.wait_stored(key_id, fact)


def post(router: Router, path: str, secret: str | None, body: Any, **headers: str) -> httpx.Response:
    sent = {"X-Memory-Key": secret} if secret else {}
    sent.update({k.replace("_", "-"): v for k, v in headers.items()})
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx.post(f"{router.url}{path}", content=content, headers=sent, timeout=30)


def test_responses_api_adds_memory_after_the_callers_instructions(router: Router, key: tuple[str, str]) -> None:
    key_id, secret = key
    remember(router, key, "My climbing partner is called Ines.")
    raw = openai_client(router, secret).responses.with_raw_response.create(
        model="gpt-test", instructions="Answer briefly.", input="Who is my climbing partner?"
    )
    assert raw.parse().output_text == router.upstream.answer
    assert raw.http_response.content == router.upstream.sent[-1]
    sent = router.upstream.received[-1]
    assert sent.path == "/v1/responses" and "x-memory-key" not in sent.headers
    assert sent.json["instructions"].startswith("Answer briefly.\n\n") and "Ines" in sent.json["instructions"]
    assert sent.json["input"] == "Who is my climbing partner?"
    router.wait_stored(key_id, "Who is my climbing partner?", router.upstream.answer)


def test_responses_api_streams_events_byte_for_byte_and_stores_the_turn(
    router: Router, key: tuple[str, str]
) -> None:
    key_id, secret = key
    stream = openai_client(router, secret).responses.create(
        model="gpt-test", input=[{"role": "user", "content": [{"type": "input_text", "text": "I collect old maps."}]}],
        stream=True,
    )
    deltas = [event.delta for event in stream if event.type == "response.output_text.delta"]
    assert "".join(deltas) == router.upstream.answer
    assert "instructions" not in router.upstream.received[-1].json  # nothing to recall yet
    router.wait_stored(key_id, "I collect old maps.", router.upstream.answer)

    body = {"model": "gpt-test", "input": "What do I collect?", "stream": True}
    with httpx.stream("POST", f"{router.url}/v1/responses", json=body, headers={"X-Memory-Key": secret}) as response:
        received = b"".join(response.iter_raw())
    assert received == router.upstream.sent[-1]
    assert "old maps" in router.upstream.received[-1].json["instructions"]


def test_a_chained_call_with_only_tool_output_recalls_for_the_users_last_turn(
    router: Router, key: tuple[str, str]
) -> None:
    key_id, secret = key
    client = openai_client(router, secret, **{"X-Session-ID": "trip"})
    client.responses.create(model="gpt-test", input="My passport is in the blue drawer.")
    client.responses.create(model="gpt-test", input="Where did I put my passport?")
    questions = ("My passport is in the blue drawer.", "Where did I put my passport?")
    before = len(router.wait_stored(key_id, *questions, session_id="trip"))
    tool_output = [{"type": "function_call_output", "call_id": "call_1", "output": '{"found": false}'}]
    answer, router.upstream.answer = router.upstream.answer, "It is not in the drawer any more."
    try:
        client.responses.create(model="gpt-test", previous_response_id="resp_fake", input=tool_output)  # type: ignore[arg-type]
    finally:
        router.upstream.answer = answer
    sent = router.upstream.received[-1].json
    assert sent["previous_response_id"] == "resp_fake" and sent["input"] == tool_output
    assert "blue drawer" in sent["instructions"]
    # The answer is kept; there was no user text to keep.
    assert len(router.wait_stored(key_id, "It is not in the drawer any more.", session_id="trip")) == before + 1

    other = openai_client(router, router.new_key()[1])
    other.responses.create(model="gpt-test", input=tool_output)  # type: ignore[arg-type]
    assert "instructions" not in router.upstream.received[-1].json


def test_count_embed_and_complete_endpoints_pass_through_without_memory(
    router: Router, key: tuple[str, str]
) -> None:
    _, secret = key
    stored = remember(router, key, "My favourite tea is genmaicha.")
    client = openai_client(router, secret)

    embedding = client.embeddings.create(model="fake-embedding", input="genmaicha")
    assert embedding.data[0].embedding == [0.25, -0.5, 0.125]
    sent = router.upstream.received[-1]
    assert sent.path == "/v1/embeddings" and sent.json["input"] == "genmaicha" and "messages" not in sent.json
    completion = client.completions.create(model="fake-instruct", prompt="Tea is")
    assert completion.choices[0].text == " and so on."
    assert router.upstream.received[-1].json["prompt"] == "Tea is"
    counted = client.responses.input_tokens.count(model="gpt-test", input="Which tea do I like?")
    assert counted.input_tokens == 17
    assert "instructions" not in router.upstream.received[-1].json

    tokens = anthropic_client(router, secret).messages.count_tokens(
        model="claude-test", messages=[{"role": "user", "content": "Which tea do I like?"}]
    )
    assert tokens.input_tokens == 42
    sent = router.upstream.received[-1]
    assert sent.path == "/v1/messages/count_tokens" and "system" not in sent.json
    assert "sk-ant-test" in (sent.headers.get("x-api-key") or sent.headers["authorization"])

    gemini = gemini_client(router, secret)
    assert gemini.models.count_tokens(model="gemini-test", contents="Which tea?").total_tokens == 31
    assert router.upstream.received[-1].path.endswith("/models/gemini-test:countTokens")
    assert "systemInstruction" not in router.upstream.received[-1].json
    embedded = gemini.models.embed_content(model="text-embedding-test", contents="genmaicha")
    assert embedded.embeddings is not None and embedded.embeddings[0].values == [0.5, 0.25, -0.125]
    for path in ("/v1beta/models/e:embedContent", "/v1/models/e:countTokens"):
        response = post(router, path, secret, {"content": {"parts": [{"text": "x"}]}})
        assert response.status_code == 200 and response.content == router.upstream.sent[-1]
        assert router.upstream.received[-1].path == path
    later = "Passed-through calls keep nothing."
    assert set(remember(router, key, later)) == {*stored, later}


def test_passthrough_needs_a_valid_memory_key(router: Router) -> None:
    calls = len(router.upstream.received)
    with pytest.raises(openai.AuthenticationError):
        openai_client(router, "mk_not_a_key").embeddings.create(model="fake-embedding", input="x")
    with pytest.raises(anthropic.AuthenticationError):
        anthropic_client(router, "mk_not_a_key").messages.count_tokens(
            model="claude-test", messages=[{"role": "user", "content": "x"}]
        )
    missing = post(router, "/v1beta/models/g:countTokens", None, {"contents": []})
    assert missing.status_code == 401 and missing.json()["error"]["status"] == "UNAUTHENTICATED"
    assert len(router.upstream.received) == calls


def test_gemini_function_results_in_tool_turns_are_accepted(router: Router, key: tuple[str, str]) -> None:
    _, secret = key
    remember(router, key, "I live in Porto.")
    weather = types.FunctionDeclaration(
        name="get_weather", description="Weather in a city", parameters_json_schema={"type": "object"}
    )
    contents = [
        types.Content(role="user", parts=[types.Part.from_text(text="What's the weather where I live?")]),
        types.Content(
            role="model", parts=[types.Part.from_function_call(name="get_weather", args={"city": "Porto"})]
        ),
        types.Content(
            role="tool", parts=[types.Part.from_function_response(name="get_weather", response={"sky": "clear"})]
        ),
    ]
    config = types.GenerateContentConfig(tools=[types.Tool(function_declarations=[weather])])
    client = gemini_client(router, secret)  # kept: a collected client closes its connection
    response = client.models.generate_content(model="gemini-test", contents=contents, config=config)
    assert response.text == router.upstream.answer
    sent = router.upstream.received[-1].json
    assert [c["role"] for c in sent["contents"]] == ["user", "model", "tool"]
    assert sent["contents"][2]["parts"][0]["functionResponse"]["response"] == {"sky": "clear"}
    assert "Porto" in sent["systemInstruction"]["parts"][-1]["text"]
    # The loop's first call had the question (a call memvault did not see here): this one, which
    # carries the tool's result, stores its answer alone.
    held = remember(router, key, "The ferry leaves at nine.")
    assert "What's the weather where I live?" not in held


def test_gemini_cached_content_gets_memory_in_the_user_turn_not_a_system_instruction(
    router: Router, key: tuple[str, str]
) -> None:
    _, secret = key
    remember(router, key, "My bike lock code is kept in the red notebook.")
    config = types.GenerateContentConfig(cached_content="cachedContents/fake-cache")
    question = "Where is my bike lock code kept?"
    client = gemini_client(router, secret)
    client.models.generate_content(model="gemini-test", contents=question, config=config)
    sent = router.upstream.received[-1].json
    assert "systemInstruction" not in sent and sent["cachedContent"] == "cachedContents/fake-cache"
    [turn] = sent["contents"]
    assert "red notebook" in turn["parts"][0]["text"] and turn["parts"][1:] == [{"text": question}]


def test_gemini_json_array_stream_is_relayed_and_stored(router: Router, key: tuple[str, str]) -> None:
    key_id, secret = key
    body = {"contents": [{"role": "user", "parts": [{"text": "My cat sleeps on the radiator."}]}]}
    with httpx.stream(
        "POST", f"{router.url}/v1beta/models/gemini-test:streamGenerateContent", json=body, headers={"X-Memory-Key": secret}
    ) as response:
        received = b"".join(response.iter_raw())
    assert received == router.upstream.sent[-1] and received.startswith(b"[")
    router.wait_stored(key_id, "My cat sleeps on the radiator.", router.upstream.answer)


@pytest.fixture
def small_provider_limit(router: Router) -> Iterator[int]:
    limit = 3 * 1024 * 1024
    settings: Settings = router.deps.settings
    router.deps.settings = settings.replace(max_provider_body_bytes=limit)  # type: ignore[misc]
    yield limit
    router.deps.settings = settings  # type: ignore[misc]


def test_provider_routes_take_large_inline_media_up_to_their_own_limit(
    router: Router, key: tuple[str, str], small_provider_limit: int
) -> None:
    _, secret = key
    remember(router, key, "My garden has three apple trees.")
    image = base64.b64encode(bytes(range(256)) * 4800).decode()  # 1.2 MB raw, 1.6 MB encoded
    user = {
        "role": "user",
        "content": [
            {"type": "text", "text": "How many apple trees are in my garden?"},
            {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{image}"}},
        ],
    }
    body = {"model": "gpt-test", "messages": [user]}
    response = post(router, "/v1/chat/completions", secret, body)
    assert response.status_code == 200
    sent = router.upstream.received[-1].json
    assert sent["messages"][1:] == [user] and "apple trees" in sent["messages"][0]["content"]

    too_big = {"model": "gpt-test", "messages": [{"role": "user", "content": "x" * (small_provider_limit + 1)}]}
    calls = len(router.upstream.received)
    refused = post(router, "/v1/chat/completions", secret, too_big)
    assert refused.status_code == 413 and refused.json()["error"]["type"] == "invalid_request_error"

    def chunked() -> Iterator[bytes]:
        yield b'{"contents": [{"parts": [{"text": "'
        for _ in range(small_provider_limit // 65536 + 1):
            yield b"y" * 65536
        yield b'"}]}]}'

    streamed = httpx.post(
        f"{router.url}/v1beta/models/g:generateContent", content=chunked(), headers={"X-Memory-Key": secret}
    )
    assert streamed.status_code == 413 and streamed.json()["error"]["code"] == 413
    assert len(router.upstream.received) == calls
    memory_route = post(router, "/v1/memory", secret, {"messages": [{"role": "user", "content": "z" * 1_100_000}]})
    assert memory_route.status_code == 413 and memory_route.json()["error"]["code"] == "payload_too_large"


def test_relayed_answers_keep_their_length_and_are_not_double_stamped(
    router: Router, key: tuple[str, str]
) -> None:
    _, secret = key
    body = {"model": "gpt-test", "messages": [{"role": "user", "content": "Hello there."}]}
    response = post(router, "/v1/chat/completions", secret, body)
    names = [name.lower() for name, _ in response.headers.raw]
    assert names.count(b"server") == 1 and names.count(b"date") == 1
    assert response.headers["server"] == "fake-provider/1.0"
    assert int(response.headers["content-length"]) == len(response.content) == len(router.upstream.sent[-1])
    own = httpx.get(f"{router.url}/health")
    assert [name.lower() for name, _ in own.headers.raw].count(b"date") == 1


def test_memory_goes_into_the_callers_system_message_wherever_it_stands(
    router: Router, key: tuple[str, str]
) -> None:
    _, secret = key
    remember(router, key, "My train leaves from Santa Apolonia.")
    messages = [
        {"role": "user", "content": "Hi."},
        {"role": "assistant", "content": "Hello!"},
        {"role": "developer", "content": "Be kind."},
        {"role": "user", "content": "Which station does my train leave from?"},
    ]
    post(router, "/v1/chat/completions", secret, {"model": "gpt-test", "messages": messages})
    sent = router.upstream.received[-1].json["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "developer", "user"]
    assert sent[2]["content"].startswith("Be kind.\n\n") and "Santa Apolonia" in sent[2]["content"]


def test_an_answer_the_client_gave_up_on_is_not_stored(router: Router, key: tuple[str, str]) -> None:
    _, secret = key
    router.upstream.answer_delay = 1.0
    try:
        for stream in (False, True):
            served = router.served(secret)
            body = {"model": "gpt-test", "stream": stream, "messages": [{"role": "user", "content": f"Gave up {stream}."}]}
            with pytest.raises(httpx.ReadTimeout):
                httpx.post(
                    f"{router.url}/v1/chat/completions",
                    json=body,
                    headers={"X-Memory-Key": secret},
                    timeout=httpx.Timeout(5, read=0.3),
                )
            router.wait_served(secret, served + 1)  # the late answer came and was judged
    finally:
        router.upstream.answer_delay = 0.0
    assert remember(router, key, "Waited for it.") == ["Waited for it.", router.upstream.answer]


def test_options_may_come_in_the_body_and_headers_win(router: Router, key: tuple[str, str]) -> None:
    _, secret = key
    stored = remember(router, key, "My locker number is 418.")
    body = {
        "model": "gpt-test",
        "messages": [{"role": "user", "content": "What is my locker number?"}],
        "memvault": {"mode": "read", "context_limit": 300},
    }
    response = post(router, "/v1/chat/completions", secret, body)
    sent = router.upstream.received[-1].json
    assert "memvault" not in sent and "418" in sent["messages"][0]["content"]
    assert response.headers["x-memory-status"] == "ok"

    post(router, "/v1/chat/completions", secret, body, X_Memory_Mode="off")
    assert router.upstream.received[-1].json == {k: v for k, v in body.items() if k != "memvault"}

    for bad in ({"mode": "sometimes"}, {"context_limit": -1}, {"colour": "red"}, "read"):
        calls = len(router.upstream.received)
        refused = post(router, "/v1/chat/completions", secret, {**body, "memvault": bad})
        assert refused.status_code == 400 and refused.json()["error"]["type"] == "invalid_request_error"
        assert len(router.upstream.received) == calls
    # Neither the read-mode call nor the one with memory off kept its question.
    later = "Stored after the read."
    assert set(remember(router, key, later)) == {*stored, later}
