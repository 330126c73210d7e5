"""The MCP server: each tool and resource authenticates the caller's secrets and makes one call into
core, the same call the matching HTTP route makes. Brain calls go through ``auth_of`` with the
caller's own credential, so the scope walls hold here exactly as they do over HTTP."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp_types import ToolAnnotations
from pydantic import Field

import memvault
from memvault.api.brain_schemas import FactIn
from memvault.api.mcp.errors import refused_as, resource_refusal, tool_refusal
from memvault.api.schemas import MessageIn
from memvault.core import brain, memory
from memvault.core.brain.rows import EntryType
from memvault.core.deps import Deps
from memvault.core.errors import InvalidInput
from memvault.core.keys import authenticate
from memvault.core.memory.messages import messages_from

McpContext = Context[Any, Any]
AsOf = Annotated[float | str | None, Field(description="Unix seconds or ISO 8601: read the brain as it was then.")]
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
    server: MCPServer[Any] = MCPServer(
        "memvault", version=memvault.__version__, instructions=INSTRUCTIONS, log_level="WARNING"
    )

    async def key_id(ctx: McpContext) -> str:
        return (await authenticate(deps.db, secrets_of(ctx).memory_key)).id

    async def credential(ctx: McpContext) -> brain.Credential:
        return await brain.auth_of(secrets_of(ctx).brain_token, deps)

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
