"""The memory router reached by another Worker over a service binding (`env.MEMVAULT.fetch`), the
way a Worker in front of memvault calls it: the official OpenAI SDK pointed at that Worker, whole
and streamed. The answer and memvault's headers cross the binding unchanged, the stream arrives
event by event to its `[DONE]`, and the turn is stored once."""

from __future__ import annotations

import uuid

import openai
import pytest
from tier_fakes import HeldUpstream
from tier_stack import MainStack
from wrangler_dev import wait_for

ANSWER = "Noted, thank you."


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
def test_a_worker_calls_the_router_over_its_service_binding(stack: MainStack, upstream: HeldUpstream,
                                                            stream: bool) -> None:
    session_id = "binding-" + uuid.uuid4().hex[:8]
    question = f"Over the binding: which shelf holds box {uuid.uuid4().hex[:6]}?"
    client = openai.OpenAI(base_url=f"{stack.bot.url}/to/MEMVAULT_UNBOUND/v1", api_key="sk-tier", max_retries=0,
                           timeout=60, default_headers={"X-Memory-Key": stack.secrets.memory_key,
                                                        "X-Session-ID": session_id})
    messages: list[dict[str, str]] = [{"role": "user", "content": question}]
    raw = client.chat.completions.with_raw_response.create(model="gpt-tier", messages=messages,  # type: ignore[arg-type]
                                                           stream=stream)
    assert raw.headers.get("x-memory-status") == "ok" and raw.headers.get("x-memory-receipt")
    parsed = raw.parse()
    if isinstance(parsed, openai.Stream):
        chunks = list(parsed)
        answer = "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices)
        assert chunks[-1].choices[0].finish_reason == "stop"
    else:
        answer = parsed.choices[0].message.content or ""
    assert answer == ANSWER

    def turn() -> list[str] | None:
        page = stack.api("GET", "/v1/memory", stack.secrets.memory_key, params={"session_id": session_id, "limit": 20})
        texts = [m["content"] for m in page.json()["items"]]
        return texts if question in texts and ANSWER in texts else None

    texts = wait_for("the turn to be stored", turn, 60)
    assert texts.count(question) == 1
