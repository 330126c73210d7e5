"""The brain over MCP: tools and resources that run the brain's operations with the caller's own
credential. A tool's input schema and output schema are the operation's own declarations
(``core/brain/wire``); its arguments reach the operation's one parser unchecked, and it answers
the operation's public shape, as over HTTP."""

from __future__ import annotations

import inspect
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp_types import ToolAnnotations

from memvault.api.mcp.errors import refused_as, resource_refusal, tool_refusal
from memvault.core import brain
from memvault.core.brain.wire import Schemas
from memvault.core.deps import Deps

McpContext = Context[Any, Any]
CredentialOf = Callable[[McpContext], Awaitable[brain.Credential]]
READS = ToolAnnotations(read_only_hint=True)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False)
# Retiring ends a fact (kept for history), and a second call is refused rather than repeated.
RETIRES = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=False)
# The tools' arguments before they had the operations' names.
QUERY_ALIAS = {"q": "query"}


def _schema(cls: Any, output: bool, aliases: Mapping[str, str] = {}) -> dict[str, Any]:
    """A self-contained JSON Schema of ``cls``: its object at the root, what it names in ``$defs``.
    An alias is listed beside the field it names, and neither is then required alone."""
    schemas = Schemas(prefix="#/$defs/")
    root = schemas.defs.pop(schemas.of(cls, output)["$ref"].rsplit("/", 1)[1])
    root = {**root, "properties": dict(root["properties"])}
    for alias, name in aliases.items():
        root["properties"][alias] = {**root["properties"][name], "description": f"Deprecated: the older name of {name}."}
        root["required"] = [field for field in root.get("required", []) if field != name]
    if not root.get("required"):
        root.pop("required", None)
    return {**root, "$defs": schemas.defs} if schemas.defs else root


def brain_tool(
    deps: Deps, credential_of: CredentialOf, op: brain.Operation[Any, Any], name: str, description: str,
    annotations: ToolAnnotations, aliases: Mapping[str, str] = {},
) -> Tool:
    """An MCP tool named ``name`` running ``op``: one argument per field of its input (and alias)."""

    async def call(ctx: McpContext, **arguments: Any) -> dict[str, Any]:
        data = {aliases.get(key, key): value for key, value in arguments.items() if value is not None}
        with refused_as(tool_refusal):
            plain: dict[str, Any] = brain.to_plain(await op.perform(deps, await credential_of(ctx), data))
            return plain

    fields = [*(f for f in _schema(op.input, False)["properties"]), *aliases]
    call.__signature__ = inspect.Signature([  # type: ignore[attr-defined]
        inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=McpContext),
        *(inspect.Parameter(f, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=Any) for f in fields),
    ], return_annotation=dict[str, Any])
    call.__annotations__ = {"ctx": McpContext, "return": dict[str, Any]}
    tool = Tool.from_function(call, name=name, description=description, annotations=annotations)
    tool.parameters = _schema(op.input, False, aliases)
    tool.fn_metadata.output_schema = _schema(op.output, True)
    return tool


def brain_tools(deps: Deps, credential_of: CredentialOf) -> list[Tool]:
    return [
        brain_tool(deps, credential_of, brain.SEARCH_FACTS, "brain_search",
                   "Search the brain's facts the credential may read: keyword (exact tokens) or hybrid.", READS,
                   QUERY_ALIAS),
        brain_tool(deps, credential_of, brain.RECALL, "brain_recall",
                   "One bounded envelope of brain facts: pinned core, recent, and what matches the query.", READS,
                   QUERY_ALIAS),
        brain_tool(deps, credential_of, brain.WRITE_FACTS, "brain_write",
                   "Write facts to the brain (writer credentials only); idempotent per source and text.", WRITES),
        *skill_tools(deps, credential_of),
        brain_tool(deps, credential_of, brain.RETIRE_FACT, "brain_retire",
                   "Retire a fact by hand with a reason (writer credentials only): it stops being current and stays "
                   "in its history.", RETIRES),
    ]


def skill_tools(deps: Deps, credential_of: CredentialOf) -> list[Tool]:
    """Skills: read and register them, and the proposal flow an agent uses after finishing a task
    (propose; a writer confirms or rejects)."""
    tools: list[tuple[brain.Operation[Any, Any], str, ToolAnnotations]] = [(brain.GET_SKILL, "brain_skill", READS), (brain.REGISTER_SKILL, "brain_skill_register", WRITES),
             (brain.PROPOSE_SKILL, "brain_skill_propose", WRITES),
             (brain.LIST_SKILL_PROPOSALS, "brain_skill_proposals", READS),
             (brain.CONFIRM_SKILL_PROPOSAL, "brain_skill_confirm", WRITES),
             (brain.REJECT_SKILL_PROPOSAL, "brain_skill_reject", WRITES)]
    return [brain_tool(deps, credential_of, op, name, op.summary, annotations) for op, name, annotations in tools]


def add_brain_resources(server: MCPServer[Any], deps: Deps, credential_of: CredentialOf) -> None:
    @server.resource("memvault://facts/{fact_id}/body", mime_type="application/json", description="A fact's full body.")
    async def fact_body(fact_id: str, ctx: McpContext) -> str:
        with refused_as(resource_refusal):
            found = await brain.FACT_BODY.perform(deps, await credential_of(ctx), {"id": fact_id})
            return json.dumps(brain.to_plain(found), ensure_ascii=False)

    @server.resource(
        "memvault://facts/{fact_id}/history", mime_type="application/json", description="A fact's supersession chain."
    )
    async def fact_history(fact_id: str, ctx: McpContext) -> str:
        with refused_as(resource_refusal):
            found = await brain.FACT_HISTORY.perform(deps, await credential_of(ctx), {"id": fact_id})
            return json.dumps(brain.to_plain(found), ensure_ascii=False)
