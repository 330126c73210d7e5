"""How one vault's candidates become scored messages: weighted channels, chunk and neighbour shares,
and the pending buffer scored by the same rule."""

from __future__ import annotations

from dataclasses import replace

from memvault.core.memory.assemble import ASKING_WEIGHT, VaultAnswer, rank_items
from memvault.core.memory.buffer_channel import with_buffer
from memvault.core.memory.fusion import FusionWeights, fuse, with_borrowed
from memvault.core.memory.windows import WindowPolicy
from memvault.core.models import Candidate, MemoryRow, Message, SearchItem, SearchQuery

POLICY = WindowPolicy(3 * 86400, 90 * 86400, 0.0)


def row(row_id: str, ts: float, parent: str | None = "c1", kind: str = "message") -> MemoryRow:
    return MemoryRow(row_id, kind, f"text of {row_id}", "user", None, ts, ts, 5, (row_id,), row_id, parent)


def hit(found: MemoryRow, channel: str, rank: int, score: float) -> Candidate:
    return Candidate(row=found, channel=channel, rank=rank, score=score)


def scores(candidates: list[Candidate]) -> dict[str, float]:
    return {found.id: score for found, score in fuse(candidates).scored}


def test_both_channels_count_by_their_scores_not_only_their_ranks() -> None:
    a, b, c = (row(name, day * 86400.0, None) for day, name in enumerate("abc"))  # days apart: none lends
    fused = scores([
        hit(a, "vector", 1, 0.80), hit(b, "vector", 2, 0.79), hit(c, "vector", 3, 0.20),
        hit(b, "keyword", 1, 9.0), hit(c, "keyword", 2, 8.9),
    ])
    weights = FusionWeights()
    assert abs(fused["b"] - (weights.vector * (0.79 - 0.2) / 0.6 + weights.keyword)) < 1e-9
    assert fused["b"] > fused["c"] > fused["a"]  # c is nearly as good a keyword hit as b


def test_vector_hits_all_equally_alike_count_only_as_alike_as_they_are() -> None:
    rows = [row(f"m{i}", i * 86400.0, None) for i in range(5)]
    fused = scores([hit(r, "vector", i + 1, 0.01) for i, r in enumerate(rows)])
    assert all(abs(score - FusionWeights().vector * 0.01) < 1e-9 for score in fused.values())
    assert set(scores([hit(r, "keyword", i + 1, 0.0) for i, r in enumerate(rows)]).values()) == {0.0}


def test_a_message_borrows_from_its_chunk_and_the_messages_beside_it() -> None:
    turns = [row(f"t{i}", i) for i in range(8)]
    chunk, other = row("c1", 0, None, kind="chunk"), row("c2", 0, None, kind="chunk")
    context = [hit(t, "context", 1, 0.0) for t in turns]
    fused = scores([*context, hit(turns[3], "keyword", 1, 5.0), hit(chunk, "vector", 1, 0.5), hit(other, "vector", 2, 0.1)])
    fused = {key: round(value, 9) for key, value in fused.items()}
    weights = FusionWeights()
    lent = weights.chunk * weights.vector
    # The answer right after the question is lifted; turns further than ``reach`` only get the chunk's share.
    assert fused["t3"] == round(weights.keyword + lent, 9)
    assert fused["t4"] == fused["t5"] == fused["t2"] == fused["t1"] == round(lent + weights.neighbour * weights.keyword, 9)
    assert fused["t0"] == fused["t6"] == fused["t7"] == round(lent, 9)


def test_neighbours_are_found_in_time_whichever_chunk_holds_them_within_one_conversation() -> None:
    question, answer = row("q", 1000, "c1"), row("a", 1010, "c2")
    later, alone = row("l", 1010 + 2 * 3600, "c2"), row("z", 86400.0, None)
    weights = FusionWeights()
    fused = scores([hit(question, "keyword", 1, 5.0), hit(answer, "context", 1, 0.0),
                    hit(later, "context", 1, 0.0), hit(alone, "keyword", 2, 5.0)])
    # The answer opening the next chunk borrows from the question that ended the last one ...
    assert fused["a"] == weights.neighbour * weights.keyword
    # ... what was said two hours later is another conversation, and borrows nothing.
    assert fused["l"] == 0.0
    assert fused["z"] == fused["q"] == weights.keyword


def test_borrowing_is_bounded_by_reach_and_by_the_gap_between_messages() -> None:
    weights = FusionWeights(vector=0.5, keyword=0.5, chunk=0.5, neighbour=0.5, reach=1, gap=60.0)
    assert with_borrowed([0.0, 1.0, 0.0, 0.0], [0, 1, 2, 3], [0.2] * 4, weights) == [0.6, 1.1, 0.6, 0.1]
    assert with_borrowed([0.0, 1.0, 0.0, 0.0], [0, 1, 100, 101], [0.2] * 4, weights) == [0.6, 1.1, 0.1, 0.1]
    assert with_borrowed([], [], [], weights) == []


def test_pending_messages_are_scored_by_the_same_rule_as_an_open_chunk() -> None:
    said = [Message("user", text, 100.0 + i, f"p{i}") for i, text in enumerate([
        "The weather was grey all week.",
        "What instrument does Mia play?",
        "Mia's violin lessons are on Wednesdays.",
        "We repainted the shed.",
        "The tram was late again.",
    ])]
    def ranked(query: str) -> list[SearchItem]:
        found = with_buffer([], said, {}, SearchQuery(text=query, vector=None, depth=20))
        return list(rank_items([VaultAnswer("k:core", "vault", found)], query, POLICY, 200.0))

    items = ranked("Mia violin lessons")
    order = [item.source_ids[0] for item in items]
    assert order[:2] == ["p2", "p1"]  # every term (the possessive too), then one term and the answer beside it
    assert sorted(order[2:]) == ["p0", "p3", "p4"]  # the buffer was hit: its messages come as context
    assert {item.origin for item in items} == {"buffer"}
    weights = FusionWeights()
    # Its own share of the terms, the open chunk's (all of them), a third from the question beside it.
    assert abs(items[0].score - weights.keyword * (1.0 + weights.chunk * 1.0 + weights.neighbour / 3)) < 1e-6
    assert ranked("birthday cake") == []


def test_a_message_that_asks_counts_less_than_one_that_tells_and_still_lends_to_its_answer() -> None:
    question, answer = row("q", 1000.0), row("a", 1005.0)
    question = replace(question, text="Which violin does Mia play?")
    answer = replace(answer, text="Mia plays her grandmother's violin.")
    said = [hit(question, "keyword", 1, 5.0), hit(answer, "keyword", 2, 5.0)]
    items = list(rank_items([VaultAnswer("k:core", "vault", said)], "Mia violin", POLICY, 2000.0))
    scores_by_id = {item.source_ids[0]: item.score for item in items}
    assert [item.source_ids[0] for item in items] == ["a", "q"]
    assert abs(scores_by_id["q"] - ASKING_WEIGHT * scores_by_id["a"]) < 1e-6  # the same relevance, lent both ways


def test_borrowing_takes_the_best_neighbour_within_reach_and_gap_whatever_the_order_of_time() -> None:
    weights = FusionWeights(chunk=0.25, neighbour=0.5, reach=2, gap=10.0)
    own = [0.3, 0.0, 0.9, 0.1, 0.7, 0.0, 0.2]
    times = [0.0, 5.0, 9.0, 30.0, 35.0, 38.0, 100.0]
    chunk = [0.4, 0.0, 0.0, 0.8, 0.0, 0.0, 1.0]
    beside = [0.9, 0.9, 0.3, 0.7, 0.1, 0.7, 0.0]  # 2 is 9s from 0; 3 sees 4 and 5, not 2 (21s away)
    expected = [mine + 0.25 * lent + 0.5 * near for mine, lent, near in zip(own, chunk, beside, strict=True)]
    assert with_borrowed(own, times, chunk, weights) == expected
    assert with_borrowed(own[::-1], times[::-1], chunk[::-1], weights) == expected[::-1]
    assert with_borrowed(own, times, chunk, replace(weights, reach=0)) == [m + 0.25 * c for m, c in zip(own, chunk, strict=True)]


def test_items_equal_in_score_and_time_keep_each_vaults_order_then_fusions() -> None:
    # The same score, time and sources in two vaults: the first vault's comes first, whichever id sorts first.
    first, second = row("z", 1000.0), row("a", 1000.0)
    second = replace(second, source_ids=("z",))
    items = list(rank_items([VaultAnswer("k:core", "vault", [hit(first, "keyword", 1, 5.0)]),
                             VaultAnswer("k:s1", "vault", [hit(second, "keyword", 1, 5.0)])], "x", POLICY, 2000.0))
    assert [(item.vault, item.score) for item in items] == [("core", items[0].score), ("session", items[0].score)]
    # In one vault, a message that asks is fused higher than one that tells and ranks level with it:
    # fusion's order (best first) decides.
    asking = replace(row("m2", 1000.0), text="Does it?", source_ids=("s",))
    telling = replace(row("m1", 1000.0), text="It does.", source_ids=("s",))
    said = [hit(asking, "keyword", 1, 5.0), hit(telling, "keyword", 2, 2.5)]  # 0.8 * (0.6 + 0.3 / 2) == 0.3 + 0.6 / 2
    ranked = list(rank_items([VaultAnswer("k:core", "vault", said)], "x", POLICY, 2000.0))
    assert ranked[0].score == ranked[1].score and [item.text for item in ranked] == ["Does it?", "It does."]


def test_scores_equal_when_rounded_rank_newer_first_whatever_their_exact_order() -> None:
    # Exact scores a billionth apart, the better one older: rounded, they are equal and time decides.
    older, newer, worse = row("o", 1000.0, None), row("n", 9000.0, None), row("w", 5000.0, None)  # none lends
    said = [hit(older, "keyword", 1, 1.0 + 1e-9), hit(newer, "keyword", 2, 1.0), hit(worse, "keyword", 3, 0.5)]
    items = list(rank_items([VaultAnswer("k:core", "vault", said)], "x", POLICY, 1e6))
    assert [item.source_ids[0] for item in items] == ["n", "o", "w"]
    assert items[0].score == items[1].score == round(FusionWeights().keyword, 6)
