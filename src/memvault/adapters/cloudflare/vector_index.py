"""The ``VectorIndex`` port over a Vectorize binding (``env.VECTORIZE``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memvault.adapters.cloudflare.convert import to_js, to_py
from memvault.adapters.cloudflare.failures import binding_errors
from memvault.core.ports import VectorMatch

# Vectorize limits: 1000 vectors per upsert from a Worker; topK at most 20 when metadata is
# returned and at most 100 without it.
UPSERT_BATCH = 1000
TOP_K_WITH_METADATA = 20
TOP_K_MAX = 100


class VectorizeIndex:
    def __init__(self, binding: Any) -> None:
        self._index = binding

    async def upsert(self, items: Sequence[tuple[str, Sequence[float], dict[str, Any]]]) -> None:
        for start in range(0, len(items), UPSERT_BATCH):
            vectors = [
                {"id": id_, "values": [float(x) for x in values], "metadata": dict(metadata)}
                for id_, values, metadata in items[start : start + UPSERT_BATCH]
            ]
            with binding_errors("Vectorize"):
                await self._index.upsert(to_js(vectors))

    async def query(
        self,
        vector: Sequence[float],
        top_k: int,
        metadata_filter: dict[str, Any] | None = None,
        *,
        with_metadata: bool = False,
    ) -> list[VectorMatch]:
        if top_k <= 0:
            return []
        top_k = min(top_k, TOP_K_MAX)
        # Metadata is returned only when a caller reads it: "none" keeps the 100-result limit and
        # spares Vectorize reading it; "all" is allowed only up to 20 results.
        inline = with_metadata and top_k <= TOP_K_WITH_METADATA
        options: dict[str, Any] = {"topK": top_k, "returnValues": False, "returnMetadata": "all" if inline else "none"}
        if metadata_filter:
            options["filter"] = metadata_filter
        with binding_errors("Vectorize"):
            result = to_py(await self._index.query(to_js([float(x) for x in vector]), to_js(options))) or {}
        matches = result.get("matches") or []
        if inline:
            metadata = {m["id"]: m.get("metadata") or {} for m in matches}
        elif with_metadata:
            metadata = await self._metadata_of([m["id"] for m in matches])
        else:
            metadata = {}
        return [VectorMatch(id=m["id"], score=float(m["score"]), metadata=metadata.get(m["id"], {})) for m in matches]

    async def _metadata_of(self, ids: list[str]) -> dict[str, dict[str, Any]]:
        if not ids:
            return {}
        with binding_errors("Vectorize"):
            found = to_py(await self._index.getByIds(to_js(ids))) or []
        return {v["id"]: v.get("metadata") or {} for v in found}

    async def delete(self, ids: Sequence[str]) -> None:
        for start in range(0, len(ids), UPSERT_BATCH):
            with binding_errors("Vectorize"):
                await self._index.deleteByIds(to_js(list(ids[start : start + UPSERT_BATCH])))
