"""Depth: a long fact's full text is cut into passages that are keyword-indexed and embedded with
their fact's id, so a word far past the hook is found by either channel, the fact comes back once
with the passage as its snippet, walls hold, and a new version replaces the vectors without
leaving any behind."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from brain_env import Brain, brain_fixture  # noqa: F401

from memvault.core.brain import embed_pending
from memvault.core.brain.search import keyword_search, vector_search
from memvault.core.errors import StorageUnavailable

FILLER = "The household keeps its paperwork in the blue folders on the landing shelf. "


def _long_body(secret_word: str, at: int = 5000) -> str:
    head = (FILLER * (at // len(FILLER) + 1))[:at]
    return f"{head} The spare key for the shed sits under the {secret_word} flowerpot. " + FILLER * 20


async def _vector_ids(brain: Brain) -> set[str]:
    index: Any = brain.deps.vectors.inner  # the local index under its retrying wrapper
    return {row[0] for row in index._conn.execute("SELECT id FROM vectors")}


async def _recorded_ids(brain: Brain) -> set[str]:
    """Every vector id the database knows of, for facts whose vectors have not been retired."""
    facts = await brain.deps.db.query("SELECT id FROM memory WHERE vectors_retired_at IS NULL AND embedded_at IS NOT NULL")
    passages = await brain.deps.db.query("SELECT id FROM fact_passages WHERE embedded_at IS NOT NULL")
    return {r["id"] for r in facts} | {r["id"] for r in passages}


async def test_a_word_at_character_5000_is_found_by_keyword_and_by_vector(brain: Brain) -> None:
    body = _long_body("terracotta")
    assert body.index("terracotta") > 5000
    fact = (await brain.write({"content": body, "scope": "family", "source": "files:house.md"}))["ids"][0]
    await brain.write({"content": "The garden gate squeaks", "scope": "family"})
    credential = await brain.credential("writer")
    by_keyword = await keyword_search(brain.deps, credential, "terracotta", 5)
    by_vector = await vector_search(brain.deps, credential, "terracotta flowerpot shed key", 5)
    for hits in (by_keyword, by_vector):
        assert hits[0][0]["id"] == fact
        assert "terracotta" in hits[0][0]["snippet"]
        assert [row["id"] for row, _ in hits].count(fact) == 1


async def test_search_and_recall_return_the_fact_once_with_its_passage(brain: Brain) -> None:
    fact = (await brain.write({"content": _long_body("terracotta") + _long_body("terracotta", 800),
                               "scope": "family", "source": "files:house.md"}))["ids"][0]
    for mode in ("keyword", "hybrid"):
        found = (await brain.get("/memory/search", "writer", q="terracotta flowerpot", mode=mode)).json()["results"]
        assert [r["id"] for r in found] == [fact] and "terracotta" in found[0]["snippet"]
    recalled = (await brain.get("/recall", "writer", q="terracotta flowerpot")).json()
    # Just written, the fact is in the recent tier, which carries the passage that matched.
    entries = [*recalled["recent"], *recalled["facts"]]
    assert [e["id"] for e in entries] == [fact] and "terracotta" in entries[0]["snippet"]
    assert recalled["budget_used"] == sum(e["tokens"] for e in entries)


async def test_a_walled_passage_is_found_by_no_channel(brain: Brain) -> None:
    await brain.write({"content": _long_body("terracotta"), "scope": "family", "source": "files:house.md"})
    for mode in ("keyword", "hybrid"):
        found = (await brain.get("/memory/search", "business", q="terracotta flowerpot", mode=mode)).json()
        assert found["results"] == []
    credential = await brain.credential("business")
    assert await vector_search(brain.deps, credential, "terracotta flowerpot shed key", 5) == []


async def test_a_new_version_replaces_every_vector_and_leaves_no_orphans(brain: Brain) -> None:
    source = {"scope": "family", "source": "files:house.md", "reconcile": True}
    first = (await brain.write({**source, "facts": [{"content": _long_body("terracotta")}]}))["ids"][0]
    first_vectors = await _vector_ids(brain)
    assert len(first_vectors) > 5 and all(v.split(":")[0] == first for v in first_vectors)
    brain.clock.advance(60)
    second = (await brain.write({**source, "facts": [{"content": _long_body("granite")}]}))["ids"][0]
    stored = await _vector_ids(brain)
    assert stored and all(v.split(":")[0] == second for v in stored)
    assert stored == await _recorded_ids(brain)
    history = (await brain.get("/memory/history", "writer", id=second)).json()["chain"]
    assert [r["id"] for r in history] == [first, second]
    # The old version stays readable as it was, by keyword.
    then = (await brain.get("/memory/search", "writer", q="terracotta", as_of=brain.clock.now - 30)).json()
    assert [r["id"] for r in then["results"]] == [first]


class BrokenEmbedder:
    model_id, dimension = "broken", 8

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        raise StorageUnavailable("embedding service down")


async def test_old_vectors_stay_until_the_successor_has_its_own(brain: Brain) -> None:
    source = {"scope": "family", "source": "files:house.md", "reconcile": True}
    first = (await brain.write({**source, "facts": [{"content": _long_body("terracotta")}]}))["ids"][0]
    working = brain.deps.embedder
    brain.deps.embedder = BrokenEmbedder()
    brain.clock.advance(60)
    second = await brain.write({**source, "facts": [{"content": _long_body("granite")}]})
    assert second["embedding"] == "deferred"
    assert all(v.split(":")[0] == first for v in await _vector_ids(brain))
    brain.deps.embedder = working
    await embed_pending(brain.deps, await brain.credential("writer"), 50)
    stored = await _vector_ids(brain)
    assert stored and all(v.split(":")[0] == second["ids"][0] for v in stored)
    assert stored == await _recorded_ids(brain)
