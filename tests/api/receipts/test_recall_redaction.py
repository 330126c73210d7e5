"""The secret gate at recall: text stored before a rule existed (here: stored with the gate taken
out through a test seam, as an old version stored it) comes back redacted from every read surface
of conversation memory (HTTP search, RPC, MCP, the export) and of the brain (search, recall), and
the search's receipt counts what the gate changed."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from memvault.core.answers import RECEIPT
from memvault.core.brain import commands, fact_input
from memvault.core.credentials.keys import create_key
from memvault.core.memory import write
from memvault.core.memory.operations import EXPORT, perform
from memvault.core.redaction import Redaction
from memvault.runtime import rpc
from memvault.runtime.local import close_local_deps

TESTS = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(TESTS))
sys.path.insert(0, str(TESTS / "api" / "mcp"))
sys.path.insert(0, str(TESTS / "api" / "brain"))

from brain_env import open_brain  # noqa: E402
from mcp_support import answer, mcp_environment, stdio_session  # noqa: E402

from secret_corpus import SECRETS, gated, leaks, sample  # noqa: E402

CASES = sample(gated(SECRETS), per_family=1)
QUERY = "my password token key secret card"


def stored_as_before_the_gate(monkeypatch: pytest.MonkeyPatch) -> None:
    """The test seam: writes skip the gate, as a version without today's rules did."""
    monkeypatch.setattr(write, "gated", lambda message, kinds, asked=None: message)


async def test_no_conversation_read_surface_hands_back_a_secret_stored_before_the_gate(
    make_deps: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    deps = make_deps(mcp_environment(tmp_path))
    key, secret = await create_key(deps.db, "old", deps.clock())
    stored_as_before_the_gate(monkeypatch)
    messages = [{"role": "user", "content": case.text, "id": f"m{n}", "metadata": {"note": case.text}}
                for n, case in enumerate(CASES)]
    messages[0]["model"] = CASES[1].text
    await rpc.save_memory(deps, secret, None, messages)
    monkeypatch.undo()
    mirrored = "\n".join(r["text"] for r in await deps.db.query("SELECT text FROM mirror_rows"))
    assert leaks(CASES, mirrored), "the seam should have stored the secrets as they were said"

    found = await rpc.search_memory(deps, secret, QUERY, 500)
    texts = "\n".join(item["text"] for item in found["items"])
    assert found["items"] and leaks(CASES, texts) == [] and "[redacted:" in texts
    assert found["metrics"]["redacted"] >= 1
    receipt = await rpc.invoke(deps, None, "search_memory", secret, QUERY, 500)
    view = await perform(deps, key, RECEIPT, {"id": receipt["receipt"]})
    assert view.receipt.redacted >= 1
    assert leaks(CASES, "\n".join(m.text or "" for m in view.memories)) == []

    exported = [record async for record in await perform(deps, key, EXPORT, {})]
    assert exported and leaks(CASES, repr(exported)) == []
    # A page of messages, pending and stored alike, with each message's model and metadata.
    # The sample is longer than a page holds: read every page.
    pages = [await rpc.get_memory(deps, secret, None, 500, offset) for offset in range(0, len(CASES), 500)]
    items = [item for page in pages for item in page["items"]]
    assert len(items) == len(CASES) and "[redacted:" in repr(pages) and leaks(CASES, repr(pages)) == []

    await close_local_deps(deps)
    async with stdio_session(tmp_path, "--key", secret) as session:
        called = await session.call_tool("memory_search", {"query": QUERY,
                                                           "budget_tokens": 5000})
    result = answer(called)
    assert result["receipt"] and "[redacted:" in repr(result) and leaks(CASES, repr(result)) == []


async def test_brain_search_and_recall_redact_facts_stored_before_the_gate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    brain = await open_brain(tmp_path)
    try:
        monkeypatch.setattr(fact_input, "redact", lambda text: Redaction(text, ()))
        facts = [{"content": case.text, "source": f"old{n}"} for n, case in enumerate(CASES)]
        for first in range(0, len(facts), 500):  # a write holds at most 500 facts
            await brain.write({"scope": "family", "facts": facts[first:first + 500]}, bands="off")
        monkeypatch.undo()
        stored = "\n".join(r["content"] for r in await brain.deps.db.query("SELECT content FROM memory"))
        assert leaks(CASES, stored), "the seam should have stored the secrets as they were written"
        searched = await brain.client.post("/v1/brain/facts/search", json={"query": QUERY, "limit": 50, "mode": "hybrid"},
                                           headers=brain.headers("writer"))
        assert searched.status_code == 200, searched.text
        results = searched.json()["results"]
        assert results and leaks(CASES, repr(results)) == []
        assert any(fact["redacted"] for fact in results)
        recalled = await brain.client.post("/v1/brain/recall", json={"query": QUERY, "budget": 8000},
                                           headers=brain.headers("writer"))
        assert recalled.status_code == 200, recalled.text
        assert "[redacted:" in recalled.text and leaks(CASES, recalled.text) == []
    finally:
        await brain.client.aclose()
        await close_local_deps(brain.deps)


async def test_no_brain_read_surface_hands_back_a_secret_stored_before_the_gate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    brain = await open_brain(tmp_path)
    cases = CASES[:6]
    try:
        monkeypatch.setattr(fact_input, "redact", lambda text: Redaction(text, ()))
        monkeypatch.setattr(commands, "redact", lambda text: Redaction(text, ()))
        long_body = "Setup notes for the home server. " * 40 + " ".join(case.text for case in cases)
        written = await brain.write({"scope": "family", "source": "old:notes", "facts": [
            {"content": cases[0].text}, {"content": long_body}]}, bands="off")
        short_id, long_id = written["ids"]
        skill = await brain.client.post("/v1/brain/skills", headers=brain.headers("writer"), json={
            "slug": "old-deploy", "scope": "family", "name": f"Deploy with {cases[1].secret}",
            "description": cases[2].text, "content": "\n".join(case.text for case in cases)})
        assert skill.status_code == 200, skill.text
        monkeypatch.undo()
        stored = "\n".join(r["content"] for r in await brain.deps.db.query("SELECT content FROM memory"))
        assert leaks(cases[:1], stored), "the seam should have stored the secrets as they were written"

        headers = brain.headers("writer")
        reads = {
            "body": await brain.client.get(f"/v1/brain/facts/{long_id}/body", headers=headers),
            "history": await brain.client.get(f"/v1/brain/facts/{short_id}/history", headers=headers),
            "export": await brain.client.get("/v1/brain/export", headers=headers),
            "pull": await brain.client.post("/v1/brain/sync", headers=headers,
                                            json={"direction": "pull", "source": "old:"}),
            "skill": await brain.client.get("/v1/brain/skills/old-deploy", headers=headers),
            "skills": await brain.client.get("/v1/brain/skills", headers=headers),
            # A proposal lists the stored facts and skills it may duplicate.
            "proposal": await brain.client.post("/v1/brain/skills/proposals", headers=headers, json={
                "title": "Deploy the home server", "scope": "family", "triggers": ["old-deploy", cases[0].text[:40]],
                "steps": ["Read the setup notes for the home server."], "source_trail": ["task:1"]}),
        }
        reads["proposals"] = await brain.client.get("/v1/brain/skills/proposals", headers=headers)
        for surface, answer in reads.items():
            assert answer.status_code in (200, 201), (surface, answer.text)
            assert leaks(cases, answer.text) == [], surface
            assert "[redacted:" in answer.text, surface
        history = reads["history"].json()["chain"]
        assert history[0]["redacted"], "a version the gate changed names the kinds it found"
    finally:
        await brain.client.aclose()
        await close_local_deps(brain.deps)
