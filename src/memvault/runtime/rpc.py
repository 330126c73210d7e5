"""RPC for other Workers calling over a service binding (a Telegram bot, say).

The client interface is the primary family: ``getMemory``, ``saveMemory``, ``searchMemory`` and
``forgetMemory`` on the entrypoint take no credential, since the memory key is bound once per
client by the ``memoryKeyId`` prop of the caller's service binding. Props are fixed in the calling
Worker's configuration by whoever deploys it in this account, and the calling code cannot change
them, so they name the key by its id and no secret is written into a configuration file.
``get_memory``, ``save_memory``, ``search_memory`` and ``forget_memory`` are their aliases for a
caller holding the key's secret, passed first; both answer with the same result, the one the HTTP
API gives. Each method only moves its arguments into the operation's plain data (an options
object's camelCase names become the operation's field names) and runs the one core operation.
Arguments and results are plain data; the entry converts at the JS boundary.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from memvault.core import brain
from memvault.core.callers import CallerTokens, brain_caller, memory_caller
from memvault.core.deps import Deps
from memvault.core.errors import InvalidInput
from memvault.core.memory.operations import FORGET, READ, SEARCH, STORE, Operation, perform
from memvault.core.shapes import plain_object

# The service-binding prop that names the caller's memory key.
MEMORY_KEY_PROP = "memoryKeyId"
_CAPITAL = re.compile(r"(?<=[a-z0-9])([A-Z])")


def bound(props: Any) -> CallerTokens:
    """The credential of a client-interface call: the memory key its binding's props name."""
    key_id = props.get(MEMORY_KEY_PROP) if isinstance(props, Mapping) else None
    return CallerTokens(memory_key_id=key_id if isinstance(key_id, str) else "")


def keyed(memory_key: Any) -> CallerTokens:
    """The credential of an alias call: the memory key's secret, its first argument."""
    return CallerTokens(memory_key=memory_key if isinstance(memory_key, str) else None)


def options_of(options: Any) -> dict[str, Any]:
    """An options object as operation fields: ``sessionId`` is ``session_id``; absent is empty."""
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise InvalidInput("options must be an object")
    return {_CAPITAL.sub(r"_\1", str(name)).lower(): value for name, value in options.items()}


async def run(deps: Deps, tokens: CallerTokens, operation: Operation[Any, Any], data: dict[str, Any]) -> dict[str, Any]:
    """One memory call of either family: the caller first (a caller nobody knows learns nothing of
    how its arguments would have been read), then the operation."""
    caller = await memory_caller(deps, tokens)
    return plain_object(await perform(deps, caller, operation, data))


async def get_bound_memory(deps: Deps, props: Any, session_id: Any = None, options: Any = None) -> dict[str, Any]:
    """``getMemory(sessionId, {limit, offset})``: one page, newest first, from the vault itself."""
    return await run(deps, bound(props), READ, {**options_of(options), "session_id": session_id})


async def save_bound_memory(deps: Deps, props: Any, session_id: Any, messages: Any, metadata: Any = None) -> dict[str, Any]:
    """``saveMemory(sessionId, messages, metadata)``: the messages, in order; each is findable at once."""
    return await run(deps, bound(props), STORE, {"session_id": session_id, "messages": messages, "metadata": metadata})


async def search_bound_memory(deps: Deps, props: Any, query: Any, options: Any = None) -> dict[str, Any]:
    """``searchMemory(query, {limit, budgetTokens, now, sessionId})``: the best items that fit the budget."""
    return await run(deps, bound(props), SEARCH, {**options_of(options), "query": query})


async def forget_bound_memory(deps: Deps, props: Any, ids: Any, options: Any = None) -> dict[str, Any]:
    """``forgetMemory(ids, {sessionId})``: forget messages by id, in every vault of the key or one session's."""
    return await run(deps, bound(props), FORGET, {**options_of(options), "ids": ids})


async def get_memory(deps: Deps, memory_key: Any, session_id: Any = None, limit: Any = None, offset: Any = None) -> dict[str, Any]:
    return await run(deps, keyed(memory_key), READ, {"session_id": session_id, "limit": limit, "offset": offset})


async def save_memory(deps: Deps, memory_key: Any, session_id: Any, messages: Any, metadata: Any = None) -> dict[str, Any]:
    return await run(deps, keyed(memory_key), STORE, {"session_id": session_id, "messages": messages, "metadata": metadata})


async def search_memory(deps: Deps, memory_key: Any, query: Any, limit: Any = None, session_id: Any = None) -> dict[str, Any]:
    return await run(deps, keyed(memory_key), SEARCH, {"query": query, "limit": limit, "session_id": session_id})


async def forget_memory(deps: Deps, memory_key: Any, ids: Any, session_id: Any = None) -> dict[str, Any]:
    return await run(deps, keyed(memory_key), FORGET, {"ids": ids, "session_id": session_id})


def _brain(token: Any) -> CallerTokens:
    return CallerTokens(brain_token=token if isinstance(token, str) else None)


async def _brain_run(deps: Deps, brain_token: Any, op: brain.Operation[Any, Any], data: object) -> dict[str, Any]:
    """One brain operation for the holder of ``brain_token``; the same result as over HTTP."""
    credential = await brain_caller(deps, _brain(brain_token))
    answer: dict[str, Any] = brain.to_plain(await op.perform(deps, credential, data))
    return answer


def _given(**fields: Any) -> dict[str, Any]:
    # JS undefined arrives as None: the operation's defaults apply then.
    return {name: value for name, value in fields.items() if value is not None}


async def brain_search(deps: Deps, brain_token: Any, q: Any, mode: Any = None, limit: Any = None) -> dict[str, Any]:
    return await _brain_run(deps, brain_token, brain.SEARCH_FACTS, _given(query=q, mode=mode, limit=limit))


async def brain_recall(deps: Deps, brain_token: Any, q: Any = None, as_of: Any = None, budget: Any = None) -> dict[str, Any]:
    return await _brain_run(deps, brain_token, brain.RECALL, _given(query=q, as_of=as_of, budget=budget))


async def brain_write(deps: Deps, brain_token: Any, payload: Any, bands: Any = True) -> dict[str, Any]:
    """``bands`` false skips the write-time bands, as ``bands: false`` in the payload does."""
    data = {"bands": bands, **payload} if isinstance(payload, Mapping) else payload
    return await _brain_run(deps, brain_token, brain.WRITE_FACTS, data)
