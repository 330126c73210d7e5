"""``VaultDirectory`` over the Vault Durable Object namespace (``env.VAULT``).

Each vault is one Durable Object, named by ``core.memory.names`` (``{key}:core`` or
``{key}:session:{id}``). The client calls the stub's RPC methods, whose names are the
``VaultClient`` method names; every argument and result is plain data (``to_dict``/``from_dict``
of the core models), so nothing but JSON-shaped values crosses the RPC boundary."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from memvault.adapters.cloudflare.rpc_stub import RpcStub
from memvault.core import models


class DurableObjectVaultDirectory:
    def __init__(self, namespace: Any) -> None:
        self._namespace = namespace

    def vault(self, name: str) -> DurableObjectVault:
        # Stubs are cheap and carry no connection until the first call.
        return DurableObjectVault(self._namespace.get(self._namespace.idFromName(name)))


class DurableObjectVault:
    def __init__(self, stub: Any) -> None:
        self._call = RpcStub(stub).call

    async def append(
        self, messages: Sequence[models.Message], model: models.EmbeddingModel | None = None
    ) -> models.AppendResult:
        plain = [m.to_dict() for m in messages]
        return models.AppendResult.from_dict(await self._call("append", plain, None if model is None else model.to_dict()))

    async def attach_embeddings(
        self, model_id: str, embeddings: dict[str, list[float]], pending: dict[str, list[float]] | None = None
    ) -> int:
        return int(await self._call("attach_embeddings", model_id, _vectors(embeddings), _vectors(pending or {})))

    async def flush(self) -> models.AppendResult:
        return models.AppendResult.from_dict(await self._call("flush"))

    async def search(self, query: models.SearchQuery) -> list[models.Candidate]:
        return [models.Candidate.from_dict(c) for c in await self._call("search", query.to_dict()) or []]

    async def pending(self) -> list[models.Message]:
        return [models.Message.from_dict(m) for m in await self._call("pending") or []]

    async def unembedded(self, limit: int) -> list[models.EmbedJob]:
        return [models.EmbedJob.from_dict(j) for j in await self._call("unembedded", limit) or []]

    async def rows(self, after: str | None, limit: int) -> list[models.MemoryRow]:
        return [models.MemoryRow.from_dict(r) for r in await self._call("rows", after, limit) or []]

    async def clear(self, reset: bool) -> None:
        await self._call("clear", reset)

    async def forget(self, ids: Sequence[str]) -> models.ForgetResult:
        return models.ForgetResult.from_dict(await self._call("forget", [str(i) for i in ids]))

    async def changes(self, after: int, max_entries: int, max_rows: int) -> models.ChangeBatch:
        return models.ChangeBatch.from_dict(await self._call("changes", after, max_entries, max_rows))

    async def trim(self, upto: int) -> None:
        await self._call("trim", upto)

    async def messages(self, after: int, limit: int) -> models.MessagePage:
        return models.MessagePage.from_dict(await self._call("messages", after, limit))

    async def recent_messages(self, limit: int, offset: int) -> list[models.MemoryRow]:
        return [models.MemoryRow.from_dict(r) for r in await self._call("recent_messages", limit, offset) or []]

    async def generation(self) -> int:
        return int(await self._call("generation"))

    async def delete_older_than(self, cutoff: float) -> list[str]:
        return [str(i) for i in await self._call("delete_older_than", cutoff) or []]

    async def stats(self) -> models.VaultStats:
        return models.VaultStats.from_dict(await self._call("stats"))


def _vectors(vectors: dict[str, list[float]]) -> dict[str, list[float]]:
    return {id_: [float(x) for x in vector] for id_, vector in vectors.items()}
