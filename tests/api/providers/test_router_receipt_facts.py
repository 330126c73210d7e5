"""A routed call's receipt names the brain facts it injected, and reading it later resolves each
fact as the brain holds it now, through the reading key's grant as it stands then: current (text,
scope, validity), superseded (naming its successor), retired, gone, or, once its scope is no longer
granted, unreadable with nothing but its id; never a text of a scope the key may no longer read.
The messages beside the facts resolve as before. A real memvault server and a fake provider, both
on 127.0.0.1, with their own stores (pinned facts here would reach every other test's granted key)."""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fake_upstream import FakeUpstream, LoopCapture, ServerThread
from test_router_behaviour import body_of, path_of

from conftest import Router
from memvault.api.app import create_app
from memvault.core import brain
from memvault.core.brain import fact_input
from memvault.core.credentials.keys import create_key
from memvault.core.redaction import Redaction
from memvault.core.settings import load_settings
from memvault.runtime.local import build_local_deps, close_local_deps

WRITER = brain.Credential("notes", frozenset({"business", "family", "personal", "shared"}), True)
FACTS = {
    "current": ("family", "The boiler is serviced by Hughes Heating every October."),
    "superseded": ("family", "The gym locker code is 2231."),
    "retired": ("family", "The gate code is 4412."),
    "across": ("family", "The car is parked on level 2 of the station garage."),
    "gone": ("family", "Grandma's spare glasses are in the hall drawer."),
    "walled": ("business", "Invoice 77120 to Okafor Ltd is due on the 30th."),
}
SUCCESSORS = {
    "superseded": ("family", "The gym locker code is 5580."),
    "across": ("business", "The company car is parked in bay 14 at the office."),
    "walled": ("business", "Invoice 77120 to Okafor Ltd was paid in full."),
}
MESSAGE = "My gym locker is number 12, next to the showers."


@pytest.fixture
def router(tmp_path: Path) -> Iterator[Router]:
    upstream = FakeUpstream()
    with ServerThread(upstream) as fake:
        settings = load_settings({"MEMVAULT_DATA_DIR": str(tmp_path), "MEMVAULT_EMBEDDER": "hash",
                                  "MEMVAULT_OPENAI_BASE_URL": fake.url})
        deps = build_local_deps(settings)
        capture = LoopCapture(create_app(deps))
        with ServerThread(capture) as server:
            assert httpx.get(server.url + "/health", timeout=30).status_code == 200  # the server's loop is known from here
            yield Router(server.url, deps, capture, upstream, fake.url, tmp_path)
            if capture.loop is not None:
                asyncio.run_coroutine_threadsafe(close_local_deps(deps), capture.loop).result(timeout=30)


def granted_key(router: Router, scopes: tuple[str, ...]) -> str:
    _, secret = asyncio.run(create_key(router.deps.db, "granted", router.deps.clock(), brain_scopes=scopes))
    return secret


def auth(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


def write(router: Router, name: str, scope: str, content: str, **more: Any) -> str:
    fact = {"content": content, "scope": scope, "source": f"notes/{name}.md", "pinned": True, **more}
    written = router.run(lambda: brain.WRITE_FACTS.perform(router.deps, WRITER, {"facts": [fact], "bands": False}))
    return str(written.ids[0])


def routed_receipt(router: Router, secret: str, question: str) -> str:
    answer = httpx.post(router.url + path_of("openai", False), json=body_of("openai", [question]), timeout=30,
                        headers={"X-Memory-Key": secret, "X-Memory-Mode": "read", "X-Memory-Context-Limit": "2000"})
    assert answer.status_code == 200, answer.text
    return answer.headers["x-memory-receipt"]


def read(router: Router, secret: str, receipt_id: str) -> httpx.Response:
    found = httpx.get(f"{router.url}/v1/memory/receipts/{receipt_id}", headers=auth(secret), timeout=30)
    assert found.status_code == 200, found.text
    return found


def facts_of(view: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {memory["id"]: memory for memory in view["memories"] if memory["kind"] == "fact"}


def test_a_receipt_reads_each_fact_it_named_as_the_brain_and_the_grant_stand_now(router: Router) -> None:
    ids = {name: write(router, name, scope, text) for name, (scope, text) in FACTS.items()}
    secret = granted_key(router, ("family", "business"))
    stored = httpx.post(router.url + "/v1/memory", headers=auth(secret), timeout=30,
                        json={"messages": [{"role": "user", "content": MESSAGE, "id": "locker"}]})
    assert stored.status_code == 200, stored.text
    receipt_id = routed_receipt(router, secret, "What's the code for my gym locker?")

    before = read(router, secret, receipt_id).json()
    named = [item["ids"][0] for item in before["receipt"]["items"] if item["kind"] == "fact"]
    assert sorted(named) == sorted(ids.values())
    assert [m["id"] for m in before["memories"]][:len(named)] == named  # in the order the receipt names them
    assert {m["state"] for m in facts_of(before).values()} == {"current"}
    assert facts_of(before)[ids["walled"]]["text"] == FACTS["walled"][1]

    successors = {name: write(router, f"{name}-next", scope, text, supersedes=ids[name])
                  for name, (scope, text) in SUCCESSORS.items()}
    router.run(lambda: brain.RETIRE_FACT.perform(router.deps, WRITER, {"id": ids["retired"], "reason": "gate replaced"}))
    # The brain deletes no fact itself; a row leaves only with its database (a restore of an older backup, an operator).
    router.run(lambda: router.deps.db.execute("DELETE FROM memory WHERE id = ?", (ids["gone"],)))
    # The deployment drops the business scope: every grant of it ends with it.
    router.deps.settings = dataclasses.replace(router.deps.settings, brain_scopes=("family", "personal", "shared"))

    after = read(router, secret, receipt_id)
    facts = facts_of(after.json())
    current = facts[ids["current"]]
    assert (current["state"], current["text"], current["scope"]) == ("current", FACTS["current"][1], "family")
    assert current["timestamp"] > 0 and current["ended_at"] is None and current["replaced_by"] is None
    superseded = facts[ids["superseded"]]
    assert (superseded["state"], superseded["replaced_by"]) == ("superseded", successors["superseded"])
    assert superseded["text"] == FACTS["superseded"][1] and superseded["ended_at"] >= superseded["timestamp"]
    retired = facts[ids["retired"]]
    assert (retired["state"], retired["replaced_by"], retired["text"]) == ("retired", None, FACTS["retired"][1])
    assert retired["ended_at"] is not None
    # Its successor lies behind the wall now: the fact reads as retired, the successor unnamed.
    across = facts[ids["across"]]
    assert (across["state"], across["replaced_by"], across["text"]) == ("retired", None, FACTS["across"][1])
    assert facts[ids["gone"]] == {"id": ids["gone"], "kind": "fact", "state": "gone", "role": None, "text": None,
                                  "timestamp": None, "scope": None, "ended_at": None, "replaced_by": None}
    assert facts[ids["walled"]] == {**facts[ids["gone"]], "id": ids["walled"], "state": "unreadable"}
    for hidden in (FACTS["walled"][1], SUCCESSORS["walled"][1], SUCCESSORS["across"][1], "business",
                   successors["walled"], successors["across"]):
        assert hidden not in after.text
    messages = [m for m in after.json()["memories"] if m["kind"] == "message"]
    assert messages == [m for m in before["memories"] if m["kind"] == "message"]
    assert [(m["id"], m["state"], m["text"]) for m in messages] == [("locker", "kept", MESSAGE)]


def test_a_key_granted_nothing_now_reads_every_fact_it_was_given_as_an_id(router: Router) -> None:
    fact_id = write(router, "wifi", "shared", "The wifi password is on the fridge magnet.")
    secret = granted_key(router, ("shared",))
    receipt_id = routed_receipt(router, secret, "Where is the wifi password?")
    router.deps.settings = dataclasses.replace(router.deps.settings, brain_scopes=("family", "personal"))
    after = read(router, secret, receipt_id)
    assert facts_of(after.json())[fact_id]["state"] == "unreadable"
    assert "fridge" not in after.text
    # Another key never reads the receipt at all.
    _, other = asyncio.run(create_key(router.deps.db, "other", router.deps.clock(), brain_scopes=("family",)))
    assert httpx.get(f"{router.url}/v1/memory/receipts/{receipt_id}", headers=auth(other), timeout=30).status_code == 404


def test_a_fact_stored_before_a_rule_of_the_secret_gate_reads_redacted(
    router: Router, monkeypatch: pytest.MonkeyPatch
) -> None:
    card = "4111 1111 1111 1111"
    monkeypatch.setattr(fact_input, "redact", lambda text: Redaction(text, ()))  # writes as a version without the rule did
    fact_id = write(router, "card", "family", f"The family card number is {card}.")
    monkeypatch.undo()
    secret = granted_key(router, ("family",))
    seen = len(router.upstream.received)
    after = read(router, secret, routed_receipt(router, secret, "What is the family card number?"))
    fact = facts_of(after.json())[fact_id]
    assert fact["state"] == "current" and "[redacted:" in fact["text"] and card not in after.text
    assert after.json()["receipt"]["redacted"] >= 1
    # What the provider was sent: the fact, redacted on its way into the call.
    [forwarded] = router.upstream.received[seen:]
    assert "The family card number is [redacted:" in forwarded.body.decode() and card not in forwarded.body.decode()
    found = httpx.post(router.url + "/v1/memory/search", headers=auth(secret), timeout=30,
                       json={"query": "What is the family card number?"})
    assert found.status_code == 200 and card not in found.text
    assert [f["id"] for f in found.json()["facts"]] == [fact_id] and "[redacted:" in found.json()["facts"][0]["text"]
