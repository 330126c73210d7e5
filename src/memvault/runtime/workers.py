"""Composition root for Cloudflare Workers: ``Deps`` from the Worker's ``(env, ctx)``.

Nothing is built at import time (Python Workers import modules while taking a memory snapshot).
The Cloudflare adapters are imported inside ``build_deps`` only, so this module also imports on
CPython, where its env-reading helpers are tested.
"""

from __future__ import annotations

import time
import uuid
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from memvault.core import memory_core, memory_retrieval
from memvault.core.deps import Deps
from memvault.core.errors import InvalidInput
from memvault.core.health import REQUIRED_BINDINGS, PlatformReport, presence
from memvault.core.keys import authenticate
from memvault.core.models import Message
from memvault.core.settings import SETTINGS, Settings, load_settings

if TYPE_CHECKING:
    from fastapi import FastAPI


def env_value(env: Any, name: str) -> Any:
    """One entry of the Worker's ``env`` (a var, a secret or a binding), or None when absent."""
    try:
        value = getattr(env, name)
    except AttributeError:
        return None
    # JS undefined/null arrive as None or as Pyodide's jsnull, whose repr is "null".
    if value is None or type(value).__name__ == "JsNull" or repr(value) == "null":
        return None
    return value


def env_settings(env: Any) -> Settings:
    """Settings from the Worker's vars and secrets; missing ones take their defaults."""
    values = {setting.name: env_value(env, setting.name) for setting in SETTINGS}
    return load_settings({name: str(value) for name, value in values.items() if value is not None})


def platform_report(env: Any, settings: Settings) -> PlatformReport:
    """Which bindings and secrets the Worker has: presence only, values never leave ``env``."""
    lookup = {name: env_value(env, name) for name in (*REQUIRED_BINDINGS, *settings.required_secrets)}
    return PlatformReport(
        runtime="workers",
        bindings=presence(REQUIRED_BINDINGS, lookup),
        secrets=presence(settings.required_secrets, lookup),
        cron_triggers=len(settings.cron_schedules),
    )


def build_deps(env: Any, ctx: Any) -> Deps:
    """Wrap the bindings of one invocation; ``ctx`` carries ``waitUntil`` for background work."""
    from memvault.adapters.cloudflare.background import WaitUntilTasks
    from memvault.adapters.cloudflare.blobs import R2BlobStore
    from memvault.adapters.cloudflare.cache import KvCache
    from memvault.adapters.cloudflare.database import D1Database
    from memvault.adapters.cloudflare.embedder import WorkersAiEmbedder
    from memvault.adapters.cloudflare.http_client import FetchHttpClient
    from memvault.adapters.cloudflare.vaults import DurableObjectVaultDirectory
    from memvault.adapters.cloudflare.vector_index import VectorizeIndex

    settings = env_settings(env)
    cache_binding = env_value(env, "CACHE")
    return Deps(
        settings=settings,
        vaults=DurableObjectVaultDirectory(env_value(env, "VAULT")),
        db=D1Database(env_value(env, "DB")),
        embedder=WorkersAiEmbedder(env_value(env, "AI"), model=settings.embedding_model),
        background=WaitUntilTasks(ctx),
        http=FetchHttpClient(),
        blobs=R2BlobStore(env_value(env, "BODIES")),
        vectors=VectorizeIndex(env_value(env, "VECTORIZE")),
        cache=None if cache_binding is None else KvCache(cache_binding),
        clock=time.time,
        platform=platform_report(env, settings),
    )


def build_app(env: Any, ctx: Any) -> FastAPI:
    """The same FastAPI app the local server runs, over this invocation's deps."""
    from memvault.api.app import create_app

    return create_app(build_deps(env, ctx))


# RPC for other Workers over a service binding. Each call authenticates the memory key it is given
# and then runs the same core function as the HTTP route; arguments and results are plain data.


async def rpc_save_memory(
    deps: Deps, memory_key: str, session_id: str | None, messages: list[dict[str, Any]], metadata: dict[str, Any] | None
) -> dict[str, Any]:
    key = await authenticate(deps.db, memory_key)
    defaults = metadata or {}
    now = deps.clock()
    parsed = [_message(m, defaults, now) for m in messages]
    return asdict(await memory_core.store_conversation(deps, key.id, parsed, session_id))


def _message(data: dict[str, Any], defaults: dict[str, Any], now: float) -> Message:
    if not isinstance(data, dict) or "role" not in data or "content" not in data:
        raise InvalidInput("each message needs a role and a content")
    timestamp = data.get("timestamp", defaults.get("timestamp"))
    return Message(
        role=str(data["role"]),
        content=str(data["content"]),
        timestamp=now if timestamp is None else float(timestamp),
        id=str(data.get("id") or uuid.uuid4().hex),
        model=data.get("model", defaults.get("model")),
    )


async def rpc_search_memory(
    deps: Deps, memory_key: str, query: str, limit: int | None, session_id: str | None
) -> dict[str, Any]:
    key = await authenticate(deps.db, memory_key)
    result = await memory_retrieval.search_memory(deps, key.id, query, limit=limit, session_id=session_id)
    return asdict(result)


async def rpc_get_memory(
    deps: Deps, memory_key: str, session_id: str | None, limit: int, offset: int
) -> dict[str, Any]:
    """One page of what a vault holds (stored rows, then pending messages), without embeddings."""
    if limit < 1 or offset < 0:
        raise InvalidInput("limit must be positive and offset not negative")
    key = await authenticate(deps.db, memory_key)
    wanted = "core" if session_id is None else f"session:{session_id}"
    items: list[dict[str, Any]] = []
    seen = 0
    async for item in memory_retrieval.export_memory(deps, key.id):
        if item.get("vault") != wanted:
            continue
        if seen >= offset:
            items.append({k: v for k, v in item.items() if k != "embedding"})
            if len(items) == limit:
                break
        seen += 1
    return {"session_id": session_id, "offset": offset, "limit": limit, "items": items}
