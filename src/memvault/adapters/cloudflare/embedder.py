"""The ``Embedder`` port over Workers AI (``env.AI``), bge-base-en-v1.5 by default."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from memvault.adapters.cloudflare.convert import to_js, to_py
from memvault.adapters.cloudflare.failures import binding_errors
from memvault.core.errors import InvalidInput, StorageUnavailable

BGE_BASE_MODEL = "@cf/baai/bge-base-en-v1.5"
# Output sizes of the Workers AI text-embedding models, so a model setting alone is enough.
DIMENSIONS = {
    "@cf/baai/bge-small-en-v1.5": 384,
    BGE_BASE_MODEL: 768,
    "@cf/baai/bge-large-en-v1.5": 1024,
    "@cf/baai/bge-m3": 1024,
}
# Workers AI takes at most 100 texts per call to the bge models.
MAX_BATCH = 100


class WorkersAiEmbedder:
    def __init__(
        self,
        binding: Any,
        *,
        model: str = BGE_BASE_MODEL,
        dimension: int | None = None,
        batch_size: int = MAX_BATCH,
    ) -> None:
        if not 1 <= batch_size <= MAX_BATCH:
            raise InvalidInput(f"batch_size must be between 1 and {MAX_BATCH}")
        if dimension is None and model not in DIMENSIONS:
            raise InvalidInput(f"unknown dimension of Workers AI model {model!r}: pass dimension")
        self._ai = binding
        self._model = model
        self._dimension = dimension if dimension is not None else DIMENSIONS[model]
        self._batch_size = batch_size

    @property
    def model_id(self) -> str:
        return self._model

    @property
    def dimension(self) -> int:
        return self._dimension

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        for start in range(0, len(texts), self._batch_size):
            batch = list(texts[start : start + self._batch_size])
            vectors.extend(await self._embed_batch(batch))
        return vectors

    async def _embed_batch(self, texts: list[str]) -> list[list[float]]:
        with binding_errors("Workers AI"):
            result = to_py(await self._ai.run(self._model, to_js({"text": texts}))) or {}
        data = result.get("data")
        if not isinstance(data, list) or len(data) != len(texts):
            got = len(data) if isinstance(data, list) else type(data).__name__
            raise StorageUnavailable(f"Workers AI returned {got} vectors for {len(texts)} texts")
        vectors = [[float(x) for x in vector] for vector in data]
        if any(len(vector) != self._dimension for vector in vectors):
            raise StorageUnavailable(f"Workers AI returned vectors not of dimension {self._dimension}")
        return [_unit(vector) for vector in vectors]


def _unit(vector: list[float]) -> list[float]:
    # The model's output is not promised to be unit length; every stored vector is.
    norm = math.sqrt(sum(x * x for x in vector))
    return [x / norm for x in vector] if norm > 0 else vector
