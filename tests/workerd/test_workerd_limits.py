"""Limits and usage on the real Worker, set as a deployed operator sets them: the admin makes a key
and gives it a limit of requests per minute over HTTP. Past it the memory router answers 429 in
OpenAI's envelope with Retry-After (the official SDK raises its rate-limit error), memvault's own
route answers `rate_limited`, an RPC call is refused too, and nothing refused is forwarded or
stored; the tier's other key goes on. `/v1/usage` then holds the admitted calls with the fake
provider's token counts."""

from __future__ import annotations

import time
import uuid
from typing import Any

import httpx
import openai
import pytest
from tier_fakes import HeldUpstream
from tier_stack import MainStack
from wrangler_dev import wait_for

LIMIT = 2
INPUT_TOKENS = 11  # what the fake provider reports for every prompt
ROOM_SECONDS = 25  # the calls that must share one UTC minute take far less on a busy machine


def chat(stack: MainStack, key: str, session_id: str, text: str) -> httpx.Response:
    body = {"model": "gpt-limited", "messages": [{"role": "user", "content": text}]}
    headers = {"X-Memory-Key": key, "X-Session-ID": session_id, "Authorization": "Bearer sk-tier-openai"}
    return httpx.post(f"{stack.memvault.url}/v1/chat/completions", json=body, headers=headers, timeout=120)


def stored(stack: MainStack, key: str, session_id: str) -> list[str]:
    page = stack.api("GET", "/v1/memory", key, params={"session_id": session_id, "limit": 50})
    assert page.status_code == 200, page.text
    return [message["content"] for message in page.json()["items"]]


def test_a_key_over_its_limit_is_refused_everywhere_and_its_usage_is_readable(
    stack: MainStack, upstream: HeldUpstream
) -> None:
    admin = stack.secrets.admin_token
    made = stack.api("POST", "/v1/admin/keys", admin, json={"label": "limited"})
    assert made.status_code == 200, made.text
    key_id, key = made.json()["id"], made.json()["key"]
    limits = stack.api("PUT", f"/v1/admin/keys/{key_id}/limits", admin, json={"requests_per_minute": LIMIT})
    assert limits.status_code == 200 and limits.json()["requests_per_minute"] == LIMIT, limits.text
    session_id = "limits-" + uuid.uuid4().hex[:8]
    admitted = [f"Admitted question {i}: where is the {uuid.uuid4().hex[:6]} toolbox?" for i in range(LIMIT)]
    refused_text = "Refused question: what is the alarm code?"
    # The limit counts calls per UTC minute: the calls below must fall in one.
    wait_for("a UTC minute with room for the calls", lambda: time.time() % 60 < 60 - ROOM_SECONDS, 60)

    for text in admitted:
        answer = chat(stack, key, session_id, text)
        assert answer.status_code == 200, answer.text
    forwarded = len(upstream.chat_requests())
    refused = chat(stack, key, session_id, refused_text)
    assert refused.status_code == 429, refused.text
    assert refused.json()["error"]["type"] == "rate_limit_error"
    assert f"limit of {LIMIT} requests a minute" in refused.json()["error"]["message"]
    assert 1 <= int(refused.headers["retry-after"]) <= 60
    sdk = openai.OpenAI(base_url=f"{stack.memvault.url}/v1", api_key="sk-tier-openai", max_retries=0,
                        default_headers={"X-Memory-Key": key, "X-Session-ID": session_id})
    with pytest.raises(openai.RateLimitError):
        sdk.chat.completions.create(model="gpt-limited", messages=[{"role": "user", "content": refused_text}])
    own = stack.api("POST", "/v1/memory/search", key, json={"query": "toolbox", "session_id": session_id})
    assert own.status_code == 429 and own.json()["error"]["code"] == "rate_limited" and own.headers["retry-after"]
    over_rpc: dict[str, Any] = stack.rpc("save_memory", key, session_id, [{"role": "user", "content": refused_text}])
    assert "RateLimited" in over_rpc.get("error", "") and "try again in" in over_rpc["error"], over_rpc
    assert len(upstream.chat_requests()) == forwarded  # nothing refused reached the provider
    assert chat(stack, stack.secrets.memory_key, session_id, "Another key is not limited.").status_code == 200

    cleared = stack.api("PUT", f"/v1/admin/keys/{key_id}/limits", admin, json={})
    assert cleared.status_code == 200 and cleared.json()["requests_per_minute"] is None

    def admitted_turns() -> list[str] | None:
        texts = stored(stack, key, session_id)
        return texts if set(admitted) <= set(texts) else None

    kept = wait_for("the admitted turns stored", admitted_turns)
    assert refused_text not in kept
    words = len(upstream.upstream.answer.split(" "))
    usage = wait_for("the admitted calls accounted", lambda: (
        u := stack.api("GET", "/v1/usage", key, params={"group_by": "model"}).json())["total"]["calls"] >= LIMIT and u)
    [row] = usage["rows"] if len(usage["rows"]) == 1 else [r for r in usage["rows"] if r["model"] == "gpt-limited"]
    assert (row["model"], row["calls"], row["input_tokens"], row["output_tokens"]) == (
        "gpt-limited", LIMIT, LIMIT * INPUT_TOKENS, LIMIT * words)
    assert usage["total"]["calls"] == LIMIT
