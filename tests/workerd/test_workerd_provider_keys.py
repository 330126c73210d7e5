"""Provider keys held for a memory key, in real workerd: the admin stores them through the Worker's
admin surface, the Worker seals them with WebCrypto under its `MEMVAULT_PROVIDER_KEY_SECRET`
secret into local D1, and an official SDK given only the memory key as its API key reaches the
provider with the stored key. Rotation is replacement; after deletion the call carries no key."""

from __future__ import annotations

import json
import secrets
from typing import Any

import anthropic
import openai
from test_workerd_admin import d1_rows
from tier_fakes import HeldUpstream
from tier_stack import MainStack

ANSWER = "Noted, thank you."


def made_key(stack: MainStack) -> tuple[str, str]:
    made = stack.api("POST", "/v1/admin/keys", stack.secrets.admin_token, json={"label": "holds provider keys"})
    assert made.status_code == 200, made.text
    return made.json()["key"], made.json()["id"]


def stored(stack: MainStack, key_id: str, provider: str, api_key: str) -> dict[str, Any]:
    done = stack.api("PUT", f"/v1/admin/keys/{key_id}/providers/{provider}", stack.secrets.admin_token,
                     json={"api_key": api_key})
    assert done.status_code == 200, done.text
    assert api_key not in done.text
    return dict(done.json())


def openai_answer(stack: MainStack, memory_key: str) -> str:
    client = openai.OpenAI(base_url=f"{stack.memvault.url}/v1", api_key=memory_key, max_retries=0)
    completion = client.chat.completions.create(model="gpt-tier", messages=[{"role": "user", "content": "Hello?"}])
    return completion.choices[0].message.content or ""


def anthropic_answer(stack: MainStack, memory_key: str) -> str:
    client = anthropic.Anthropic(base_url=stack.memvault.url, api_key=memory_key, max_retries=0)
    message = client.messages.create(model="claude-tier", max_tokens=32, messages=[{"role": "user", "content": "Hello?"}])
    block = message.content[0]
    return block.text if block.type == "text" else ""


def last_headers(upstream: HeldUpstream, seen: int) -> dict[str, str]:
    [request] = upstream.upstream.received[seen:]
    return request.headers


def test_a_stored_key_is_sealed_used_for_the_memory_key_alone_and_rotated(stack: MainStack, upstream: HeldUpstream) -> None:
    memory_key, key_id = made_key(stack)
    first, second = f"sk-tier-stored-{secrets.token_hex(12)}", f"sk-tier-rotated-{secrets.token_hex(12)}"
    anthropic_key = f"sk-ant-tier-stored-{secrets.token_hex(12)}"
    stored(stack, key_id, "openai", first)
    stored(stack, key_id, "anthropic", anthropic_key)

    listed = stack.api("GET", f"/v1/admin/keys/{key_id}/providers", stack.secrets.admin_token)
    assert listed.status_code == 200, listed.text
    assert {p["provider"]: p["last4"] for p in listed.json()["providers"]} == {"openai": first[-4:], "anthropic": anthropic_key[-4:]}
    assert first not in listed.text and anthropic_key not in listed.text
    rows = d1_rows(stack, f"SELECT provider, sealed FROM provider_keys WHERE key_id = '{key_id}'")
    assert {row["provider"] for row in rows} == {"openai", "anthropic"}
    assert all(str(row["sealed"]).startswith("v1.") for row in rows)
    assert first not in json.dumps(rows) and anthropic_key not in json.dumps(rows)

    seen = len(upstream.upstream.received)
    assert openai_answer(stack, memory_key) == ANSWER
    headers = last_headers(upstream, seen)
    assert headers["authorization"] == f"Bearer {first}"
    assert memory_key not in json.dumps(headers)

    seen = len(upstream.upstream.received)
    assert anthropic_answer(stack, memory_key) == ANSWER
    headers = last_headers(upstream, seen)
    assert headers["x-api-key"] == anthropic_key
    assert memory_key not in json.dumps(headers)

    stored(stack, key_id, "openai", second)
    seen = len(upstream.upstream.received)
    assert openai_answer(stack, memory_key) == ANSWER
    assert last_headers(upstream, seen)["authorization"] == f"Bearer {second}"

    # A call that brings its own key keeps it.
    seen = len(upstream.upstream.received)
    own = openai.OpenAI(base_url=f"{stack.memvault.url}/v1", api_key="sk-tier-own", max_retries=0,
                        default_headers={"X-Memory-Key": memory_key})
    own.chat.completions.create(model="gpt-tier", messages=[{"role": "user", "content": "Mine?"}])
    assert last_headers(upstream, seen)["authorization"] == "Bearer sk-tier-own"

    deleted = stack.api("DELETE", f"/v1/admin/keys/{key_id}/providers/openai", stack.secrets.admin_token)
    assert deleted.status_code == 200, deleted.text
    seen = len(upstream.upstream.received)
    assert openai_answer(stack, memory_key) == ANSWER
    headers = last_headers(upstream, seen)
    assert "authorization" not in headers and memory_key not in json.dumps(headers)

    log = stack.memvault.log.read_text(errors="replace")
    for secret in (first, second, anthropic_key, memory_key):
        assert secret not in log


def test_only_the_admin_stores_a_provider_key(stack: MainStack) -> None:
    memory_key, key_id = made_key(stack)
    path = f"/v1/admin/keys/{key_id}/providers/openai"
    for token in (None, memory_key, stack.secrets.admin_token[:-1] + "x"):
        refused = stack.api("PUT", path, token, json={"api_key": "sk-tier-not-stored-0000"})
        assert refused.status_code == 401, refused.text
    assert d1_rows(stack, f"SELECT provider FROM provider_keys WHERE key_id = '{key_id}'") == []
    # A memvault credential is not a provider key.
    refused = stack.api("PUT", path, stack.secrets.admin_token, json={"api_key": memory_key})
    assert refused.status_code == 422, refused.text
    assert d1_rows(stack, f"SELECT provider FROM provider_keys WHERE key_id = '{key_id}'") == []
