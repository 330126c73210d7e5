"""The Worker's entry: HTTP through the FastAPI app, the nightly cron, and RPC for other Workers.

Every handler builds this invocation's deps from ``(self.env, self.ctx)`` and hands off to the
runtime; nothing here holds logic. Importing ``Vault`` is what registers the Durable Object class
with the runtime (wrangler.toml binds ``VAULT`` to ``class_name = "Vault"`` of this module).
Importing ``memvault.runtime.workers`` imports the FastAPI app's modules, so the deploy-time memory
snapshot holds them; nothing here reads ``env`` or does I/O before a handler runs.
"""

from __future__ import annotations

from typing import Any

from durable_objects.vault import Vault
from workers import WorkerEntrypoint, asgi

from memvault.adapters.cloudflare.convert import to_js, to_py
from memvault.adapters.cloudflare.env import invocation_props
from memvault.runtime import cron, rpc
from memvault.runtime import workers as runtime

__all__ = ["Default", "Vault"]


def _plain(*args: Any) -> list[Any]:
    # Each argument on its own: a JS object inside a Python list would stay a JS proxy.
    return [to_py(arg) for arg in args]


class Default(WorkerEntrypoint):
    async def fetch(self, request: Any) -> Any:
        incoming = getattr(request, "js_object", request)
        app = runtime.build_app(self.env, self.ctx, getattr(incoming, "signal", None))
        # With ctx the adapter streams the body as the app sends it (a relayed provider stream
        # reaches the client event by event); without it every response is buffered whole.
        return await asgi.fetch(app, incoming, self.env, self.ctx)

    async def scheduled(self, controller: Any, *_legacy: Any) -> None:
        # Accepts both handler shapes: (controller) and the older (event, env, ctx).
        await cron.on_scheduled(self.env, self.ctx, getattr(controller, "cron", None))

    # The client interface: the memory key is the one the caller's binding props name (runtime/rpc.py).
    async def getMemory(self, sessionId: Any = None, options: Any = None) -> Any:
        deps = runtime.build_deps(self.env, self.ctx)
        return to_js(await rpc.get_bound_memory(deps, invocation_props(self.ctx), *_plain(sessionId, options)))

    async def saveMemory(self, sessionId: Any, messages: Any, metadata: Any = None) -> Any:
        deps = runtime.build_deps(self.env, self.ctx)
        props = invocation_props(self.ctx)
        return to_js(await rpc.save_bound_memory(deps, props, *_plain(sessionId, messages, metadata)))

    async def searchMemory(self, query: Any, options: Any = None) -> Any:
        deps = runtime.build_deps(self.env, self.ctx)
        return to_js(await rpc.search_bound_memory(deps, invocation_props(self.ctx), *_plain(query, options)))

    async def forgetMemory(self, ids: Any, options: Any = None) -> Any:
        deps = runtime.build_deps(self.env, self.ctx)
        return to_js(await rpc.forget_bound_memory(deps, invocation_props(self.ctx), *_plain(ids, options)))

    # Aliases of the client interface for a caller holding the memory key's secret (passed first).
    async def get_memory(self, memory_key: Any, session_id: Any = None, limit: Any = None, offset: Any = 0) -> Any:
        deps = runtime.build_deps(self.env, self.ctx)
        return to_js(await rpc.get_memory(deps, *_plain(memory_key, session_id, limit, offset)))

    async def save_memory(self, memory_key: Any, session_id: Any, messages: Any, metadata: Any = None) -> Any:
        deps = runtime.build_deps(self.env, self.ctx)
        return to_js(await rpc.save_memory(deps, *_plain(memory_key, session_id, messages, metadata)))

    async def search_memory(self, memory_key: Any, query: Any, limit: Any = None, session_id: Any = None) -> Any:
        deps = runtime.build_deps(self.env, self.ctx)
        return to_js(await rpc.search_memory(deps, *_plain(memory_key, query, limit, session_id)))

    async def forget_memory(self, memory_key: Any, ids: Any, session_id: Any = None) -> Any:
        deps = runtime.build_deps(self.env, self.ctx)
        return to_js(await rpc.forget_memory(deps, *_plain(memory_key, ids, session_id)))

    async def brain_search(self, brain_token: Any, query: Any, mode: Any = None, limit: Any = None) -> Any:
        deps = runtime.build_deps(self.env, self.ctx)
        return to_js(await rpc.brain_search(deps, *_plain(brain_token, query, mode, limit)))

    async def brain_recall(self, brain_token: Any, query: Any = None, as_of: Any = None, budget: Any = None) -> Any:
        deps = runtime.build_deps(self.env, self.ctx)
        return to_js(await rpc.brain_recall(deps, *_plain(brain_token, query, as_of, budget)))

    async def brain_write(self, brain_token: Any, payload: Any, bands: Any = True) -> Any:
        deps = runtime.build_deps(self.env, self.ctx)
        return to_js(await rpc.brain_write(deps, *_plain(brain_token, payload, bands)))

    async def brain_register_skill(self, brain_token: Any, payload: Any) -> Any:
        deps = runtime.build_deps(self.env, self.ctx)
        return to_js(await rpc.brain_register_skill(deps, *_plain(brain_token, payload)))

    async def brain_get_skill(self, brain_token: Any, slug: Any, scope: Any = None, version: Any = None,
                              as_of: Any = None) -> Any:
        deps = runtime.build_deps(self.env, self.ctx)
        return to_js(await rpc.brain_get_skill(deps, *_plain(brain_token, slug, scope, version, as_of)))

    async def brain_propose_skill(self, brain_token: Any, payload: Any) -> Any:
        deps = runtime.build_deps(self.env, self.ctx)
        return to_js(await rpc.brain_propose_skill(deps, *_plain(brain_token, payload)))

    async def brain_skill_proposals(self, brain_token: Any, status: Any = None, limit: Any = None) -> Any:
        deps = runtime.build_deps(self.env, self.ctx)
        return to_js(await rpc.brain_skill_proposals(deps, *_plain(brain_token, status, limit)))

    async def brain_confirm_skill_proposal(self, brain_token: Any, id: Any, version_of: Any = None) -> Any:
        deps = runtime.build_deps(self.env, self.ctx)
        return to_js(await rpc.brain_confirm_skill_proposal(deps, *_plain(brain_token, id, version_of)))

    async def brain_reject_skill_proposal(self, brain_token: Any, id: Any, reason: Any = None) -> Any:
        deps = runtime.build_deps(self.env, self.ctx)
        return to_js(await rpc.brain_reject_skill_proposal(deps, *_plain(brain_token, id, reason)))

    async def brain_retire(self, brain_token: Any, id: Any, reason: Any) -> Any:
        deps = runtime.build_deps(self.env, self.ctx)
        return to_js(await rpc.brain_retire(deps, *_plain(brain_token, id, reason)))
