"""MCP over streamable HTTP at ``/mcp`` of the local server. Each call names its caller in headers,
as on the other routes (read by ``api/dependencies.py``, the one reader of headers): the memory
key in `X-Memory-Key` or `Authorization: Bearer mk_…`, the brain credential in
`X-Memvault-Brain-Token` or `Authorization: Bearer`."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager

from fastapi import FastAPI
from mcp.server.transport_security import TransportSecuritySettings

from memvault.api.dependencies import caller_tokens
from memvault.api.mcp.memory_tools import McpContext
from memvault.api.mcp.tools import mcp_server
from memvault.core.callers import CallerTokens
from memvault.core.deps import Deps

PATH = "/mcp"


def _tokens_of_request(ctx: McpContext) -> CallerTokens:
    return caller_tokens(ctx.headers or {})


def mount_mcp(app: FastAPI, deps: Deps) -> Callable[[], AbstractAsyncContextManager[None]]:
    """Serve MCP at ``/mcp`` of ``app``; returns what the app's lifespan must run around serving."""
    server = mcp_server(deps, _tokens_of_request)
    transport = server.streamable_http_app(
        streamable_http_path=PATH,
        # Every call carries its own credentials, so no session state is kept between calls.
        stateless_http=True,
        json_response=True,
        # No Host or Origin allow-list, as on every other route of the app: nothing answers without a
        # memory key or brain credential, which a rebound page cannot know; and `memvault serve --host`
        # may listen on any address.
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )
    app.router.routes.extend(transport.routes)
    return server.session_manager.run
