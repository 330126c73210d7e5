"""Vector math: the only module that may use numpy. Without numpy (the Pyodide test tier) the same
functions run in pure Python, slower but identical in result."""

from __future__ import annotations

import math
from array import array
from collections.abc import Sequence
from typing import Any

_np: Any
try:
    import numpy as _np
except ImportError:  # Pyodide without the numpy package
    _np = None


def pack(vector: Sequence[float]) -> bytes:
    """float32, little-endian: the storage format of every embedding."""
    values = array("f", vector)
    if array("f", [1.0]).tobytes()[0] != 0:  # big-endian host
        values.byteswap()
    return values.tobytes()


def unpack(blob: bytes) -> list[float]:
    values = array("f")
    values.frombytes(bytes(blob))
    if array("f", [1.0]).tobytes()[0] != 0:
        values.byteswap()
    return values.tolist()


def normalize(vector: Sequence[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector))
    if norm == 0:
        return [0.0 for _ in vector]
    return [x / norm for x in vector]


def mean_unit(vectors: Sequence[Sequence[float]]) -> list[float]:
    """The normalised mean of ``vectors`` (one direction for several texts)."""
    total = [sum(values) for values in zip(*vectors, strict=True)]
    return normalize(total)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    return 0.0 if na == 0 or nb == 0 else dot / (na * nb)


# Vectors added after a set was built are kept as separate blocks (no copy of the whole matrix on
# every store) and merged once this many have gathered.
MAX_BLOCKS = 32


class VectorSet:
    """An immutable set of unit vectors with ids, searched by cosine similarity."""

    def __init__(self, ids: Sequence[str], blobs: Sequence[bytes], dimension: int) -> None:
        self.ids = list(ids)
        self.dimension = dimension
        self._blocks: list[Any] = [_unit_rows(blobs, dimension)]

    def __len__(self) -> int:
        return len(self.ids)

    def extended(self, ids: Sequence[str], blobs: Sequence[bytes]) -> VectorSet:
        """A new set with these vectors added; the ids must be new to the set."""
        merged = VectorSet([], [], self.dimension)
        merged.ids = self.ids + list(ids)
        merged._blocks = [*self._blocks, _unit_rows(blobs, self.dimension)]
        if len(merged._blocks) > MAX_BLOCKS:
            merged._blocks = [_np.vstack(merged._blocks) if _np is not None else [row for block in merged._blocks for row in block]]
        return merged

    def top_k(self, query: Sequence[float], k: int) -> list[tuple[str, float]]:
        """The ``k`` most similar vectors, best first; equal scores in id order, so any two sets
        holding the same vectors answer alike whatever order they were added in."""
        if not self.ids or k <= 0:
            return []
        if len(query) != self.dimension:
            raise ValueError(f"query has dimension {len(query)}, the stored vectors {self.dimension}")
        unit = normalize(query)
        k = min(k, len(self.ids))
        if _np is not None:
            vector = _np.asarray(unit, dtype=_np.float32)
            scores = _np.concatenate([block @ vector for block in self._blocks])
            kth = scores[_np.argpartition(-scores, k - 1)[k - 1]]
            # Every vector tied with the k-th best stays in the running, so ties are cut by id.
            scored = [(self.ids[i], float(scores[i])) for i in _np.flatnonzero(scores >= kth)]
        else:
            rows = [row for block in self._blocks for row in block]
            scored = [(self.ids[i], sum(x * y for x, y in zip(row, unit, strict=True))) for i, row in enumerate(rows)]
        scored.sort(key=lambda item: (-item[1], item[0]))
        return scored[:k]


def similar_pairs(blobs: Sequence[bytes], dimension: int, threshold: float) -> list[tuple[int, int]]:
    """Index pairs ``(i, j)``, ``i < j``, of the stored vectors whose cosine is at least ``threshold``."""
    rows = _unit_rows(blobs, dimension)
    if _np is not None:
        similar = _np.triu(rows @ rows.T, k=1) >= threshold
        return [(int(i), int(j)) for i, j in zip(*_np.nonzero(similar), strict=True)]
    return [
        (i, j)
        for i in range(len(rows))
        for j in range(i + 1, len(rows))
        if sum(x * y for x, y in zip(rows[i], rows[j], strict=True)) >= threshold
    ]


def _unit_rows(blobs: Sequence[bytes], dimension: int) -> Any:
    if _np is None:
        return [normalize(unpack(b)) for b in blobs]
    if not blobs:
        return _np.zeros((0, dimension), dtype=_np.float32)
    matrix = _np.frombuffer(b"".join(bytes(b) for b in blobs), dtype="<f4").reshape(len(blobs), dimension)
    norms = _np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (matrix / norms).astype(_np.float32)
