"""Receipts of routed calls: every provider route, streamed or not, names a receipt in
`X-Memory-Receipt` that the key reads while the answer is still coming; it names the memories
injected (by id, as the context block holds them), gains the provider's usage once the answer
is complete, and loses its query when the turn's user message is forgotten."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from test_router_behaviour import PROVIDERS, body_of, path_of, system_text

from conftest import Router, wait_until
from memvault.core.memory import write

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from secret_corpus import SECRETS, gated, leaks, sample


def remember(router: Router, secret: str, texts: list[str]) -> None:
    messages = [{"role": "user", "content": text, "id": f"note-{i}"} for i, text in enumerate(texts)]
    stored = httpx.post(f"{router.url}/v1/memory", json={"messages": messages},
                        headers={"Authorization": f"Bearer {secret}"}, timeout=30, trust_env=False)
    assert stored.status_code == 200, stored.text


def read_receipt(router: Router, secret: str, receipt_id: str) -> httpx.Response:
    return httpx.get(f"{router.url}/v1/memory/receipts/{receipt_id}", headers={"Authorization": f"Bearer {secret}"},
                     timeout=30, trust_env=False)


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "stream"])
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_routed_call_names_a_receipt_readable_before_its_body_is_read(
    router: Router, key: tuple[str, str], provider: str, stream: bool
) -> None:
    _, secret = key
    remember(router, secret, ["My sister Maren lives in Bergen and keeps bees.", "The spare key is under the blue pot."])
    body = body_of(provider, ["Where does Maren live?"], stream)
    if provider == "openai" and stream:
        body["stream_options"] = {"include_usage": True}  # else OpenAI streams report no usage
    headers = {"X-Memory-Key": secret, "content-type": "application/json"}
    served = router.served(secret)
    with httpx.Client(base_url=router.url, timeout=30, trust_env=False) as client, client.stream(
        "POST", path_of(provider, stream), content=json.dumps(body).encode(), headers=headers
    ) as response:
        assert response.status_code == 200
        receipt_id = response.headers["x-memory-receipt"]
        early = read_receipt(router, secret, receipt_id)
        assert early.status_code == 200, early.text
        response.read()
    router.wait_served(secret, served + 1)
    kept = early.json()["receipt"]
    assert kept["surface"] == f"router:{provider}" and kept["status"] == "ok"
    assert kept["query"] == "Where does Maren live?"
    assert kept["budget_tokens"] == router.deps.settings.context_limit_tokens
    assert len(kept["items"]) == int(response.headers["x-memory-items"]) >= 1
    assert "note-0" in {i for item in kept["items"] for i in item["ids"]}
    assert kept["latency"]["vault_ms"] is not None and kept["latency"]["total_ms"] > 0

    def completed() -> dict[str, Any] | None:
        now = read_receipt(router, secret, receipt_id).json()["receipt"]
        return now if now["usage"] is not None else None

    done = wait_until(completed, "the receipt completed with the provider's usage")
    assert done["usage"]["input_tokens"] == 11 and done["usage"]["output_tokens"]
    assert done["latency"]["forwarding_ms"] is not None


def test_forgetting_the_turns_question_drops_the_query_from_its_receipt(router: Router, key: tuple[str, str]) -> None:
    key_id, secret = key
    with httpx.Client(base_url=router.url, timeout=30, trust_env=False) as client:
        answer = client.post("/v1/chat/completions", json=body_of("openai", ["My locker number is 4417."]),
                             headers={"X-Memory-Key": secret})
        receipt_id = answer.headers["x-memory-receipt"]
        router.wait_stored(key_id, "My locker number is 4417.")
        assert read_receipt(router, secret, receipt_id).json()["receipt"]["query"] == "My locker number is 4417."
        forgot = client.post("/v1/memory/forget", json={"ids": [f"rt-{receipt_id}-u"]},
                             headers={"Authorization": f"Bearer {secret}"})
        assert forgot.json()["forgotten"] == [f"rt-{receipt_id}-u"]
    assert read_receipt(router, secret, receipt_id).json()["receipt"]["query"] is None


def test_a_secret_in_the_question_is_not_kept_in_the_receipt(router: Router, key: tuple[str, str]) -> None:
    _, secret = key
    question = "Is my key sk-proj-Xq3T9vLmW2pR8sKd4NzYb6HjA1cF5gEu7 still valid?"
    answer = httpx.post(f"{router.url}/v1/chat/completions", json=body_of("openai", [question], False),
                        headers={"X-Memory-Key": secret}, timeout=30, trust_env=False)
    kept = read_receipt(router, secret, answer.headers["x-memory-receipt"]).json()["receipt"]
    assert "sk-proj-Xq3T9vLmW2pR8sKd4NzYb6HjA1cF5gEu7" not in kept["query"] and "[redacted:" in kept["query"]


def test_memory_off_still_names_a_receipt_and_no_key_names_none(router: Router, key: tuple[str, str]) -> None:
    _, secret = key
    off = httpx.post(f"{router.url}/v1/chat/completions", json=body_of("openai", ["Hello."]),
                     headers={"X-Memory-Key": secret, "X-Memory-Mode": "off"}, timeout=30, trust_env=False)
    kept = read_receipt(router, secret, off.headers["x-memory-receipt"]).json()["receipt"]
    assert kept["status"] == "off" and kept["items"] == [] and kept["query"] is None


def test_memory_stored_before_the_gate_is_injected_redacted_and_counted(
    router: Router, key: tuple[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, secret = key
    cases = sample(gated(SECRETS), per_family=1)
    monkeypatch.setattr(write, "gated", lambda message, kinds, asked=None: message)  # as a version without the gate stored it
    remember(router, secret, [case.text for case in cases])
    monkeypatch.undo()
    answer = httpx.post(f"{router.url}/v1/chat/completions",
                        json=body_of("openai", ["What password, token, card or key did I give you?"]),
                        headers={"X-Memory-Key": secret}, timeout=30, trust_env=False)
    assert answer.status_code == 200 and int(answer.headers["x-memory-items"]) >= 1
    injected = system_text("openai", router.upstream.received[-1].json)
    assert "[redacted:" in injected and leaks(cases, injected) == []
    assert read_receipt(router, secret, answer.headers["x-memory-receipt"]).json()["receipt"]["redacted"] >= 1
