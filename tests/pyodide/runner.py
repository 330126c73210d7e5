"""Runs inside Pyodide, started by harness.mjs: every contract suite's checks against the
Cloudflare adapters, then the Cloudflare-only checks. Returns one JSON report.

Suites are found by file name in ``tests/contract/suites``; a suite with no Cloudflare adapter
here is reported as such rather than silently passed over."""

from __future__ import annotations

import importlib
import json
import os
import sys
import time
import traceback
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import js

import pyodide
from memvault.adapters.cloudflare.blobs import R2BlobStore
from memvault.adapters.cloudflare.cache import KvCache
from memvault.adapters.cloudflare.cipher import WebCryptoCipher
from memvault.adapters.cloudflare.convert import to_py
from memvault.adapters.cloudflare.database import D1Database
from memvault.adapters.cloudflare.do_sql import DurableObjectSql
from memvault.adapters.cloudflare.embedder import WorkersAiEmbedder
from memvault.adapters.cloudflare.vaults import DurableObjectVaultDirectory
from memvault.adapters.cloudflare.vector_index import VectorizeIndex
from memvault.core.memory.names import vault_name

SUITES_DIR = "/repo/tests/contract/suites"
# Checks of the Cloudflare adapters beyond the shared suites (in tests/pyodide), run after them.
EXTRA_CHECKS = ("cloudflare_checks", "cloudflare_runtime_checks", "client_checks", "limits_checks")
Factory = Callable[[], Awaitable[Any]]


def harness() -> Any:
    return js.memvaultTest


async def new_cache() -> KvCache:
    await harness().resetKV()
    return KvCache(harness().env.CACHE)


async def new_blob_store() -> R2BlobStore:
    await harness().resetR2()
    return R2BlobStore(harness().env.BLOBS)


async def new_cipher() -> WebCryptoCipher:
    return WebCryptoCipher()


async def new_database() -> D1Database:
    return D1Database(await harness().freshD1())


async def new_embedder() -> WorkersAiEmbedder:
    # A small batch so every suite check that embeds several texts crosses batch boundaries.
    return WorkersAiEmbedder(harness().newWorkersAi(), batch_size=16)


async def new_vector_index() -> VectorizeIndex:
    return VectorizeIndex(harness().newVectorize())


async def new_sync_sql() -> DurableObjectSql:
    return DurableObjectSql(harness().newDurableObjectStorage())


async def new_sql_pair() -> Any:
    from suites.search_plan import SqlPair

    return SqlPair(await new_sync_sql(), await new_database())


class VaultObjects:
    """The Durable Objects behind the stand-in Vault namespace: one instance of the real ``Vault``
    class (durable_objects/vault.py) per name, each over a fresh DO SQL stand-in, constructed as the
    runtime does, so the SDK's ``DurableObject`` wraps its ``ctx`` and ``env``."""

    def __init__(self) -> None:
        self.objects: dict[str, Any] = {}

    async def handle(self, name: Any, method: Any, args: Any) -> Any:
        from durable_objects.vault import Vault

        key = str(name)
        if key not in self.objects:
            ctx = harness().newContext()
            ctx.storage = harness().runtimeShaped("DurableObjectStorage", harness().newDurableObjectStorage())
            self.objects[key] = Vault(ctx, js.Object.new())
        # The arguments stay JS values, as the Workers runtime hands them to an RPC method.
        return await getattr(self.objects[key], str(method))(*args)


VAULT_OBJECTS = VaultObjects()


def install_vault_objects() -> None:
    from pyodide.ffi import create_proxy

    # Kept alive for the whole run: the namespace stand-in calls it on every RPC.
    harness().vaultRegistry.handler = create_proxy(VAULT_OBJECTS.handle)


async def new_vault() -> Any:
    directory = DurableObjectVaultDirectory(harness().env.VAULT)
    return directory.vault(vault_name(f"key-{uuid.uuid4().hex[:12]}", None))


FACTORIES: dict[str, Factory] = {
    "cache": new_cache,
    "cipher": new_cipher,
    "blob_store": new_blob_store,
    "database": new_database,
    "embedder": new_embedder,
    "vector_index": new_vector_index,
    "sync_sql": new_sync_sql,
    "search_plan": new_sql_pair,
    "mirror": new_database,
    "vault": new_vault,
}


def _failure(exc: BaseException) -> str:
    frames = traceback.format_exception(type(exc), exc, exc.__traceback__)
    return "".join(frames[-6:])[-3000:]


async def run_checks(suite: str, checks: list[Any], factory: Factory) -> list[dict[str, Any]]:
    results = []
    for check in checks:
        started = time.perf_counter()
        entry: dict[str, Any] = {"suite": suite, "check": check.__name__}
        try:
            await check(await factory())
            entry["ok"] = True
        except BaseException as exc:  # a check's failure is a result, whatever its type
            entry.update(ok=False, error=_failure(exc))
        entry["seconds"] = round(time.perf_counter() - started, 3)
        results.append(entry)
    return results


async def run_all() -> str:
    # The harness's --only: suite names (or EXTRA_CHECKS module names) to run.
    only = to_py(harness().only)
    wanted = None if only is None else {str(name) for name in only}
    install_vault_objects()
    results: list[dict[str, Any]] = []
    # What a suite made here for CPython to read back (its ``ARTIFACTS``), by suite.
    artifacts: dict[str, Any] = {}
    without_adapter: list[str] = []
    names = sorted(f[:-3] for f in os.listdir(SUITES_DIR) if f.endswith(".py") and not f.startswith("_"))
    for name in names:
        if name not in FACTORIES:
            without_adapter.append(name)
            continue
        if wanted is not None and name not in wanted:
            continue
        try:
            module = importlib.import_module(f"suites.{name}")
        except BaseException as exc:
            results.append({"suite": name, "check": "<import>", "ok": False, "error": _failure(exc), "seconds": 0})
            continue
        results.extend(await run_checks(name, list(module.CHECKS), FACTORIES[name]))
        if getattr(module, "ARTIFACTS", None):
            artifacts[name] = dict(module.ARTIFACTS)

    for module_name in EXTRA_CHECKS:
        if wanted is None or module_name in wanted:
            module = importlib.import_module(module_name)
            results.extend(await run_checks(module_name, list(module.CHECKS), module.context))
    return json.dumps(
        {
            "python": sys.version.split()[0],
            "pyodide": pyodide.__version__,
            "suites_found": names,
            "suites_without_adapter": without_adapter,
            "results": results,
            "artifacts": artifacts,
        }
    )
