"""Composition root for Cloudflare Workers: ``Deps`` from the Worker's ``(env, ctx)``.

Nothing is built at import time (Python Workers import modules while taking a memory snapshot),
but the app's modules (FastAPI, pydantic and the routes) are imported here, at the top, so the
snapshot holds them and no isolate pays for that import on its first request. The Cloudflare
adapters that need the JS runtime are imported inside ``build_deps`` only, so this module also
imports on CPython.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from starlette.types import ASGIApp

from memvault.adapters.cloudflare.env import env_settings, env_value, js_binding, platform_report
from memvault.adapters.cloudflare.triggers import CRONS
from memvault.api.app import create_app, serve_with
from memvault.core.credentials.access import AccessKeys
from memvault.core.deps import Deps
from memvault.core.query_vectors import QueryVectors
from memvault.core.read_cache import CacheStats
from memvault.core.retry import with_retries
from memvault.core.settings import retired_warning
from memvault.core.usage.meter import MeteredEmbedder

log = logging.getLogger(__name__)


def build_deps(env: Any, ctx: Any) -> Deps:
    """Wrap the bindings of one invocation; ``ctx`` carries ``waitUntil`` for background work."""
    from memvault.adapters.cloudflare.background import WaitUntilTasks
    from memvault.adapters.cloudflare.blobs import R2BlobStore
    from memvault.adapters.cloudflare.cache import KvCache
    from memvault.adapters.cloudflare.chat_model import WorkersAiChat
    from memvault.adapters.cloudflare.cipher import WebCryptoCipher
    from memvault.adapters.cloudflare.database import D1Database
    from memvault.adapters.cloudflare.embedder import WorkersAiEmbedder
    from memvault.adapters.cloudflare.http_client import FetchHttpClient
    from memvault.adapters.cloudflare.vaults import DurableObjectVaultDirectory
    from memvault.adapters.cloudflare.vector_index import VectorizeIndex

    settings = env_settings(env)
    platform = platform_report(env, settings, CRONS)
    report_retired(platform.retired_settings)
    ai = js_binding(env_value(env, "AI"))
    cache_binding = js_binding(env_value(env, "CACHE"))
    stores = with_retries(D1Database(js_binding(env_value(env, "DB"))),
                          VectorizeIndex(js_binding(env_value(env, "VECTORIZE"))),
                          WorkersAiEmbedder(ai, model=settings.embedding_model),
                          R2BlobStore(js_binding(env_value(env, "BODIES"))))
    return Deps(
        settings=settings,
        vaults=DurableObjectVaultDirectory(env_value(env, "VAULT")),
        db=stores.db,
        embedder=MeteredEmbedder(stores.embedder),
        background=WaitUntilTasks(ctx),
        http=FetchHttpClient(),
        blobs=stores.blobs,
        vectors=stores.vectors,
        cache=None if cache_binding is None else KvCache(cache_binding),
        clock=time.time,
        platform=platform,
        sync_mirror_inline=False,
        key_lookups_cached=True,
        query_vectors=_ISOLATE.setdefault("query_vectors", QueryVectors()),
        cache_stats=_ISOLATE.setdefault("cache_stats", CacheStats()),
        llm=WorkersAiChat(ai, settings.brain_llm_model) if settings.brain_llm_model else None,
        access_keys=_ISOLATE.setdefault("access_keys", AccessKeys()),
        cipher=WebCryptoCipher(),
    )


def report_retired(names: tuple[str, ...]) -> None:
    """Log each retired variable the Worker's env still sets, once per isolate (``/health`` lists
    them on every request)."""
    if names and not _ISOLATE.get("retired_reported"):
        _ISOLATE["retired_reported"] = True
        for name in names:
            log.warning(retired_warning(name))


def build_app(env: Any, ctx: Any, signal: Any = None) -> ASGIApp:
    """The same FastAPI app the local server runs, built once per isolate (on its first request,
    never at import), serving this invocation with its own deps; ``signal``, the request's
    ``AbortSignal``, tells it when the client hangs up."""
    from memvault.adapters.cloudflare.hang_ups import hearing_hang_ups

    deps = build_deps(env, ctx)
    if "app" not in _ISOLATE:
        _ISOLATE["app"] = create_app(deps)
    return hearing_hang_ups(serve_with(_ISOLATE["app"], deps), signal)


# One app per isolate; its settings-derived parts (the body limit) come from the first env, which
# is the same for every request of one deployment.
_ISOLATE: dict[str, Any] = {}
