"""Vectors for the rows a write created. Messages are embedded by the model; a chunk's vector is
the normalised mean of its messages' vectors, which costs no model time (a chunk is long, so it
would cost as much as all its messages together) and, unlike the model, sees past its 256th token.
Measured on the LoCoMo dev split: recall@1000 0.860 -> 0.856, @2000 0.901 -> 0.904, against
embedding chunks with the model. A chunk with none of its messages at hand (a later piece of a
message longer than a chunk) is embedded by the model."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import replace

from memvault.core.deps import Deps
from memvault.core.errors import InvalidInput
from memvault.core.models import MemoryRow
from memvault.core.ports import VaultClient
from memvault.core.vectors import mean_unit

log = logging.getLogger(__name__)


async def embed_rows(deps: Deps, vault: VaultClient, rows: Sequence[MemoryRow]) -> list[MemoryRow]:
    """Embed and attach vectors to new rows; on failure they stay stored, found by keyword, and
    the nightly run embeds them. Returns the rows, with their vectors where they got one."""
    members: dict[str, list[str]] = {}
    for row in rows:
        if row.kind == "message" and row.parent_id is not None:
            members.setdefault(row.parent_id, []).append(row.id)
    by_model = [r for r in rows if r.kind == "message" or not members.get(r.id)]
    vectors: dict[str, list[float]] = {}
    batch_size = max(1, deps.settings.embed_batch)
    # Rows of similar length share a call: an embedder pads a batch to its longest text.
    ordered = sorted(by_model, key=lambda row: len(row.text))
    for start in range(0, len(ordered), batch_size):
        batch = ordered[start : start + batch_size]
        try:
            found = dict(zip((r.id for r in batch), await deps.embedder.embed([r.text for r in batch]), strict=True))
            await vault.attach_embeddings(deps.embedder.model_id, found)
        except InvalidInput:
            raise
        except Exception as exc:
            log.warning("embedding failed, rows kept for the nightly re-embed: %s", type(exc).__name__)
            continue
        vectors.update(found)
    derived = {
        chunk_id: mean_unit([vectors[m] for m in ids])
        for chunk_id, ids in members.items()
        if all(m in vectors for m in ids)
    }
    if derived:
        await vault.attach_embeddings(deps.embedder.model_id, derived)
        vectors.update(derived)
    return [replace(r, embedding=tuple(vectors[r.id])) if r.id in vectors else r for r in rows]
