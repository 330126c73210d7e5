"""Fact ids name their scope: a writer sending a source and text that another scope holds stores
its own fact and learns nothing of the other, and facts stored before ids named their scope keep
their ids and are still found by their own scope's writers."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from brain_env import Brain, brain_fixture, close_brain, open_brain  # noqa: F401

from memvault.core.brain import fact_input
from memvault.core.brain.fact_input import fact_id, legacy_fact_id

SALARY = "Dana Okafor's salary is 182,000 a year."
LONG = "The severance terms for the Rotterdam office. " + "Clause and counter-clause. " * 200
SKILL = {"slug": "payroll-close", "name": "Payroll close", "description": "Month-end payroll",
         "content": "1. Freeze changes\n2. Export the ledger"}
MIRROR = f"Skill {SKILL['name']} ({SKILL['slug']}): {SKILL['description']}\n\n{SKILL['content']}"


async def _walled(brain: Brain) -> None:
    """What the family scope holds in the world the prober must not be able to tell apart."""
    await brain.write({"content": SALARY, "source": "hr:payroll", "scope": "family"})
    await brain.write({"content": LONG, "source": "files:severance.md", "scope": "family"})
    await brain.write({"source": "files:", "scope": "family", "facts": [{"content": "Bonus pool is 40k.",
                                                                         "source": "files:bonus.md"}]})
    registered = await brain.client.post("/memory/skill", json={**SKILL, "scope": "family"},
                                         headers=brain.headers("writer"))
    assert registered.status_code == 200, registered.text


async def _probes(brain: Brain) -> list[tuple[int, Any]]:
    """A business-only writer sends the family scope's exact sources and texts every way a fact
    is written, and reads its scope back: each status and answer."""
    async def post(path: str, body: dict[str, Any]) -> tuple[int, Any]:
        response = await brain.client.post(path, json=body, headers=brain.headers("biz-writer"))
        return response.status_code, response.json()

    own = (await brain.write({"content": "Dana's salary is under review.", "source": "hr:payroll",
                              "scope": "business"}, as_="biz-writer"))["ids"][0]
    answers = [
        await post("/memory/write", {"content": SALARY, "source": "hr:payroll", "scope": "business"}),
        await post("/memory/write", {"content": SALARY, "source": "hr:payroll", "scope": "business"}),
        await post("/v1/brain/facts", {"content": LONG, "source": "files:severance.md", "scope": "business"}),
        await post("/memory/write", {"source": "files:", "scope": "business", "reconcile": True,
                                     "facts": [{"content": "Bonus pool is 40k.", "source": "files:bonus.md"}]}),
        await post("/memory/sync", {"direction": "push", "source": "files:", "items": [
            {"content": "Bonus pool is 40k.", "source": "files:bonus.md"},
            {"content": LONG, "source": "files:severance.md"}]}),
        await post("/memory/write", {"content": SALARY, "source": "hr:payroll", "scope": "business",
                                     "supersedes": own}),
        await post("/memory/write", {"content": MIRROR, "source": "skill:family/payroll-close",
                                     "scope": "business", "entry_type": "skill"}),
        await post("/memory/skill", {**SKILL, "scope": "business"}),
    ]
    for path, params in (("/memory/export", {}), ("/memory/search", {"q": "salary Okafor"}),
                         ("/memory/skill", {})):
        response = await brain.get(path, "biz-writer", **params)
        answers.append((response.status_code, response.text))
    return answers


async def test_a_writer_learns_nothing_from_the_same_source_and_text_behind_a_wall(brain: Brain) -> None:
    """Every answer the business writer gets, ids included, is the same whether family holds the
    same sources and texts or nothing at all; family's rows are untouched."""
    await _walled(brain)
    family = await brain.deps.db.query("SELECT * FROM memory WHERE scope = 'family' ORDER BY id")
    probed = await _probes(brain)
    assert all(status == 200 for status, _ in probed), probed
    assert await brain.deps.db.query("SELECT * FROM memory WHERE scope = 'family' ORDER BY id") == family
    with tempfile.TemporaryDirectory() as empty_dir:
        empty = await open_brain(Path(empty_dir))
        try:
            assert empty.clock.now == brain.clock.now
            baseline = await _probes(empty)
        finally:
            await close_brain(empty)
    assert probed == baseline


async def test_the_same_fact_in_two_scopes_is_two_facts(brain: Brain) -> None:
    family = (await brain.write({"content": SALARY, "source": "hr:payroll", "scope": "family"}))["ids"][0]
    business = (await brain.write({"content": SALARY, "source": "hr:payroll", "scope": "business"}))["ids"][0]
    assert family == fact_id("family", "hr:payroll", SALARY) != business == fact_id("business", "hr:payroll", SALARY)
    again = await brain.write({"content": SALARY, "source": "hr:payroll", "scope": "business"}, as_="biz-writer")
    assert again["ids"] == [business] and again["unchanged"] == 1 and again["written"] == 0
    found = (await brain.get("/memory/search", "business", q="salary Okafor")).json()["results"]
    assert [r["id"] for r in found] == [business]
    exported = (await brain.get("/memory/export", "business")).text
    assert business in exported and family not in exported


def test_scoped_ids_cannot_be_chosen_to_meet_a_legacy_id() -> None:
    """A legacy id hashes `source|text`; a source chosen to spell a scope into it gives another id."""
    assert fact_id("business", "x", "t") != legacy_fact_id("business|x", "t")
    assert fact_id("business", "a|b", "t") != fact_id("business", "a", "b|t")


@pytest.fixture(name="legacy_brain")
async def legacy_brain_fixture(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A brain whose family fact was stored as the code before scoped ids stored it."""
    opened = await open_brain(tmp_path)
    try:
        with monkeypatch.context() as patched:
            patched.setattr(fact_input, "fact_id", lambda scope, source, content: legacy_fact_id(source, content))
            await opened.write({"source": "files:", "scope": "family", "facts": [
                {"content": SALARY, "source": "files:pay.md"}, {"content": "Rent is due on the 3rd.",
                                                                "source": "files:rent.md"}]})
        yield opened
    finally:
        await close_brain(opened)


async def test_a_fact_stored_under_its_legacy_id_is_still_the_same_fact(legacy_brain: Brain) -> None:
    brain = legacy_brain
    legacy = legacy_fact_id("files:pay.md", SALARY)
    assert await brain.count("id = ?", (legacy,)) == 1
    rows, events = await brain.count(), await brain.events()
    batch = {"source": "files:", "scope": "family", "reconcile": True, "facts": [
        {"content": SALARY, "source": "files:pay.md"}, {"content": "Rent is due on the 3rd.", "source": "files:rent.md"}]}
    again = await brain.write(batch, as_="family+shared-writer")
    assert again["ids"][0] == legacy and again["unchanged"] == 2 and again["retired"] == 0
    assert (await brain.count(), await brain.events()) == (rows, events)
    pinned = await brain.write({"content": SALARY, "source": "files:pay.md", "scope": "family", "pinned": True})
    assert pinned["ids"] == [legacy] and pinned["updated"] == 1
    retired = await brain.client.post(f"/v1/brain/facts/{legacy}/retire", json={"reason": "sent again below"},
                                      headers=brain.headers("writer"))
    assert retired.status_code == 200, retired.text
    revived = await brain.write({"content": SALARY, "source": "files:pay.md", "scope": "family", "pinned": True})
    assert revived["ids"] == [legacy] and revived["revived"] == 1 and await brain.count() == rows


async def test_a_legacy_fact_of_another_scope_is_neither_found_nor_touched(legacy_brain: Brain) -> None:
    brain = legacy_brain
    legacy = legacy_fact_id("files:pay.md", SALARY)
    before = await brain.deps.db.query("SELECT * FROM memory WHERE id = ?", [legacy])
    for writer in ("biz-writer", "writer"):
        written = await brain.write({"content": SALARY, "source": "files:pay.md", "scope": "business"}, as_=writer)
        assert written["ids"] == [fact_id("business", "files:pay.md", SALARY)]
    assert await brain.deps.db.query("SELECT * FROM memory WHERE id = ?", [legacy]) == before
