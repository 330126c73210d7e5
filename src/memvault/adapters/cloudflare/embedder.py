"""The ``Embedder`` port over Workers AI (``env.AI``), bge-base-en-v1.5 by default."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memvault.adapters.cloudflare.convert import to_js, to_py
from memvault.core.errors import InvalidInput, StorageUnavailable

BGE_BASE_MODEL = "@cf/baai/bge-base-en-v1.5"
BGE_BASE_DIMENSION = 768
# Workers AI takes at most 100 texts per call to the bge models.
MAX_BATCH = 100


class WorkersAiEmbedder:
    def __init__(
        self,
        binding: Any,
        *,
        model: str = BGE_BASE_MODEL,
        dimension: int = BGE_BASE_DIMENSION,
        batch_size: int = MAX_BATCH,
    ) -> None:
        if not 1 <= batch_size <= MAX_BATCH:
            raise InvalidInput(f"batch_size must be between 1 and {MAX_BATCH}")
        self._ai = binding
        self._model = model
        self._dimension = dimension
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
        result = to_py(await self._ai.run(self._model, to_js({"text": texts}))) or {}
        data = result.get("data")
        if not isinstance(data, list) or len(data) != len(texts):
            got = len(data) if isinstance(data, list) else type(data).__name__
            raise StorageUnavailable(f"Workers AI returned {got} vectors for {len(texts)} texts")
        vectors = [[float(x) for x in vector] for vector in data]
        if any(len(vector) != self._dimension for vector in vectors):
            raise StorageUnavailable(f"Workers AI returned vectors not of dimension {self._dimension}")
        return vectors
