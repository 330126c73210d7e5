"""``read_memory``: one page of a vault's messages, newest first, as ``GET /v1/memory`` shows it."""

from __future__ import annotations

from typing import Any

from memvault.core.deps import Deps
from memvault.core.errors import InvalidInput
from memvault.core.memory.metadata import metadata_value, redact_metadata
from memvault.core.memory.names import vault_name
from memvault.core.memory.read.vaults import written
from memvault.core.redaction.recall import recalled

# SQLite's LIMIT and OFFSET are 64-bit: larger numbers would fail in the store, not as bad input.
MAX_PAGE = 500
MAX_OFFSET = 2**62


async def read_memory(deps: Deps, key_id: str, session_id: str | None, limit: int, offset: int) -> list[dict[str, Any]]:
    """One page of a vault's messages, newest first: pending messages, then stored ones. Read from
    the vault itself, which is never behind (the mirror may be, for a moment)."""
    if limit < 1 or offset < 0:
        raise InvalidInput("limit must be positive and offset not negative")
    if limit > MAX_PAGE or offset > MAX_OFFSET:
        raise InvalidInput(f"limit must be at most {MAX_PAGE} and offset at most {MAX_OFFSET}")
    if not await written(deps, key_id, session_id):
        return []
    vault = deps.vaults.vault(vault_name(key_id, session_id))
    # Newest first; messages of the same moment newest-arrived first (the buffer is in arrival order).
    pending = sorted(reversed(await vault.pending()), key=lambda m: -m.timestamp)
    page: list[dict[str, Any]] = [
        {"state": "pending", **m.to_dict(), "content": recalled(m.content).text, "model": _model(m.model),
         "metadata": _metadata(m.metadata)}
        for m in pending[offset : offset + limit]
    ]
    if len(page) < limit:
        stored_offset = max(0, offset - len(pending))
        rows = await vault.recent_messages(limit - len(page), stored_offset)
        page += [
            {
                "state": "stored",
                "role": r.role,
                "content": recalled(r.text).text,
                "timestamp": r.ts_end,
                "id": r.source_ids[0],
                "model": _model(r.model),
                "metadata": _metadata(r.metadata),
            }
            for r in rows
        ]
    return page


def _metadata(text: str | None) -> dict[str, Any] | None:
    """Stored metadata through the secret gate again: stored before a rule existed, it may hold a
    secret (the message's text passes ``recalled`` beside it)."""
    return None if text is None else metadata_value(redact_metadata(text).text)


def _model(model: str | None) -> str | None:
    return recalled(model).text if model else model
