"""Streams the client leaves while the model is still writing, on the real Worker: the official
OpenAI SDK closing a stream after its first chunk, alone and many at once. As on the local server,
the Worker hears the hang-up (the request's signal), stops reading the provider's answer, and still
does what follows every routed call: the call is counted in `/v1/usage`, and the unfinished answer
is not remembered. Before the Worker heard hang-ups, its write to the departed client waited until
the runtime cancelled the request as hung, and the call's accounting went with it."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator

import openai
import pytest
from tier_fakes import HeldUpstream
from tier_stack import MainStack
from wrangler_dev import wait_for

AT_ONCE = 6
# Seconds between the fake provider's chunks: each client leaves long before the answer's end. The
# Worker hears a hang-up when it writes the next chunk to the departed client.
CHUNK_DELAY = 0.4


@pytest.fixture
def model_still_writing(upstream: HeldUpstream) -> Iterator[HeldUpstream]:
    upstream.upstream.chunk_delay = CHUNK_DELAY
    try:
        yield upstream
    finally:
        upstream.upstream.chunk_delay = 0.0


def new_key(stack: MainStack) -> str:
    made = stack.api("POST", "/v1/admin/keys", stack.secrets.admin_token, json={"label": "left streams"})
    assert made.status_code == 200, made.text
    return str(made.json()["key"])


def calls_counted(stack: MainStack, key: str) -> int:
    usage = stack.api("GET", "/v1/usage", key)
    assert usage.status_code == 200, usage.text
    return int(usage.json()["total"]["calls"])


def stored(stack: MainStack, key: str, session_id: str) -> list[str]:
    page = stack.api("GET", "/v1/memory", key, params={"session_id": session_id, "limit": 50})
    assert page.status_code == 200, page.text
    return [message["content"] for message in page.json()["items"]]


async def leave_after_first_chunk(client: openai.AsyncOpenAI, index: int) -> str:
    stream = await client.chat.completions.create(
        model="gpt-tier", messages=[{"role": "user", "content": f"Stream {index} is left after one chunk."}], stream=True)
    first = await anext(aiter(stream))
    await stream.close()
    return first.id


def test_streams_left_mid_answer_are_counted_and_not_remembered(
    stack: MainStack, model_still_writing: HeldUpstream
) -> None:
    key, session_id = new_key(stack), "left-" + uuid.uuid4().hex[:8]
    headers = {"X-Memory-Key": key, "X-Session-ID": session_id}
    ended = len(model_still_writing.upstream.endings)
    client = openai.OpenAI(base_url=f"{stack.memvault.url}/v1", api_key="sk-tier", max_retries=0, timeout=60,
                           default_headers=headers)
    stream = client.chat.completions.create(
        model="gpt-tier", messages=[{"role": "user", "content": "A question left mid-answer."}], stream=True)
    next(iter(stream))
    stream.close()

    async def leave_many() -> list[str]:
        async with openai.AsyncOpenAI(base_url=f"{stack.memvault.url}/v1", api_key="sk-tier", max_retries=0,
                                      timeout=60, default_headers=headers) as many:
            return await asyncio.gather(*(leave_after_first_chunk(many, i) for i in range(AT_ONCE)))

    assert asyncio.run(leave_many()) == ["chatcmpl-fake"] * AT_ONCE
    left = AT_ONCE + 1
    wait_for(f"all {left} left streams to be counted", lambda: calls_counted(stack, key) == left, 60)
    # The Worker hung up on the provider each time.
    endings = wait_for("the provider's answers to end",
                       lambda: model_still_writing.upstream.endings[ended:] if len(
                           model_still_writing.upstream.endings) >= ended + left else None, 60)
    assert all(ending.peer_left for ending in endings)
    assert stored(stack, key, session_id) == []
