"""The MCP server: each tool and resource resolves the caller from its credentials (``core.credentials.callers``)
and makes one call into core, the same call the matching HTTP route makes. Brain calls take the
caller's own credential, so the scope walls hold here exactly as they do over HTTP; the memory tools
live in ``memory_tools.py``."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Any

from mcp.server.mcpserver import MCPServer
from pydantic import Field

import memvault
from memvault.api.brain_schemas import FactIn
from memvault.api.mcp.errors import refused_as, resource_refusal, tool_refusal
from memvault.api.mcp.memory_tools import READS, WRITES, McpContext, memory_tools
from memvault.core import brain
from memvault.core.brain.rows import EntryType
from memvault.core.credentials.callers import CallerTokens, brain_caller, memory_caller
from memvault.core.credentials.keys import MemoryKey
from memvault.core.deps import Deps

AsOf = Annotated[float | str | None, Field(description="Unix seconds or ISO 8601: read the brain as it was then.")]
INSTRUCTIONS = (
    "memvault remembers conversations per memory key (memory_* tools) and keeps a curated brain of "
    "facts behind scope walls (brain_* tools, resources memvault://facts/{fact_id}/body and /history)."
)


# What identifies the caller of one call: a memory key and a brain credential; either may be absent,
# and a call that needs the missing one is refused.
TokensOf = Callable[[McpContext], CallerTokens]


def mcp_server(deps: Deps, tokens_of: TokensOf) -> MCPServer[Any]:
    async def key(ctx: McpContext) -> MemoryKey:
        return await memory_caller(deps, tokens_of(ctx))

    async def credential(ctx: McpContext) -> brain.Credential:
        return await brain_caller(deps, tokens_of(ctx))

    # The SDK configures the root logger when built; WARNING is what reached stderr before it did.
    server: MCPServer[Any] = MCPServer(
        "memvault", version=memvault.__version__, instructions=INSTRUCTIONS, log_level="WARNING",
        tools=memory_tools(deps, key),
    )

    @server.tool(
        description="Search the brain's facts the credential may read: keyword (exact tokens) or hybrid.",
        annotations=READS,
    )
    async def brain_search(
        ctx: McpContext,
        q: str,
        mode: Annotated[str, Field(description="keyword or hybrid (keyword plus vector recall).")] = "keyword",
        as_of: AsOf = None,
        entry_type: EntryType | None = None,
        limit: Annotated[int | None, Field(ge=1)] = None,
    ) -> dict[str, Any]:
        with refused_as(tool_refusal):
            return await brain.search_brain(deps, await credential(ctx), q, mode, as_of, entry_type, limit)

    @server.tool(
        description="One bounded envelope of brain facts: pinned core, recent, and what matches q.", annotations=READS
    )
    async def brain_recall(
        ctx: McpContext,
        q: str | None = None,
        as_of: AsOf = None,
        budget: Annotated[int | None, Field(ge=1, description="Most tokens the envelope may hold.")] = None,
    ) -> dict[str, Any]:
        with refused_as(tool_refusal):
            return await brain.recall(deps, await credential(ctx), q, as_of, budget)

    @server.tool(
        description="Write facts to the brain (writer credentials only); idempotent per source and text.",
        annotations=WRITES,
    )
    async def brain_write(
        ctx: McpContext,
        facts: Annotated[list[FactIn], Field(min_length=1)],
        source: Annotated[str | None, Field(description="Source of facts that name none.")] = None,
        scope: Annotated[str | None, Field(description="Scope of facts that name none.")] = None,
        reconcile: Annotated[
            bool | None, Field(description="Retire current facts of these sources not in facts.")
        ] = None,
        source_prefix: Annotated[str | None, Field(description="Reconcile everything under this prefix.")] = None,
    ) -> dict[str, Any]:
        batch = {"source": source, "scope": scope, "reconcile": reconcile, "source_prefix": source_prefix}
        payload: dict[str, Any] = {"facts": [f.model_dump(exclude_unset=True) for f in facts]}
        payload.update((name, value) for name, value in batch.items() if value is not None)
        with refused_as(tool_refusal):
            return await brain.ingest_facts(deps, await credential(ctx), payload)

    @server.resource("memvault://facts/{fact_id}/body", mime_type="application/json", description="A fact's full body.")
    async def fact_body(fact_id: str, ctx: McpContext) -> str:
        with refused_as(resource_refusal):
            return json.dumps(await brain.get_body(deps, await credential(ctx), fact_id), ensure_ascii=False)

    @server.resource(
        "memvault://facts/{fact_id}/history", mime_type="application/json", description="A fact's supersession chain."
    )
    async def fact_history(fact_id: str, ctx: McpContext) -> str:
        with refused_as(resource_refusal):
            return json.dumps(await brain.history(deps, await credential(ctx), fact_id), ensure_ascii=False)

    return server
