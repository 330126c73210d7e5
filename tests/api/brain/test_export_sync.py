"""Export (JSONL, everything the credential may read) and push/pull sync convergence."""

from __future__ import annotations

import json
from typing import Any

from brain_env import Brain, brain_fixture  # noqa: F401


async def _export(brain: Brain, who: str, **params: Any) -> list[dict[str, Any]]:
    response = await brain.get("/memory/export", who, **params)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("application/x-ndjson")
    return [json.loads(line) for line in response.text.splitlines()]


async def test_export_is_jsonl_of_everything_readable_with_history_and_bodies(brain: Brain) -> None:
    long_body = "Chapter one. " * 200
    await brain.write({"content": long_body, "scope": "business", "source": "files:book.md"})
    old = (await brain.write({"content": "v1", "scope": "business", "source": "files:x.md"}))["ids"][0]
    await brain.write({"content": "v2", "scope": "business", "source": "files:x.md", "supersedes": old})
    await brain.write({"content": "family only", "scope": "family", "source": "files:f.md"})
    await brain.write({"content": "elsewhere", "scope": "business", "source": "crm"})
    rows = await _export(brain, "business", source_prefix="files:")
    assert sorted(r["source"] for r in rows) == ["files:book.md", "files:x.md", "files:x.md"]
    assert [r["current"] for r in rows if r["source"] == "files:x.md"] == [False, True]
    assert next(r["body"] for r in rows if r["source"] == "files:book.md") == long_body.strip()
    assert len(await _export(brain, "business")) == 4
    assert [r["content"] for r in await _export(brain, "family")] == ["family only"]


async def test_sync_push_is_idempotent_and_reconciles_its_source(brain: Brain) -> None:
    headers = brain.headers("writer")
    push = {"direction": "push", "source": "files:", "items": [
        {"content": "alpha", "source": "files:a.md", "scope": "shared"},
        {"content": "beta", "source": "files:b.md", "scope": "shared"}]}
    first = (await brain.client.post("/memory/sync", json=push, headers=headers)).json()
    again = (await brain.client.post("/memory/sync", json=push, headers=headers)).json()
    assert first["written"] == 2 and again["unchanged"] == 2 and again["written"] == 0
    push["items"] = push["items"][:1]
    brain.clock.advance(10)
    fewer = (await brain.client.post("/memory/sync", json=push, headers=headers)).json()
    assert fewer["retired"] == 1


async def test_sync_pull_returns_changes_since(brain: Brain) -> None:
    headers = brain.headers("writer")
    await brain.write({"content": "alpha", "source": "files:a.md", "scope": "shared"})
    mark = brain.clock.advance(10)
    brain.clock.advance(10)
    await brain.write({"content": "beta", "source": "files:b.md", "scope": "shared"})
    await brain.write({"source_prefix": "files:", "reconcile": True, "scope": "shared",
                       "facts": [{"content": "beta", "source": "files:b.md"}]})
    pulled = (await brain.client.post("/memory/sync", json={"direction": "pull", "source": "files:", "since": mark},
                                      headers=headers)).json()
    assert [i["content"] for i in pulled["items"]] == ["beta"]
    assert [r["source"] for r in pulled["retired"]] == ["files:a.md"]
    assert pulled["now"] == brain.clock.now


async def test_bad_sync_input_is_a_4xx_and_writes_nothing(brain: Brain) -> None:
    headers = brain.headers("writer")
    for body in ({"direction": "sideways", "source": "files:"}, {"direction": "push", "source": "files:"},
                 {"direction": "pull"}, {"direction": "pull", "source": "files:", "since": "later"},
                 {"direction": "push", "source": "files:", "items": [{"content": "x", "source": "other:x"}]}):
        response = await brain.client.post("/memory/sync", json=body, headers=headers)
        assert 400 <= response.status_code < 500, body
    assert await brain.count() == 0
    reader = await brain.client.post("/memory/sync", headers=brain.headers("business"), json={
        "direction": "push", "source": "files:", "items": [{"content": "x", "scope": "business"}]})
    assert reader.status_code == 403


async def test_a_link_across_the_wall_reads_as_null(brain: Brain) -> None:
    """A writer of both scopes moves a fact from business to family: a business reader still sees
    the old row, but not the id of its successor, on any path; a reader of both sees the link."""
    old = (await brain.write({"content": "Acme's account manager is Priya", "scope": "business",
                              "source": "crm:acme"}))["ids"][0]
    brain.clock.advance(10)
    new = (await brain.write({"content": "Acme's account manager is Tomasz", "scope": "family",
                              "source": "crm:acme", "supersedes": old}))["ids"][0]
    pull = {"direction": "pull", "source": "crm:"}
    for reader, link in (("business", None), ("reader-all", new)):
        exported = {r["id"]: r for r in await _export(brain, reader)}
        assert exported[old]["superseded_by"] == link and exported[old]["current"] is False
        chain = (await brain.get("/memory/history", reader, id=old)).json()["chain"]
        assert chain[0]["id"] == old and chain[0]["superseded_by"] == link
        pulled = (await brain.client.post("/memory/sync", json=pull, headers=brain.headers(reader))).json()
        assert [(r["id"], r["superseded_by"]) for r in pulled["retired"]] == [(old, link)]
        past = (await brain.get("/memory/search", reader, q="account manager", as_of=brain.clock.now - 5)).json()
        assert [(r["id"], r["superseded_by"]) for r in past["results"]] == [(old, link)]
    assert new not in (await brain.get("/memory/export", "business")).text
