"""Recall: one envelope, four tiers, never over budget; core is pinned and never searched."""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

from brain_env import Brain, brain_fixture, close_brain, open_brain  # noqa: F401
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memvault.core.tokens import estimate_tokens
from memvault.core.tuning import Tuning


def _entries(envelope: dict[str, Any]) -> list[dict[str, Any]]:
    return [*envelope["core"]["entries"], *envelope["recent"], *envelope["facts"]]


async def _recall(brain: Brain, **params: Any) -> dict[str, Any]:
    response = await brain.get("/recall", "reader-all", **params)
    assert response.status_code == 200, response.text
    envelope: dict[str, Any] = response.json()
    return envelope


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sizes=st.lists(st.integers(1, 400), min_size=1, max_size=25),
    pinned=st.lists(st.booleans(), min_size=25, max_size=25),
    budget=st.one_of(st.none(), st.integers(1, 8000)),
)
def test_recall_never_exceeds_its_budget(sizes: list[int], pinned: list[bool], budget: int | None) -> None:
    async def scenario(data_dir: Path) -> None:
        brain = await open_brain(data_dir, Tuning(brain_hook_chars=4000))
        try:
            for n, size in enumerate(sizes):
                words = " ".join(f"roof{n}w{i}" if i % 3 else "roof" for i in range(size))
                await brain.write({"content": words, "scope": "shared", "source": f"s{n}", "pinned": pinned[n]})
                brain.clock.advance(1)
            envelope = await _recall(brain, q="roof", budget=budget)
            limit = budget if budget is not None else 6000
            entries = _entries(envelope)
            assert envelope["budget_used"] <= limit
            assert envelope["budget_used"] == sum(e["tokens"] for e in entries)
            assert all(e["tokens"] == estimate_tokens(e["content"]) for e in entries)
            assert len({e["id"] for e in entries}) == len(entries)
            assert envelope["core"]["tokens"] <= 2000 * min(1.0, limit / 6000)
        finally:
            await close_brain(brain)

    with tempfile.TemporaryDirectory() as data_dir:
        asyncio.run(scenario(Path(data_dir)))


async def test_one_round_trip_returns_every_tier(brain: Brain) -> None:
    pinned = (await brain.write({"content": "I am Mildred's daughter; call me Jo", "scope": "family",
                                 "pinned": True}))["ids"][0]
    brain.clock.advance(10)
    archival = (await brain.write({"content": "The roof was replaced in 2019 by Acme Roofing",
                                   "scope": "family", "source": "house"}))["ids"][0]
    brain.clock.advance(10)
    for n in range(3):
        await brain.write({"content": f"grocery list item {n}", "scope": "family", "source": "lists"})
        brain.clock.advance(10)
    envelope = await _recall(brain, q="when was the roof replaced", budget=60)
    assert set(envelope) >= {"core", "recent", "facts", "asof", "budget_used", "sources"}
    assert [e["id"] for e in envelope["core"]["entries"]] == [pinned]
    assert envelope["recent"][0]["content"] == "grocery list item 2"
    assert archival in [e["id"] for e in envelope["facts"]] + [e["id"] for e in envelope["recent"]]
    assert set(envelope["sources"]) <= {"api", "house", "lists"}
    assert envelope["asof"] == brain.clock.now


async def test_core_is_never_searched_and_is_versioned(brain: Brain) -> None:
    await brain.write({"content": "Always answer in British English", "scope": "shared", "pinned": True})
    first = await _recall(brain, q="tax")
    assert (await _recall(brain, q="something else entirely"))["core"] == first["core"]
    await brain.write({"content": "Timezone is Europe/London", "scope": "shared", "pinned": True})
    second = await _recall(brain, q="tax")
    assert second["core"]["version"] != first["core"]["version"]
    assert all(e["id"] not in {c["id"] for c in second["core"]["entries"]} for e in second["facts"])


async def test_recall_as_of_returns_the_state_at_that_moment(brain: Brain) -> None:
    t0 = brain.clock.now
    old = (await brain.write({"content": "Home address is 12 Elm Street", "scope": "family"}))["ids"][0]
    brain.clock.advance(100)
    new = (await brain.write({"content": "Home address is 9 Oak Lane", "scope": "family",
                              "supersedes": old}))["ids"][0]
    past = await _recall(brain, q="home address", as_of=t0 + 50)
    now = await _recall(brain, q="home address")
    assert {e["id"] for e in _entries(past)} == {old} and past["asof"] == t0 + 50
    assert {e["id"] for e in _entries(now)} == {new}


async def test_bad_recall_input_is_a_4xx(brain: Brain) -> None:
    for params in ({"budget": 0}, {"budget": -5}, {"budget": "lots"}, {"as_of": "soon"}, {"q": "x" * 1001}):
        response = await brain.client.get("/recall", params=params, headers=brain.headers("family"))
        assert 400 <= response.status_code < 500, params
