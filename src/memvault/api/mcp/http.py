"""MCP over streamable HTTP at ``/mcp`` of the local server. Each call names its caller in headers,
as on the other routes (read by ``api/dependencies.py``, the one reader of headers): the memory
key in `X-Memory-Key` or `Authorization: Bearer mk_…`, the brain credential in
`X-Memvault-Brain-Token` or `Authorization: Bearer`."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractAsyncContextManager

from fastapi import FastAPI
from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.responses import Response
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memvault.api.dependencies import caller_tokens
from memvault.api.errors import render
from memvault.api.limits import replay
from memvault.api.mcp.memory_tools import McpContext
from memvault.api.mcp.messages import Refusal, read_message
from memvault.api.mcp.tools import mcp_server
from memvault.core.credentials.callers import CallerTokens
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
    for route in transport.routes:
        if isinstance(route, Route) and route.path == PATH:
            route.app = _posts_only(route.app)
    app.router.routes.extend(transport.routes)
    return server.session_manager.run


def _posts_only(app: ASGIApp) -> ASGIApp:
    """Only POST reaches the transport, and only with a credential. Its GET would open an event
    stream for messages the server sends unasked, which a stateless server never has: held open by
    anyone, it would only hold a connection and a file descriptor; its DELETE ends a session, and
    there are none. A POST with no credential at all is refused before the transport reads it (a
    credential that is there but wrong is refused by the tool it calls), and a body that is no
    message memvault serves is answered as over stdio (``messages.read_message``)."""

    async def guarded(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] != "POST":
            refusal = render(PATH, 405, "method_not_allowed", "MCP over HTTP takes POST only (stateless: no event stream)",
                             headers={"Allow": "POST"})
            await refusal(scope, receive, send)
            return
        if scope["type"] == "http" and not _carries_a_credential(Headers(scope=scope)):
            refusal = render(PATH, 401, "unauthorized",
                             "MCP over HTTP needs a memory key or a brain credential on every request",
                             headers={"WWW-Authenticate": "Bearer"})
            await refusal(scope, receive, send)
            return
        if scope["type"] == "http":
            # The body-size limit has already read the body whole, within its limit.
            received: list[Message] = []
            while not received or (received[-1]["type"] == "http.request" and received[-1].get("more_body")):
                received.append(await receive())
            body = b"".join(message.get("body", b"") for message in received)
            message = read_message(body)
            if isinstance(message, Refusal):
                answer = message.answer.model_dump_json(by_alias=True, exclude_unset=True)
                await Response(answer, status_code=400, media_type="application/json")(scope, receive, send)
                return
            receive = replay(received, receive)
        await app(scope, receive, send)

    return guarded


def _carries_a_credential(headers: Headers) -> bool:
    tokens = caller_tokens(headers)
    return any((tokens.bearer, tokens.memory_key, tokens.brain_token, tokens.access_assertion))
