"""One contract per brain operation over HTTP: `/v1/brain/…` paths, the seed API's paths kept as
aliases of the same operations with their own field names and answers, and one status, 422, for
every invalid field, naming the field as the caller named it."""

from __future__ import annotations

from typing import Any

import httpx
import pytest
from brain_env import Brain, brain_fixture  # noqa: F401

from memvault.api.routes.brain import ROUTES

SEED = [
    {"content": "The harbour crane was serviced on 3 March.", "source": "notes:crane", "scope": "business"},
    {"content": "Invoice INV-20931 from Acme was paid.", "source": "notes:ledger", "scope": "business", "pinned": True},
    {"content": "The cabin at Lake Orta has a green door.", "source": "notes:cabin", "scope": "family"},
]
SKILL = {"slug": "pay-invoice", "scope": "business", "content": "1. Check the ledger.\n2. Pay by transfer."}
# Every path of the brain's first API, each still answering.
SEED_PATHS = {
    ("POST", "/memory/write"), ("POST", "/memory/ingest"), ("GET", "/memory/search"), ("GET", "/recall"),
    ("GET", "/memory/body"), ("GET", "/memory/history"), ("GET", "/memory/export"), ("POST", "/memory/skill"),
    ("GET", "/memory/skill"), ("POST", "/memory/sync"), ("POST", "/memory/consolidate"), ("GET", "/memory/proposals"),
    ("POST", "/memory/proposals/{proposal_id}/accept"), ("POST", "/memory/proposals/{proposal_id}/reject"),
}


async def call(brain: Brain, method: str, path: str, as_: str = "writer", expect: int = 200, **kwargs: Any) -> Any:
    headers = {**brain.headers(as_), **kwargs.pop("headers", {})}
    response = await brain.client.request(method, path, headers=headers, **kwargs)
    assert response.status_code == expect, (method, path, response.text)
    return response.json() if response.headers["content-type"].startswith("application/json") else response.text


async def seeded(brain: Brain) -> list[str]:
    ids: list[str] = []
    for fact in SEED:
        ids += (await call(brain, "POST", "/v1/brain/facts", json=fact))["ids"]
    return ids


def test_every_seed_path_is_an_alias_of_a_v1_path_running_the_same_operation() -> None:
    kept = {(route.method, route.path): route for route in ROUTES if route.deprecated}
    current = {route.op.name: route for route in ROUTES if not route.deprecated}
    assert set(kept) == SEED_PATHS
    assert all(route.path.startswith("/v1/brain/") for route in current.values())
    for route in kept.values():
        assert current[route.op.name].op is route.op
        if route.when_given is not None:
            assert current[route.when_given[1].name].op is route.when_given[1]


async def test_reads_answer_the_same_on_the_seed_paths_and_the_v1_paths(brain: Brain) -> None:
    ids = await seeded(brain)
    await call(brain, "POST", "/v1/brain/skills", json=SKILL)
    pairs = [
        (("GET", "/memory/search", {"params": {"q": "harbour crane", "type": "fact", "limit": "5", "mode": "hybrid"}}),
         ("POST", "/v1/brain/facts/search", {"json": {"query": "harbour crane", "entry_type": "fact", "limit": 5,
                                                       "mode": "hybrid"}})),
        (("GET", f"/memory/body?id={ids[0]}", {}), ("GET", f"/v1/brain/facts/{ids[0]}/body", {})),
        (("GET", f"/memory/history?id={ids[0]}", {}), ("GET", f"/v1/brain/facts/{ids[0]}/history", {})),
        (("GET", "/memory/skill", {}), ("GET", "/v1/brain/skills", {})),
        (("GET", "/memory/skill?slug=pay-invoice&version=1", {}), ("GET", "/v1/brain/skills/pay-invoice?version=1", {})),
        (("POST", "/memory/sync", {"json": {"direction": "pull", "source": "notes:"}}),
         ("POST", "/v1/brain/sync", {"json": {"direction": "pull", "source": "notes:"}})),
        (("GET", "/memory/proposals?status=all", {}), ("GET", "/v1/brain/proposals?status=all", {})),
        (("GET", "/memory/export?source_prefix=notes:", {}), ("GET", "/v1/brain/export?source_prefix=notes:", {})),
    ]
    for (old_method, old_path, old), (new_method, new_path, new) in pairs:
        before = await call(brain, old_method, old_path, **old)
        assert before == await call(brain, new_method, new_path, **new), old_path
        assert before, old_path
    found = await call(brain, "GET", "/memory/search", params={"q": "harbour crane"})
    assert [row["id"] for row in found["results"]] == [ids[0]]


async def test_the_seed_paths_keep_their_own_names_in_and_out(brain: Brain) -> None:
    await seeded(brain)
    recalled = await call(brain, "GET", "/recall", params={"q": "invoice", "budget": "900"})
    current = await call(brain, "POST", "/v1/brain/recall", json={"query": "invoice", "budget": 900})
    assert "asof" in recalled and "as_of" not in recalled and "as_of" in current and "asof" not in current
    recalled["as_of"] = recalled.pop("asof")
    assert recalled == current
    assert current["as_of"] == brain.clock.now and current["core"]["entries"]

    dry = await call(brain, "POST", "/memory/consolidate", json={"dryRun": True, "scopes": ["business"]})
    assert dry["dryRun"] is True and "dry_run" not in dry
    dry["dry_run"] = dry.pop("dryRun")
    assert dry == await call(
        brain, "POST", "/v1/brain/consolidate", json={"dry_run": True, "scopes": ["business"]})
    # The seed API's consolidate took an empty call as a dry run over every scope; so does the alias.
    assert (await call(brain, "POST", "/memory/consolidate"))["dryRun"] is True


async def test_writes_on_the_seed_paths_and_the_v1_path_are_one_write(brain: Brain) -> None:
    fact = {"content": "The boiler pressure is 1.5 bar.", "source": "notes:boiler", "scope": "shared"}
    first = await call(brain, "POST", "/memory/write", params={"bands": "off"}, json=fact)
    again = await call(brain, "POST", "/v1/brain/facts", json={**fact, "bands": False})
    alias = await call(brain, "POST", "/memory/ingest", json=fact)
    assert first["written"] == 1 and again["unchanged"] == alias["unchanged"] == 1
    assert first["ids"] == again["ids"] == alias["ids"]
    # Only what a write does differs: a fact written then found unchanged, and embedded once.
    differing = ("written", "unchanged", "embedding")
    assert {k: v for k, v in again.items() if k not in differing} == {k: v for k, v in first.items() if k not in differing}
    registered = await call(brain, "POST", "/memory/skill", json=SKILL)
    unchanged = await call(brain, "POST", "/v1/brain/skills", json=SKILL)
    assert registered["status"] == "registered" and unchanged == {**registered, "status": "unchanged"}
    assert (await call(brain, "POST", "/memory/write", params={"bands": "sometimes"}, json=fact, expect=422))[
        "error"]["message"] == "bands must be true or false"


async def test_proposals_are_decided_alike_on_either_path(brain: Brain) -> None:
    for scope in ("business", "family"):
        for n, text in enumerate(("The gate code is 2291.", "the gate code is 2291")):
            await call(brain, "POST", "/v1/brain/facts",
                       json={"content": text, "source": f"notes:{scope}:{n}", "scope": scope, "bands": False})
    stored = await call(brain, "POST", "/v1/brain/consolidate", json={"dry_run": False})
    assert stored["dry_run"] is False and stored["stored"] == 2
    business, family = sorted((await call(brain, "GET", "/v1/brain/proposals"))["proposals"], key=lambda p: p["scope"])
    rejected = await call(brain, "POST", f"/memory/proposals/{business['id']}/reject")
    assert rejected == {"id": business["id"], "status": "rejected"}
    accepted = await call(brain, "POST", f"/v1/brain/proposals/{family['id']}/accept")
    assert accepted["status"] == "accepted" and accepted["kind"] == "retire" and len(accepted["superseded"]) == 1
    for path in (f"/memory/proposals/{family['id']}/reject", f"/v1/brain/proposals/{business['id']}/accept"):
        assert (await call(brain, "POST", path, expect=409))["error"]["code"] == "conflict"


INVALID = [
    # (method, path, request, the field the refusal names)
    ("POST", "/v1/brain/facts", {"json": {"content": "x", "scope": "business", "confidence": 2}}, "confidence"),
    ("POST", "/v1/brain/facts", {"json": {"facts": [{"content": "ok", "scope": "business"}, {"content": 5}]}},
     "facts[1].content"),
    ("POST", "/v1/brain/facts", {"json": {"content": "x", "scope": "garden"}}, "scope"),
    ("POST", "/v1/brain/facts", {"json": {"content": "x", "scope": "business", "bands": "off"}}, "bands"),
    ("POST", "/v1/brain/facts", {"json": {"content": "x", "scope": "business", "colour": "red"}}, "colour"),
    ("POST", "/v1/brain/facts", {"json": ["a list"]}, "body"),
    ("POST", "/v1/brain/facts", {"content": b"{nope", "headers": {"content-type": "application/json"}}, "JSON"),
    ("POST", "/v1/brain/facts", {"content": b"[" * 100_000, "headers": {"content-type": "application/json"}}, "JSON"),
    ("POST", "/v1/brain/facts", {"content": b'{"content": "\xff"}', "headers": {"content-type": "application/json"}},
     "UTF-8"),
    ("POST", "/v1/brain/facts", {"content": b'{"content": "x", "importance": 1' + b"0" * 5000 + b"}",
                                 "headers": {"content-type": "application/json"}}, "the request body is not valid JSON"),
    # Half of a surrogate pair, escaped as JavaScript's JSON.stringify writes it, and as raw bytes.
    ("POST", "/v1/brain/facts", {"content": b'{"content": "cut \\ud83d", "scope": "business"}',
                                 "headers": {"content-type": "application/json"}}, "content"),
    ("POST", "/v1/brain/facts", {"content": b'{"facts": [{"content": "ok"}, {"content": "x \xed\xa0\x80"}]}',
                                 "headers": {"content-type": "application/json"}}, "facts[1].content"),
    ("POST", "/v1/brain/sync", {"content": b'{"direction": "push", "source": "files:", "items": [{"source": '
                                           b'"files:a\\udc00", "content": "x"}]}',
                                "headers": {"content-type": "application/json"}}, "items"),
    ("POST", "/v1/brain/facts/search", {"content": b'{"query": "\\udfff"}',
                                        "headers": {"content-type": "application/json"}}, "query"),
    ("POST", "/v1/brain/facts/search", {"json": {"query": "x", "mode": "fuzzy"}}, "mode"),
    ("POST", "/v1/brain/facts/search", {"json": {"query": "  "}}, "query"),
    ("POST", "/v1/brain/facts/search", {"json": {"query": "x", "limit": "5"}}, "limit"),
    ("POST", "/v1/brain/facts/search", {"json": {"query": "x", "as_of": "last tuesday"}}, "as_of"),
    ("POST", "/v1/brain/facts/search", {"json": {"query": "x", "entry_type": "memo"}}, "entry_type"),
    ("POST", "/v1/brain/facts/search", {"params": {"limit": "5"}, "json": {"query": "x"}}, "limit"),
    ("POST", "/v1/brain/recall", {"json": {"budget": 0}}, "budget"),
    ("POST", "/v1/brain/recall", {"json": {"as_of": True}}, "as_of"),
    ("GET", "/v1/brain/facts/nope/body", {}, "id"),
    ("GET", "/v1/brain/facts/nope/history", {}, "id"),
    ("GET", "/v1/brain/facts/mem-0000000000000000/body", {"params": {"id": "mem-0000000000000001"}}, "id"),
    ("GET", "/v1/brain/export", {"params": {"since": "yesterday"}}, "since"),
    ("POST", "/v1/brain/skills", {"json": {"slug": "Bad Slug", "content": "x", "scope": "business"}}, "slug"),
    ("GET", "/v1/brain/skills/pay-invoice", {"params": {"version": "0"}}, "version"),
    ("POST", "/v1/brain/sync", {"json": {"direction": "sideways", "source": "files:"}}, "direction"),
    ("POST", "/v1/brain/sync", {"json": {"direction": "push", "source": "files:"}}, "items"),
    ("POST", "/v1/brain/consolidate", {"json": {"dry_run": "yes"}}, "dry_run"),
    ("POST", "/v1/brain/consolidate", {"json": {"scopes": []}}, "scopes"),
    ("GET", "/v1/brain/proposals", {"params": {"status": "maybe"}}, "status"),
    ("GET", "/v1/brain/proposals", {"params": {"limit": "-1"}}, "limit"),
    ("POST", "/v1/brain/proposals/nope/accept", {}, "id"),
    ("POST", "/v1/brain/proposals/nope/reject", {}, "id"),
    # The seed paths name the fields as their callers do.
    ("POST", "/memory/write", {"json": {"content": "x", "scope": "business", "importance": 9}}, "importance"),
    ("GET", "/memory/search", {"params": {"q": ""}}, "q"),
    ("GET", "/memory/search", {"params": {"q": "x", "type": "memo"}}, "type"),
    ("GET", "/recall", {"params": {"budget": "lots"}}, "budget"),
    ("GET", "/memory/body", {"params": {"id": "nope"}}, "id"),
    ("GET", "/memory/history", {}, "id"),
    ("POST", "/memory/skill", {"json": {"slug": "ok", "content": "", "scope": "business"}}, "content"),
    ("GET", "/memory/skill", {"params": {"slug": "Bad Slug"}}, "slug"),
    ("POST", "/memory/sync", {"json": {"direction": "pull", "source": "files:", "since": "soon"}}, "since"),
    ("POST", "/memory/consolidate", {"json": {"dryRun": "no"}}, "dryRun"),
    ("POST", "/memory/consolidate", {"json": {"dryRun": True, "dry_run": True}}, "dryRun or dry_run"),
    ("GET", "/memory/proposals", {"params": {"limit": "500"}}, "limit"),
    ("POST", "/memory/proposals/nope/accept", {}, "proposal_id"),
]


@pytest.mark.parametrize(("method", "path", "request_", "field"), INVALID, ids=[f"{m} {p} {f}" for m, p, _, f in INVALID])
async def test_every_invalid_field_is_a_422_naming_it_and_changes_nothing(
    brain: Brain, method: str, path: str, request_: dict[str, Any], field: str
) -> None:
    await seeded(brain)
    facts, events = await brain.count(), await brain.events()
    refused = await call(brain, method, path, expect=422, **request_)
    assert refused["error"]["code"] == "invalid_request"
    assert refused["error"]["message"].startswith(field) or f" {field}" in refused["error"]["message"], refused
    assert (await brain.count(), await brain.events()) == (facts, events)


async def test_the_seed_paths_ignore_query_parameters_they_never_read_and_v1_names_them(brain: Brain) -> None:
    await seeded(brain)
    kept = await call(brain, "GET", "/memory/search", params={"q": "harbour", "_": "1712", "format": "x"})
    assert kept["results"]
    refused = await call(brain, "GET", "/v1/brain/proposals", params={"_": "1712"}, expect=422)
    assert refused["error"]["message"] == "unknown field: _"


async def test_the_v1_paths_are_memvaults_own_not_a_providers(brain: Brain) -> None:
    """Errors under /v1/brain come in memvault's envelope (not OpenAI's), and its body limit applies."""
    missing = await brain.client.post("/v1/brain/facts/search", json={"query": "x"})
    assert missing.status_code == 401 and set(missing.json()) == {"error"}
    assert set(missing.json()["error"]) == {"code", "message"}
    huge = "x" * (brain.deps.settings.max_body_bytes + 1)
    too_big = await brain.client.post("/v1/brain/facts", headers=brain.headers("writer"),
                                      content=huge.encode(), timeout=httpx.Timeout(30))
    assert too_big.status_code == 413 and too_big.json()["error"]["code"] == "payload_too_large"
    unknown = await brain.client.post("/v1/brain/proposals/prop-x:accept", headers=brain.headers("writer"))
    assert unknown.status_code == 404 and set(unknown.json()["error"]) == {"code", "message"}
