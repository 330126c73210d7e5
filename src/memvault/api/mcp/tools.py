"""The MCP server: each tool and resource resolves the caller from its credentials (``core.credentials.callers``)
and makes one call into core, the same call the matching HTTP route makes. Brain calls take the
caller's own credential, so the scope walls hold here exactly as they do over HTTP; the memory tools
live in ``memory_tools.py``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, CallToolResult, InputRequiredResult

import memvault
from memvault.api.mcp.brain_tools import add_brain_resources, brain_tools
from memvault.api.mcp.memory_tools import McpContext, memory_tools
from memvault.core import brain
from memvault.core.credentials.callers import CallerTokens, brain_caller, memory_caller
from memvault.core.credentials.keys import MemoryKey
from memvault.core.deps import Deps

INSTRUCTIONS = (
    "memvault remembers conversations per memory key (memory_* tools) and keeps a curated brain of "
    "facts behind scope walls (brain_* tools, resources memvault://facts/{fact_id}/body and /history)."
)


# What identifies the caller of one call: a memory key and a brain credential; either may be absent,
# and a call that needs the missing one is refused.
TokensOf = Callable[[McpContext], CallerTokens]


class Server(MCPServer[Any]):
    """The SDK's server, answering a call of a tool it does not have as MCP 2025-06-18 says: with
    JSON-RPC's invalid params, not a tool result marked ``isError`` (which is for a tool that ran)."""

    def __init__(self, tools: list[Tool], **options: Any) -> None:
        super().__init__(tools=tools, **options)
        self._tool_names = frozenset(tool.name for tool in tools)

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        if name not in self._tool_names:
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown tool: {name}")
        return await super().call_tool(name, arguments, context)


def mcp_server(deps: Deps, tokens_of: TokensOf) -> MCPServer[Any]:
    async def key(ctx: McpContext) -> MemoryKey:
        return await memory_caller(deps, tokens_of(ctx))

    async def credential(ctx: McpContext) -> brain.Credential:
        return await brain_caller(deps, tokens_of(ctx))

    # The SDK configures the root logger when built; WARNING is what reached stderr before it did.
    server = Server(
        name="memvault", version=memvault.__version__, instructions=INSTRUCTIONS, log_level="WARNING",
        tools=[*memory_tools(deps, key), *brain_tools(deps, credential)],
    )

    add_brain_resources(server, deps, credential)
    return server
