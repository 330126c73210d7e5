"""The memory router for a key granted brain scopes, on every provider route: the granted facts
reach the provider's system field under their own label, above conversation memory and within the
context limit; `X-Memory-Brain: off` (or `memvault.brain: false` in the body) recalls
conversation memory alone."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
from test_router_behaviour import PROVIDERS, body_of, path_of, system_text

from conftest import Router
from memvault.core.answers.router import FACTS_HEADING
from memvault.core.credentials.keys import create_key

FACT = "The bike lock combination is 7-3-9-1, for the blue D-lock in the garage."


def granted_key(router: Router) -> str:
    """A key granted the family scope as a writer, which writes the fact itself."""
    _, secret = asyncio.run(create_key(router.deps.db, "granted", router.deps.clock(), brain_scopes=("family",),
                                       brain_writer=True))
    written = httpx.post(router.url + "/v1/brain/facts", json={"content": FACT, "scope": "family",
                         "source": "notes/garage.md"}, headers={"Authorization": f"Bearer {secret}"}, timeout=30)
    assert written.status_code == 200, written.text
    return secret


def sent_system(router: Router, provider: str, secret: str, body: dict[str, object], **headers: str) -> str:
    before = len(router.upstream.received)
    answer = httpx.post(router.url + path_of(provider, False), json=body, timeout=30,
                        headers={"X-Memory-Key": secret, "X-Memory-Mode": "read", **headers})
    assert answer.status_code == 200, answer.text
    return system_text(provider, json.loads(router.upstream.received[before].body))


@pytest.mark.parametrize("provider", PROVIDERS)
def test_granted_facts_reach_every_provider_labelled_and_the_switch_turns_them_off(router: Router, provider: str) -> None:
    secret = granted_key(router)
    asked = body_of(provider, ["What's the combination for the bike lock?"])
    on = sent_system(router, provider, secret, asked, **{"X-Memory-Context-Limit": "200"})
    assert FACTS_HEADING in on and FACT in on
    assert on.index(FACTS_HEADING) < on.index(FACT)
    assert FACT not in sent_system(router, provider, secret, asked, **{"X-Memory-Brain": "off"})
    in_body = {**asked, "memvault": {"brain": False}}
    assert FACT not in sent_system(router, provider, secret, in_body)


def test_a_routed_calls_receipt_names_the_facts_it_injected_beside_its_messages(router: Router) -> None:
    secret = granted_key(router)
    provider = PROVIDERS[0]
    stored = httpx.post(router.url + "/v1/memory", headers={"Authorization": f"Bearer {secret}"}, timeout=30,
                        json={"messages": [{"role": "user", "content": "The bike lock jammed in the rain yesterday."}]})
    assert stored.status_code == 200, stored.text
    answer = httpx.post(router.url + path_of(provider, False), timeout=30,
                        json=body_of(provider, ["What's the combination for the bike lock?"]),
                        headers={"X-Memory-Key": secret, "X-Memory-Mode": "read", "X-Memory-Context-Limit": "200"})
    assert answer.status_code == 200, answer.text
    read = httpx.get(f"{router.url}/v1/memory/receipts/{answer.headers['x-memory-receipt']}", timeout=30,
                     headers={"Authorization": f"Bearer {secret}"})
    assert read.status_code == 200, read.text
    receipt = read.json()["receipt"]
    kinds = [item["kind"] for item in receipt["items"]]
    assert kinds[0] == "fact" and "message" in kinds and kinds == sorted(kinds)  # facts first, as the context shows
    fact = receipt["items"][0]
    assert fact["vault"] == "brain" and fact["ids"][0].startswith("mem-") and fact["tokens"] > 0
    assert receipt["tokens"] == sum(item["tokens"] for item in receipt["items"]) <= 200
