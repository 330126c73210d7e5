"""Receipts of searches: every search names one, readable at once by the key that made it (404 to
any other), listed by day, holding ids, scores and token counts but no message text; forgetting,
clearing, purging and the nightly trim take from them what they should."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from memory_support import Memvault

from memvault.core.answers import SEARCH
from memvault.core.credentials.keys import create_key
from memvault.core.memory.operations import PURGE, perform
from memvault.core.operations.maintenance import run_maintenance
from memvault.core.receipts.commands import day_of
from memvault.runtime import rpc

DAY = 86400.0
WORDS = "harbour lantern copper meadow violin glacier pepper saddle orchid tunnel falcon ember quartz willow".split()


def notes(count: int, now: float, prefix: str = "n") -> list[dict[str, Any]]:
    """Messages about one topic (the garden), ~40 tokens each, an hour apart."""
    return [
        {"role": "user", "id": f"{prefix}{i}", "timestamp": now - DAY + i * 3600,
         "content": f"Garden note {i}: the {WORDS[i % len(WORDS)]} bed by the {WORDS[(i * 3) % len(WORDS)]} "
                    f"needs water and compost, and the {WORDS[(i * 5) % len(WORDS)]} roses need pruning soon."}
        for i in range(count)
    ]


async def store(mv: Memvault, messages: list[dict[str, Any]], session: str | None = None) -> None:
    body: dict[str, Any] = {"messages": messages, **({"session_id": session} if session else {})}
    response = await mv.client.post("/v1/memory", json=body, headers=mv.auth)
    assert response.status_code == 200, response.text


async def search(mv: Memvault, query: str, **extra: Any) -> httpx.Response:
    response = await mv.client.post("/v1/memory/search", json={"query": query, **extra}, headers=mv.auth)
    assert response.status_code == 200, response.text
    return response


async def receipt(mv: Memvault, receipt_id: str, auth: dict[str, str] | None = None) -> httpx.Response:
    return await mv.client.get(f"/v1/memory/receipts/{receipt_id}", headers=mv.auth if auth is None else auth)


async def test_a_search_names_its_receipt_which_says_what_was_returned_and_what_was_cut(memvault: Memvault) -> None:
    await store(memvault, notes(12, memvault.deps.clock()))
    response = await search(memvault, "which garden bed needs water?", budget_tokens=120)
    found = response.json()
    assert found["receipt"] and response.headers["x-memory-receipt"] == found["receipt"]
    assert "cut" not in found["metrics"]
    read = await receipt(memvault, found["receipt"])
    assert read.status_code == 200, read.text
    kept = read.json()["receipt"]
    assert kept["surface"] == "search" and kept["query"] == "which garden bed needs water?"
    assert kept["budget_tokens"] == 120 and kept["status"] == "ok"
    assert [item["ids"] for item in kept["items"]] == [item["source_ids"] for item in found["items"]]
    assert [item["score"] for item in kept["items"]] == [item["score"] for item in found["items"]]
    assert kept["tokens"] == found["tokens"] == sum(item["tokens"] for item in kept["items"])
    assert all(item["kind"] == "message" and item["vault"] == "core" for item in kept["items"])
    # Twelve notes do not fit 120 tokens: the ones ranked next are named, none of them returned.
    assert kept["cut"] and not {i for c in kept["cut"] for i in c["ids"]} & {i for r in kept["items"] for i in r["ids"]}
    assert kept["latency"]["embedding_ms"] is not None and kept["latency"]["ranking_ms"] is not None
    assert kept["latency"]["forwarding_ms"] is None and kept["usage"] is None
    # Ids only: the receipt keeps no message text, the view resolves it now.
    stored = await memvault.deps.db.query("SELECT * FROM receipts")
    assert "compost" not in repr(stored) and "compost" not in repr(await memvault.deps.db.query("SELECT * FROM receipt_items"))
    memories = {m["id"]: m for m in read.json()["memories"]}
    assert set(memories) == {i for item in [*kept["items"], *kept["cut"]] for i in item["ids"]}
    assert all(m["state"] == "kept" and "compost" in m["text"] for m in memories.values())


async def test_only_the_key_that_made_a_receipt_reads_it(memvault: Memvault) -> None:
    await store(memvault, notes(3, memvault.deps.clock()))
    receipt_id = (await search(memvault, "garden")).json()["receipt"]
    _, other = await create_key(memvault.deps.db, "other", memvault.deps.clock())
    assert (await receipt(memvault, receipt_id, {"Authorization": f"Bearer {other}"})).status_code == 404
    assert (await receipt(memvault, "0" * 32)).status_code == 404
    assert (await receipt(memvault, receipt_id, {})).status_code == 401
    listed = await memvault.client.get("/v1/memory/receipts", headers={"Authorization": f"Bearer {other}"})
    assert listed.json()["receipts"] == []


async def test_receipts_are_listed_by_day_newest_first(memvault: Memvault) -> None:
    await store(memvault, notes(3, memvault.deps.clock()))
    first = (await search(memvault, "garden roses")).json()["receipt"]
    second = (await search(memvault, "compost")).json()["receipt"]
    today = day_of(memvault.deps.clock())
    listed = await memvault.client.get("/v1/memory/receipts", params={"day": today}, headers=memvault.auth)
    assert listed.status_code == 200, listed.text
    assert [r["id"] for r in listed.json()["receipts"]] == [second, first]
    default = await memvault.client.get("/v1/memory/receipts", params={"limit": "1"}, headers=memvault.auth)
    assert default.json()["day"] == today and [r["id"] for r in default.json()["receipts"]] == [second]
    other = await memvault.client.get("/v1/memory/receipts", params={"day": "2001-02-03"}, headers=memvault.auth)
    assert other.json()["receipts"] == []
    for bad in ("2026-13-01", "yesterday", "2026-1-5", "2026-01-05T00:00"):
        refused = await memvault.client.get("/v1/memory/receipts", params={"day": bad}, headers=memvault.auth)
        assert refused.status_code == 422 and "day" in refused.json()["error"]["message"], bad
    assert (await memvault.client.get("/v1/memory/receipts", params={"limit": "0"}, headers=memvault.auth)).status_code == 422


async def test_forgetting_a_message_takes_its_id_out_of_every_receipt(memvault: Memvault) -> None:
    await store(memvault, notes(4, memvault.deps.clock()))
    receipt_id = (await search(memvault, "garden bed water", budget_tokens=2000)).json()["receipt"]
    named = [i for item in (await receipt(memvault, receipt_id)).json()["receipt"]["items"] for i in item["ids"]]
    assert "n1" in named
    forgot = await memvault.client.post("/v1/memory/forget", json={"ids": ["n1"]}, headers=memvault.auth)
    assert forgot.json()["forgotten"] == ["n1"]
    view = (await receipt(memvault, receipt_id)).json()
    ids = [i for item in view["receipt"]["items"] for i in item["ids"]]
    assert "n1" not in ids and sorted(ids) == sorted(i for i in named if i != "n1")
    assert sum(item["forgotten"] for item in view["receipt"]["items"]) == 1
    assert "n1" not in {m["id"] for m in view["memories"]}
    assert await memvault.deps.db.query("SELECT 1 FROM receipt_items WHERE ref = 'n1'") == []


async def test_a_receipt_written_after_a_forget_keeps_no_forgotten_id(memvault: Memvault, monkeypatch: Any) -> None:
    await store(memvault, notes(4, memvault.deps.clock()))
    db, batch = memvault.deps.db, memvault.deps.db.batch
    held, release = asyncio.Event(), asyncio.Event()

    async def held_receipts(statements: Any) -> None:
        if statements and str(statements[0][0]).startswith("INSERT INTO receipts"):
            held.set()
            await release.wait()
        await batch(statements)

    monkeypatch.setattr(db, "batch", held_receipts)
    searching = asyncio.ensure_future(search(memvault, "garden bed water", budget_tokens=2000))
    await held.wait()  # the search has recalled n1; its receipt is not written yet
    forgot = await memvault.client.post("/v1/memory/forget", json={"ids": ["n1"]}, headers=memvault.auth)
    assert forgot.json()["forgotten"] == ["n1"]
    release.set()
    view = (await receipt(memvault, (await searching).json()["receipt"])).json()
    ids = [i for item in view["receipt"]["items"] for i in item["ids"]]
    assert ids and "n1" not in ids
    assert sum(item["forgotten"] for item in view["receipt"]["items"]) == 1
    assert await db.query("SELECT 1 FROM receipt_items WHERE ref = 'n1'") == []


async def test_clearing_takes_the_receipts_with_it(memvault: Memvault) -> None:
    await store(memvault, notes(2, memvault.deps.clock()))
    await store(memvault, notes(2, memvault.deps.clock(), prefix="s"), session="trip")
    core = (await search(memvault, "garden")).json()["receipt"]
    in_session = (await search(memvault, "garden", session_id="trip")).json()["receipt"]
    cleared = await memvault.client.delete("/v1/memory", params={"session_id": "trip"}, headers=memvault.auth)
    assert cleared.status_code == 200
    assert (await receipt(memvault, in_session)).status_code == 404
    assert (await receipt(memvault, core)).status_code == 200
    assert (await memvault.client.delete("/v1/memory", headers=memvault.auth)).status_code == 200
    assert (await receipt(memvault, core)).status_code == 404
    assert await memvault.deps.db.query("SELECT 1 FROM receipt_items") == []


async def test_purge_and_the_nightly_run_delete_old_receipts(make_deps: Any) -> None:
    now = [1_800_000_000.0]
    deps = make_deps({"MEMVAULT_RECEIPT_DAYS": "30"}, clock=lambda: now[0])
    key, secret = await create_key(deps.db, "k", now[0])
    await rpc.save_memory(deps, secret, None, notes(2, now[0]))
    old = (await perform(deps, key, SEARCH, {"query": "garden"})).receipt
    now[0] += 20 * DAY
    recent = (await perform(deps, key, SEARCH, {"query": "roses"})).receipt
    now[0] += 15 * DAY
    report = await run_maintenance(deps)
    assert report.receipts_trimmed == 1 and report.ok, report.errors
    rows = await deps.db.query("SELECT id FROM receipts")
    assert [r["id"] for r in rows] == [recent]
    assert await deps.db.query("SELECT 1 FROM receipt_items WHERE receipt_id = ?", (old,)) == []
    newest = (await rpc.search_memory(deps, secret, "garden"))["receipt"]
    await perform(deps, key, PURGE, {"older_than": now[0] - DAY})
    assert [r["id"] for r in await deps.db.query("SELECT id FROM receipts")] == [newest]
