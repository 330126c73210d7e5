"""Composition root for Cloudflare Workers: ``Deps`` from the Worker's ``(env, ctx)``.

Nothing is built at import time (Python Workers import modules while taking a memory snapshot).
The Cloudflare adapters are imported inside ``build_deps`` only, so this module also imports on
CPython, where its env-reading helpers are tested.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from memvault.core.deps import Deps
from memvault.core.health import REQUIRED_BINDINGS, PlatformReport, presence
from memvault.core.settings import SETTINGS, Settings, load_settings

if TYPE_CHECKING:
    from starlette.types import ASGIApp


# The Python Workers SDK hands ``env``, a Durable Object's ``ctx`` and some bindings over inside
# Python wrappers that convert values on every call, and what they wrap has changed between SDK
# releases. The Cloudflare adapters speak the documented JS binding APIs and convert at their own
# boundary (as the Pyodide tier tests them), so they are given the JS object underneath.
_SDK_WRAPPERS = {
    "_EnvWrapper": "_env",
    "DurableObjectContext": "_ctx",
    "_BindingWrapper": "_binding",
    "_DurableObjectNamespaceWrapper": "_binding",
    "_FetcherWrapper": "_binding",
}


def raw_js(value: Any) -> Any:
    """The JS object inside an SDK wrapper; anything else unchanged."""
    field = _SDK_WRAPPERS.get(type(value).__name__)
    # Read the instance dict: the wrappers forward unknown attributes to JS.
    inner = vars(value).get(field) if field is not None and hasattr(value, "__dict__") else None
    return value if inner is None else raw_js(inner)


def env_value(env: Any, name: str) -> Any:
    """One entry of the Worker's ``env`` (a var, a secret or a binding), or None when absent."""
    try:
        value = raw_js(getattr(raw_js(env), name))
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
        background=WaitUntilTasks(raw_js(ctx)),
        http=FetchHttpClient(),
        blobs=R2BlobStore(env_value(env, "BODIES")),
        vectors=VectorizeIndex(env_value(env, "VECTORIZE")),
        cache=None if cache_binding is None else KvCache(cache_binding),
        clock=time.time,
        platform=platform_report(env, settings),
    )


def build_app(env: Any, ctx: Any) -> ASGIApp:
    """The same FastAPI app the local server runs, built once per isolate (on its first request,
    never at import), serving this invocation with its own deps."""
    from memvault.api.app import create_app, serve_with

    deps = build_deps(env, ctx)
    if "app" not in _ISOLATE:
        _ISOLATE["app"] = create_app(deps)
    return serve_with(_ISOLATE["app"], deps)


# One app per isolate; its settings-derived parts (the body limit) come from the first env, which
# is the same for every request of one deployment.
_ISOLATE: dict[str, Any] = {}
