"""Skill proposals over HTTP: proposing stores a pending proposal with what it may duplicate and
registers nothing; a writer confirms (a new slug, or the next version of a candidate) or rejects it
once; walls, the secret gate and size limits hold on every field; a confirm never overwrites a
skill that changed after the proposal was made."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import httpx
from brain_env import Brain, brain_fixture  # noqa: F401

PROPOSALS = "/v1/brain/skills/proposals"
PROPOSAL: dict[str, Any] = {
    "title": "Renew the car insurance",
    "scope": "family",
    "triggers": ["car insurance renewal", "insurance letter arrived"],
    "steps": ["Compare the renewal quote with last year's.", "Ask two other insurers for a quote.",
              "Renew or switch before the due date."],
    "source_trail": ["task:2291", "session:kitchen-tablet"],
}
STRIPE_KEY = "sk_live_4eC39HqLyjWDarjtT1zdp7dc"


async def _post(brain: Brain, path: str, body: object, as_: str = "writer") -> httpx.Response:
    return await brain.client.post(path, json=body, headers=brain.headers(as_))


async def _propose(brain: Brain, body: dict[str, Any] | None = None, as_: str = "writer") -> dict[str, Any]:
    response = await _post(brain, PROPOSALS, body or PROPOSAL, as_)
    assert response.status_code == 201, response.text
    proposal: dict[str, Any] = response.json()["proposal"]
    return proposal


async def _register(brain: Brain, body: dict[str, Any]) -> dict[str, Any]:
    response = await _post(brain, "/v1/brain/skills", body)
    assert response.status_code == 200, response.text
    registered: dict[str, Any] = response.json()
    return registered


async def _skill_rows(brain: Brain) -> list[dict[str, Any]]:
    return await brain.deps.db.query("SELECT slug, scope, version, superseded_at FROM skills ORDER BY slug, version")


async def test_a_proposal_is_stored_pending_with_its_candidates_and_registers_nothing(brain: Brain) -> None:
    await _register(brain, {"slug": "renew-the-car-insurance-eu", "scope": "family", "name": "EU car insurance",
                             "content": "1. Check the green card.\n2. Renew online."})
    await brain.write({"content": "The car insurance renewal quote arrives every March; compare it with other "
                                  "insurers.", "scope": "family", "source": "notes:car"})
    before = await _skill_rows(brain)
    proposal = await _propose(brain)
    assert proposal["status"] == "pending" and proposal["slug"] == "renew-the-car-insurance"
    assert proposal["steps"] == PROPOSAL["steps"] and proposal["source_trail"] == PROPOSAL["source_trail"]
    assert proposal["id"].startswith("sprop-") and proposal["created_by"] == "writer"
    kinds = {(c["kind"], c.get("slug") or c["id"]): c for c in proposal["candidates"]}
    family = kinds[("skill", "renew-the-car-insurance-eu")]
    assert family["match"] == "slug" and family["version"] == 1 and family["title"] == "EU car insurance"
    fact = next(c for c in proposal["candidates"] if c["kind"] == "fact")
    assert fact["match"] == "text" and "renewal quote" in fact["content"] and fact["score"] > 0
    assert await _skill_rows(brain) == before
    listed = (await brain.get(PROPOSALS, "family")).json()["proposals"]
    assert [p["id"] for p in listed] == [proposal["id"]] and listed[0]["candidates"] == proposal["candidates"]
    # Made again, the same proposal is the stored one.
    assert (await _propose(brain))["id"] == proposal["id"]
    assert len((await brain.get(PROPOSALS, "writer", status="all")).json()["proposals"]) == 1


async def test_confirm_registers_the_skill_once_and_a_second_decision_is_409(brain: Brain) -> None:
    proposal = await _propose(brain)
    confirm = f"{PROPOSALS}/{proposal['id']}/confirm"
    confirmed = await _post(brain, confirm, {})
    assert confirmed.status_code == 200, confirmed.text
    body = confirmed.json()
    assert body["status"] == "confirmed" and body["registration"] == "registered"
    assert body["skill"]["slug"] == "renew-the-car-insurance" and body["skill"]["version"] == 1
    skill = (await brain.get("/v1/brain/skills/renew-the-car-insurance", "family")).json()["skill"]
    assert skill["name"] == PROPOSAL["title"] and "2. Ask two other insurers" in skill["content"]
    assert "car insurance renewal" in skill["description"]
    for again in (confirm, f"{PROPOSALS}/{proposal['id']}/reject"):
        refused = await _post(brain, again, {})
        assert refused.status_code == 409 and "already confirmed" in refused.text
    assert (await brain.get(PROPOSALS, "writer")).json()["proposals"] == []
    done = (await brain.get(PROPOSALS, "writer", status="confirmed")).json()["proposals"]
    assert done[0]["skill_id"] == skill["id"] and done[0]["decided_by"] == "writer"
    found = (await _post(brain, "/v1/brain/facts/search", {"query": "insurers quote", "entry_type": "skill"})).json()
    assert [f["source"] for f in found["results"]] == ["skill:family/renew-the-car-insurance"]


async def test_confirm_as_a_new_version_of_a_candidate_supersedes_it_and_keeps_the_old_one(brain: Brain) -> None:
    old = await _register(brain, {"slug": "car-insurance", "scope": "family", "content": "1. Renew."})
    brain.clock.advance(100)
    proposal = await _propose(brain, {**PROPOSAL, "slug": "car-insurance-renewal"})
    assert [c["slug"] for c in proposal["candidates"] if c["kind"] == "skill"] == ["car-insurance"]
    unknown = await _post(brain, f"{PROPOSALS}/{proposal['id']}/confirm", {"version_of": "not-a-candidate"})
    assert unknown.status_code == 422 and "car-insurance" in unknown.text
    brain.clock.advance(100)
    body = (await _post(brain, f"{PROPOSALS}/{proposal['id']}/confirm", {"version_of": "car-insurance"})).json()
    assert body["registration"] == "updated" and body["skill"]["version"] == 2
    assert body["skill"]["slug"] == "car-insurance"
    current = (await brain.get("/v1/brain/skills/car-insurance", "family")).json()["skill"]
    assert current["version"] == 2 and "Ask two other insurers" in current["content"]
    then = old["skill"]["created_at"] + 50
    past = (await brain.get("/v1/brain/skills/car-insurance", "family", as_of=then)).json()["skill"]
    assert past["version"] == 1 and past["content"] == "1. Renew." and past["superseded_at"] is not None
    listed = (await brain.get("/v1/brain/skills", "family", as_of=then)).json()["skills"]
    assert [(s["slug"], s["version"]) for s in listed] == [("car-insurance", 1)]
    assert [(r["version"], r["superseded_at"] is None) for r in await _skill_rows(brain)] == [(1, False), (2, True)]


async def test_re_registering_is_idempotent_and_a_change_bumps_the_version(brain: Brain) -> None:
    skill = {"slug": "weekly-review", "scope": "business", "content": "1. Inbox zero"}
    first = await _register(brain, skill)
    brain.clock.advance(10)
    again = await _register(brain, skill)
    assert again["status"] == "unchanged" and again["skill"]["id"] == first["skill"]["id"]
    brain.clock.advance(10)
    bumped = await _register(brain, {**skill, "content": "1. Inbox zero\n2. Plan the week"})
    assert bumped["status"] == "updated" and bumped["skill"]["version"] == 2
    at_first = first["skill"]["created_at"]
    past = (await brain.get("/v1/brain/skills/weekly-review", "business", as_of=at_first)).json()["skill"]
    assert past["version"] == 1
    before = (await brain.get("/v1/brain/skills/weekly-review", "business", as_of=at_first - 1))
    assert before.status_code == 404


async def test_confirm_refuses_a_candidate_that_changed_since_and_a_slug_taken_since(brain: Brain) -> None:
    await _register(brain, {"slug": "car-insurance", "scope": "family", "content": "1. Renew."})
    proposal = await _propose(brain, {**PROPOSAL, "slug": "car-insurance-renewal"})
    await _register(brain, {"slug": "car-insurance", "scope": "family", "content": "1. Renew early."})
    changed = await _post(brain, f"{PROPOSALS}/{proposal['id']}/confirm", {"version_of": "car-insurance"})
    assert changed.status_code == 409 and "version 2" in changed.text
    await _register(brain, {"slug": "car-insurance-renewal", "scope": "family", "content": "1. Someone else's."})
    taken = await _post(brain, f"{PROPOSALS}/{proposal['id']}/confirm", {})
    assert taken.status_code == 409 and "version_of" in taken.text
    assert (await brain.get(PROPOSALS, "family")).json()["proposals"][0]["status"] == "pending"
    assert len(await _skill_rows(brain)) == 3


async def test_concurrent_confirms_of_one_proposal_register_it_once(brain: Brain) -> None:
    proposal = await _propose(brain)
    confirm = f"{PROPOSALS}/{proposal['id']}/confirm"
    answers = await asyncio.gather(*(_post(brain, confirm, {}) for _ in range(6)),
                                   _post(brain, f"{PROPOSALS}/{proposal['id']}/reject", {}))
    codes = sorted(response.status_code for response in answers)
    assert codes.count(200) == 1 and set(codes) == {200, 409}, [r.text for r in answers]
    rows = await _skill_rows(brain)
    winner = next(r for r in answers if r.status_code == 200).json()
    assert len(rows) == (1 if winner["status"] == "confirmed" else 0)


async def test_readers_and_writers_of_other_scopes(brain: Brain) -> None:
    refused = await _post(brain, PROPOSALS, PROPOSAL, as_="family")
    assert refused.status_code == 403
    outside = await _post(brain, PROPOSALS, {**PROPOSAL, "scope": "family"}, as_="biz-writer")
    assert outside.status_code == 403
    proposal = await _propose(brain)
    for who in ("biz-writer", "business"):
        assert (await brain.get(PROPOSALS, who)).json()["proposals"] == []
    for action in ("confirm", "reject"):
        walled = await _post(brain, f"{PROPOSALS}/{proposal['id']}/{action}", {}, as_="biz-writer")
        assert walled.status_code == 404 and walled.text == (
            await _post(brain, f"{PROPOSALS}/sprop-0000000000000000/{action}", {}, as_="biz-writer")).text
        assert (await _post(brain, f"{PROPOSALS}/{proposal['id']}/{action}", {}, as_="family")).status_code == 403
    assert (await brain.get(PROPOSALS, "family")).json()["proposals"][0]["status"] == "pending"


async def test_a_reader_sees_only_the_candidates_inside_its_own_walls(brain: Brain) -> None:
    await _register(brain, {"slug": "renew-the-car-insurance", "scope": "business", "content": "1. Fleet cover."})
    proposal = await _propose(brain)
    assert any(c["scope"] == "business" for c in proposal["candidates"])
    seen = (await brain.get(PROPOSALS, "family")).json()["proposals"][0]["candidates"]
    assert all(c["scope"] == "family" for c in seen)
    version_of = await _post(brain, f"{PROPOSALS}/{proposal['id']}/confirm", {"version_of": "renew-the-car-insurance"},
                             as_="family+shared-writer")
    assert version_of.status_code == 422


async def test_secrets_in_text_fields_are_redacted_and_in_identifiers_refused(brain: Brain) -> None:
    body = {**PROPOSAL, "title": f"Rotate {STRIPE_KEY}", "triggers": [f"key {STRIPE_KEY} leaked"],
            "steps": [f"Revoke {STRIPE_KEY} in the dashboard."], "source_trail": [f"chat said {STRIPE_KEY}"],
            "slug": "rotate-the-key"}
    proposal = await _propose(brain, body)
    assert proposal["redacted"]
    reason = await _post(brain, f"{PROPOSALS}/{proposal['id']}/reject", {"reason": f"never paste {STRIPE_KEY}"})
    assert reason.status_code == 200 and STRIPE_KEY not in reason.text
    stored = repr(await brain.deps.db.query("SELECT * FROM skill_proposals"))
    stored += repr(await brain.deps.db.query("SELECT * FROM event_log"))
    assert STRIPE_KEY not in stored and "[redacted:" in stored
    for field, value in (("slug", "sk-proj-3f9a8c7b6d5e4f3a2b1c0d9e"), ("scope", "token=Q7v9Lm2Xk4Rt8Wp1")):
        refused = await _post(brain, PROPOSALS, {**PROPOSAL, field: value})
        assert refused.status_code == 422 and f"{field} looks like it contains a secret" in refused.text
        assert value not in refused.text
    assert len((await brain.get(PROPOSALS, "writer", status="all")).json()["proposals"]) == 1


async def test_malformed_and_oversized_proposals_are_refused_naming_the_field(brain: Brain) -> None:
    cases = {
        "title": {**PROPOSAL, "title": "x" * 201},
        "steps[1]": {**PROPOSAL, "steps": ["ok", "y" * 2001]},
        "steps must hold": {**PROPOSAL, "steps": ["step"] * 51},
        "triggers must hold": {**PROPOSAL, "triggers": []},
        "source_trail is required": {k: v for k, v in PROPOSAL.items() if k != "source_trail"},
        "triggers[0] must be non-empty": {**PROPOSAL, "triggers": ["  "]},
        "reserved": {**PROPOSAL, "slug": "proposals"},
        "slug must be": {**PROPOSAL, "slug": "Not A Slug"},
        "unknown field": {**PROPOSAL, "content": "x"},
    }
    for words, body in cases.items():
        response = await _post(brain, PROPOSALS, body)
        assert response.status_code == 422 and words in response.text, (words, response.text)
    assert (await brain.get(PROPOSALS, "writer", status="all")).json()["proposals"] == []
    assert (await _post(brain, f"{PROPOSALS}/prop-1/confirm", {})).status_code == 422
    registered = await _post(brain, "/v1/brain/skills", {"slug": "proposals", "scope": "business", "content": "x"})
    assert registered.status_code == 422 and "reserved" in registered.text


async def test_a_rejected_proposal_keeps_its_reason_and_is_not_proposed_again(brain: Brain) -> None:
    proposal = await _propose(brain)
    rejected = (await _post(brain, f"{PROPOSALS}/{proposal['id']}/reject", {"reason": "we use a broker"})).json()
    assert rejected == {"id": proposal["id"], "status": "rejected", "reason": "we use a broker"}
    again = await _propose(brain)
    assert again["id"] == proposal["id"] and again["status"] == "rejected" and again["reason"] == "we use a broker"
    assert (await brain.get(PROPOSALS, "writer")).json()["proposals"] == []
    assert await _skill_rows(brain) == []


async def test_the_proposal_in_the_docs_is_accepted_as_written(brain: Brain) -> None:
    page = (Path(__file__).resolve().parents[3] / "docs" / "skills.md").read_text()
    (block,) = re.findall(r"```json\n(.*?)```", page, re.DOTALL)
    proposal = await _propose(brain, json.loads(block))
    assert proposal["slug"] == "renew-the-car-insurance" and proposal["status"] == "pending"
