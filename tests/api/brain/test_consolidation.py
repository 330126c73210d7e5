"""Consolidation: clusters among current facts (and skills of one slug family) become proposals,
and nothing about a fact changes until a writer of its scope accepts one. The judge is the
scripted fake on 127.0.0.1, including replies that must do nothing (an id outside the candidates,
malformed JSON)."""

from __future__ import annotations

import asyncio
import itertools
import json
from typing import Any

import pytest
from banded import ids_in, judged_fixture, llm_fixture, plain_fixture, replying  # noqa: F401
from brain_env import Brain, close_brain, open_brain
from fake_llm import FakeLlm

from memvault.core.brain import fact_input, to_plain
from memvault.core.errors import TransientStorageError
from memvault.core.operations.maintenance import run_maintenance
from memvault.core.redaction import Redaction
from memvault.core.tuning import Tuning

# What a fact is, beside the upkeep columns (vectors, hashes) a consolidation run may fill in.
FACT_STATE = "id, scope, source, content, valid_from, superseded_at, superseded_by, updated_at, importance, pinned"


async def _facts(brain: Brain, columns: str = FACT_STATE) -> list[dict[str, Any]]:
    return await brain.deps.db.query(f"SELECT {columns} FROM memory ORDER BY id")


async def _consolidate(brain: Brain, as_: str = "writer", expect: int = 200, **body: Any) -> dict[str, Any]:
    response = await brain.client.post("/memory/consolidate", json=body, headers=brain.headers(as_))
    assert response.status_code == expect, response.text
    result: dict[str, Any] = response.json()
    return result


async def _decide(brain: Brain, proposal_id: str, decision: str, as_: str = "writer", expect: int = 200) -> dict[str, Any]:
    response = await brain.client.post(f"/memory/proposals/{proposal_id}/{decision}", headers=brain.headers(as_))
    assert response.status_code == expect, response.text
    result: dict[str, Any] = response.json()
    return result


async def _listed(brain: Brain, as_: str = "writer", status: str | None = None) -> list[dict[str, Any]]:
    response = await brain.get("/memory/proposals", as_, status=status)
    assert response.status_code == 200, response.text
    proposals: list[dict[str, Any]] = response.json()["proposals"]
    return proposals


async def _skill(brain: Brain, scope: str, slug: str, content: str) -> dict[str, Any]:
    response = await brain.client.post("/memory/skill", headers=brain.headers("writer"),
                                       json={"slug": slug, "scope": scope, "content": content})
    assert response.status_code == 200, response.text
    skill: dict[str, Any] = response.json()["skill"]
    return skill


async def _write_unbanded(brain: Brain, content: str, scope: str = "business", source: str = "api") -> str:
    written = await brain.write({"content": content, "scope": scope, "source": source}, bands="off")
    fact_id: str = written["ids"][0]
    return fact_id


async def test_a_dry_run_proposes_and_changes_nothing_at_all(plain: Brain) -> None:
    first = await _write_unbanded(plain, "The alarm code changes every quarter.")
    plain.clock.advance(60)
    second = await _write_unbanded(plain, "the alarm code changes every QUARTER", source="mail")
    everything = "*"
    before, events = await _facts(plain, everything), await plain.events()
    result = await _consolidate(plain)
    assert result["dryRun"] is True and result["scopes"] == ["business", "family", "personal", "shared"]
    assert [(p["kind"], p["fact_ids"], p["keep_id"]) for p in result["proposals"]] == [("retire", [first], second)]
    assert await _facts(plain, everything) == before and await plain.events() == events
    assert await _listed(plain) == [], "a dry run stores no proposal"


async def test_a_stored_proposal_changes_no_fact_until_accepted(plain: Brain) -> None:
    old = await _write_unbanded(plain, "Payroll runs on the 25th of each month.")
    plain.clock.advance(60)
    new = await _write_unbanded(plain, "payroll runs on the 25th of each month", source="handbook")
    before = await _facts(plain)
    result = await _consolidate(plain, dryRun=False)
    assert result["stored"] == 1 and await _facts(plain) == before
    [proposal] = await _listed(plain)
    assert proposal["status"] == "open" and proposal["fact_ids"] == [old] and proposal["keep_id"] == new
    assert {f["id"] for f in proposal["facts"]} == {old, new}
    again = await _consolidate(plain, dryRun=False)
    assert again["stored"] == 0, "the same finding is stored once"

    accepted = await _decide(plain, proposal["id"], "accept")
    assert accepted["successor"] == new and accepted["superseded"] == [old]
    after = {row["id"]: row for row in await _facts(plain)}
    assert after[old]["superseded_by"] == new and after[old]["superseded_at"] is not None
    assert after[new]["superseded_at"] is None
    history = (await plain.get("/memory/history", "writer", id=new)).json()
    assert old in {row["id"] for row in history["chain"]}
    await _decide(plain, proposal["id"], "accept", expect=409)
    assert (await _listed(plain, status="accepted"))[0]["decided_by"] == "writer"


async def test_rows_from_before_the_hash_column_are_compared_and_hashed(plain: Brain) -> None:
    await _write_unbanded(plain, "Gate code is 4471.")
    await _write_unbanded(plain, "gate code is 4471", source="sms")
    await plain.deps.db.batch([("UPDATE memory SET norm_hash = NULL", ())])
    dry = await _consolidate(plain)
    assert len(dry["proposals"]) == 1
    assert await plain.count("norm_hash IS NULL") == 2, "a dry run computes hashes but stores none"
    stored = await _consolidate(plain, dryRun=False)
    assert stored["hashed"] == 2 and await plain.count("norm_hash IS NULL") == 0


async def test_near_duplicates_need_the_same_numbers_and_names(plain: Brain) -> None:
    older = await _write_unbanded(plain, "The Smith house roof repair invoice 1237 was paid by bank transfer")
    plain.clock.advance(60)
    newer = await _write_unbanded(plain, "The Smith house roof repair invoice 1237 was paid by bank transfer today")
    await _write_unbanded(plain, "The Smith house roof repair invoice 1238 was paid by bank transfer today")
    result = await _consolidate(plain)
    assert [(p["kind"], p["fact_ids"], p["keep_id"]) for p in result["proposals"]] == [("retire", [older], newer)]


async def test_the_judge_proposes_replace_merge_and_contradiction(judged: tuple[Brain, FakeLlm]) -> None:
    brain, fake = judged
    old = await _write_unbanded(brain, "The boiler is serviced each March by Hartley Heating")
    brain.clock.advance(60)
    new = await _write_unbanded(brain, "The boiler is serviced each October by Hartley Heating")
    for decision, kind in (("replace", "retire"), ("contradiction", "retire"), ("merge", "merge")):
        fake.respond = replying(decision, text="The boiler is serviced each March and October by Hartley Heating")
        [proposal] = (await _consolidate(brain))["proposals"]
        assert proposal["kind"] == kind
        if kind == "merge":
            assert proposal["fact_ids"] == sorted([old, new]) and proposal["text"].startswith("The boiler")
        else:
            assert proposal["fact_ids"] == [old] and proposal["keep_id"] == new
    assert fake.judged(), "the judge was asked"


async def test_accepting_a_merge_writes_the_merged_fact_and_supersedes_both(judged: tuple[Brain, FakeLlm]) -> None:
    brain, fake = judged
    old = await _write_unbanded(brain, "The van is insured with Admiral until May")
    brain.clock.advance(60)
    new = await _write_unbanded(brain, "The van is insured with Admiral for 640 a year")
    merged = "The van is insured with Admiral until May, for 640 a year"
    fake.respond = replying("merge", text=merged)
    await _consolidate(brain, dryRun=False)
    [proposal] = await _listed(brain)
    before = await _facts(brain)
    assert {row["id"] for row in before if row["superseded_at"] is None} == {old, new}
    accepted = await _decide(brain, proposal["id"], "accept")
    rows = {row["id"]: row for row in await _facts(brain)}
    successor = accepted["successor"]
    assert rows[successor]["content"] == merged and rows[successor]["source"] == "consolidation"
    assert rows[old]["superseded_by"] == successor and rows[new]["superseded_by"] == successor
    found = (await brain.get("/memory/search", "writer", q="Admiral")).json()["results"]
    assert [hit["id"] for hit in found] == [successor]


@pytest.mark.parametrize("reply", [
    '{"decision": "replace", "ids": ["mem-0000000000000000"]}',  # an id no candidate has
    '{"decision": "merge", "ids": ["%s"]}',  # a merge without its wording
    "replace them please",
    '{"decision": "replace", "ids": []}',
])
async def test_an_untrustworthy_reply_proposes_nothing(judged: tuple[Brain, FakeLlm], reply: str) -> None:
    brain, fake = judged
    await _write_unbanded(brain, "The office wifi password rotates monthly")
    brain.clock.advance(60)
    await _write_unbanded(brain, "The office wifi password rotates weekly")
    fake.respond = lambda system, user: reply.replace("%s", (ids_in(user) or ["x"])[0])
    result = await _consolidate(brain, dryRun=False)
    assert result["proposals"] == [] and result["stored"] == 0


async def test_proposals_stay_behind_the_scope_walls(plain: Brain) -> None:
    await _write_unbanded(plain, "Grandma's birthday is on 3 June.", scope="family", source="a")
    await _write_unbanded(plain, "grandma's birthday is on 3 june", scope="family", source="b")
    await _write_unbanded(plain, "VAT is filed quarterly.", scope="business", source="a")
    await _write_unbanded(plain, "vat is filed quarterly", scope="business", source="b")
    mine = await _consolidate(plain, as_="biz-writer", dryRun=False)
    assert mine["scopes"] == ["business"] and {p["scope"] for p in mine["proposals"]} == {"business"}
    await _consolidate(plain, as_="biz-writer", expect=403, scopes=["family"])
    await _consolidate(plain, as_="business", expect=403)  # a reader
    await _consolidate(plain, dryRun=False)
    assert {p["scope"] for p in await _listed(plain, as_="family")} == {"family"}
    business = next(p for p in await _listed(plain) if p["scope"] == "business")
    await _decide(plain, business["id"], "accept", as_="family+shared-writer", expect=404)
    await _decide(plain, business["id"], "accept", as_="business", expect=403)
    await _decide(plain, "prop-0000000000000000", "reject", expect=404)
    await _decide(plain, "not-a-proposal", "reject", expect=422)
    assert await plain.count("superseded_at IS NOT NULL") == 0


async def test_bad_options_are_refused(plain: Brain) -> None:
    for body in ({"dryRun": "yes"}, {"scopes": []}, {"scopes": "business"}, {"everything": True}):
        response = await plain.client.post("/memory/consolidate", json=body, headers=plain.headers("writer"))
        assert 400 <= response.status_code < 500, body
    assert (await plain.get("/memory/proposals", "writer", status="maybe")).status_code == 422


async def test_a_rejected_proposal_is_not_proposed_again_and_changes_nothing(plain: Brain) -> None:
    await _write_unbanded(plain, "Bins go out on Tuesday night.")
    await _write_unbanded(plain, "bins go out on tuesday night", source="note")
    await _consolidate(plain, dryRun=False)
    [proposal] = await _listed(plain)
    before = await _facts(plain)
    assert (await _decide(plain, proposal["id"], "reject"))["status"] == "rejected"
    assert await _facts(plain) == before
    assert (await _consolidate(plain, dryRun=False))["stored"] == 0
    assert await _listed(plain) == []


async def test_a_proposal_whose_facts_moved_on_is_refused_then_marked_stale(plain: Brain) -> None:
    old = await _write_unbanded(plain, "The spare key is with the neighbour at 12.")
    await _write_unbanded(plain, "the spare key is with the neighbour at 12", source="note")
    await _consolidate(plain, dryRun=False)
    [proposal] = await _listed(plain)
    await plain.write({"content": "The spare key is in the key safe.", "scope": "business", "supersedes": old})
    before = await _facts(plain)
    await _decide(plain, proposal["id"], "accept", expect=409)
    assert await _facts(plain) == before
    assert (await _consolidate(plain, dryRun=False))["stale"] == 1
    assert [p["id"] for p in await _listed(plain, status="stale")] == [proposal["id"]]


async def test_broken_and_cyclic_chains_are_reported(plain: Brain) -> None:
    a = await _write_unbanded(plain, "Fact A about the shed")
    b = await _write_unbanded(plain, "Fact B about the greenhouse")
    c = await _write_unbanded(plain, "Fact C about the garage")
    await plain.deps.db.batch([
        ("UPDATE memory SET superseded_at = 1, superseded_by = ? WHERE id = ?", (b, a)),
        ("UPDATE memory SET superseded_at = 1, superseded_by = ? WHERE id = ?", (a, b)),
        ("UPDATE memory SET superseded_at = 1, superseded_by = 'mem-ffffffffffffffff' WHERE id = ?", (c,)),
    ])
    chains = (await _consolidate(plain))["chains"]
    assert chains == {"broken": [c], "cyclic": sorted([a, b])}
    assert (await _consolidate(plain, as_="family+shared-writer"))["chains"] == {"broken": [], "cyclic": []}


async def test_a_chain_reported_to_a_walled_writer_ends_at_its_wall(plain: Brain) -> None:
    """A business fact superseded by a family one: how long the family chain runs on (past the
    64 links that make a chain cyclic, or not) changes nothing a business writer is told."""
    reports = []
    for length in (2, 70):
        head = await _write_unbanded(plain, f"The van is parked in bay 1 ({length}).")
        batch = await plain.write({"source": f"yard-{length}", "scope": "family", "facts": [
            {"content": f"The van is parked in bay {n} ({length})."} for n in range(2, length + 2)]}, bands="off")
        chain = [head, *batch["ids"]]
        await plain.deps.db.batch([("UPDATE memory SET superseded_at = 1, superseded_by = ? WHERE id = ?", (later, fid))
                                   for fid, later in itertools.pairwise(chain)])
        reports.append((await _consolidate(plain, as_="biz-writer"))["chains"])
        # A writer of both scopes walks the whole chain.
        assert (head in (await _consolidate(plain))["chains"]["cyclic"]) == (length > 64)
    assert reports == [{"broken": [], "cyclic": []}] * 2


async def test_skills_of_one_slug_family_are_consolidated(plain: Brain) -> None:
    old = await _skill(plain, "business", "invoice-chase", "Email the client, then call after 7 days.")
    plain.clock.advance(60)
    new = await _skill(plain, "business", "invoice-chase-v2", "Email the client, then call after 7 days.")
    await _skill(plain, "business", "payroll", "Email the client, then call after 7 days.")  # another family
    result = await _consolidate(plain, dryRun=False)
    skill_proposals = [p for p in result["proposals"] if p["kind"].startswith("skill_")]
    assert [(p["kind"], p["fact_ids"], p["keep_id"]) for p in skill_proposals] == [("skill_retire", [old["id"]], new["id"])]
    await _decide(plain, skill_proposals[0]["id"], "accept")
    listed = (await plain.get("/memory/skill", "writer")).json()["skills"]
    assert sorted(s["slug"] for s in listed) == ["invoice-chase-v2", "payroll"]
    sources = {r["source"] for r in await plain.deps.db.query(
        "SELECT source FROM memory WHERE entry_type = 'skill' AND superseded_at IS NULL")}
    assert sources == {"skill:business/invoice-chase-v2", "skill:business/payroll"}


async def test_the_nightly_run_stores_proposals_and_changes_no_fact(plain: Brain) -> None:
    await _write_unbanded(plain, "Mildred takes her tablets at 8am.", scope="personal")
    await _write_unbanded(plain, "mildred takes her tablets at 8am", scope="personal", source="carer")
    before = await _facts(plain)
    report = await run_maintenance(plain.deps)
    assert report.ok and report.proposals_stored == 1
    assert await _facts(plain) == before
    assert [p["scope"] for p in await _listed(plain)] == ["personal"]


async def test_a_failing_embedder_leaves_the_exact_pass(plain: Brain, monkeypatch: pytest.MonkeyPatch) -> None:
    await _write_unbanded(plain, "Water meter reading is 0412.")
    await _write_unbanded(plain, "water meter reading is 0412", source="photo")
    await _write_unbanded(plain, "The water meter is under the front path")

    async def down(texts: Any) -> Any:
        raise ConnectionError("embedder down")

    monkeypatch.setattr(plain.deps.embedder, "embed", down)
    result = await _consolidate(plain)
    assert result["degraded"] == ["vector"] and len(result["proposals"]) == 1


def test_proposal_ids_are_stable() -> None:
    from memvault.core.brain.proposals import Proposal

    one = Proposal("retire", "business", ("mem-b", "mem-a"), "x", keep_id="mem-c")
    assert one.id == Proposal("retire", "business", ("mem-a", "mem-b"), "other words", keep_id="mem-c").id
    assert one.id != Proposal("retire", "business", ("mem-a", "mem-b"), "x", keep_id="mem-d").id
    assert json.loads(json.dumps(to_plain(one.out())))["status"] == "proposed"


async def _merge_proposal(brain: Brain, fake: FakeLlm) -> dict[str, Any]:
    await _write_unbanded(brain, "The van is insured with Admiral until May")
    brain.clock.advance(60)
    await _write_unbanded(brain, "The van is insured with Admiral for 640 a year")
    fake.respond = replying("merge", text="The van is insured with Admiral until May, for 640 a year")
    await _consolidate(brain, dryRun=False)
    [proposal] = await _listed(brain)
    return proposal


@pytest.mark.parametrize("decisions", [("accept", "accept"), ("accept", "accept", "reject")])
async def test_decisions_at_once_apply_a_proposal_once(judged: tuple[Brain, FakeLlm], decisions: tuple[str, ...]) -> None:
    brain, fake = judged
    proposal = await _merge_proposal(brain, fake)
    events = await brain.events()
    answers = await asyncio.gather(*(
        brain.client.post(f"/memory/proposals/{proposal['id']}/{decision}", headers=brain.headers("writer"))
        for decision in decisions))
    assert sorted(a.status_code for a in answers) == [200] + [409] * (len(decisions) - 1), [a.text for a in answers]
    [winner] = [a.json()["status"] for a in answers if a.status_code == 200]
    assert (await _listed(brain, status="all"))[0]["status"] == winner
    accepted = winner == "accepted"
    assert await brain.count("source = 'consolidation'") == int(accepted)
    # Accepted once: one merged fact written and two superseded, each with its event; rejected: nothing.
    assert await brain.events() == events + 3 * accepted


async def test_a_failed_accept_changes_nothing_and_can_be_retried(
    judged: tuple[Brain, FakeLlm], monkeypatch: pytest.MonkeyPatch
) -> None:
    brain, fake = judged
    proposal = await _merge_proposal(brain, fake)
    before = await _facts(brain)
    real_batch = brain.deps.db.batch

    async def failing(statements: Any) -> None:
        raise TransientStorageError("database is locked")

    monkeypatch.setattr(brain.deps.db, "batch", failing)
    await _decide(brain, proposal["id"], "accept", expect=503)
    monkeypatch.setattr(brain.deps.db, "batch", real_batch)
    assert await _facts(brain) == before
    assert [p["status"] for p in await _listed(brain)] == ["open"]
    assert (await _decide(brain, proposal["id"], "accept"))["status"] == "accepted"


async def test_a_claim_left_by_a_dead_request_is_handed_back(plain: Brain) -> None:
    await _write_unbanded(plain, "The fuse box is in the hall cupboard.")
    await _write_unbanded(plain, "the fuse box is in the hall cupboard", source="note")
    await _consolidate(plain, dryRun=False)
    [proposal] = await _listed(plain)
    await plain.deps.db.execute("UPDATE proposals SET status = 'applying', decided_at = ? WHERE id = ?",
                                (plain.clock.now, proposal["id"]))
    await _decide(plain, proposal["id"], "accept", expect=409)
    await _consolidate(plain, dryRun=False)
    assert await _listed(plain) == [], "a fresh claim is left alone"
    plain.clock.advance(3600)
    await _consolidate(plain, dryRun=False)
    assert [p["id"] for p in await _listed(plain)] == [proposal["id"]]
    await _decide(plain, proposal["id"], "accept")


async def test_accepting_a_skill_merge_versions_the_kept_slug(judged: tuple[Brain, FakeLlm]) -> None:
    brain, fake = judged

    old = await _skill(brain, "family", "school-run", "Leave at 8:10, take the bridge road, drop at the side gate.")
    brain.clock.advance(60)
    new = await _skill(brain, "family", "school-run.new", "Leave at 8:10, take the bridge road, park on Elm Street.")
    merged = "Leave at 8:10, take the bridge road, park on Elm Street, drop at the side gate."
    fake.respond = lambda system, user: json.dumps(
        {"decision": "merge", "ids": [i for i in ids_in(user) if i.startswith("skill-")][:1], "text": merged})
    await _consolidate(brain, dryRun=False, scopes=["family"])
    [proposal] = [p for p in await _listed(brain) if p["kind"] == "skill_merge"]
    assert proposal["keep_id"] == new["id"] and sorted(proposal["fact_ids"]) == sorted([old["id"], new["id"]])
    accepted = await _decide(brain, proposal["id"], "accept")
    current = (await brain.get("/memory/skill", "writer", slug="school-run.new")).json()["skill"]
    assert current["content"] == merged and current["version"] == 2 and accepted["successor"] == current["id"]
    assert (await brain.get("/memory/skill", "writer", slug="school-run")).status_code == 404
    mirrors = await brain.deps.db.query("SELECT source FROM memory WHERE entry_type = 'skill' AND superseded_at IS NULL")
    assert [m["source"] for m in mirrors] == ["skill:family/school-run.new"]


async def test_near_duplicate_skills_in_a_family_without_an_llm(plain: Brain) -> None:
    ids = []
    for slug, content in (("month-end", "Close the books, reconcile the bank account, then send the VAT summary to Priya"),
                          ("month-end-v2", "Close the books, reconcile the bank account, and send the VAT summary to Priya")):
        response = await plain.client.post("/memory/skill", headers=plain.headers("writer"),
                                           json={"slug": slug, "scope": "business", "content": content})
        ids.append(response.json()["skill"]["id"])
        plain.clock.advance(60)
    [proposal] = (await _consolidate(plain))["proposals"]
    assert (proposal["kind"], proposal["fact_ids"], proposal["keep_id"]) == ("skill_retire", [ids[0]], ids[1])


async def test_old_unhashed_rows_past_the_batch_are_hashed_and_compared(tmp_path: Any) -> None:
    brain = await open_brain(tmp_path, Tuning(consolidate_batch=2))
    try:
        first = await _write_unbanded(brain, "The loft ladder is in the garage.")
        brain.clock.advance(60)  # the newer one is kept
        second = await _write_unbanded(brain, "the loft ladder is in the garage", source="note")
        for n in range(3):
            brain.clock.advance(60)
            await _write_unbanded(brain, f"Newer unrelated fact number {n} about the patio")
        await brain.deps.db.batch([("UPDATE memory SET norm_hash = NULL", ())])
        result = await _consolidate(brain, dryRun=False)
        assert [(p["fact_ids"], p["keep_id"]) for p in result["proposals"]] == [([first], second)]
        assert result["hashed"] == 4
    finally:
        await close_brain(brain)


async def test_facts_stored_before_a_rule_reach_neither_the_judge_nor_a_proposal_unredacted(
    judged: tuple[Brain, FakeLlm], monkeypatch: pytest.MonkeyPatch
) -> None:
    brain, fake = judged
    card = "4111 1111 1111 1111"
    monkeypatch.setattr(fact_input, "redact", lambda text: Redaction(text, ()))  # as a version without the rule wrote
    old = await _write_unbanded(brain, f"The boiler is serviced each March by Hartley Heating, paid with card {card}")
    brain.clock.advance(60)
    new = await _write_unbanded(brain, f"The boiler is serviced each October by Hartley Heating, paid with card {card}")
    monkeypatch.undo()
    fake.respond = replying("merge", text="The boiler is serviced each March and October by Hartley Heating")
    result = await _consolidate(brain, dryRun=False)
    assert fake.judged() and all(card not in user for _, user in fake.prompts)
    assert any("[redacted:" in user for _, user in fake.judged())
    [listed] = await _listed(brain)
    assert {f["id"] for f in listed["facts"]} == {old, new}
    assert card not in json.dumps(result) and card not in json.dumps(listed)
