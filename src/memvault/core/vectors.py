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


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    return 0.0 if na == 0 or nb == 0 else dot / (na * nb)


class VectorSet:
    """An immutable set of unit vectors with ids, searched by cosine similarity."""

    def __init__(self, ids: Sequence[str], blobs: Sequence[bytes], dimension: int) -> None:
        self.ids = list(ids)
        self.dimension = dimension
        self._matrix: Any
        if _np is not None:
            if blobs:
                matrix = _np.frombuffer(b"".join(bytes(b) for b in blobs), dtype="<f4").reshape(len(blobs), dimension)
            else:
                matrix = _np.zeros((0, dimension), dtype="<f4")
            norms = _np.linalg.norm(matrix, axis=1, keepdims=True)
            norms[norms == 0] = 1.0
            self._matrix = (matrix / norms).astype(_np.float32)
        else:
            self._matrix = [normalize(unpack(b)) for b in blobs]

    def __len__(self) -> int:
        return len(self.ids)

    def extended(self, ids: Sequence[str], blobs: Sequence[bytes]) -> VectorSet:
        """A new set with these vectors added; the ids must be new to the set."""
        added = VectorSet(ids, blobs, self.dimension)
        merged = VectorSet([], [], self.dimension)
        merged.ids = self.ids + added.ids
        if _np is not None:
            merged._matrix = _np.vstack([self._matrix, added._matrix])
        else:
            merged._matrix = self._matrix + added._matrix
        return merged

    def top_k(self, query: Sequence[float], k: int) -> list[tuple[str, float]]:
        if not self.ids or k <= 0:
            return []
        if len(query) != self.dimension:
            raise ValueError(f"query has dimension {len(query)}, the stored vectors {self.dimension}")
        unit = normalize(query)
        if _np is not None:
            scores = self._matrix @ _np.asarray(unit, dtype=_np.float32)
            k = min(k, len(self.ids))
            best = _np.argpartition(-scores, k - 1)[:k]
            ordered = best[_np.argsort(-scores[best], kind="stable")]
            return [(self.ids[i], float(scores[i])) for i in ordered]
        scored = [
            (self.ids[i], sum(x * y for x, y in zip(row, unit, strict=True))) for i, row in enumerate(self._matrix)
        ]
        scored.sort(key=lambda item: -item[1])
        return scored[:k]
