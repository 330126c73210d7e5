"""A new user's first memories are found by meaning: the served product (default settings, the real
local embedding model, the HTTP API) on the small-vault paraphrase set (tests/data/recall/
paraphrase.jsonl: each fact said once in a short conversation, so it is still in the pending
buffer, and asked in words it does not use), and one fact asked by meaning through the search
route, through the memory router's injected context, and from the mirror when the vault cannot
answer."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any, ClassVar

import httpx
import pytest

from memvault.api.app import create_app
from memvault.core.credentials.keys import create_key
from memvault.core.deps import Deps
from memvault.core.ranking import query_terms
from memvault.core.settings import load_settings
from memvault.runtime.local import build_local_deps, close_local_deps

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from test_vault_and_mirror import BrokenVaults

from local_http import local_http_server

CASES = [json.loads(line) for line in
         (Path(__file__).resolve().parents[2] / "data" / "recall" / "paraphrase.jsonl").read_text().splitlines()
         if line.strip()]
NOW = 1_800_000_000.0


def stems(text: str) -> set[str]:
    """Content words, each cut to five letters, so an inflection counts as the same word."""
    return {part[:5] for term in query_terms(text) for part in term.replace("'s", "").replace("-", " ").split()}


def test_the_case_set_asks_every_fact_in_other_words() -> None:
    assert len(CASES) >= 30 and len({case["domain"] for case in CASES}) >= 8
    for case in CASES:
        said = [text for _, text in case["conversation"]]
        assert said.count(case["fact"]) == 1, case["fact"]
        assert not stems(case["fact"]) & stems(case["question"]), case["question"]


class Upstream(BaseHTTPRequestHandler):
    """An OpenAI-compatible provider that answers every chat and keeps what it was sent."""

    received: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        Upstream.received.append(json.loads(self.rfile.read(int(self.headers["content-length"]))))
        body = json.dumps({
            "id": "chatcmpl-1", "object": "chat.completion", "created": int(NOW), "model": "test-model",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "Sure."}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12},
        }).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture(scope="module")
def upstream() -> Iterator[str]:
    with local_http_server(Upstream) as url:
        yield url


@pytest.fixture
async def served(tmp_path: Path, upstream: str) -> AsyncIterator[tuple[Deps, httpx.AsyncClient]]:
    # The product's defaults, as `memvault serve` reads them: only where data lives and the upstream.
    deps = build_local_deps(load_settings({"MEMVAULT_DATA_DIR": str(tmp_path), "MEMVAULT_OPENAI_BASE_URL": upstream}))
    transport = httpx.ASGITransport(app=create_app(deps))
    async with httpx.AsyncClient(transport=transport, base_url="http://memvault.test", timeout=60) as client:
        yield deps, client
    await close_local_deps(deps)


async def new_key(deps: Deps) -> dict[str, str]:
    _, secret = await create_key(deps.db, "paraphrase", NOW)
    return {"Authorization": f"Bearer {secret}"}


async def test_at_least_nine_in_ten_paraphrased_facts_are_among_the_first_three_results(
    served: tuple[Deps, httpx.AsyncClient],
) -> None:
    deps, client = served
    assert deps.embedder.model_id.startswith("all-MiniLM")  # the real model, not the test embedder
    missed = []
    for case in CASES:
        auth = await new_key(deps)
        turns = [{"role": role, "content": text} for role, text in case["conversation"]]
        stored = await client.post("/v1/memory", json={"messages": turns}, headers=auth)
        assert stored.status_code == 200 and stored.json()["chunks_stored"] == 0  # all still pending
        found = await client.post("/v1/memory/search", json={"query": case["question"]}, headers=auth)
        assert found.status_code == 200
        if case["fact"] not in [item["text"] for item in found.json()["items"][:3]]:
            missed.append(case["question"])
    assert len(missed) <= len(CASES) // 10, missed


async def test_one_fact_is_found_by_meaning_through_search_and_the_router(
    served: tuple[Deps, httpx.AsyncClient],
) -> None:
    deps, client = served
    auth = await new_key(deps)
    stored = await client.post("/v1/memory", json={"messages": [{"role": "user", "content": "I am allergic to peanuts."}]},
                               headers=auth)
    assert stored.status_code == 200 and stored.json()["tokens_buffered"] > 0
    found = (await client.post("/v1/memory/search", json={"query": "food allergy"}, headers=auth)).json()["items"]
    assert [(item["text"], item["origin"]) for item in found] == [("I am allergic to peanuts.", "buffer")]

    Upstream.received.clear()
    chat = {"model": "test-model", "messages": [{"role": "user", "content": "Any nuts I should stay away from?"}]}
    memory_key = auth["Authorization"].removeprefix("Bearer ")
    answer = await client.post("/v1/chat/completions", json=chat, headers={
        "Authorization": "Bearer sk-provider", "X-Memory-Key": memory_key, "X-Memory-Store": "false"})
    assert answer.status_code == 200 and answer.headers["x-memory-status"] == "ok"
    [sent] = Upstream.received
    assert sent["messages"][0]["role"] == "system" and "I am allergic to peanuts." in sent["messages"][0]["content"]


async def test_the_mirror_finds_a_pending_message_by_meaning_when_the_vault_cannot_answer(
    served: tuple[Deps, httpx.AsyncClient],
) -> None:
    deps, client = served
    auth = await new_key(deps)
    turns = [{"role": "user", "content": text} for text in ("I am allergic to peanuts.", "We repainted the shed in May.")]
    stored = await client.post("/v1/memory", json={"messages": turns}, headers=auth)
    assert stored.status_code == 200 and stored.json()["mirrored"] is True
    healthy, deps.vaults = deps.vaults, BrokenVaults()
    try:
        found = (await client.post("/v1/memory/search", json={"query": "food allergy"}, headers=auth)).json()
    finally:
        deps.vaults = healthy
    assert {v["winner"] for v in found["metrics"]["vaults"].values()} == {"mirror"}
    assert (found["items"][0]["text"], found["items"][0]["origin"]) == ("I am allergic to peanuts.", "buffer")
