"""``VaultDirectory`` over the Vault Durable Object namespace (``env.VAULT``).

Each vault is one Durable Object, named by ``core.memory.names`` (``{key}:core`` or
``{key}:session:{id}``). Its client calls the stub's RPC method of each operation's name with
plain data (``core.memory.vault_table``), so nothing but JSON-shaped values crosses the RPC
boundary."""

from __future__ import annotations

from typing import Any

from memvault.adapters.cloudflare.rpc_stub import RpcStub
from memvault.core.memory.vault_table import PlainDataVault


class DurableObjectVaultDirectory:
    def __init__(self, namespace: Any) -> None:
        self._namespace = namespace

    def vault(self, name: str) -> PlainDataVault:
        # Stubs are cheap and carry no connection until the first call.
        return PlainDataVault(RpcStub(self._namespace.get(self._namespace.idFromName(name))).call)
