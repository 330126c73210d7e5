"""The Vault Durable Object: one conversation vault on the object's own SQLite storage.

Thin on purpose: each RPC method turns plain data into core models, calls the ``VaultStore``
method of the same name and hands back plain data. All vault logic lives in core, where CPython
tests cover it against sqlite3.
"""

from __future__ import annotations

from typing import Any

from workers import DurableObject

from memvault.adapters.cloudflare.convert import to_js, to_py
from memvault.adapters.cloudflare.do_sql import DurableObjectSql
from memvault.adapters.cloudflare.env import env_settings, js_binding
from memvault.core.memory.store import VaultLimits, VaultStore
from memvault.core.models import EmbeddingModel, Message, SearchQuery


# The SDK leaves DurableObject.__init_subclass__ (which wraps __init__ to hand over ctx and env) unannotated.
class Vault(DurableObject):  # type: ignore[no-untyped-call]
    def __init__(self, ctx: Any, env: Any) -> None:
        super().__init__(ctx, env)
        # VaultStore migrates its schema here, synchronously and over local SQL only. A DO
        # constructor delivers no request until it returns, so no blockConcurrencyWhile (and no
        # network wait inside one) is needed to keep requests away from a half-migrated schema.
        self._store = VaultStore(DurableObjectSql(js_binding(ctx.storage)), VaultLimits.of(env_settings(env)))

    async def append(self, messages: Any, model: Any = None) -> Any:
        expected = to_py(model)
        checked = None if expected is None else EmbeddingModel.from_dict(expected)
        return to_js(self._store.append([Message.from_dict(m) for m in to_py(messages)], checked).to_dict())

    async def attach_embeddings(self, model_id: Any, embeddings: Any, pending: Any = None) -> Any:
        return self._store.attach_embeddings(str(to_py(model_id)), to_py(embeddings), to_py(pending) or None)

    async def flush(self) -> Any:
        return to_js(self._store.flush().to_dict())

    async def search(self, query: Any) -> Any:
        return to_js([c.to_dict() for c in self._store.search(SearchQuery.from_dict(to_py(query)))])

    async def pending(self) -> Any:
        return to_js([m.to_dict() for m in self._store.pending()])

    async def unembedded(self, limit: Any) -> Any:
        return to_js([job.to_dict() for job in self._store.unembedded(int(to_py(limit)))])

    async def rows(self, after: Any, limit: Any) -> Any:
        return to_js([row.to_dict() for row in self._store.rows(to_py(after), int(to_py(limit)))])

    async def clear(self, reset: Any) -> Any:
        self._store.clear(bool(to_py(reset)))
        return None

    async def forget(self, ids: Any) -> Any:
        return to_js(self._store.forget([str(i) for i in to_py(ids)]).to_dict())

    async def changes(self, after: Any, max_entries: Any, max_rows: Any) -> Any:
        batch = self._store.changes(int(to_py(after)), int(to_py(max_entries)), int(to_py(max_rows)))
        return to_js(batch.to_dict())

    async def trim(self, upto: Any) -> Any:
        self._store.trim(int(to_py(upto)))
        return None

    async def messages(self, after: Any, limit: Any) -> Any:
        return to_js(self._store.messages(int(to_py(after)), int(to_py(limit))).to_dict())

    async def recent_messages(self, limit: Any, offset: Any) -> Any:
        rows = self._store.recent_messages(int(to_py(limit)), int(to_py(offset)))
        return to_js([row.to_dict() for row in rows])

    async def generation(self) -> Any:
        return self._store.generation()

    async def delete_older_than(self, cutoff: Any) -> Any:
        return to_js(self._store.delete_older_than(float(to_py(cutoff))))

    async def stats(self) -> Any:
        return to_js(self._store.stats().to_dict())
