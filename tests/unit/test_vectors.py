"""Vector math gives the same answers with numpy and without it (as in the Pyodide tier)."""

from __future__ import annotations

import random

import pytest

from memvault.core import vectors
from memvault.core.vectors import VectorSet, pack, unpack


def random_vectors(count: int, dimension: int, seed: int = 7) -> list[list[float]]:
    rng = random.Random(seed)
    return [[rng.uniform(-1, 1) for _ in range(dimension)] for _ in range(count)]


def test_pack_round_trips_float32() -> None:
    values = [0.5, -1.25, 3.0]
    assert unpack(pack(values)) == values
    assert len(pack(values)) == 12


@pytest.mark.parametrize("with_numpy", [True, False])
def test_top_k_orders_by_cosine(with_numpy: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if not with_numpy:
        monkeypatch.setattr(vectors, "_np", None)
    rows = random_vectors(50, 8)
    ids = [f"r{i}" for i in range(50)]
    query = rows[13]
    found = VectorSet(ids, [pack(r) for r in rows], 8).top_k(query, 5)
    expected = sorted(ids, key=lambda i: -vectors.cosine(rows[int(i[1:])], query))[:5]
    assert [i for i, _ in found] == expected
    assert found[0][0] == "r13" and found[0][1] == pytest.approx(1.0, abs=1e-5)


def test_wrong_dimension_is_refused() -> None:
    with pytest.raises(ValueError, match="dimension"):
        VectorSet(["a"], [pack([1.0, 0.0])], 2).top_k([1.0, 0.0, 0.0], 1)


def clustered_vectors(count: int, dimension: int, seed: int = 11) -> list[list[float]]:
    """Vectors around a few dozen centres, as embeddings of related texts are."""
    rng = random.Random(seed)
    centres = [[rng.gauss(0, 1) for _ in range(dimension)] for _ in range(40)]
    return [[c + rng.gauss(0, 0.6) for c in rng.choice(centres)] for _ in range(count)]


@pytest.mark.parametrize("with_numpy", [True, False])
def test_codes_and_their_orders_agree_with_and_without_numpy(with_numpy: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = clustered_vectors(300, 40)
    query = rows[5]
    expected_codes = [vectors.binary_code(r) for r in rows]
    expected_near = vectors.hamming_nearest(list(range(300)), expected_codes, expected_codes[5], 25)
    expected_top = vectors.asymmetric_top(query, expected_near, 10)
    if not with_numpy:
        monkeypatch.setattr(vectors, "_np", None)
    codes = [vectors.code_of(pack(r)) for r in rows]
    assert codes == expected_codes and len(codes[0]) == 5
    near = vectors.hamming_nearest(list(range(300)), codes, codes[5], 25)
    assert near == expected_near and near[0] == (0, 5, codes[5])
    assert vectors.asymmetric_top(query, near, 10) == expected_top


@pytest.mark.parametrize("with_numpy", [True, False])
def test_a_code_index_built_by_many_additions_answers_as_one(with_numpy: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if not with_numpy:
        monkeypatch.setattr(vectors, "_np", None)
    codes = [vectors.binary_code(r) for r in clustered_vectors(400, 64)]
    index = vectors.CodeIndex(list(range(10)), codes[:10], 8)
    for start in range(10, 400, 9):  # it outgrows its spare room several times
        index.add(list(range(start, min(start + 9, 400))), codes[start : start + 9])
    assert len(index) == 400 and index.bytes_per_row == 16
    for probe in (0, 123, 399):
        assert index.nearest(codes[probe], 30) == vectors.hamming_nearest(list(range(400)), codes, codes[probe], 30)


def test_the_three_passes_find_the_exact_nearest_vectors() -> None:
    """Codes preselect, the float query rescores the codes, stored floats rank: the top that comes
    out is the exact cosine top on vectors shaped like embeddings."""
    from memvault.core.memory.vector_channel import PRESELECT, RESCORE

    rows = clustered_vectors(8000, 64)
    stored = [(f"r{i:05d}", pack(r)) for i, r in enumerate(rows)]
    index = vectors.CodeIndex(list(range(len(rows))), [vectors.code_of(b) for _, b in stored], 8)
    rng = random.Random(3)
    for probe in rng.sample(range(len(rows)), 20):
        query = [x + rng.gauss(0, 0.3) for x in rows[probe]]
        preselected = index.nearest(vectors.binary_code(query), PRESELECT)
        kept = vectors.asymmetric_top(query, preselected, RESCORE)
        found = vectors.exact_top(query, [stored[i] for i in kept], 20)
        assert [i for i, _ in found] == [i for i, _ in vectors.exact_top(query, stored, 20)]


def test_hamming_distances_agree_without_a_popcount_instruction(monkeypatch: pytest.MonkeyPatch) -> None:
    """numpy before 2.0 has no bitwise_count: the byte table gives the same distances."""
    import numpy as np

    for dimension in (64, 40):  # 64-bit words, and single bytes when the code is not a whole word
        codes = [vectors.binary_code(r) for r in clustered_vectors(500, dimension)]
        expected = vectors.hamming_nearest(list(range(500)), codes, codes[7], 50)
        with monkeypatch.context() as patched:
            patched.delattr(np, "bitwise_count")
            assert vectors.hamming_nearest(list(range(500)), codes, codes[7], 50) == expected


@pytest.mark.parametrize("with_numpy", [True, False])
def test_vector_slots_changed_in_place_answer_as_the_vectors_they_hold(
    with_numpy: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if not with_numpy:
        monkeypatch.setattr(vectors, "_np", None)
    rows = clustered_vectors(600, 16)
    blobs = {f"r{i:03d}": pack(r) for i, r in enumerate(rows)}
    slots = vectors.VectorSlots(16)
    for start in range(0, 600, 70):  # grown several times
        slots.put(list(blobs.items())[start : start + 70])
    gone = [f"r{i:03d}" for i in range(0, 600, 3)]
    slots.remove(gone)
    moved = {f"r{i:03d}": pack(rows[(i * 7) % 600]) for i in range(1, 600, 5)}
    slots.put(list(moved.items()))
    slots.put([("r002", pack([1.0] * 3))])  # another dimension: its earlier vector goes too
    held = {i: blob for i, blob in {**{i: b for i, b in blobs.items() if i not in gone}, **moved}.items() if i != "r002"}
    assert len(slots) == len(held)
    for probe in (1, 250, 599):
        expected = vectors.exact_top(rows[probe], list(held.items()), 25)
        found = slots.top(rows[probe], 25)
        assert [i for i, _ in found] == [i for i, _ in expected]
        assert [s for _, s in found] == pytest.approx([s for _, s in expected], abs=1e-6)
    ids = sorted(held)[:40]
    assert slots.similar_pairs([*ids, "r000", "nope"], 0.8) == (ids, vectors.similar_pairs([held[i] for i in ids], 16, 0.8))
    assert slots.top(rows[1][:8], 5) == []  # a query of another dimension finds nothing


@pytest.mark.parametrize("with_numpy", [True, False])
def test_vectors_scoring_alike_are_ranked_by_id(with_numpy: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    # A chunk of one message has that message's vector, and a message said twice is stored twice:
    # equal scores are common, and the id decides between them wherever the k-th best falls.
    if not with_numpy:
        monkeypatch.setattr(vectors, "_np", None)
    rng = random.Random(5)
    distinct = random_vectors(12, 8, seed=3)
    ids = [f"r{i:02d}" for i in range(60)]
    rng.shuffle(ids)  # held in an order other than the ids'
    blobs = {row_id: pack(distinct[rng.randrange(len(distinct))]) for row_id in ids}
    slots = vectors.VectorSlots(8)
    slots.put(list(blobs.items()))
    for query in distinct[:4]:
        scores = {row_id: vectors.cosine(unpack(blob), query) for row_id, blob in blobs.items()}
        for count in (1, 7, 30, 60):
            expected = sorted(ids, key=lambda i: (-round(scores[i], 5), i))[:count]
            assert [i for i, _ in slots.top(query, count)] == expected
            assert [i for i, _ in VectorSet(ids, [blobs[i] for i in ids], 8).top_k(query, count)] == expected
            assert [i for i, _ in vectors.exact_top(query, list(blobs.items()), count)] == expected
