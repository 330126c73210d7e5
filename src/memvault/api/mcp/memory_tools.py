"""The conversation-memory tools of the MCP server. Each hands its arguments, as the model sent
them, to one core operation (whose parser is the only check) and answers with the operation's
result, the shape every surface gives. The input schema a client lists is generated from the
operation's own definition, so the SDK checks nothing of its own before core does."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.tools import Tool
from mcp_types import ToolAnnotations

from memvault.api.mcp.errors import refused_as, tool_refusal
from memvault.core.answers import SEARCH
from memvault.core.contract import spec_schemas
from memvault.core.credentials.keys import MemoryKey
from memvault.core.deps import Deps
from memvault.core.errors import InvalidInput
from memvault.core.memory.operations import FORGET, STORE, Operation, perform
from memvault.core.shapes import plain_object

McpContext = Context[Any, Any]
CallerOf = Callable[[McpContext], Awaitable[MemoryKey]]
# Hints a client may use to ask before a call, or not: reads change nothing, forgetting cannot be undone.
READS = ToolAnnotations(read_only_hint=True)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False)
FORGETS = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True)
DEFINITIONS = "#/$defs/"
NOTE = {"type": "string", "minLength": 1, "description": "A note to remember, instead of messages (stored as a user message)."}


def arguments_schema(operation: Operation[Any, Any], **extra: dict[str, Any]) -> dict[str, Any]:
    """The operation's request as a tool's input schema, self-contained (objects it holds in
    ``$defs``), with ``extra`` arguments of the tool's own."""
    schemas = spec_schemas([operation.request], DEFINITIONS)
    schema = schemas.pop(operation.request.name)
    schema.pop("examples", None)
    schema["properties"].update(extra)
    return {**schema, "$defs": schemas} if schemas else schema


def memory_tools(deps: Deps, caller_of: CallerOf) -> list[Tool]:
    async def answer(ctx: McpContext, operation: Operation[Any, Any], data: dict[str, Any]) -> dict[str, Any]:
        with refused_as(tool_refusal):
            return plain_object(await perform(deps, await caller_of(ctx), operation, data))

    async def memory_store(
        ctx: McpContext, messages: Any = None, note: Any = None, metadata: Any = None, session_id: Any = None
    ) -> dict[str, Any]:
        with refused_as(tool_refusal):
            if (messages is None) == (note is None):
                raise InvalidInput("give either messages or a note")
        batch = messages if note is None else [{"role": "user", "content": note}]
        return await answer(ctx, STORE, {"messages": batch, "metadata": metadata, "session_id": session_id})

    async def memory_search(
        ctx: McpContext, query: Any = None, limit: Any = None, budget_tokens: Any = None, now: Any = None,
        session_id: Any = None, brain: Any = None, as_of: Any = None,
    ) -> dict[str, Any]:
        data = {"query": query, "limit": limit, "budget_tokens": budget_tokens, "now": now, "session_id": session_id,
                "brain": brain, "as_of": as_of}
        return await answer(ctx, SEARCH, data)

    async def memory_forget(ctx: McpContext, ids: Any = None, session_id: Any = None) -> dict[str, Any]:
        return await answer(ctx, FORGET, {"ids": ids, "session_id": session_id})

    store_schema = arguments_schema(STORE, note=NOTE)
    store_schema["required"] = []  # messages, or a note
    return [
        _tool(memory_store, "Remember conversation messages, or one plain note (stored as a user message).", WRITES,
              store_schema),
        _tool(memory_search, "Search remembered conversation (and, for a key granted brain scopes, the brain's facts): what is most"
              " relevant that fits a token budget.",
              READS, arguments_schema(SEARCH)),
        _tool(memory_forget, "Forget messages by id (as stored, or as search results list them in source_ids).",
              FORGETS, arguments_schema(FORGET)),
    ]


def _tool(fn: Callable[..., Awaitable[dict[str, Any]]], description: str, annotations: ToolAnnotations,
          schema: dict[str, Any]) -> Tool:
    tool = Tool.from_function(fn, description=description, annotations=annotations)
    return tool.model_copy(update={"parameters": schema})
