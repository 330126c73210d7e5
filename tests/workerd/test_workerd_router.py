"""The memory router in real workerd, called by the official OpenAI, Anthropic and Gemini SDKs with
only their base URL changed, against a fake provider on 127.0.0.1: what memvault remembers for the
session goes into the provider's own system field, the answer comes back as the provider sent it
(whole or streamed), and the new turn is stored."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

import anthropic
import openai
import pytest
from google import genai
from google.genai import types
from tier_fakes import HeldUpstream
from tier_stack import MainStack
from wrangler_dev import wait_for

ANSWER = "Noted, thank you."


def remembered(stack: MainStack, session_id: str) -> str:
    """A fact stored in the session before the call, which the router must inject."""
    fact = f"My locker number is {uuid.uuid4().int % 9000 + 1000}."
    done = stack.api("POST", "/v1/memory", stack.secrets.memory_key, json={"messages": [{"role": "user", "content": fact}]},
                     headers={"X-Session-ID": session_id})
    assert done.status_code == 200, done.text
    return fact


def stored_turn(stack: MainStack, session_id: str, question: str) -> list[str]:
    """Waits until the session holds the question and the relayed answer."""

    def both() -> list[str] | None:
        page = stack.api("GET", "/v1/memory", stack.secrets.memory_key, params={"session_id": session_id, "limit": 20})
        texts = [m["content"] for m in page.json()["items"]]
        return texts if question in texts and ANSWER in texts else None

    return wait_for("the routed turn to be stored", both, 60)


def openai_call(stack: MainStack, session_id: str, question: str, stream: bool) -> str:
    client = openai.OpenAI(base_url=f"{stack.memvault.url}/v1", api_key="sk-tier-openai", max_retries=0,
                           default_headers={"X-Memory-Key": stack.secrets.memory_key, "X-Session-ID": session_id})
    messages: Any = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": question}]
    if not stream:
        completion = client.chat.completions.create(model="gpt-tier", messages=messages)
        return completion.choices[0].message.content or ""
    chunks = client.chat.completions.create(model="gpt-tier", messages=messages, stream=True)
    return "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices)


def anthropic_call(stack: MainStack, session_id: str, question: str, stream: bool) -> str:
    client = anthropic.Anthropic(base_url=stack.memvault.url, api_key="sk-ant-tier", max_retries=0,
                                 default_headers={"X-Memory-Key": stack.secrets.memory_key, "X-Session-ID": session_id})
    messages: Any = [{"role": "user", "content": question}]
    if not stream:
        message = client.messages.create(model="claude-tier", max_tokens=64, system="You are terse.", messages=messages)
        block = message.content[0]
        return block.text if block.type == "text" else ""
    with client.messages.stream(model="claude-tier", max_tokens=64, system="You are terse.", messages=messages) as events:
        return "".join(events.text_stream)


def gemini_call(stack: MainStack, session_id: str, question: str, stream: bool) -> str:
    options = types.HttpOptions(base_url=stack.memvault.url,
                                headers={"X-Memory-Key": stack.secrets.memory_key, "X-Session-ID": session_id})
    client = genai.Client(api_key="g-tier-key", http_options=options)
    config = types.GenerateContentConfig(system_instruction="You are terse.")
    if not stream:
        return client.models.generate_content(model="gemini-tier", contents=question, config=config).text or ""
    chunks = client.models.generate_content_stream(model="gemini-tier", contents=question, config=config)
    return "".join(chunk.text or "" for chunk in chunks)


def system_text(provider: str, request: dict[str, Any]) -> str:
    """The provider's own system field of a request the fake upstream received."""
    if provider == "openai":
        return " ".join(m["content"] for m in request["messages"] if m["role"] == "system")
    if provider == "anthropic":
        system = request["system"]
        return system if isinstance(system, str) else " ".join(block["text"] for block in system)
    return " ".join(part["text"] for part in request["systemInstruction"]["parts"])


CALLS: dict[str, Callable[[MainStack, str, str, bool], str]] = {
    "openai": openai_call, "anthropic": anthropic_call, "gemini": gemini_call}


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("provider", sorted(CALLS))
def test_the_router_injects_memory_relays_the_answer_and_stores_the_turn(
    stack: MainStack, upstream: HeldUpstream, provider: str, stream: bool
) -> None:
    session_id = f"router-{provider}-{uuid.uuid4().hex[:8]}"
    fact = remembered(stack, session_id)
    question = "What is my locker number again?"
    seen = len(upstream.upstream.received)
    answer = CALLS[provider](stack, session_id, question, stream)
    assert answer == ANSWER
    [request] = upstream.upstream.received[seen:]
    assert request.headers.get("x-memory-key") is None
    assert fact in system_text(provider, request.json)
    stored_turn(stack, session_id, question)
