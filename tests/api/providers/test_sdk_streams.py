"""Every official SDK's streams, consumed the ways their docs show, against an upstream that keeps
its connection open a little after its last event, as real providers do. A stream whose last event
reached the client is remembered however the client closes afterwards (the OpenAI SDK hangs up at
`[DONE]`); a stream the client leaves while the model is still writing is not."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anthropic
import httpx
import openai
import pytest
from fake_upstream import Ending
from test_router_behaviour import body_of, path_of
from test_sdk_clients import anthropic_client, gemini_client, openai_client

from conftest import Router, wait_until
from memvault.core.usage.ledger import tokens_today

MODEL = "stream-test"
# How many chunks each upstream stream sends up to its first words: held there, the model is
# still writing when the client leaves.
FIRST_WORDS = {"openai": 2, "openai-responses": 5, "anthropic": 4, "gemini": 1}
# Consume a stream for (router, memory key secret, the user's text); the text the client read.
Consume = Callable[[Router, str, str], str]


@dataclass(frozen=True)
class Case:
    name: str
    provider: str
    consume: Consume

    def __str__(self) -> str:
        return self.name


def user(text: str) -> list[Any]:
    return [{"role": "user", "content": text}]


def async_openai(router: Router, secret: str) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(
        base_url=f"{router.url}/v1", api_key="sk-test-openai", max_retries=0, default_headers={"X-Memory-Key": secret}
    )


def async_anthropic(router: Router, secret: str) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(
        base_url=router.url, api_key="sk-ant-test", max_retries=0, default_headers={"X-Memory-Key": secret}
    )


def chat_text(chunks: Any) -> str:
    return "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices)


def openai_iterate(router: Router, secret: str, text: str) -> str:
    return chat_text(openai_client(router, secret).chat.completions.create(model=MODEL, messages=user(text), stream=True))


def openai_with_usage_in_a_with_block(router: Router, secret: str, text: str) -> str:
    with openai_client(router, secret).chat.completions.create(
        model=MODEL, messages=user(text), stream=True, stream_options={"include_usage": True}
    ) as stream:
        return chat_text(stream)


def openai_stream_manager(router: Router, secret: str, text: str) -> str:
    with openai_client(router, secret).chat.completions.stream(model=MODEL, messages=user(text)) as stream:
        for _ in stream:
            pass
        return stream.get_final_completion().choices[0].message.content or ""


def openai_async_iterate(router: Router, secret: str, text: str) -> str:
    async def run() -> str:
        async with async_openai(router, secret) as client:
            stream = await client.chat.completions.create(model=MODEL, messages=user(text), stream=True)
            return "".join([chunk.choices[0].delta.content or "" async for chunk in stream if chunk.choices])

    return asyncio.run(run())


def openai_async_stream_manager(router: Router, secret: str, text: str) -> str:
    async def run() -> str:
        async with (
            async_openai(router, secret) as client,
            client.chat.completions.stream(model=MODEL, messages=user(text)) as stream,
        ):
            async for _ in stream:
                pass
            return (await stream.get_final_completion()).choices[0].message.content or ""

    return asyncio.run(run())


def openai_close_midway(router: Router, secret: str, text: str) -> str:
    stream = openai_client(router, secret).chat.completions.create(model=MODEL, messages=user(text), stream=True)
    next(iter(stream))
    stream.close()
    return ""


def openai_break_out_of_the_stream_manager(router: Router, secret: str, text: str) -> str:
    with openai_client(router, secret).chat.completions.stream(model=MODEL, messages=user(text)) as stream:
        for event in stream:
            if event.type == "content.delta":
                break
    return ""


def openai_async_close_midway(router: Router, secret: str, text: str) -> str:
    async def run() -> None:
        async with async_openai(router, secret) as client:
            stream = await client.chat.completions.create(model=MODEL, messages=user(text), stream=True)
            async for _ in stream:
                break
            await stream.close()

    asyncio.run(run())
    return ""


def responses_iterate(router: Router, secret: str, text: str) -> str:
    stream = openai_client(router, secret).responses.create(model=MODEL, input=text, stream=True)
    return "".join(event.delta for event in stream if event.type == "response.output_text.delta")


def responses_stream_manager(router: Router, secret: str, text: str) -> str:
    with openai_client(router, secret).responses.stream(model=MODEL, input=text) as stream:
        for _ in stream:
            pass
        return stream.get_final_response().output_text


def responses_stop_at_completed(router: Router, secret: str, text: str) -> str:
    with openai_client(router, secret).responses.create(model=MODEL, input=text, stream=True) as stream:
        for event in stream:
            if event.type == "response.completed":
                return event.response.output_text
    raise AssertionError("no response.completed event")


def responses_async_stream_manager(router: Router, secret: str, text: str) -> str:
    async def run() -> str:
        async with async_openai(router, secret) as client, client.responses.stream(model=MODEL, input=text) as stream:
            async for _ in stream:
                pass
            return (await stream.get_final_response()).output_text

    return asyncio.run(run())


def responses_break_midway(router: Router, secret: str, text: str) -> str:
    with openai_client(router, secret).responses.stream(model=MODEL, input=text) as stream:
        for event in stream:
            if event.type == "response.output_text.delta":
                break
    return ""


def anthropic_iterate(router: Router, secret: str, text: str) -> str:
    stream = anthropic_client(router, secret).messages.create(
        model=MODEL, max_tokens=64, messages=user(text), stream=True
    )
    return "".join(
        event.delta.text
        for event in stream
        if event.type == "content_block_delta" and event.delta.type == "text_delta"
    )


def anthropic_stream_manager(router: Router, secret: str, text: str) -> str:
    with anthropic_client(router, secret).messages.stream(model=MODEL, max_tokens=64, messages=user(text)) as stream:
        streamed = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert final.content[0].type == "text" and final.content[0].text == streamed
    return streamed


def anthropic_async_stream_manager(router: Router, secret: str, text: str) -> str:
    async def run() -> str:
        async with (
            async_anthropic(router, secret) as client,
            client.messages.stream(model=MODEL, max_tokens=64, messages=user(text)) as stream,
        ):
            streamed = "".join([piece async for piece in stream.text_stream])
            final = await stream.get_final_message()
        assert final.content[0].type == "text" and final.content[0].text == streamed
        return streamed

    return asyncio.run(run())


def anthropic_break_out_of_the_stream_manager(router: Router, secret: str, text: str) -> str:
    with anthropic_client(router, secret).messages.stream(model=MODEL, max_tokens=64, messages=user(text)) as stream:
        for _ in stream.text_stream:
            break
    return ""


def anthropic_async_break_midway(router: Router, secret: str, text: str) -> str:
    async def run() -> None:
        async with (
            async_anthropic(router, secret) as client,
            client.messages.stream(model=MODEL, max_tokens=64, messages=user(text)) as stream,
        ):
            async for _ in stream.text_stream:
                break

    asyncio.run(run())
    return ""


def gemini_iterate(router: Router, secret: str, text: str) -> str:
    client = gemini_client(router, secret)  # kept: a collected client closes its connection mid-stream
    return "".join(chunk.text or "" for chunk in client.models.generate_content_stream(model=MODEL, contents=text))


def gemini_async_iterate(router: Router, secret: str, text: str) -> str:
    async def run() -> str:
        async with gemini_client(router, secret).aio as client:
            chunks = await client.models.generate_content_stream(model=MODEL, contents=text)
            return "".join([chunk.text or "" async for chunk in chunks])

    return asyncio.run(run())


def gemini_break_midway(router: Router, secret: str, text: str) -> str:
    with gemini_client(router, secret) as client:
        for _ in client.models.generate_content_stream(model=MODEL, contents=text):
            break
    return ""


def gemini_async_break_midway(router: Router, secret: str, text: str) -> str:
    async def run() -> None:
        async with gemini_client(router, secret).aio as client:
            async for _ in await client.models.generate_content_stream(model=MODEL, contents=text):
                break

    asyncio.run(run())
    return ""


def raw_request(provider: str, text: str) -> tuple[str, bytes]:
    if provider == "openai-responses":
        return "/v1/responses", json.dumps({"model": MODEL, "input": text, "stream": True}).encode()
    return path_of(provider, True), json.dumps(body_of(provider, [text], stream=True)).encode()


def raw_read_to_the_end(provider: str) -> Consume:
    def consume(router: Router, secret: str, text: str) -> str:
        path, body = raw_request(provider, text)
        headers = {"X-Memory-Key": secret, "content-type": "application/json"}
        with (
            httpx.Client(base_url=router.url, timeout=30, trust_env=False) as client,
            client.stream("POST", path, content=body, headers=headers) as response,
        ):
            received = b"".join(response.iter_raw())
        assert received == sent_for(router, text)
        return router.upstream.answer

    return consume


def curl(router: Router, secret: str, text: str) -> str:
    program = shutil.which("curl")
    if program is None:
        pytest.skip("curl is not installed")
    path, body = raw_request("openai", text)
    command = [program, "-sS", "-N", "--max-time", "30", "-X", "POST", f"{router.url}{path}",
               "-H", "content-type: application/json", "-H", f"X-Memory-Key: {secret}", "--data-binary", "@-"]
    done = subprocess.run(command, input=body, capture_output=True, timeout=60, check=True)
    assert done.stdout == sent_for(router, text)
    return router.upstream.answer


def raw_hang_up_at_done(router: Router, secret: str, text: str) -> str:
    """What the OpenAI SDK does, by hand: read to `[DONE]`, then close the connection at once."""
    path, body = raw_request("openai", text)
    headers = {"X-Memory-Key": secret, "content-type": "application/json"}
    with (
        httpx.Client(base_url=router.url, timeout=30, trust_env=False) as client,
        client.stream("POST", path, content=body, headers=headers) as response,
    ):
        for line in response.iter_lines():
            if line == "data: [DONE]":
                break
    return router.upstream.answer


READ_TO_THE_END = [
    Case("openai-iterate", "openai", openai_iterate),
    Case("openai-usage-with-block", "openai", openai_with_usage_in_a_with_block),
    Case("openai-stream-manager", "openai", openai_stream_manager),
    Case("openai-async-iterate", "openai", openai_async_iterate),
    Case("openai-async-stream-manager", "openai", openai_async_stream_manager),
    Case("responses-iterate", "openai-responses", responses_iterate),
    Case("responses-stream-manager", "openai-responses", responses_stream_manager),
    Case("responses-stop-at-completed", "openai-responses", responses_stop_at_completed),
    Case("responses-async-stream-manager", "openai-responses", responses_async_stream_manager),
    Case("anthropic-iterate", "anthropic", anthropic_iterate),
    Case("anthropic-stream-manager", "anthropic", anthropic_stream_manager),
    Case("anthropic-async-stream-manager", "anthropic", anthropic_async_stream_manager),
    Case("gemini-iterate", "gemini", gemini_iterate),
    Case("gemini-async-iterate", "gemini", gemini_async_iterate),
    *(Case(f"raw-{p}-to-eof", p, raw_read_to_the_end(p)) for p in ("openai", "openai-responses", "anthropic", "gemini")),
    Case("curl", "openai", curl),
    Case("raw-hang-up-at-done", "openai", raw_hang_up_at_done),
]
LEFT_MIDWAY = [
    Case("openai-close", "openai", openai_close_midway),
    Case("openai-break-out-of-stream-manager", "openai", openai_break_out_of_the_stream_manager),
    Case("openai-async-close", "openai", openai_async_close_midway),
    Case("responses-break", "openai-responses", responses_break_midway),
    Case("anthropic-break-out-of-stream-manager", "anthropic", anthropic_break_out_of_the_stream_manager),
    Case("anthropic-async-break", "anthropic", anthropic_async_break_midway),
    Case("gemini-break", "gemini", gemini_break_midway),
    Case("gemini-async-break", "gemini", gemini_async_break_midway),
]


def a_fact(case: Case) -> str:
    return f"My {case.name} locker code is {uuid.uuid4().hex[:8]}."


def sent_for(router: Router, text: str) -> bytes:
    """The bytes upstream sent for the request that carried ``text``."""
    index = next(i for i, r in enumerate(router.upstream.received) if text.encode() in r.body)
    return router.upstream.sent[index]


def ending_of(router: Router, text: str) -> Ending:
    """Wait until upstream's response to the request carrying ``text`` is over, either way."""

    def ended() -> Ending | None:
        return next((e for e in router.upstream.endings if text.encode() in e.request.body), None)

    return wait_until(ended, "upstream's response to end")


@pytest.mark.parametrize("case", READ_TO_THE_END, ids=str)
def test_a_stream_read_to_its_end_is_remembered_however_the_client_closes(
    router: Router, key: tuple[str, str], case: Case
) -> None:
    key_id, secret = key
    fact = a_fact(case)
    assert case.consume(router, secret, fact) == router.upstream.answer
    router.wait_stored(key_id, fact, router.upstream.answer)
    ending_of(router, fact)  # and upstream's connection is done with


def leave_midway(router: Router, secret: str, case: Case) -> str:
    """Make ``case``'s call with a fact of its own and leave it while the model is still writing;
    the fact."""
    fact = a_fact(case)
    router.upstream.hold_after = FIRST_WORDS[case.provider]
    try:
        case.consume(router, secret, fact)
    finally:
        router.upstream.hold_after = None
    # The client's leaving reached upstream: memvault hung up before the model had finished.
    assert ending_of(router, fact).peer_left
    return fact


@pytest.mark.parametrize("case", LEFT_MIDWAY, ids=str)
def test_a_stream_left_while_the_model_is_still_writing_is_not_remembered(
    router: Router, key: tuple[str, str], case: Case
) -> None:
    key_id, secret = key
    served = router.served(secret)
    fact = leave_midway(router, secret, case)
    router.wait_served(secret, served + 1)
    later = "A later turn, read to its end."
    openai_client(router, secret).chat.completions.create(model=MODEL, messages=user(later))
    assert not any(fact in text for text in router.wait_stored(key_id, later))


def test_a_stream_left_midway_still_counts_the_tokens_the_provider_had_reported(
    router: Router, key: tuple[str, str]
) -> None:
    # Anthropic's first event gives the prompt's tokens: the provider bills them whoever leaves.
    key_id, secret = key
    leave_midway(router, secret, next(c for c in LEFT_MIDWAY if c.provider == "anthropic"))

    def counted() -> int | None:
        provider, _ = router.run(lambda: tokens_today(router.deps.db, key_id, router.deps.clock()))
        return provider or None

    assert wait_until(counted, "the left call's tokens to be counted") >= 11


def test_the_turn_is_stored_without_waiting_for_upstream_to_close(router: Router, key: tuple[str, str]) -> None:
    key_id, secret = key
    fact = "My bike is a black Brompton with a dynamo."
    router.upstream.linger = 120.0  # far past the wait below
    try:
        assert openai_iterate(router, secret, fact) == router.upstream.answer
        router.wait_stored(key_id, fact, router.upstream.answer)
    finally:
        router.upstream.linger = 0.3
    # The SDK hung up at [DONE] and memvault passed that on instead of waiting.
    assert ending_of(router, fact).peer_left


def test_a_client_still_connected_after_the_last_event_already_has_its_turn_stored(
    router: Router, key: tuple[str, str]
) -> None:
    # A runtime may not report a client's leaving (Workers does not): the last event decides.
    key_id, secret = key
    fact = "My kayak is called Pelican."
    path, body = raw_request("anthropic", fact)
    router.upstream.linger = 120.0
    try:
        with httpx.Client(base_url=router.url, timeout=30, trust_env=False) as client:
            headers = {"X-Memory-Key": secret, "content-type": "application/json"}
            with client.stream("POST", path, content=body, headers=headers) as response:
                lines = response.iter_lines()  # kept: a dropped iterator would close the connection
                for line in lines:
                    if line.startswith("data:") and '"message_stop"' in line:
                        break
                router.wait_stored(key_id, fact, router.upstream.answer)
                assert not any(fact.encode() in e.request.body for e in router.upstream.endings)
    finally:
        router.upstream.linger = 0.3
    assert ending_of(router, fact).peer_left
