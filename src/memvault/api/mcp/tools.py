"""The MCP server: each tool and resource authenticates the caller's secrets and makes one call into
core, the same call the matching HTTP route makes. Brain calls go through ``auth_of`` with the
caller's own credential, so the scope walls hold here exactly as they do over HTTP."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ToolAnnotations
from pydantic import Field

import memvault
from memvault.api.mcp.brain_tools import add_brain_resources, brain_tools
from memvault.api.mcp.errors import refused_as, tool_refusal
from memvault.api.schemas import MessageIn
from memvault.core import brain, memory
from memvault.core.deps import Deps
from memvault.core.errors import InvalidInput
from memvault.core.keys import authenticate
from memvault.core.memory.messages import messages_from

McpContext = Context[Any, Any]
Session = Annotated[
    str | None, Field(min_length=1, max_length=200, description="A session vault of the key instead of its core vault.")
]
# Hints a client may use to ask before a call, or not: reads change nothing, forgetting cannot be undone.
READS = ToolAnnotations(read_only_hint=True)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False)
FORGETS = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True)
INSTRUCTIONS = (
    "memvault remembers conversations per memory key (memory_* tools) and keeps a curated brain of "
    "facts behind scope walls (brain_* tools, resources memvault://facts/{fact_id}/body and /history)."
)


@dataclass(frozen=True)
class CallerSecrets:
    """What identifies the caller: a memory key (mk_…) and a brain credential; either may be absent,
    and a call that needs the missing one is refused."""

    memory_key: str | None
    brain_token: str | None


SecretsOf = Callable[[McpContext], CallerSecrets]


def mcp_server(deps: Deps, secrets_of: SecretsOf) -> MCPServer[Any]:
    # The SDK configures the root logger when built; WARNING is what reached stderr before it did.
    async def key_id(ctx: McpContext) -> str:
        return (await authenticate(deps.db, secrets_of(ctx).memory_key)).id

    async def credential(ctx: McpContext) -> brain.Credential:
        return await brain.auth_of(secrets_of(ctx).brain_token, deps)

    server: MCPServer[Any] = MCPServer(
        "memvault", version=memvault.__version__, instructions=INSTRUCTIONS, log_level="WARNING",
        tools=brain_tools(deps, credential),
    )

    @server.tool(
        description="Remember conversation messages, or one plain note (stored as a user message).", annotations=WRITES
    )
    async def memory_store(
        ctx: McpContext,
        messages: Annotated[list[MessageIn] | None, Field(min_length=1, max_length=10_000)] = None,
        note: Annotated[str | None, Field(description="A note to remember, instead of messages.")] = None,
        session_id: Session = None,
    ) -> dict[str, Any]:
        with refused_as(tool_refusal):
            if (messages is None) == (note is None):
                raise InvalidInput("give either messages or a note")
            raw = (
                [m.model_dump(by_alias=True) for m in messages]
                if messages is not None
                else [{"role": "user", "content": note}]
            )
            parsed = messages_from(raw, deps.clock())
            result = await memory.store_conversation(deps, await key_id(ctx), [m for m in parsed if m], session_id)
            return {"message_ids": [None if m is None else m.id for m in parsed], **asdict(result)}

    @server.tool(
        description="Search remembered conversation: the most relevant messages that fit a token budget.",
        annotations=READS,
    )
    async def memory_search(
        ctx: McpContext,
        query: Annotated[str, Field(min_length=1, max_length=20_000)],
        budget_tokens: Annotated[int | None, Field(ge=1, le=200_000, description="Defaults to the server's.")] = None,
        session_id: Session = None,
    ) -> dict[str, Any]:
        with refused_as(tool_refusal):
            result = await memory.search_memory(
                deps, await key_id(ctx), query, budget_tokens=budget_tokens, session_id=session_id
            )
            return asdict(result)

    @server.tool(
        description="Forget messages by id (as stored, or as search results list them in source_ids).",
        annotations=FORGETS,
    )
    async def memory_forget(
        ctx: McpContext, ids: Annotated[list[str], Field(min_length=1)], session_id: Session = None
    ) -> dict[str, Any]:
        with refused_as(tool_refusal):
            return await memory.forget(deps, await key_id(ctx), ids, session_id)

    add_brain_resources(server, deps, credential)
    return server
