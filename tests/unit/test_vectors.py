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


@pytest.mark.parametrize("with_numpy", [True, False])
def test_extended_set_finds_old_and_new(with_numpy: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    if not with_numpy:
        monkeypatch.setattr(vectors, "_np", None)
    rows = random_vectors(6, 4)
    first = VectorSet(["a", "b", "c"], [pack(r) for r in rows[:3]], 4)
    both = first.extended(["d", "e", "f"], [pack(r) for r in rows[3:]])
    assert len(first) == 3 and len(both) == 6
    assert both.top_k(rows[4], 1)[0][0] == "e" and both.top_k(rows[1], 1)[0][0] == "b"


def test_wrong_dimension_is_refused() -> None:
    with pytest.raises(ValueError, match="dimension"):
        VectorSet(["a"], [pack([1.0, 0.0])], 2).top_k([1.0, 0.0, 0.0], 1)
