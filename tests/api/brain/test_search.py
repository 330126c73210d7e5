"""Search: exact tokens are the floor, the phrase bonus and recency order ties, hybrid adds
vector recall (re-checked against the database), and ``as_of`` reads the past."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from brain_env import Brain, brain_fixture  # noqa: F401

CORPUS = [
    "Invoice #20028 from Acme Roofing was paid by bank transfer",
    "Invoice #20029 from Acme Roofing is still open",
    "Bought 40 NVDA at 912.50 in the brokerage account",
    "The Visa card ending 4242 expires in September",
    "Dr. Okonkwo moved the dentist appointment to Friday",
    "Mildred prefers tea over coffee in the afternoon",
]


async def _load(brain: Brain) -> list[str]:
    ids = []
    for text in CORPUS:
        brain.clock.advance(10)
        ids.append((await brain.write({"content": text, "scope": "business", "source": "seed"}))["ids"][0])
    return ids


async def _search(brain: Brain, q: str, **params: object) -> list[dict[str, object]]:
    response = await brain.get("/memory/search", "business", q=q, **params)
    assert response.status_code == 200, response.text
    results: list[dict[str, object]] = response.json()["results"]
    return results


async def test_exact_tokens_find_the_one_row(brain: Brain) -> None:
    ids = await _load(brain)
    for query, index in [("20028", 0), ("#20028", 0), ("invoice 20029", 1), ("NVDA", 2), ("4242", 3),
                         ("Okonkwo", 4), ("okonkwo", 4)]:
        results = await _search(brain, query)
        assert results and results[0]["id"] == ids[index], query


async def test_default_mode_is_keyword(brain: Brain) -> None:
    await _load(brain)
    response = await brain.get("/memory/search", "business", q="Acme")
    assert response.json()["mode"] == "keyword"


async def test_exact_phrase_outranks_scattered_words(brain: Brain) -> None:
    scattered = (await brain.write({"content": "whale whale whale seen from a blue boat, whale",
                                    "scope": "business"}))["ids"][0]
    phrase = (await brain.write({"content": "the blue whale is the largest animal that ever lived on earth",
                                 "scope": "business"}))["ids"][0]
    results = await _search(brain, "blue whale")
    assert [r["id"] for r in results] == [phrase, scattered]


async def test_recency_breaks_ties(brain: Brain) -> None:
    # The same text twice: the write-time bands would keep only the first.
    older = (await brain.write({"content": "lunch with Bob", "source": "a", "scope": "business"}, bands="off"))["ids"][0]
    brain.clock.advance(100)
    newer = (await brain.write({"content": "lunch with Bob", "source": "b", "scope": "business"}, bands="off"))["ids"][0]
    assert [r["id"] for r in await _search(brain, "Bob")] == [newer, older]


async def test_type_filter_and_limit(brain: Brain) -> None:
    await _load(brain)
    await brain.write({"content": "Acme Roofing project kickoff", "scope": "business", "entry_type": "project"})
    results = await _search(brain, "Acme", type="project")
    assert [r["entry_type"] for r in results] == ["project"]
    assert len(await _search(brain, "Acme", limit=1)) == 1


async def test_superseded_rows_drop_out_and_as_of_reads_the_past(brain: Brain) -> None:
    t0 = brain.clock.now
    old = (await brain.write({"content": "Acme's account manager is Priya", "scope": "business"}))["ids"][0]
    brain.clock.advance(1000)
    t1 = brain.clock.now
    new = (await brain.write({"content": "Acme's account manager is Tomasz", "scope": "business",
                              "supersedes": old}))["ids"][0]
    for mode in ("keyword", "hybrid"):
        assert [r["id"] for r in await _search(brain, "Acme account manager", mode=mode)] == [new]
        past = await _search(brain, "Acme account manager", mode=mode, as_of=t0 + 500)
        assert [r["id"] for r in past] == [old]
        assert [r["id"] for r in await _search(brain, "account manager", mode=mode, as_of=t1 + 1)] == [new]
        assert await _search(brain, "account manager", mode=mode, as_of=t0 - 1) == []


async def test_as_of_accepts_iso_8601(brain: Brain) -> None:
    await brain.write({"content": "ledger closed", "scope": "business"})
    assert await _search(brain, "ledger", as_of="2001-01-01T00:00:00Z") == []
    assert len(await _search(brain, "ledger", as_of="2100-01-01T00:00:00")) == 1


async def test_hybrid_is_keyword_union_vector_deduplicated(brain: Brain) -> None:
    ids = await _load(brain)
    keyword = [r["id"] for r in await _search(brain, "Acme Roofing invoice", limit=50)]
    hybrid = [r["id"] for r in await _search(brain, "Acme Roofing invoice", mode="hybrid", limit=50)]
    assert set(keyword) <= set(hybrid) <= set(ids)
    assert len(hybrid) == len(set(hybrid))
    # A query of stopwords has no keyword channel at all; vector recall still answers it.
    assert await _search(brain, "what is it about", limit=50) == []
    assert await _search(brain, "what is it about", mode="hybrid", limit=50)


async def test_vector_hits_are_rechecked_against_the_database(brain: Brain) -> None:
    hidden = (await brain.write({"content": "family passport renewal", "scope": "family"}))["ids"][0]
    # A vector whose metadata lies about its scope (stale, or tampered with) must still not leak.
    [vector] = await brain.deps.embedder.embed(["family passport renewal"])
    await brain.deps.vectors.upsert([(hidden, vector, {"scope": "business", "entry_type": "fact"})])
    results = await _search(brain, "family passport renewal", mode="hybrid")
    assert hidden not in [r["id"] for r in results]


async def test_bad_search_input_is_a_4xx(brain: Brain) -> None:
    for params in ({"q": ""}, {"q": "x", "mode": "semantic"}, {"q": "x", "limit": 0}, {"q": "x", "limit": "many"},
                   {"q": "x", "as_of": "yesterday"}, {"q": "x", "type": "memo"}, {"q": "x" * 1001}):
        response = await brain.client.get("/memory/search", params=params, headers=brain.headers("business"))
        assert 400 <= response.status_code < 500, params


async def test_term_frequency_and_rarity_order_the_scattered_matches(brain: Brain) -> None:
    many = (await brain.write({"content": "ledger ledger ledger audit", "scope": "business"}))["ids"][0]
    once = (await brain.write({"content": "ledger audit summary note", "scope": "business"}))["ids"][0]
    assert [r["id"] for r in await _search(brain, "ledger")] == [many, once]
    rare = (await brain.write({"content": "NVDA quarterly report", "scope": "business"}))["ids"][0]
    for n in range(5):
        await brain.write({"content": f"quarterly report number {n}", "scope": "business"})
    results = await _search(brain, "report NVDA")
    assert results[0]["id"] == rare and len(results) == 6


class ParameterCounter:
    """Delegates to the real database and remembers how many parameters each statement bound."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.bound: list[int] = []

    async def query(self, sql: str, params: Sequence[Any] = ()) -> Any:
        self.bound.append(len(params))
        return await self.inner.query(sql, params)


async def test_a_long_query_stays_within_d1s_parameter_limit(brain: Brain) -> None:
    # More distinct terms than one statement could bind, each in a few rows; the rarest one, in
    # a single row, must still be scored.
    for n in range(3):
        await brain.write({"content": " ".join(f"word{i}" for i in range(150)) + f" copy {n}", "scope": "business"})
    target = (await brain.write({"content": "the zebra code is 7731", "scope": "business"}))["ids"][0]
    counter = ParameterCounter(brain.deps.db)
    brain.deps.db = counter  # type: ignore[assignment]
    query = (" ".join(f"word{i}" for i in range(150)) + " 7731")[-1000:]
    results = await _search(brain, query, type="fact", as_of="2100-01-01T00:00:00")
    assert len(results) == 4 and target in [r["id"] for r in results]
    assert len(counter.bound) > 2 and max(counter.bound) <= 100
