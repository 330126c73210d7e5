"""Retiring a fact by hand (`POST /v1/brain/facts/{id}/retire`): superseded by nothing, never
deleted, the reason in its history; writers only, within their walls; twice is a 409; nothing else
changes. The same operation over RPC and MCP (the Python client's is in tests/api/client)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from brain_env import Brain, brain_fixture, token  # noqa: F401
from mcp import Client

from memvault.api.mcp.tools import mcp_server
from memvault.core.credentials.callers import CallerTokens
from memvault.core.errors import Conflict, Forbidden
from memvault.runtime import rpc

DAY = 86_400.0
STRIPE_KEY = "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"  # split so the repository holds no key-shaped literal


async def _write(brain: Brain, content: str, scope: str = "business", source: str = "notes") -> str:
    written = await brain.write({"content": content, "scope": scope, "source": source}, bands="off")
    fact_id: str = written["ids"][0]
    return fact_id


async def _retire(brain: Brain, fact_id: str, body: Any, as_: str = "writer", expect: int = 200) -> dict[str, Any]:
    response = await brain.client.post(f"/v1/brain/facts/{fact_id}/retire", json=body, headers=brain.headers(as_))
    assert response.status_code == expect, response.text
    answer: dict[str, Any] = response.json()
    return answer


async def _search(brain: Brain, query: str, as_of: float | None = None, as_: str = "writer") -> list[str]:
    body: dict[str, Any] = {"query": query, **({} if as_of is None else {"as_of": as_of})}
    response = await brain.client.post("/v1/brain/facts/search", json=body, headers=brain.headers(as_))
    assert response.status_code == 200, response.text
    return [row["id"] for row in response.json()["results"]]


async def _history(brain: Brain, fact_id: str, as_: str = "writer") -> list[dict[str, Any]]:
    response = await brain.get(f"/v1/brain/facts/{fact_id}/history", as_)
    assert response.status_code == 200, response.text
    chain: list[dict[str, Any]] = response.json()["chain"]
    return chain


async def _state(brain: Brain) -> list[dict[str, Any]]:
    tables = ["memory", "proposals", "skills", "fact_links", "fact_retirements"]
    return [row for table in tables for row in await brain.deps.db.query(f"SELECT * FROM {table} ORDER BY 1")]


async def test_a_retired_fact_leaves_current_reads_and_stays_in_the_past_with_its_reason(brain: Brain) -> None:
    fact = await _write(brain, "The lease of the Harbour Street unit renews in May.")
    other = await _write(brain, "The Harbour Street alarm code changes every quarter.")
    brain.clock.advance(2 * DAY)
    retired_at = brain.clock.now
    answer = await _retire(brain, fact, {"reason": "The lease ended in March."})
    assert answer == {"id": fact, "status": "retired", "retirement": {
        "reason": "The lease ended in March.", "retired_at": retired_at, "retired_by": "writer", "redacted": []}}
    assert await _search(brain, "Harbour") == [other]
    assert sorted(await _search(brain, "Harbour", as_of=retired_at - DAY)) == sorted([fact, other])
    (version,) = await _history(brain, fact)
    assert version["current"] is False and version["superseded_at"] == retired_at and version["superseded_by"] is None
    assert version["retirement"] == answer["retirement"]
    assert (await _history(brain, other))[0].get("retirement") is None, "only the retired fact carries one"
    body = await brain.get(f"/v1/brain/facts/{fact}/body", "writer")
    assert body.status_code == 200 and "renews in May" in body.json()["body"], "never deleted"


async def test_retiring_changes_nothing_but_the_fact_and_logs_one_event_without_the_reason(brain: Brain) -> None:
    fact = await _write(brain, "The boiler is serviced by Alder Heating.")
    kept = await _write(brain, "The boiler was installed in 2019.", scope="family")
    before = {row["id"]: row for row in await brain.deps.db.query("SELECT * FROM memory")}
    events = await brain.events()
    brain.clock.advance(60)
    await _retire(brain, fact, {"reason": "We switched to Birch Boilers."})
    after = {row["id"]: row for row in await brain.deps.db.query("SELECT * FROM memory")}
    assert after[kept] == before[kept]
    changed = {name for name in after[fact] if after[fact][name] != before[fact][name]}
    assert changed <= {"superseded_at", "updated_at", "vectors_retired_at", "embed_id"}
    assert {"superseded_at", "updated_at"} <= changed
    assert await brain.events() == events + 1
    (logged,) = await brain.deps.db.query("SELECT action, memory_id, detail FROM event_log ORDER BY seq DESC LIMIT 1")
    assert (logged["action"], logged["memory_id"]) == ("retired", fact)
    assert "Birch" not in logged["detail"], "the event log holds no text"


async def test_retiring_twice_or_a_superseded_fact_is_a_conflict_that_changes_nothing(brain: Brain) -> None:
    fact = await _write(brain, "Parking permit 4471 is valid until June.")
    await _retire(brain, fact, {"reason": "It expired."})
    state = await _state(brain)
    again = await _retire(brain, fact, {"reason": "Another reason."}, expect=409)
    assert again["error"]["message"] == f"fact {fact} is already retired"
    assert await _state(brain) == state
    old = await _write(brain, "The office opens at 8.", source="hours")
    new = (await brain.write({"content": "The office opens at 9.", "source": "hours2", "scope": "business",
                              "supersedes": old}, bands="off"))["ids"][0]
    refused = await _retire(brain, old, {"reason": "stale"}, expect=409)
    assert refused["error"]["message"] == f"fact {old} is already superseded by {new}"
    assert (await _history(brain, old))[0].get("retirement") is None


async def test_a_fact_superseded_past_the_wall_is_refused_as_one_retired(brain: Brain) -> None:
    """Whether a fact's successor lives behind the wall or it has none, the refusal reads the same."""
    retired = await _write(brain, "The boat is moored at pier 3.", source="harbour")
    await _retire(brain, retired, {"reason": "sold"})
    crossed = await _write(brain, "The van is parked in bay 2.", source="yard")
    await brain.write({"content": "The van is parked in bay 5.", "source": "yard", "scope": "family",
                       "supersedes": crossed}, bands="off")
    answers = [await _retire(brain, fid, {"reason": "again"}, as_="biz-writer", expect=409) for fid in (retired, crossed)]
    assert [a["error"]["message"] for a in answers] == [f"fact {fid} is already retired" for fid in (retired, crossed)]


async def test_two_racing_retirements_leave_one_reason_and_one_conflict(brain: Brain) -> None:
    fact = await _write(brain, "The spare key is with the neighbour at number 12.")
    answers = await asyncio.gather(*(brain.client.post(
        f"/v1/brain/facts/{fact}/retire", json={"reason": reason}, headers=brain.headers("writer"))
        for reason in ("first reason", "second reason")))
    assert sorted(r.status_code for r in answers) == [200, 409]
    winner = next(r.json() for r in answers if r.status_code == 200)
    (version,) = await _history(brain, fact)
    assert version["retirement"]["reason"] == winner["retirement"]["reason"]
    assert len(await brain.deps.db.query("SELECT * FROM event_log WHERE action = 'retired'")) == 1


@pytest.mark.parametrize("who", ["business", "reader-all"])
async def test_a_reader_is_refused_and_nothing_changes(brain: Brain, who: str) -> None:
    fact = await _write(brain, "The courier account is ACME-2231.")
    state = await _state(brain)
    refused = await _retire(brain, fact, {"reason": "closed"}, as_=who, expect=403)
    assert "may read but not write" in refused["error"]["message"]
    assert await _state(brain) == state


async def test_a_fact_behind_the_wall_is_as_absent_as_one_that_never_existed(brain: Brain) -> None:
    family = await _write(brain, "Grandmother's piano is tuned each spring.", scope="family")
    state = await _state(brain)
    walled = await _retire(brain, family, {"reason": "sold"}, as_="biz-writer", expect=404)
    absent = await _retire(brain, "mem-0000000000000000", {"reason": "sold"}, as_="biz-writer", expect=404)
    assert walled == absent
    assert await _state(brain) == state
    assert await _search(brain, "piano") == [family]


@pytest.mark.parametrize(("fact_id", "body", "names"), [
    ("prop-0000000000000000", {"reason": "x"}, "id must be a fact id"),
    ("mem-" + "0" * 80, {"reason": "x"}, "id must be a fact id"),
    (None, {}, "reason is required"),
    (None, {"reason": "   "}, "reason"),
    (None, {"reason": 7}, "reason"),
    (None, {"reason": "x" * 2001}, "reason"),
    (None, {"reason": "x", "successor": "mem-1"}, "unknown field: successor"),
    (None, {"reason": "x", "id": "mem-0000000000000001"}, "given twice"),
    (None, ["reason"], "must be a JSON object"),
])
async def test_bad_input_is_a_422_naming_the_field_and_changes_nothing(
        brain: Brain, fact_id: str | None, body: Any, names: str) -> None:
    fact = await _write(brain, "The van's MOT is due in October.")
    state = await _state(brain)
    refused = await _retire(brain, fact_id or fact, body, expect=422)
    assert names in refused["error"]["message"]
    assert await _state(brain) == state


async def test_a_secret_in_the_reason_is_redacted_before_it_is_stored(brain: Brain) -> None:
    fact = await _write(brain, "Payments go through the old Stripe account.")
    answer = await _retire(brain, fact, {"reason": f"Moved to the new account, key {STRIPE_KEY}"})
    assert STRIPE_KEY not in answer["retirement"]["reason"] and answer["retirement"]["redacted"]
    stored = await brain.deps.db.query("SELECT reason FROM fact_retirements")
    assert STRIPE_KEY not in stored[0]["reason"]
    assert (await _history(brain, fact))[0]["retirement"]["redacted"] == answer["retirement"]["redacted"]


async def test_a_revived_fact_is_current_again_without_the_old_reason_and_can_be_retired_again(brain: Brain) -> None:
    fact = await _write(brain, "The studio rent is 900 a month.")
    brain.clock.advance(60)
    await _retire(brain, fact, {"reason": "moved out"})
    brain.clock.advance(60)
    assert await _write(brain, "The studio rent is 900 a month.") == fact
    (version,) = await _history(brain, fact)
    assert version["current"] is True and "retirement" not in version
    brain.clock.advance(60)
    again = await _retire(brain, fact, {"reason": "moved out for good"})
    assert (await _history(brain, fact))[0]["retirement"] == again["retirement"]


async def test_a_skill_mirror_is_refused_its_skill_keeps_it(brain: Brain) -> None:
    response = await brain.client.post("/v1/brain/skills", headers=brain.headers("writer"),
                                       json={"slug": "pay-invoice", "scope": "business", "content": "1. Pay it."})
    assert response.status_code == 200, response.text
    (mirror,) = await brain.deps.db.query("SELECT id FROM memory WHERE entry_type = 'skill'")
    refused = await _retire(brain, mirror["id"], {"reason": "old"}, expect=409)
    assert "mirrors a skill" in refused["error"]["message"]


async def test_rpc_and_mcp_retire_alike(brain: Brain) -> None:
    by_rpc = await _write(brain, "Locker 14 holds the winter tyres.")
    by_mcp = await _write(brain, "Locker 15 holds the camping gear.")
    retired = await rpc.brain_retire(brain.deps, token("writer"), by_rpc, "emptied")
    assert retired["retirement"]["reason"] == "emptied"
    with pytest.raises(Conflict):
        await rpc.brain_retire(brain.deps, token("writer"), by_rpc, "emptied")
    with pytest.raises(Forbidden):
        await rpc.brain_retire(brain.deps, token("reader-all"), by_mcp, "emptied")
    server = mcp_server(brain.deps, lambda _ctx: CallerTokens(brain_token=token("writer")))
    async with Client(server) as mcp:
        result = await mcp.call_tool("brain_retire", {"id": by_mcp, "reason": "emptied"})
        assert not result.is_error and isinstance(result.structured_content, dict)
        assert result.structured_content["status"] == "retired"
        twice = await mcp.call_tool("brain_retire", {"id": by_mcp, "reason": "emptied"})
        assert twice.is_error
    assert await _search(brain, "Locker") == []

