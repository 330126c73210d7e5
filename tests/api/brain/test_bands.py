"""Write-time bands with a scripted judge on 127.0.0.1: the block band without any LLM, the flag
band's four decisions, the candidate band's contradiction check, and every reply that must not be
trusted (an id outside the candidates, malformed JSON, a timeout) falling back to keep_both."""

from __future__ import annotations

import json
from typing import Any

import pytest
from banded import ids_in, judged_fixture, llm_fixture, plain_fixture, replying  # noqa: F401
from brain_env import Brain
from fake_llm import FakeLlm


async def _current(brain: Brain) -> set[str]:
    return {r["id"] for r in await brain.deps.db.query("SELECT id FROM memory WHERE superseded_at IS NULL")}


async def _vector_ids(brain: Brain) -> set[str]:
    index: Any = brain.deps.vectors.inner  # the local index under its retrying wrapper
    return {row[0] for row in index._conn.execute("SELECT id FROM vectors")}


async def test_the_same_text_once_normalised_is_blocked_and_named(plain: Brain) -> None:
    first = (await plain.write({"content": "The roof of the barn is red.", "scope": "business"}))["ids"][0]
    again = await plain.write({"content": "the roof of the BARN is red", "source": "elsewhere", "scope": "business"})
    assert again["written"] == 0 and again["blocked"] == 1 and again["ids"] == []
    assert again["decisions"] == [{"id": None, "decision": "blocked", "existing": [first]}]
    other_scope = await plain.write({"content": "The roof of the barn is red.", "scope": "family", "source": "home"})
    assert other_scope["written"] == 1, "bands never compare across scopes"


async def test_near_identical_text_with_other_numbers_is_a_different_fact(plain: Brain) -> None:
    await plain.write({"content": "Invoice 1237 for the roof repair at the Smith house", "scope": "business"})
    other = await plain.write({"content": "Invoice 1238 for the roof repair at the Smith house", "scope": "business"})
    assert other["written"] == 1 and other["decisions"][0]["decision"] == "stored"
    same = await plain.write({"content": "Invoice 1237 for the roof repair at the Smith house!", "scope": "business",
                              "source": "mail"})
    assert same["blocked"] == 1


async def test_a_later_duplicate_in_one_batch_names_the_earlier_fact(plain: Brain) -> None:
    result = await plain.write({"scope": "business", "facts": [
        {"content": "Quarterly VAT return is due on the 7th", "source": "a"},
        {"content": "quarterly VAT return is due on the 7th.", "source": "b"},
        {"content": "The gutters need clearing in autumn", "source": "c"},
    ]})
    first = result["decisions"][0]["id"]
    assert [d["decision"] for d in result["decisions"]] == ["stored", "blocked", "stored"]
    assert result["decisions"][1]["existing"] == [first]
    assert result["written"] == 2


async def test_without_an_llm_only_the_block_band_runs(plain: Brain) -> None:
    await plain.write({"content": "Mildred's GP is Dr Patel at Oak Lane surgery", "scope": "family"})
    moved = await plain.write({"content": "Mildred's GP is Dr Okafor at Oak Lane surgery", "scope": "family"})
    assert moved["written"] == 1 and len(await _current(plain)) == 2


async def test_replace_supersedes_and_retires_the_old_vectors_after_the_new_are_stored(
    judged: tuple[Brain, FakeLlm],
) -> None:
    brain, fake = judged
    fake.respond = replying("replace")
    old = (await brain.write({"content": "Mildred's GP is Dr Patel at Oak Lane surgery", "scope": "family"}))["ids"][0]
    brain.clock.advance(60)
    new = await brain.write({"content": "Mildred's GP is now Dr Okafor at Oak Lane surgery", "scope": "family"})
    assert new["decisions"][0]["decision"] == "replace" and new["decisions"][0]["existing"] == [old]
    assert await _current(brain) == {new["ids"][0]}
    chain = (await brain.get("/memory/history", "writer", id=new["ids"][0])).json()["chain"]
    assert [r["id"] for r in chain] == [old, new["ids"][0]] and chain[0]["superseded_by"] == new["ids"][0]
    assert await _vector_ids(brain) == {new["ids"][0]}
    assert '"replace"' in fake.judged()[0][0]


async def test_merge_stores_the_merged_wording_and_supersedes_the_named_facts(judged: tuple[Brain, FakeLlm]) -> None:
    brain, fake = judged
    merged = "The boiler is a Worcester 30i, serviced each March by Hartley Heating"
    fake.respond = replying("merge", text=merged)
    old = (await brain.write({"content": "The boiler is a Worcester 30i serviced by Hartley Heating",
                              "scope": "family"}))["ids"][0]
    result = await brain.write({"content": "The boiler is serviced each March by Hartley Heating", "scope": "family"})
    decision = result["decisions"][0]
    assert decision["decision"] == "merge" and decision["existing"] == [old]
    rows = await brain.deps.db.query("SELECT id, content FROM memory WHERE superseded_at IS NULL")
    assert [r["content"] for r in rows] == [merged] and rows[0]["id"] == decision["id"]


async def test_contradiction_keeps_both_and_links_them(judged: tuple[Brain, FakeLlm]) -> None:
    brain, fake = judged
    fake.respond = replying("contradiction")
    old = (await brain.write({"content": "The shop opens at 9 on Saturdays", "scope": "business"}))["ids"][0]
    new = (await brain.write({"content": "The shop opens at 10 on Saturdays", "scope": "business"}))["ids"][0]
    assert await _current(brain) == {old, new}
    links = await brain.deps.db.query("SELECT fact_id, other_id, kind FROM fact_links")
    assert links == [{"fact_id": new, "other_id": old, "kind": "contradicts"}]


async def test_the_candidate_band_asks_about_contradiction_only(judged: tuple[Brain, FakeLlm]) -> None:
    brain, fake = judged
    fake.respond = lambda system, user: json.dumps({"contradiction": False, "ids": []}) \
        if "contradict" in system else json.dumps({})
    await brain.write({"content": "Bins go out on Tuesday night", "scope": "family"})
    result = await brain.write({"content": "Bins go out on Wednesday night for the garden waste", "scope": "family"})
    prompts = fake.judged()
    assert prompts and all("Does the NEW fact contradict" in system for system, _ in prompts)
    assert result["decisions"][0]["decision"] == "keep_both"


@pytest.mark.parametrize("reply", [
    '{"decision": "replace", "ids": ["mem-0000000000000000"]}',  # an id no candidate has
    '{"decision": "replace", "ids": []}',
    '{"decision": "obliterate", "ids": []}',
    "Sure! I think you should replace it.",
    '{"decision": "merge", "ids": ["%s"]}',  # a merge with no wording
])
async def test_an_untrustworthy_reply_keeps_both_and_touches_nothing(judged: tuple[Brain, FakeLlm], reply: str) -> None:
    brain, fake = judged
    old = (await brain.write({"content": "The van's MOT is due in June", "scope": "business"}))["ids"][0]
    walled = (await brain.write({"content": "The van's MOT is due in June, says Ray", "scope": "family"}))["ids"][0]
    fake.respond = lambda system, user: reply.replace("%s", old) if "%s" in reply else reply.replace(
        "mem-0000000000000000", walled)
    result = await brain.write({"content": "The van's MOT is due in July", "scope": "business"})
    decision = result["decisions"][0]
    assert decision["decision"] == "keep_both" and decision["judge_fallback"]
    assert await _current(brain) == {old, walled, decision["id"]}
    assert await brain.deps.db.query("SELECT * FROM fact_links") == []


async def test_a_judge_that_times_out_keeps_both(judged: tuple[Brain, FakeLlm]) -> None:
    brain, fake = judged
    fake.respond = replying("replace")
    await brain.write({"content": "The van's MOT is due in June", "scope": "business"})
    fake.delay = 3.0
    result = await brain.write({"content": "The van's MOT is due in July", "scope": "business"})
    assert result["decisions"][0]["decision"] == "keep_both" and len(await _current(brain)) == 2


async def test_bands_off_stores_as_given_without_asking(judged: tuple[Brain, FakeLlm]) -> None:
    brain, fake = judged
    await brain.write({"content": "Rent is paid on the 1st", "scope": "business"}, bands="off")
    result = await brain.write({"content": "rent is paid on the 1st", "source": "b", "scope": "business"}, bands="off")
    assert result["written"] == 1 and fake.prompts == []


async def test_the_llm_rates_importance_unless_the_writer_did(judged: tuple[Brain, FakeLlm]) -> None:
    brain, fake = judged
    fake.respond = replying("keep_both")
    rated = (await brain.write({"content": "Passport renewal is due in 2027", "scope": "family"}))["ids"][0]
    given = (await brain.write({"content": "The cat likes tuna", "scope": "family", "importance": 1}))["ids"][0]
    rows = {r["id"]: r["importance"] for r in await brain.deps.db.query("SELECT id, importance FROM memory")}
    assert rows == {rated: 4, given: 1}
