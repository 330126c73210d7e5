"""The pending buffer's part of a search: its hits join the stored rows' vector hits in one order
(best first, ties by id) cut to the search's depth, and what a vault keeps of its buffer between
searches answers every query as a buffer read afresh does."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memvault.core import vectors
from memvault.core.memory.buffer_channel import OPEN_CHUNK, PendingBuffer, is_pending
from memvault.core.models import Candidate, MemoryRow, Message, SearchQuery
from memvault.core.vectors import pack

DIMENSION = 4


def stored_row(row_id: str, kind: str = "message") -> MemoryRow:
    return MemoryRow(row_id, kind, f"text of {row_id}", "user", None, 1.0, 1.0, 5, (row_id,), row_id, "c-1")


def key(candidate: Candidate) -> tuple[float, str]:
    return -candidate.score, candidate.row.id


def vector_part(found: list[Candidate]) -> list[Candidate]:
    return [c for c in found if c.channel == "vector"]


# Few distinct values, so scores tie between stored hits, and with pending ones.
component = st.sampled_from([-1.0, 0.0, 0.5, 1.0])
vector = st.lists(component, min_size=DIMENSION, max_size=DIMENSION).filter(any)


@st.composite
def searches(draw: st.DrawFn) -> tuple[list[Candidate], list[Message], dict[str, bytes], SearchQuery]:
    scores = draw(st.lists(st.sampled_from([1.0, 0.5, 0.25, 0.0, -0.5]), max_size=30))
    hits = sorted(((score, f"m-{i:02d}") for i, score in enumerate(scores)), key=lambda hit: (-hit[0], hit[1]))
    stored = [Candidate(stored_row(row_id), "vector", rank, score, draw(st.sampled_from([None, "m-99"])))
              for rank, (score, row_id) in enumerate(hits, start=1)]
    keyword = [Candidate(stored_row(f"m-k{i}"), "keyword", i + 1, 2.0) for i in range(draw(st.integers(0, 3)))]
    context = [Candidate(stored_row("m-c0"), "context", 1, 0.0)] if draw(st.booleans()) else []
    said = [Message("user", f"pending words {i}", 10.0 + i, f"p{i}") for i in range(draw(st.integers(0, 6)))]
    packed = {m.id: pack(draw(vector)) for m in said if draw(st.booleans())}
    if said and draw(st.booleans()):
        packed[said[0].id] = pack([1.0] * (DIMENSION + 1))  # another model's width: not compared
    # The stored rows' vector channel found at most the search's depth.
    query = SearchQuery("pending words", tuple(draw(vector)), draw(st.integers(max(1, len(stored)), 40)))
    return [*keyword, *stored, *context], said, packed, query


@pytest.mark.parametrize("with_numpy", [True, False])
def test_pending_hits_join_the_stored_ones_in_one_order(with_numpy: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if not with_numpy:
        monkeypatch.setattr(vectors, "_np", None)

    @settings(max_examples=150, deadline=None)
    @given(searches())
    def check(search: tuple[list[Candidate], list[Message], dict[str, bytes], SearchQuery]) -> None:
        candidates, said, packed, query = search
        buffer = PendingBuffer(said, packed)
        every = vector_part(buffer.joined(candidates, SearchQuery(query.text, query.vector, 10_000)))
        assert every == sorted(every, key=key) and [c.rank for c in every] == list(range(1, len(every) + 1))
        assert [(c.row, c.score, c.twin_of) for c in every if not is_pending(c.row) and c.row.id != OPEN_CHUNK] == [
            (c.row, c.score, c.twin_of) for c in vector_part(candidates)
        ]
        compared = [m for m in said if len(packed.get(m.id, b"")) == 4 * DIMENSION]
        assert len(every) == len(vector_part(candidates)) + (len(compared) + 1 if compared else 0)
        found = buffer.joined(candidates, query)
        cut = [Candidate(c.row, c.channel, rank, c.score, c.twin_of) for rank, c in enumerate(every[: query.depth], start=1)]
        assert vector_part(found) == cut
        if said:  # the stored rows' other candidates first, as they came
            assert found[: len(candidates) - len(vector_part(candidates))] == [c for c in candidates if c.channel != "vector"]
        else:
            assert found == candidates
        assert found == PendingBuffer(said, packed).joined(candidates, query)  # nothing of one query stays for the next

    check()


def test_a_buffer_kept_between_searches_answers_as_one_read_afresh() -> None:
    said = [Message("user", text, 10.0 + i, f"p{i}") for i, text in enumerate(
        ["The violin lesson moved to Friday.", "Mia plays the violin.", "The shed is green now."])]
    packed = {"p0": pack([1.0, 0.0, 0.0, 0.0]), "p1": pack([0.6, 0.8, 0.0, 0.0]), "p2": pack([0.0, 0.0, 1.0, 0.0])}
    kept = PendingBuffer(said, packed)
    stored = [Candidate(stored_row("m-a"), "vector", 1, 0.7), Candidate(stored_row("m-b"), "vector", 2, 0.1)]
    queries = [SearchQuery("violin lesson", (1.0, 0.0, 0.0, 0.0), 3), SearchQuery("shed", (0.0, 0.0, 1.0, 0.0), 5),
               SearchQuery("violin lesson", None, 3), SearchQuery("violin", (1.0, 0.0, 0.0, 0.0, 0.0), 5)]
    for query in [*queries, *queries]:
        assert kept.joined(stored, query) == PendingBuffer(said, packed).joined(stored, query)
    # p0 1.0, the open chunk (the mean of all three) 0.78, m-a 0.7, then p1 0.6 is past the depth.
    assert [c.row.id for c in vector_part(kept.joined(stored, queries[0]))] == ["pending:p0", OPEN_CHUNK, "m-a"]
