"""``VaultDirectory`` over the Vault Durable Object namespace (``env.VAULT``).

Each vault is one Durable Object, named by ``core.memory.names`` (``{key}:core`` or
``{key}:session:{id}``). The client calls the stub's RPC methods, whose names are the
``VaultClient`` method names; every argument and result is plain data (``to_dict``/``from_dict``
of the core models), so nothing but JSON-shaped values crosses the RPC boundary."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pyodide.ffi import JsException

from memvault.adapters.cloudflare.convert import to_js, to_py
from memvault.core import errors, models


class DurableObjectVaultDirectory:
    def __init__(self, namespace: Any) -> None:
        self._namespace = namespace

    def vault(self, name: str) -> DurableObjectVault:
        # Stubs are cheap and carry no connection until the first call.
        return DurableObjectVault(self._namespace.get(self._namespace.idFromName(name)))


class DurableObjectVault:
    def __init__(self, stub: Any) -> None:
        self._stub = stub

    async def _call(self, method: str, *args: Any) -> Any:
        try:
            return to_py(await getattr(self._stub, method)(*[to_js(a) for a in args]))
        except JsException as exc:
            raise error_from_rpc(method, str(exc)) from None

    async def append(
        self, messages: Sequence[models.Message], model: models.EmbeddingModel | None = None
    ) -> models.AppendResult:
        plain = [m.to_dict() for m in messages]
        return models.AppendResult.from_dict(await self._call("append", plain, None if model is None else model.to_dict()))

    async def attach_embeddings(self, model_id: str, embeddings: dict[str, list[float]]) -> int:
        plain = {id_: [float(x) for x in vector] for id_, vector in embeddings.items()}
        return int(await self._call("attach_embeddings", model_id, plain))

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

    async def recent_messages(self, limit: int, offset: int) -> list[models.MemoryRow]:
        return [models.MemoryRow.from_dict(r) for r in await self._call("recent_messages", limit, offset) or []]

    async def delete_older_than(self, cutoff: float) -> list[str]:
        return [str(i) for i in await self._call("delete_older_than", cutoff) or []]

    async def stats(self) -> models.VaultStats:
        return models.VaultStats.from_dict(await self._call("stats"))


# A Python exception raised in the Durable Object reaches the caller as a JS Error whose message
# is the Python traceback; its last "module.Class: message" line names the exception.
_LAST_EXCEPTION = re.compile(r"^([A-Za-z_][\w.]*): (.*)$")


def error_from_rpc(method: str, message: str) -> errors.MemvaultError:
    """The domain error a vault raised, rebuilt on this side; anything else (the object crashed,
    storage failed, the RPC was refused) is the vault being unavailable."""
    cause = "unknown error"
    for line in reversed(message.strip().splitlines()):
        found = _LAST_EXCEPTION.match(line.strip())
        if found is None:
            continue
        module, _, name = found.group(1).rpartition(".")
        kind = getattr(errors, name, None)
        if module == errors.__name__ and isinstance(kind, type) and issubclass(kind, errors.MemvaultError):
            return kind(found.group(2))
        cause = found.group(1)
        break
    # The exception's type only: its text may quote stored memory.
    return errors.StorageUnavailable(f"vault call {method} failed ({cause})")
