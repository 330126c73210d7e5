"""Receipts on the real Worker: kept in D1 beside the mirror, named by a search and by a routed
call (streamed), readable at once by the key that made them and by no other, and forgetting a
message takes its id out of them."""

from __future__ import annotations

import uuid

import httpx
from tier_fakes import HeldUpstream
from tier_stack import MainStack


def test_a_search_and_a_routed_call_name_receipts_the_key_reads_at_once(stack: MainStack, upstream: HeldUpstream) -> None:
    key = stack.secrets.memory_key
    session_id = f"receipts-{uuid.uuid4().hex[:8]}"
    note = f"My bike lock code is {uuid.uuid4().int % 9000 + 1000}."
    stored = stack.api("POST", "/v1/memory", key, json={"messages": [{"role": "user", "content": note, "id": "lock"}]},
                       headers={"X-Session-ID": session_id})
    assert stored.status_code == 200, stored.text
    searched = stack.api("POST", "/v1/memory/search", key, json={"query": "bike lock code", "session_id": session_id})
    assert searched.status_code == 200, searched.text
    receipt_id = searched.json()["receipt"]
    assert searched.headers["x-memory-receipt"] == receipt_id
    kept = stack.api("GET", f"/v1/memory/receipts/{receipt_id}", key)
    assert kept.status_code == 200, kept.text
    assert "lock" in {i for item in kept.json()["receipt"]["items"] for i in item["ids"]}
    assert stack.api("GET", f"/v1/memory/receipts/{receipt_id}", stack.secrets.bot_key).status_code == 404

    body = {"model": "gpt-tier", "stream": True, "messages": [{"role": "user", "content": "What is my bike lock code?"}]}
    headers = {"X-Memory-Key": key, "X-Session-ID": session_id, "Authorization": "Bearer sk-tier-openai"}
    with httpx.stream("POST", f"{stack.memvault.url}/v1/chat/completions", json=body, headers=headers,
                      timeout=120) as response:
        assert response.status_code == 200
        routed = response.headers["x-memory-receipt"]
        early = stack.api("GET", f"/v1/memory/receipts/{routed}", key)
        response.read()
    assert early.status_code == 200, early.text
    assert early.json()["receipt"]["surface"] == "router:openai"
    assert "lock" in {i for item in early.json()["receipt"]["items"] for i in item["ids"]}

    forgot = stack.api("POST", "/v1/memory/forget", key, json={"ids": ["lock"], "session_id": session_id})
    assert forgot.json()["forgotten"] == ["lock"]
    after = stack.api("GET", f"/v1/memory/receipts/{receipt_id}", key).json()["receipt"]
    assert [i for item in after["items"] for i in item["ids"]] == [] and after["items"][0]["forgotten"] == 1
    day = after["day"]
    listed = stack.api("GET", "/v1/memory/receipts", key, params={"day": day}).json()["receipts"]
    assert {receipt_id, routed} <= {r["id"] for r in listed}
