"""The one app factory both composition roots call."""

from __future__ import annotations

from fastapi import FastAPI
from starlette.types import ASGIApp, Receive, Scope, Send

import memvault
from memvault.api import errors
from memvault.api.dependencies import DEPS_SCOPE_KEY
from memvault.api.limits import BodySizeLimit, ResponseDate
from memvault.api.routes import brain, health, memory, portal, providers
from memvault.core.deps import Deps


def create_app(deps: Deps) -> FastAPI:
    app = FastAPI(title="memvault", version=memvault.__version__)
    app.state.deps = deps
    # Provider paths have their own, larger limit, enforced as the body streams in and answered in
    # their provider's error envelope.
    app.add_middleware(
        BodySizeLimit, max_bytes=deps.settings.max_body_bytes, exempt=lambda path: errors.provider_of(path) is not None
    )
    app.add_middleware(ResponseDate)
    errors.install(app)
    for module in (health, memory, providers, brain, portal):
        app.include_router(module.router)
    return app


def serve_with(app: ASGIApp, deps: Deps) -> ASGIApp:
    """``app`` serving one request with ``deps``: Workers build deps per invocation (``ctx`` carries
    ``waitUntil``) but keep one app per isolate, so the app is not rebuilt on every request."""

    async def bound(scope: Scope, receive: Receive, send: Send) -> None:
        await app({**scope, DEPS_SCOPE_KEY: deps}, receive, send)

    return bound
