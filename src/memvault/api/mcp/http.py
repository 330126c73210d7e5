"""MCP over streamable HTTP at ``/mcp`` of the local server. Each call names its caller in headers,
as on the other routes: the memory key in `X-Memory-Key` (or `Authorization: Bearer mk_…`), the
brain credential in `Authorization: Bearer` (or `X-Memvault-Brain-Token`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager

from fastapi import FastAPI
from mcp.server.transport_security import TransportSecuritySettings

from memvault.api.dependencies import bearer_token, brain_token
from memvault.api.mcp.tools import CallerSecrets, McpContext, mcp_server
from memvault.core.deps import Deps
from memvault.core.keys import PREFIX

PATH = "/mcp"


def caller_secrets(headers: Mapping[str, str]) -> CallerSecrets:
    """A bearer token that is a memory key (mk_…) counts as the memory key, any other as the brain
    credential; the explicit headers name each without doubt."""
    bearer = bearer_token(headers)
    named_key = (headers.get("x-memory-key") or "").strip() or None
    if bearer is not None and bearer.startswith(PREFIX):
        return CallerSecrets(named_key or bearer, (headers.get("x-memvault-brain-token") or "").strip() or None)
    return CallerSecrets(named_key, brain_token(headers))


def _secrets_of_request(ctx: McpContext) -> CallerSecrets:
    return caller_secrets(ctx.headers or {})


def mount_mcp(app: FastAPI, deps: Deps) -> Callable[[], AbstractAsyncContextManager[None]]:
    """Serve MCP at ``/mcp`` of ``app``; returns what the app's lifespan must run around serving."""
    server = mcp_server(deps, _secrets_of_request)
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
