"""The Vault Durable Object: one conversation vault on the object's own SQLite storage.

Thin on purpose: each RPC method is an operation of the vault table (``core.memory.vault_table``),
whose plain-data arguments become core models for the ``VaultStore`` method of the same name, and
whose result goes back as plain data. All vault logic lives in core, where CPython tests cover it
against sqlite3.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from workers import DurableObject

from memvault.adapters.cloudflare.convert import to_js, to_py
from memvault.adapters.cloudflare.do_sql import DurableObjectSql
from memvault.adapters.cloudflare.env import env_settings, js_binding
from memvault.core.memory.store import VaultLimits, VaultStore
from memvault.core.memory.vault_table import VAULT_OPERATIONS, serve

Served = TypeVar("Served", bound=type)


def _rpc_method(name: str) -> Callable[..., Coroutine[Any, Any, Any]]:
    async def method(self: Any, *args: Any) -> Any:
        return to_js(serve(self._store, name, [to_py(arg) for arg in args]))

    method.__name__, method.__qualname__ = name, f"Vault.{name}"
    return method


def _serving_every_operation(cls: Served) -> Served:
    # The runtime exposes the public functions it finds on the class as RPC methods, so every
    # operation is one, set on the class itself, under the name it has always had: while a deploy
    # rolls out, Workers of one version call vaults running the other, and each must find the
    # methods the other expects.
    for name in VAULT_OPERATIONS:
        setattr(cls, name, _rpc_method(name))
    return cls


# The SDK leaves DurableObject.__init_subclass__ (which wraps __init__ to hand over ctx and env) unannotated.
@_serving_every_operation
class Vault(DurableObject):  # type: ignore[no-untyped-call]
    def __init__(self, ctx: Any, env: Any) -> None:
        super().__init__(ctx, env)
        # VaultStore migrates its schema here, synchronously and over local SQL only. A DO
        # constructor delivers no request until it returns, so no blockConcurrencyWhile (and no
        # network wait inside one) is needed to keep requests away from a half-migrated schema.
        self._store = VaultStore(DurableObjectSql(js_binding(ctx.storage)), VaultLimits.of(env_settings(env)))
