"""RPC for other Workers calling over a service binding (a Telegram bot, say).

Two families of methods, each running the same core function as the matching HTTP route:
- ``get_memory``, ``save_memory``, ``search_memory``, ``forget_memory`` and the brain calls take the
  credential as their first argument;
- the client interface (``getMemory``, ``saveMemory``, ``searchMemory`` on the entrypoint) takes
  none: the memory key is bound once per client, by the ``memoryKeyId`` prop of the caller's
  service binding. Props are fixed in the calling Worker's configuration by whoever deploys it in
  this account, and the calling code cannot change them, so they name the key by its id and no
  secret is written into a configuration file.
Arguments and results are plain data; the entry converts at the JS boundary.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

from memvault.core import brain, memory
from memvault.core.deps import Deps
from memvault.core.errors import InvalidField, InvalidInput
from memvault.core.keys import MemoryKey, authenticate, key_by_id
from memvault.core.memory.messages import messages_from

# The service-binding prop that names the caller's memory key.
MEMORY_KEY_PROP = "memoryKeyId"


async def save_memory(
    deps: Deps, memory_key: str, session_id: str | None, messages: Any, metadata: Any = None
) -> dict[str, Any]:
    key = await authenticate(deps.db, memory_key, deps.reads)
    parsed = messages_from(messages, deps.clock(), metadata)
    result = await memory.store_conversation(deps, key.id, [m for m in parsed if m], session_id)
    return {"message_ids": [None if m is None else m.id for m in parsed], **asdict(result)}


async def search_memory(
    deps: Deps, memory_key: str, query: str, limit: int | None, session_id: str | None
) -> dict[str, Any]:
    key = await authenticate(deps.db, memory_key, deps.reads)
    result = await memory.search_memory(deps, key.id, query, limit=limit, session_id=session_id)
    return asdict(result)


async def get_memory(
    deps: Deps, memory_key: str, session_id: str | None, limit: Any = None, offset: Any = 0
) -> dict[str, Any]:
    """One page of a vault's messages, newest first (pending ones, then stored ones)."""
    # JS undefined arrives as None: the defaults apply then too.
    key = await authenticate(deps.db, memory_key, deps.reads)
    return await memory.memory_page(
        deps, key.id, session_id, None if limit is None else int(limit), None if offset is None else int(offset)
    )


async def bound_key(deps: Deps, props: Any) -> MemoryKey:
    """The memory key the caller's service-binding props name."""
    key_id = props.get(MEMORY_KEY_PROP) if isinstance(props, Mapping) else None
    return await key_by_id(deps.db, key_id, deps.reads)


async def get_bound_memory(deps: Deps, props: Any, session_id: Any, options: Any = None) -> dict[str, Any]:
    """``getMemory(sessionId, {limit, offset})``: one page, newest first, from the vault itself."""
    key = await bound_key(deps, props)
    page = await memory.memory_page(
        deps, key.id, _session(session_id), _option(options, "limit", 1), _option(options, "offset", 0)
    )
    return {"sessionId": page["session_id"], "limit": page["limit"], "offset": page["offset"], "messages": page["items"]}


async def save_bound_memory(
    deps: Deps, props: Any, session_id: Any, messages: Any, metadata: Any = None
) -> dict[str, Any]:
    """``saveMemory(sessionId, messages, metadata)``: ``savedCount`` is how many messages the
    vault now holds from this call (all but those marked ``"memory": false``; a re-sent id counts,
    though it is stored once)."""
    key = await bound_key(deps, props)
    session = _session(session_id)
    parsed = messages_from(messages, deps.clock(), metadata)
    kept = [m for m in parsed if m]
    result = await memory.store_conversation(deps, key.id, kept, session)
    return {"sessionId": session, "savedCount": len(kept), "updatedAt": result.updated_at}


async def search_bound_memory(deps: Deps, props: Any, query: Any, options: Any = None) -> list[dict[str, Any]]:
    """``searchMemory(query, {limit, sessionId})``: the items of a search, best first."""
    key = await bound_key(deps, props)
    if not isinstance(query, str):
        raise InvalidField("query must be text")
    session = _session(options.get("sessionId") if isinstance(options, Mapping) else None)
    result = await memory.search_memory(deps, key.id, query, limit=_option(options, "limit", 1), session_id=session)
    return [asdict(item) for item in result.items]


def _session(value: Any) -> str | None:
    if value is None or (isinstance(value, str) and value):
        return value
    raise InvalidField("sessionId must be non-empty text or null")


def _option(options: Any, name: str, least: int) -> int | None:
    """A whole-number option (JS numbers may arrive as floats), or None when not given."""
    if options is None:
        return None
    if not isinstance(options, Mapping):
        raise InvalidInput("options must be an object")
    value = options.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value != int(value) or value < least:
        raise InvalidField(f"{name} must be a whole number of at least {least}")
    return int(value)


async def forget_memory(deps: Deps, memory_key: str, ids: Any, session_id: str | None = None) -> dict[str, Any]:
    key = await authenticate(deps.db, memory_key, deps.reads)
    if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
        raise InvalidInput("ids must be a list of message ids")
    return await memory.forget(deps, key.id, ids, session_id)


async def _brain(deps: Deps, brain_token: Any, op: brain.Operation[Any, Any], data: object) -> dict[str, Any]:
    """One brain operation for the holder of ``brain_token``; the same result as over HTTP."""
    credential = await brain.auth_of(brain_token, deps)
    answer: dict[str, Any] = brain.to_plain(await op.perform(deps, credential, data))
    return answer


def _given(**fields: Any) -> dict[str, Any]:
    # JS undefined arrives as None: the operation's defaults apply then.
    return {name: value for name, value in fields.items() if value is not None}


async def brain_search(deps: Deps, brain_token: Any, q: Any, mode: Any = None, limit: Any = None) -> dict[str, Any]:
    return await _brain(deps, brain_token, brain.SEARCH_FACTS, _given(query=q, mode=mode, limit=limit))


async def brain_recall(deps: Deps, brain_token: Any, q: Any = None, as_of: Any = None, budget: Any = None) -> dict[str, Any]:
    return await _brain(deps, brain_token, brain.RECALL, _given(query=q, as_of=as_of, budget=budget))


async def brain_write(deps: Deps, brain_token: Any, payload: Any, bands: Any = True) -> dict[str, Any]:
    """``bands`` false skips the write-time bands, as ``bands: false`` in the payload does."""
    data = {"bands": bands, **payload} if isinstance(payload, Mapping) else payload
    return await _brain(deps, brain_token, brain.WRITE_FACTS, data)
