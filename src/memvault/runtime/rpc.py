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
Arguments and results are plain data; the entry converts at the JS boundary. ``METHODS`` declares
every method once (what it runs and how its arguments map onto the operation's input); the calls
go through it, and the TypeScript client's contract is generated from it
(``scripts/typescript_contract.py``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from memvault.core import brain
from memvault.core.answers import SEARCH
from memvault.core.brain.wire import Schemas
from memvault.core.contract import spec_schemas
from memvault.core.credentials.callers import CallerTokens, brain_caller, memory_caller
from memvault.core.deps import Deps
from memvault.core.errors import InvalidInput
from memvault.core.memory.operations import FORGET, READ, STORE, Operation, perform
from memvault.core.shapes import plain_object, result_schema

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


@dataclass(frozen=True)
class Method:
    """One RPC method of the entrypoint: the operation it runs; the secret it takes first (none for
    the client interface, whose key the binding's props name); the fields of the operation's input
    it takes as arguments, in order (``WHOLE_INPUT``: the input object itself); and whether the other
    fields come in one options object, named in camelCase."""

    WHOLE_INPUT: ClassVar[str] = "*"

    name: str
    summary: str
    operation: Operation[Any, Any] | brain.Operation[Any, Any]
    arguments: tuple[str, ...]
    options: bool = False
    credential: str = ""  # "", "memory_key" or "brain_token"

    @property
    def memory(self) -> bool:
        return isinstance(self.operation, Operation)

    @property
    def request_name(self) -> str:
        op = self.operation
        return op.request.name if isinstance(op, Operation) else op.input.__name__

    @property
    def result_name(self) -> str:
        op = self.operation
        return op.result.__name__ if isinstance(op, Operation) else str(op.output.__name__)

    def request_schemas(self) -> dict[str, dict[str, Any]]:
        """The JSON schemas of the operation's input and of the objects inside it, by name."""
        op = self.operation
        if isinstance(op, Operation):
            return spec_schemas([op.request])
        schemas = Schemas()
        schemas.of(op.input, output=False)
        return schemas.defs

    def result_schemas(self) -> dict[str, dict[str, Any]]:
        op = self.operation
        if isinstance(op, Operation):
            return result_schema(op.result)
        schemas = Schemas()
        schemas.of(op.output, output=True)
        return schemas.defs

    def data(self, args: Sequence[Any]) -> Any:
        """The operation's plain input from the call's arguments (the credential taken off)."""
        named = dict(zip(self.arguments, args, strict=False))
        whole = named.pop(self.WHOLE_INPUT, None)
        extra = args[len(self.arguments)] if self.options and len(args) > len(self.arguments) else None
        data = options_of(extra) if self.options else {}
        # JS undefined arrives as None: a brain input's defaults apply then (a memory command reads None as absent).
        data.update(named if self.memory else {name: value for name, value in named.items() if value is not None})
        if self.WHOLE_INPUT not in self.arguments:
            return data
        return {**data, **whole} if isinstance(whole, Mapping) else whole


def _tokens(method: Method, props: Any, secret: Any) -> CallerTokens:
    if method.credential == "memory_key":
        return keyed(secret)
    if method.credential == "brain_token":
        return CallerTokens(brain_token=secret if isinstance(secret, str) else None)
    return bound(props)


async def invoke(deps: Deps, props: Any, name: str, *args: Any) -> dict[str, Any]:
    """The RPC method ``name`` called with ``args`` (its secret first, where it takes one): the
    caller first (a caller nobody knows learns nothing of how its arguments would have been read),
    then the operation; the same result as over HTTP."""
    method = BY_NAME[name]
    secret, rest = (args[0] if args else None, args[1:]) if method.credential else (None, args)
    tokens = _tokens(method, props, secret)
    op = method.operation
    if isinstance(op, Operation):
        return await run(deps, tokens, op, method.data(rest))
    credential = await brain_caller(deps, tokens)
    answer: dict[str, Any] = brain.to_plain(await op.perform(deps, credential, method.data(rest)))
    return answer


METHODS: tuple[Method, ...] = (
    Method("getMemory", "One page of a vault's messages, newest first, read from the vault itself.", READ,
           ("session_id",), options=True),
    Method("saveMemory", "Store messages in order; each is findable at once.", STORE,
           ("session_id", "messages", "metadata")),
    Method("searchMemory", "The best items of the key's memory that fit the token budget.", SEARCH, ("query",),
           options=True),
    Method("forgetMemory", "Forget messages by id, in every vault of the key or in one session's.", FORGET, ("ids",),
           options=True),
    Method("get_memory", "getMemory for a caller holding the memory key's secret.", READ,
           ("session_id", "limit", "offset"), credential="memory_key"),
    Method("save_memory", "saveMemory for a caller holding the memory key's secret.", STORE,
           ("session_id", "messages", "metadata"), credential="memory_key"),
    Method("search_memory", "searchMemory for a caller holding the memory key's secret.", SEARCH,
           ("query", "limit", "session_id"), credential="memory_key"),
    Method("forget_memory", "forgetMemory for a caller holding the memory key's secret.", FORGET,
           ("ids", "session_id"), credential="memory_key"),
    Method("brain_search", brain.SEARCH_FACTS.summary, brain.SEARCH_FACTS, ("query", "mode", "limit"),
           credential="brain_token"),
    Method("brain_recall", brain.RECALL.summary, brain.RECALL, ("query", "as_of", "budget"), credential="brain_token"),
    # The payload's own bands wins over the argument.
    Method("brain_write", brain.WRITE_FACTS.summary, brain.WRITE_FACTS, (Method.WHOLE_INPUT, "bands"),
           credential="brain_token"),
    Method("brain_register_skill", brain.REGISTER_SKILL.summary, brain.REGISTER_SKILL, (Method.WHOLE_INPUT,),
           credential="brain_token"),
    Method("brain_get_skill", brain.GET_SKILL.summary, brain.GET_SKILL, ("slug", "scope", "version", "as_of"),
           credential="brain_token"),
    Method("brain_propose_skill", brain.PROPOSE_SKILL.summary, brain.PROPOSE_SKILL, (Method.WHOLE_INPUT,),
           credential="brain_token"),
    Method("brain_skill_proposals", brain.LIST_SKILL_PROPOSALS.summary, brain.LIST_SKILL_PROPOSALS,
           ("status", "limit"), credential="brain_token"),
    Method("brain_confirm_skill_proposal", brain.CONFIRM_SKILL_PROPOSAL.summary, brain.CONFIRM_SKILL_PROPOSAL,
           ("id", "version_of"), credential="brain_token"),
    Method("brain_reject_skill_proposal", brain.REJECT_SKILL_PROPOSAL.summary, brain.REJECT_SKILL_PROPOSAL,
           ("id", "reason"), credential="brain_token"),
    Method("brain_retire", brain.RETIRE_FACT.summary, brain.RETIRE_FACT, ("id", "reason"), credential="brain_token"),
)
BY_NAME = {method.name: method for method in METHODS}


async def get_bound_memory(deps: Deps, props: Any, session_id: Any = None, options: Any = None) -> dict[str, Any]:
    """``getMemory(sessionId, {limit, offset})``."""
    return await invoke(deps, props, "getMemory", session_id, options)


async def save_bound_memory(deps: Deps, props: Any, session_id: Any, messages: Any, metadata: Any = None) -> dict[str, Any]:
    """``saveMemory(sessionId, messages, metadata)``."""
    return await invoke(deps, props, "saveMemory", session_id, messages, metadata)


async def search_bound_memory(deps: Deps, props: Any, query: Any, options: Any = None) -> dict[str, Any]:
    """``searchMemory(query, {limit, budgetTokens, now, sessionId, brain, asOf})``."""
    return await invoke(deps, props, "searchMemory", query, options)


async def forget_bound_memory(deps: Deps, props: Any, ids: Any, options: Any = None) -> dict[str, Any]:
    """``forgetMemory(ids, {sessionId})``."""
    return await invoke(deps, props, "forgetMemory", ids, options)


async def get_memory(deps: Deps, memory_key: Any, session_id: Any = None, limit: Any = None, offset: Any = None) -> dict[str, Any]:
    return await invoke(deps, None, "get_memory", memory_key, session_id, limit, offset)


async def save_memory(deps: Deps, memory_key: Any, session_id: Any, messages: Any, metadata: Any = None) -> dict[str, Any]:
    return await invoke(deps, None, "save_memory", memory_key, session_id, messages, metadata)


async def search_memory(deps: Deps, memory_key: Any, query: Any, limit: Any = None, session_id: Any = None) -> dict[str, Any]:
    return await invoke(deps, None, "search_memory", memory_key, query, limit, session_id)


async def forget_memory(deps: Deps, memory_key: Any, ids: Any, session_id: Any = None) -> dict[str, Any]:
    return await invoke(deps, None, "forget_memory", memory_key, ids, session_id)


async def brain_search(deps: Deps, brain_token: Any, query: Any, mode: Any = None, limit: Any = None) -> dict[str, Any]:
    return await invoke(deps, None, "brain_search", brain_token, query, mode, limit)


async def brain_recall(deps: Deps, brain_token: Any, query: Any = None, as_of: Any = None, budget: Any = None) -> dict[str, Any]:
    return await invoke(deps, None, "brain_recall", brain_token, query, as_of, budget)


async def brain_write(deps: Deps, brain_token: Any, payload: Any, bands: Any = True) -> dict[str, Any]:
    """``bands`` false skips the write-time bands, as ``bands: false`` in the payload does."""
    return await invoke(deps, None, "brain_write", brain_token, payload, bands)


async def brain_register_skill(deps: Deps, brain_token: Any, payload: Any) -> dict[str, Any]:
    return await invoke(deps, None, "brain_register_skill", brain_token, payload)


async def brain_get_skill(deps: Deps, brain_token: Any, slug: Any, scope: Any = None, version: Any = None,
                          as_of: Any = None) -> dict[str, Any]:
    return await invoke(deps, None, "brain_get_skill", brain_token, slug, scope, version, as_of)


async def brain_propose_skill(deps: Deps, brain_token: Any, payload: Any) -> dict[str, Any]:
    return await invoke(deps, None, "brain_propose_skill", brain_token, payload)


async def brain_skill_proposals(deps: Deps, brain_token: Any, status: Any = None, limit: Any = None) -> dict[str, Any]:
    return await invoke(deps, None, "brain_skill_proposals", brain_token, status, limit)


async def brain_confirm_skill_proposal(deps: Deps, brain_token: Any, id: Any, version_of: Any = None) -> dict[str, Any]:
    return await invoke(deps, None, "brain_confirm_skill_proposal", brain_token, id, version_of)


async def brain_reject_skill_proposal(deps: Deps, brain_token: Any, id: Any, reason: Any = None) -> dict[str, Any]:
    return await invoke(deps, None, "brain_reject_skill_proposal", brain_token, id, reason)


async def brain_retire(deps: Deps, brain_token: Any, fact_id: Any, reason: Any) -> dict[str, Any]:
    return await invoke(deps, None, "brain_retire", brain_token, fact_id, reason)
