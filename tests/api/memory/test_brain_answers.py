"""Brain facts recalled beside conversation memory for a memory key granted brain scopes, over
HTTP in-process on the local stores and the real embedder: the grant made through the admin surface, the walls of the
granted scopes, pinned facts first, one budget, superseded versions never shown (and the old one
with ``as_of``), the per-call switch, a key without a grant unchanged, and the granted key writing
facts itself when it was made a writer."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from memvault.api.app import create_app
from memvault.core import brain
from memvault.core.deps import Deps
from memvault.core.settings import load_settings
from memvault.runtime.local import build_local_deps, close_local_deps

ADMIN = "answers-admin-token-" + "x" * 24
ADMIN_AUTH = {"Authorization": f"Bearer {ADMIN}"}
NOW = 1_800_000_000.0
DAY = 86400.0
WRITER = brain.Credential("notes", frozenset({"business", "family", "personal", "shared"}), True)


@dataclass
class Site:
    deps: Deps
    client: httpx.AsyncClient

    async def key(self, **grant: Any) -> dict[str, Any]:
        made = await self.client.post("/v1/admin/keys", json={"label": "bot", **grant}, headers=ADMIN_AUTH)
        assert made.status_code == 200, made.text
        return dict(made.json())

    async def facts(self, *facts: dict[str, Any]) -> list[str]:
        written = await brain.WRITE_FACTS.perform(self.deps, WRITER, {"facts": list(facts), "bands": False})
        return list(written.ids)

    async def say(self, secret: str, text: str, days_ago: float) -> None:
        message = {"role": "user", "content": text, "timestamp": NOW - days_ago * DAY}
        stored = await self.client.post("/v1/memory", json={"messages": [message]}, headers=auth(secret))
        assert stored.status_code == 200, stored.text

    async def search(self, secret: str, **body: Any) -> dict[str, Any]:
        found = await self.client.post("/v1/memory/search", json={"now": NOW, **body}, headers=auth(secret))
        assert found.status_code == 200, found.text
        return dict(found.json())


def auth(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


@pytest.fixture
async def site(tmp_path: Path) -> AsyncIterator[Site]:
    settings = {"MEMVAULT_DATA_DIR": str(tmp_path), "MEMVAULT_EMBEDDER": "minilm", "MEMVAULT_ADMIN_TOKEN": ADMIN}
    deps = build_local_deps(load_settings(settings))
    deps.clock = lambda: NOW
    transport = httpx.ASGITransport(app=create_app(deps))
    async with httpx.AsyncClient(transport=transport, base_url="http://memvault.test") as client:
        yield Site(deps, client)
    await close_local_deps(deps)


def texts(found: dict[str, Any]) -> list[str]:
    return [fact["text"] for fact in found["facts"]]


async def test_a_granted_key_finds_its_scopes_facts_beside_its_memory_and_nothing_behind_the_wall(site: Site) -> None:
    made = await site.key(brain_scopes=["family"])
    assert (made["brain_scopes"], made["brain_writer"]) == (["family"], False)
    await site.facts(
        {"content": "The car's registration plate is KX19 ZPT.", "scope": "family", "source": "notes/car.md"},
        {"content": "The company car's registration plate is BV22 LMN.", "scope": "business", "source": "notes/work.md"},
    )
    await site.say(made["key"], "We drove the car to the coast on Saturday.", 3)
    found = await site.search(made["key"], query="What is the car's registration plate?")
    assert texts(found) == ["The car's registration plate is KX19 ZPT."]
    assert [fact["scope"] for fact in found["facts"]] == ["family"]
    assert [item["text"] for item in found["items"]] == ["We drove the car to the coast on Saturday."]
    assert found["tokens"] == sum(i["tokens"] for i in found["items"]) + sum(f["tokens"] for f in found["facts"])
    # Asked for in the walled scope's own words, the business fact still does not come.
    walled = await site.search(made["key"], query="company car registration plate BV22 LMN")
    assert all("BV22" not in text for text in texts(walled))


async def test_a_key_without_a_grant_and_a_call_that_turns_the_brain_off_read_no_facts(site: Site) -> None:
    plain, granted = await site.key(), await site.key(brain_scopes=["family", "shared"])
    assert plain["brain_scopes"] == []
    await site.facts({"content": "The wifi network at home is Larkspur-5G.", "scope": "family", "source": "notes/house.md"})
    for secret in (plain["key"], granted["key"]):
        await site.say(secret, "The wifi kept dropping during the film last night.", 1)
    alone = await site.search(plain["key"], query="What is the home wifi network called?")
    off = await site.search(granted["key"], query="What is the home wifi network called?", brain=False)
    on = await site.search(granted["key"], query="What is the home wifi network called?")
    assert alone["facts"] == [] and off["facts"] == [] and "brain" not in alone["metrics"]
    assert [i["text"] for i in alone["items"]] == [i["text"] for i in off["items"]] == [i["text"] for i in on["items"]]
    assert texts(on) == ["The wifi network at home is Larkspur-5G."]


async def test_pinned_facts_come_first_and_everything_fits_one_budget(site: Site) -> None:
    made = await site.key(brain_scopes=["family"])
    await site.facts(
        {"content": "Ana is vegetarian and allergic to peanuts.", "scope": "family", "source": "notes/ana.md",
         "pinned": True},
        {"content": "The boiler is serviced by Hughes Heating every October.", "scope": "family",
         "source": "notes/house.md"},
    )
    for day in range(30):
        await site.say(made["key"], f"Day {day}: the boiler made a knocking noise again and the heating was slow.", day)
    for budget in (60, 120, 400):
        found = await site.search(made["key"], query="Who services the boiler?", budget_tokens=budget)
        assert found["tokens"] <= budget
        assert found["facts"][0]["pinned"] and found["facts"][0]["text"].startswith("Ana is vegetarian")
    roomy = await site.search(made["key"], query="Who services the boiler?", budget_tokens=400)
    assert "The boiler is serviced by Hughes Heating every October." in texts(roomy)
    assert roomy["items"], "the facts leave room for conversation memory"


async def test_a_superseded_fact_is_never_recalled_now_and_is_what_as_of_recalls_for_its_time(site: Site) -> None:
    made = await site.key(brain_scopes=["personal"])
    [old] = await site.facts({"content": "My dentist is Dr. Okafor at Brookside Dental.", "scope": "personal",
                              "source": "notes/health.md", "valid_from": NOW - 300 * DAY})
    await site.facts({"content": "My dentist is Dr. Lindqvist at Harbour Dental.", "scope": "personal",
                      "source": "notes/health-2.md", "supersedes": old, "valid_from": NOW - 10 * DAY})
    now = await site.search(made["key"], query="Who is my dentist?")
    assert texts(now) == ["My dentist is Dr. Lindqvist at Harbour Dental."]
    then = await site.search(made["key"], query="Who is my dentist?", as_of=NOW - 100 * DAY)
    assert texts(then) == ["My dentist is Dr. Okafor at Brookside Dental."]


async def test_the_grant_is_checked_where_it_is_made(site: Site) -> None:
    for body in ({"brain_scopes": ["nowhere"]}, {"brain_writer": True}, {"brain_scopes": "family"},
                 {"brain_scopes": []}):
        refused = await site.client.post("/v1/admin/keys", json=body, headers=ADMIN_AUTH)
        assert refused.status_code == 422, (body, refused.text)
    listed = (await site.client.get("/v1/admin/keys", headers=ADMIN_AUTH)).json()["keys"]
    assert listed == []


async def test_a_granted_writer_key_writes_facts_and_a_reader_key_or_a_plain_key_may_not(site: Site) -> None:
    writer = await site.key(brain_scopes=["family"], brain_writer=True)
    reader, plain = await site.key(brain_scopes=["family"]), await site.key()
    fact = {"content": "The spare key is with the neighbours at number 14.", "scope": "family", "source": "telegram:42"}
    written = await site.client.post("/v1/brain/facts", json=fact, headers=auth(writer["key"]))
    assert written.status_code == 200, written.text
    assert (await site.client.post("/v1/brain/facts", json=fact, headers=auth(reader["key"]))).status_code == 403
    assert (await site.client.post("/v1/brain/facts", json=fact, headers=auth(plain["key"]))).status_code == 401
    beyond = {**fact, "scope": "business"}
    assert (await site.client.post("/v1/brain/facts", json=beyond, headers=auth(writer["key"]))).status_code == 403
    found = await site.search(reader["key"], query="Who has the spare key?")
    assert texts(found) == [fact["content"]]


async def test_a_granted_search_names_its_facts_and_its_messages_in_its_receipt(site: Site) -> None:
    made = await site.key(brain_scopes=["family"])
    [fact_id] = await site.facts(
        {"content": "The spare house key is under the blue flowerpot.", "scope": "family", "source": "notes/house.md"})
    await site.say(made["key"], "I locked myself out of the house again on Tuesday.", 2)
    found = await site.search(made["key"], query="Where is the spare house key?")
    assert [fact["id"] for fact in found["facts"]] == [fact_id] and found["items"]
    read = await site.client.get(f"/v1/memory/receipts/{found['receipt']}", headers=auth(made["key"]))
    assert read.status_code == 200, read.text
    receipt = read.json()["receipt"]
    fact, *messages = receipt["items"]
    assert (fact["kind"], fact["vault"], fact["ids"]) == ("fact", "brain", [fact_id])
    assert (fact["score"], fact["tokens"]) == (found["facts"][0]["score"], found["facts"][0]["tokens"])
    assert [m["ids"] for m in messages] == [item["source_ids"] for item in found["items"]]
    assert {m["kind"] for m in messages} == {"message"} and receipt["tokens"] == found["tokens"]
    # The fact resolves as a fact, first, and is never taken for a message.
    first, *rest = read.json()["memories"]
    assert (first["id"], first["kind"], first["state"], first["scope"]) == (fact_id, "fact", "current", "family")
    assert first["text"] == "The spare house key is under the blue flowerpot." and first["role"] is None
    assert rest and {m["kind"] for m in rest} == {"message"} and fact_id not in {m["id"] for m in rest}
    off = await site.search(made["key"], query="Where is the spare house key?", brain=False)
    unjoint = (await site.client.get(f"/v1/memory/receipts/{off['receipt']}", headers=auth(made["key"]))).json()
    assert {item["kind"] for item in unjoint["receipt"]["items"]} == {"message"}
