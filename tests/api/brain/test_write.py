"""Writes: idempotent ids, source-scoped reconcile, supersession, bodies, redaction, and bad
input refused before anything is stored."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from brain_env import Brain, brain_fixture  # noqa: F401

from memvault.core.brain.fact_input import fact_id


async def test_writing_a_batch_twice_changes_nothing(brain: Brain) -> None:
    batch = {"source": "notes:a", "scope": "business", "facts": [{"content": f"fact number {i}"} for i in range(5)]}
    first = await brain.write(batch)
    rows, events = await brain.count(), await brain.events()
    second = await brain.write(batch)
    assert first["written"] == 5 and second["written"] == 0 and second["unchanged"] == 5
    assert first["ids"] == second["ids"]
    assert await brain.count() == rows == 5
    assert await brain.events() == events


async def test_ids_are_mem_plus_a_hash_of_scope_source_and_fact(brain: Brain) -> None:
    result = await brain.write({"content": "Acme pays net 30", "source": "crm", "scope": "business"})
    assert result["ids"] == [fact_id("business", "crm", "Acme pays net 30")]
    assert result["ids"][0].startswith("mem-") and len(result["ids"][0]) == 20


async def test_ingest_is_an_alias_of_write(brain: Brain) -> None:
    response = await brain.client.post("/memory/ingest", json={"content": "alias works", "scope": "shared"},
                                       headers=brain.headers("writer"))
    assert response.status_code == 200 and response.json()["written"] == 1


async def test_reconcile_retires_only_its_own_source_prefix(brain: Brain) -> None:
    await brain.write({"source_prefix": "files:", "scope": "business",
                       "facts": [{"content": "a1", "source": "files:a.md"}, {"content": "b1", "source": "files:b.md"}]})
    await brain.write({"source": "crm:acme", "scope": "business", "facts": [{"content": "crm fact"}]})
    await brain.write({"source": "files-other", "scope": "business", "facts": [{"content": "look-alike prefix"}]})
    brain.clock.advance(60)
    result = await brain.write({"source_prefix": "files:", "scope": "business", "reconcile": True,
                                "facts": [{"content": "a2", "source": "files:a.md"}]})
    assert result["retired"] == 2
    current = await brain.deps.db.query("SELECT source, content FROM memory WHERE superseded_at IS NULL ORDER BY source")
    assert [(r["source"], r["content"]) for r in current] == [
        ("crm:acme", "crm fact"), ("files-other", "look-alike prefix"), ("files:a.md", "a2")]


async def test_reconcile_without_prefix_is_scoped_to_the_batch_sources(brain: Brain) -> None:
    await brain.write({"source": "s1", "scope": "family", "facts": [{"content": "x"}, {"content": "y"}]})
    await brain.write({"source": "s2", "scope": "family", "facts": [{"content": "z"}]})
    result = await brain.write({"source": "s1", "scope": "family", "reconcile": True, "facts": [{"content": "x"}]})
    assert result["retired"] == 1 and result["unchanged"] == 1
    assert await brain.count("superseded_at IS NULL") == 2


async def test_reconcile_never_crosses_the_writers_scopes(brain: Brain) -> None:
    await brain.write({"source": "shared-src", "scope": "family", "facts": [{"content": "family row"}]})
    result = await brain.write({"source": "shared-src", "scope": "business", "reconcile": True,
                                "facts": [{"content": "business row"}]}, as_="biz-writer")
    assert result["retired"] == 0
    assert await brain.count("superseded_at IS NULL AND scope = 'family'") == 1


async def test_a_changed_file_supersedes_its_previous_version(brain: Brain) -> None:
    first = await brain.write({"source": "files:x.md", "scope": "shared", "reconcile": True,
                               "facts": [{"content": "version one"}]})
    brain.clock.advance(10)
    second = await brain.write({"source": "files:x.md", "scope": "shared", "reconcile": True,
                                "facts": [{"content": "version two"}]})
    chain = (await brain.get("/memory/history", "reader-all", id=second["ids"][0])).json()["chain"]
    assert [c["id"] for c in chain] == [first["ids"][0], second["ids"][0]]
    assert chain[0]["superseded_by"] == second["ids"][0] and chain[1]["current"]


async def test_explicit_supersedes_builds_a_chain_of_three(brain: Brain) -> None:
    ids = []
    for n, when in ((1, 100.0), (2, 200.0), (3, 300.0)):
        fact: dict[str, Any] = {"content": f"Alice's phone is 555-000{n}", "source": "contacts", "scope": "family",
                                "valid_from": 1_600_000_000 + when}
        if ids:
            fact["supersedes"] = ids[-1]
        ids.append((await brain.write(fact))["ids"][0])
    for start in ids:
        chain = (await brain.get("/memory/history", "family", id=start)).json()["chain"]
        assert [c["id"] for c in chain] == ids
    assert (await brain.get("/memory/history", "business", id=ids[0])).status_code == 404


async def test_long_bodies_go_to_the_blob_store_and_come_back_whole(brain: Brain) -> None:
    body = "# Runbook\n\n" + "Restart the ingest worker, then check the queue depth. " * 60
    result = await brain.write({"content": body, "source": "files:runbook.md", "scope": "business"})
    row = (await brain.deps.db.query("SELECT content, body_uri, content_hash FROM memory"))[0]
    assert row["body_uri"] and len(row["content"]) <= brain.deps.tuning.brain_hook_chars
    assert row["content"].endswith("…")
    response = await brain.get("/memory/body", "business", id=result["ids"][0])
    assert response.status_code == 200 and response.json()["body"] == body.strip()
    assert (await brain.get("/memory/body", "family", id=result["ids"][0])).status_code == 404


async def test_secrets_are_refused_and_the_response_names_only_their_kind(brain: Brain) -> None:
    result = await brain.write({"content": "card 4111 1111 1111 1111, key sk-abcdefghijklmnop1234",
                                "source": "chat", "scope": "family"})
    assert result["redacted"] == [{"id": result["ids"][0], "kinds": ["api_key", "card_number"]}]
    assert "4111 1111" not in str(result) and "sk-abcdef" not in str(result)
    stored = (await brain.deps.db.query("SELECT content FROM memory"))[0]["content"]
    assert "4111 1111" not in stored and "[redacted:api_key]" in stored
    log = await brain.deps.db.query("SELECT detail FROM event_log")
    assert all("4111" not in row["detail"] for row in log)


async def test_event_log_is_append_only(brain: Brain) -> None:
    await brain.write({"content": "logged", "scope": "shared"})
    with pytest.raises(Exception, match="append-only"):
        await brain.deps.db.execute("DELETE FROM event_log")


BAD_PAYLOADS: list[Any] = [
    {},
    {"content": ""},
    {"content": "   "},
    {"content": 42, "scope": "business"},
    {"content": "ok", "scope": "work"},
    {"content": "ok", "scope": "business", "entry_type": "memo"},
    {"content": "ok", "scope": "business", "confidence": 1.5},
    {"content": "ok", "scope": "business", "source_tier": -1},
    {"content": "ok", "scope": "business", "valid_from": "last tuesday"},
    {"content": "ok", "scope": "business", "colour": "red"},
    {"content": "ok"},  # the writer holds four scopes, so scope is required
    {"content": "ok", "scope": "business", "supersedes": "mem-0000000000000000"},
    {"facts": [{"content": "fine", "scope": "business"}, {"content": "", "scope": "business"}]},
    {"facts": "not a list"},
    {"facts": [{"content": "x", "scope": "business", "source": "b/x"}], "source_prefix": "a/"},
    {"facts": [], "reconcile": True},
    {"facts": [{"content": "x", "scope": "business"}] * 501},
    [{"content": "a list body"}],
]


@pytest.mark.parametrize("payload", BAD_PAYLOADS, ids=range(len(BAD_PAYLOADS)))
async def test_bad_input_gets_a_clear_4xx_and_writes_nothing(brain: Brain, payload: Any) -> None:
    await brain.write({"content": "already here", "scope": "business"})
    rows, events = await brain.count(), await brain.events()
    response = await brain.client.post("/memory/write", json=payload, headers=brain.headers("writer"))
    assert 400 <= response.status_code < 500, response.text
    assert response.json()["error"]["message"]
    assert await brain.count() == rows and await brain.events() == events


async def test_malformed_json_is_a_4xx(brain: Brain) -> None:
    response = await brain.client.post("/memory/write", content=b"{nope", headers={
        **brain.headers("writer"), "content-type": "application/json"})
    assert 400 <= response.status_code < 500
    assert await brain.count() == 0


@pytest.mark.parametrize(("who", "status"), [("business", 403), (None, 401), ("nobody", 401)])
async def test_only_a_write_credential_writes(brain: Brain, who: str | None, status: int) -> None:
    headers = {} if who is None else brain.headers(who)
    response = await brain.client.post("/memory/write", json={"content": "x", "scope": "business"}, headers=headers)
    assert response.status_code == status
    assert await brain.count() == 0


async def test_a_writer_cannot_write_outside_its_scopes(brain: Brain) -> None:
    await brain.write({"content": "x", "scope": "family"}, as_="biz-writer", expect=403)
    assert await brain.count() == 0


async def test_skills_are_idempotent_by_slug_and_versioned(brain: Brain) -> None:
    skill = {"slug": "weekly-review", "name": "Weekly review", "content": "1. Inbox zero\n2. Plan", "scope": "business"}
    headers = brain.headers("writer")
    first = (await brain.client.post("/memory/skill", json=skill, headers=headers)).json()
    again = (await brain.client.post("/memory/skill", json=skill, headers=headers)).json()
    assert first["status"] == "registered" and again["status"] == "unchanged"
    bumped = (await brain.client.post("/memory/skill", json={**skill, "content": "1. Inbox\n2. Plan\n3. Ship"},
                                      headers=headers)).json()
    assert bumped["status"] == "updated" and bumped["skill"]["version"] == 2
    got = (await brain.get("/memory/skill", "business", slug="weekly-review")).json()["skill"]
    assert got["version"] == 2 and "Ship" in got["content"]
    old = (await brain.get("/memory/skill", "business", slug="weekly-review", version=1)).json()["skill"]
    assert old["superseded_at"] is not None
    assert [s["slug"] for s in (await brain.get("/memory/skill", "business")).json()["skills"]] == ["weekly-review"]
    assert (await brain.get("/memory/skill", "family")).json()["skills"] == []
    assert (await brain.get("/memory/skill", "family", slug="weekly-review")).status_code == 404
    found = (await brain.get("/memory/search", "business", q="Inbox Ship", type="skill")).json()["results"]
    assert len(found) == 1 and "Ship" in found[0]["content"]


async def test_resending_a_superseding_fact_is_a_no_op(brain: Brain) -> None:
    old = (await brain.write({"content": "rate is 4.1%", "source": "bank", "scope": "business"}))["ids"][0]
    update = {"content": "rate is 4.4%", "source": "bank", "scope": "business", "supersedes": old}
    first = await brain.write(update)
    rows, events = await brain.count(), await brain.events()
    again = await brain.write(update)
    assert first["superseded"] == 1 and again["superseded"] == 0 and again["unchanged"] == 1
    assert await brain.count() == rows and await brain.events() == events
    rival = await brain.client.post("/memory/write", headers=brain.headers("writer"), json={
        "content": "rate is 3.9%", "source": "bank", "scope": "business", "supersedes": old})
    assert rival.status_code == 409 and await brain.count() == rows


async def test_refusals_name_no_fact_behind_the_wall(brain: Brain) -> None:
    """A writer of every scope supersedes a business fact by a family one. A business-only writer
    who tries to supersede it again learns it is superseded, not by what; and the family fact's
    source and text sent to business are business's own fact, whoever sends them."""
    old = (await brain.write({"content": "rate is 4.1%", "source": "bank", "scope": "business"}))["ids"][0]
    new = (await brain.write({"content": "rate is 4.4%", "source": "bank", "scope": "family", "supersedes": old}))["ids"][0]
    rival = {"content": "rate is 3.9%", "source": "bank", "scope": "business", "supersedes": old}
    walled = await brain.client.post("/memory/write", headers=brain.headers("biz-writer"), json=rival)
    assert walled.status_code == 409
    assert walled.json()["error"]["message"] == f"{old} is already superseded"
    seen = await brain.client.post("/memory/write", headers=brain.headers("writer"), json=rival)
    assert seen.status_code == 409 and new in seen.json()["error"]["message"]
    same = {"content": "rate is 4.4%", "source": "bank", "scope": "business"}
    walled_copy = await brain.write(same, as_="biz-writer")
    assert walled_copy["written"] == 1 and walled_copy["ids"] != [new]
    assert (await brain.write(same))["ids"] == walled_copy["ids"]


async def test_racing_writes_of_one_fact_land_once_each_as_a_sequence_would(brain: Brain) -> None:
    """Writes planned on the same state and stored at once: two supersedes of one fact leave one
    successor and a 409, as one after the other would; the same new fact sent twice at once, and a
    skill's new version registered twice at once, are stored once and both acknowledged."""
    headers = brain.headers("writer")

    async def post(path: str, body: dict[str, Any]) -> Any:
        return await brain.client.post(path, json=body, headers=headers, params={"bands": "off"})

    for n in range(6):
        old = (await brain.write({"content": f"Boat {n} is moored at pier 3.", "source": f"harbour-{n}",
                                  "scope": "business"}, bands="off"))["ids"][0]
        rivals = await asyncio.gather(*(post("/memory/write", {
            "content": f"Boat {n} is moored at pier {pier}.", "source": f"harbour-{n}-{pier}", "scope": "business",
            "supersedes": old}) for pier in (5, 7)))
        assert sorted(r.status_code for r in rivals) == [200, 409], [r.text for r in rivals]
        winner = next(r.json()["ids"][0] for r in rivals if r.status_code == 200)
        current = await brain.deps.db.query(
            "SELECT id FROM memory WHERE source LIKE ? AND superseded_at IS NULL", [f"harbour-{n}-%"])
        assert [row["id"] for row in current] == [winner]
        (ended,) = await brain.deps.db.query("SELECT superseded_by FROM memory WHERE id = ?", [old])
        assert ended["superseded_by"] == winner
        assert len(await brain.deps.db.query(
            "SELECT 1 FROM event_log WHERE action = 'superseded' AND memory_id = ?", [old])) == 1
        same = {"content": f"Boat {n} needs new rope.", "source": f"rope-{n}", "scope": "business"}
        twice = await asyncio.gather(post("/memory/write", same), post("/memory/write", same))
        assert [r.status_code for r in twice] == [200, 200], [r.text for r in twice]
        assert sorted((r.json()["written"], r.json()["unchanged"]) for r in twice) == [(0, 1), (1, 0)]
    skill = {"slug": "mooring", "name": "Mooring", "content": "1. Bow line", "scope": "business"}
    assert (await post("/memory/skill", skill)).status_code == 200
    bumped = {**skill, "content": "1. Bow line\n2. Stern line"}
    both = await asyncio.gather(post("/memory/skill", bumped), post("/memory/skill", bumped))
    assert [r.status_code for r in both] == [200, 200], [r.text for r in both]
    assert sorted(r.json()["status"] for r in both) == ["unchanged", "updated"]
    versions = await brain.deps.db.query("SELECT version, superseded_at FROM skills WHERE slug = 'mooring'")
    assert sorted((v["version"], v["superseded_at"] is None) for v in versions) == [(1, False), (2, True)]
