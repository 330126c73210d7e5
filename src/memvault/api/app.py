"""The one app factory both composition roots call."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI
from starlette.types import ASGIApp, Receive, Scope, Send

import memvault
from memvault.api import errors
from memvault.api.brain_schemas import components as brain_components
from memvault.api.dependencies import DEPS_SCOPE_KEY, memory_router_headers
from memvault.api.docs import docs_router
from memvault.api.limits import BodySizeLimit, ResponseDefaults
from memvault.api.routes import admin, admin_providers, brain, health, memory, portal, providers, receipts, usage
from memvault.api.schemas import memory_schemas
from memvault.core.deps import Deps
from memvault.core.redaction.logs import install_log_redaction

DESCRIPTION = """A memory layer for LLM applications.

**Conversation memory** (`/v1/memory…`) and the **memory router** (the OpenAI, Anthropic and
Gemini endpoints) take a memory key: `Authorization: Bearer mk_…` or `X-Memory-Key` (the router
reads `X-Memory-Key`, since `Authorization` carries the provider's key, or a memory key an SDK sent as
its API key). The **brain**
(`/v1/brain/…`; its older paths `/memory/…` and `/recall` are kept, deprecated) takes a brain
credential: `Authorization: Bearer <token>` or `X-Memvault-Brain-Token`. Press *Authorize* and fill
in what you hold; each operation sends what it needs. Errors are `{"error": {"code", "message"}}`."""

TAGS = [
    {"name": "memory", "description": "Conversation memory of one memory key: store, read, search, forget, purge."},
    {"name": "memory router", "description": "Provider endpoints with memory: recall, inject, forward, remember the turn."},
    {"name": "brain", "description": "Curated, bi-temporal facts behind scope walls, for brain credentials."},
    {"name": "admin", "description": "Memory keys and brain credentials, for the holder of the admin token (404 where none is set)."},
    {"name": "health", "description": "Liveness, version and (on Workers) bindings and secrets present."},
]


def create_app(deps: Deps, docs_assets: Path | None = None) -> FastAPI:
    """The app; with ``docs_assets`` (a folder of Swagger UI and ReDoc files) its `/docs` and
    `/redoc` load them from this server instead of a CDN."""
    app = FastAPI(
        title="memvault", version=memvault.__version__, description=DESCRIPTION, openapi_tags=TAGS,
        docs_url=None if docs_assets else "/docs", redoc_url=None if docs_assets else "/redoc",
    )
    app.state.deps = deps
    install_log_redaction(deps.settings.secret_values())
    # Provider paths have their own, larger limit, enforced as the body streams in and answered in
    # their provider's error envelope.
    app.add_middleware(
        BodySizeLimit, max_bytes=deps.settings.max_body_bytes, exempt=lambda path: errors.provider_of(path) is not None
    )
    app.add_middleware(ResponseDefaults)
    errors.install(app)
    # The memory router reads its headers itself (after the body, to answer in the provider's
    # envelope); the dependency only declares them, so the docs can authorize its operations. Its
    # routes come first: a routed call is the most frequent request, and routes are tried in order.
    app.include_router(providers.router, dependencies=[Depends(memory_router_headers)])
    for module in (health, memory, receipts, brain, admin, admin_providers, usage, portal):
        app.include_router(module.router)
    app.include_router(usage.admin_router)
    if docs_assets is not None:
        app.include_router(docs_router(docs_assets, app.title))
    with_schemas(app, memory_schemas(), brain_components())
    return app


def with_schemas(app: FastAPI, *named: dict[str, dict[str, Any]]) -> None:
    """Add ``named`` schemas to the app's OpenAPI components: the routes that take or answer a core
    command or result refer to them by name, since FastAPI derives schemas only from models."""
    generate = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schemas = generate().setdefault("components", {}).setdefault("schemas", {})
            for name, schema in (item for group in named for item in group.items()):
                if schemas.setdefault(name, schema) is not schema:
                    raise RuntimeError(f"two OpenAPI components are named {name}")
        return app.openapi_schema or {}

    app.openapi = openapi  # type: ignore[method-assign]


def serve_with(app: ASGIApp, deps: Deps) -> ASGIApp:
    """``app`` serving one request with ``deps``: Workers build deps per invocation (``ctx`` carries
    ``waitUntil``) but keep one app per isolate, so the app is not rebuilt on every request."""

    async def bound(scope: Scope, receive: Receive, send: Send) -> None:
        await app({**scope, DEPS_SCOPE_KEY: deps}, receive, send)

    return bound
