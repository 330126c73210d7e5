"""RPC for other Workers calling over a service binding (a Telegram bot, say).

Each call authenticates the memory key it is given, then runs the same core function as the
matching HTTP route. Arguments and results are plain data; the entry converts at the JS boundary.
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from memvault.core import brain, memory
from memvault.core.deps import Deps
from memvault.core.errors import InvalidInput
from memvault.core.keys import authenticate
from memvault.core.memory.messages import messages_from


async def save_memory(
    deps: Deps, memory_key: str, session_id: str | None, messages: Any, metadata: Any = None
) -> dict[str, Any]:
    key = await authenticate(deps.db, memory_key)
    parsed = messages_from(_with_shared_fields(messages, metadata), deps.clock())
    result = await memory.store_conversation(deps, key.id, [m for m in parsed if m], session_id)
    return {"message_ids": [None if m is None else m.id for m in parsed], **asdict(result)}


def _with_shared_fields(messages: Any, metadata: Any) -> Any:
    """Fields the caller gave once for the whole batch (a timestamp, a model) on every message."""
    if not isinstance(metadata, dict) or not isinstance(messages, list):
        return messages
    shared = {k: metadata[k] for k in ("timestamp", "model") if k in metadata}
    return [{**shared, **m} if isinstance(m, dict) else m for m in messages]


async def search_memory(
    deps: Deps, memory_key: str, query: str, limit: int | None, session_id: str | None
) -> dict[str, Any]:
    key = await authenticate(deps.db, memory_key)
    result = await memory.search_memory(deps, key.id, query, limit=limit, session_id=session_id)
    return asdict(result)


async def get_memory(
    deps: Deps, memory_key: str, session_id: str | None, limit: Any = None, offset: Any = 0
) -> dict[str, Any]:
    """One page of a vault's messages, newest first (pending ones, then stored ones)."""
    # JS undefined arrives as None: the defaults apply then too.
    limit = deps.settings.read_page_size if limit is None else int(limit)
    offset = 0 if offset is None else int(offset)
    key = await authenticate(deps.db, memory_key)
    items = await memory.read_memory(deps, key.id, session_id, limit, offset)
    return {"session_id": session_id, "offset": offset, "limit": limit, "items": items}


async def forget_memory(deps: Deps, memory_key: str, ids: Any, session_id: str | None = None) -> dict[str, Any]:
    key = await authenticate(deps.db, memory_key)
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise InvalidInput("ids must be a list of message ids")
    return await memory.forget(deps, key.id, ids, session_id)


async def brain_search(
    deps: Deps, brain_token: str, q: str, mode: str | None = None, limit: int | None = None
) -> dict[str, Any]:
    credential = brain.auth_of(brain_token, deps.settings)
    return await brain.search_brain(deps, credential, q, mode or "keyword", None, None, limit)


async def brain_recall(
    deps: Deps, brain_token: str, q: str | None = None, as_of: Any = None, budget: Any = None
) -> dict[str, Any]:
    credential = brain.auth_of(brain_token, deps.settings)
    return await brain.recall(deps, credential, q, as_of, budget)


async def brain_write(deps: Deps, brain_token: str, payload: Any, bands: Any = True) -> dict[str, Any]:
    credential = brain.auth_of(brain_token, deps.settings)
    if not isinstance(bands, bool):
        raise InvalidInput("bands must be true or false")
    return await brain.ingest_facts(deps, credential, payload, bands)
