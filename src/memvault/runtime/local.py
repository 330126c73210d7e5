"""The local composition root: embedded stores under one data directory."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import importlib.util
import logging
import os
import time
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memvault.adapters.local.background import AsyncioBackground
from memvault.adapters.local.blobs import LocalBlobStore
from memvault.adapters.local.cache import MemoryCache
from memvault.adapters.local.cipher import AesGcmCipher
from memvault.adapters.local.cpu import ThreadCpu
from memvault.adapters.local.database import SqliteDatabase
from memvault.adapters.local.embedder import make_embedder
from memvault.adapters.local.native_threads import one_blas_thread
from memvault.adapters.local.relay_client import AiohttpClient
from memvault.adapters.local.vaults import LocalVaultDirectory
from memvault.adapters.local.vector_index import LocalVectorIndex
from memvault.core import memory
from memvault.core.deps import Deps
from memvault.core.memory.routed_calls import OPEN_CALL_SECONDS, settle_leftovers
from memvault.core.memory.store import VaultLimits
from memvault.core.retry import with_retries
from memvault.core.settings import Settings, load_settings
from memvault.core.tuning import Tuning
from memvault.core.usage.meter import MeteredEmbedder

if TYPE_CHECKING:
    from fastapi import FastAPI

    from memvault.adapters.local.chat_model import OpenAICompatibleChat

log = logging.getLogger(__name__)
# A vault no call has used for this long is closed: the pool bounds how many stay open under load,
# this lets a quiet server hold none.
VAULT_IDLE_SECONDS = 60.0

# Inside the data folder: the shared database, and the blob store (backups under ``backups/``).
DATABASE_FILE = "memvault.sqlite3"
BLOBS_FOLDER = "blobs"
# Journaled calls a start settles before serving; any more wait for the nightly pass.
STARTUP_LEFTOVERS = 10_000


def build_local_deps(settings: Settings, tuning: Tuning | None = None) -> Deps:
    """The stores under ``settings.data_dir``; ``tuning`` is the product's unless a test or a
    benchmark sweep passes another."""
    tuning = tuning or Tuning()
    one_blas_thread()
    data = private_folder(Path(settings.data_dir))
    stores = with_retries(SqliteDatabase(data / DATABASE_FILE), LocalVectorIndex(data / "vectors.sqlite3"),
                          make_embedder(settings.embedder), LocalBlobStore(data / BLOBS_FOLDER))
    return Deps(
        settings=settings,
        tuning=tuning,
        vaults=LocalVaultDirectory(data / "vaults", VaultLimits.of(settings, tuning), settings.open_vaults),
        db=stores.db,
        embedder=MeteredEmbedder(stores.embedder),
        background=AsyncioBackground(),
        http=AiohttpClient(),
        blobs=stores.blobs,
        vectors=stores.vectors,
        cache=MemoryCache(),
        clock=time.time,
        llm=_brain_llm(settings),
        cipher=AesGcmCipher(),
        cpu=ThreadCpu(),
    )


def private_folder(data: Path) -> Path:
    """The data folder, made readable by its owner alone when it is made: it holds every key's
    memory and every brain scope, and the walls between them mean nothing to another account of
    the machine that can read the files. A folder that exists is left as it is, with a warning
    when others may read it (it may be one the owner shares on purpose)."""
    if not data.exists():
        data.mkdir(parents=True, mode=0o700, exist_ok=True)
        data.chmod(0o700)  # whatever the process's umask left of the mode
    elif os.name == "posix" and data.stat().st_mode & 0o077:
        log.warning("the data folder %s can be read by other accounts of this machine; "
                    "`chmod 700 %s` makes it its owner's alone", data, data)
    return data


def _brain_llm(settings: Settings) -> OpenAICompatibleChat | None:
    # Imported here, so a process without a brain model never loads its HTTP client.
    from memvault.adapters.local.chat_model import OpenAICompatibleChat

    if not (settings.brain_llm_url and settings.brain_llm_model):
        return None
    return OpenAICompatibleChat(settings.brain_llm_url, settings.brain_llm_model, settings.brain_llm_api_key,
                                settings.brain_llm_timeout_ms / 1000.0)


async def close_local_deps(deps: Deps) -> None:
    """Finish background writes, then close every store."""
    background = deps.background
    if isinstance(background, AsyncioBackground):
        await background.drain()
    for wrapped in (deps.http, deps.vaults, deps.db, deps.vectors, deps.llm):
        resource = getattr(wrapped, "inner", wrapped)  # the store under its retrying wrapper
        closer: Any = getattr(resource, "aclose", None) or getattr(resource, "close", None)
        if closer is not None:
            result = closer()
            if hasattr(result, "__await__"):
                await result


# Allocations (less deallocations) between two collections of the youngest objects.
YOUNG_COLLECTION_THRESHOLD = 10_000


async def start_local(deps: Deps) -> None:
    """What a local process serving callers does first (the server, and the MCP stdio command)."""
    # Load the embedding model before the first request, so no early call answers degraded.
    await deps.embedder.embed(["warm up"])
    # Whatever a crash or a failing mirror left in the vaults' logs reaches the mirror now, and so
    # do answered calls a crash left in the journal (settling one twice counts it once, so a server
    # running beside this process on the same folder loses nothing). A call with no answer yet may
    # be another process's, still streaming: it waits as long as the nightly pass leaves it.
    await memory.sync_all(deps)
    now = deps.clock()
    await settle_leftovers(deps, answered_before=now, opened_before=now - OPEN_CALL_SECONDS, limit=STARTUP_LEFTOVERS)
    # What is loaded by now (modules, the app, the model's wrappers) lives as long as the process:
    # set apart from the collector, a full collection no longer walks it in the middle of a call
    # (about 80 ms every few hundred searches before; ``docs/benchmarks.md``).
    gc.collect()
    gc.freeze()
    # A search makes a few thousand short-lived objects; at the default threshold (700) the young
    # generation is collected several times a call, each pass walking objects the call still
    # holds (about 0.5 ms a search on a LoCoMo-sized vault, under 0.1 ms at this threshold). Nearly all
    # of them are freed by their counts anyway; cycles wait a little longer.
    gc.set_threshold(YOUNG_COLLECTION_THRESHOLD, *gc.get_threshold()[1:])


@asynccontextmanager
async def closing_idle_vaults(deps: Deps) -> AsyncIterator[None]:
    """While a local process serves: every so often, close the vaults idle for ``VAULT_IDLE_SECONDS``."""
    vaults = deps.vaults
    if not isinstance(vaults, LocalVaultDirectory):
        yield
        return

    async def sweep() -> None:
        while True:
            await asyncio.sleep(VAULT_IDLE_SECONDS / 4)
            try:
                await asyncio.to_thread(vaults.close_idle, VAULT_IDLE_SECONDS)
            except Exception as exc:  # the next sweep tries again; the pool still bounds what is open
                log.warning("closing idle vaults failed: %s", type(exc).__name__)

    task = asyncio.create_task(sweep())
    try:
        yield
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def docs_assets() -> Path:
    """Swagger UI and ReDoc as the `fastapi-offline` package ships them (the local extra installs
    it); only its files are read, never its code."""
    spec = importlib.util.find_spec("fastapi_offline")
    if spec is None or spec.origin is None:
        raise RuntimeError("fastapi-offline is missing: install memvault with its `local` extra")
    return Path(spec.origin).parent / "static"


def create_local_app(environ: Mapping[str, str]) -> FastAPI:
    """The app the local server runs, with MCP at ``/mcp``; deps are built on startup and closed
    (drained) on shutdown."""
    # Imported here, so the other CLI commands load neither FastAPI nor the MCP SDK.
    from memvault.api.app import create_app
    from memvault.api.mcp.http import mount_mcp

    deps = build_local_deps(load_settings(environ))
    app = create_app(deps, docs_assets=docs_assets())
    serving_mcp = mount_mcp(app, deps)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        await start_local(deps)
        async with serving_mcp(), closing_idle_vaults(deps):
            yield
        await close_local_deps(deps)

    app.router.lifespan_context = lifespan
    return app
