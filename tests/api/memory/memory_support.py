"""An in-process memvault (local mode, temp data dir, hash embedder) and an HTTP client for it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from memvault.api.app import create_app
from memvault.core.credentials.keys import create_key
from memvault.core.deps import Deps
from memvault.core.settings import load_settings
from memvault.runtime.local import build_local_deps, close_local_deps


@dataclass
class Memvault:
    deps: Deps
    client: httpx.AsyncClient
    key: str
    key_id: str

    @property
    def auth(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key}"}


def settings_for(data_dir: Path, **extra: str) -> dict[str, str]:
    return {"MEMVAULT_DATA_DIR": str(data_dir), "MEMVAULT_EMBEDDER": "hash", **extra}


@pytest.fixture
async def memvault(tmp_path: Path) -> AsyncIterator[Memvault]:
    deps = build_local_deps(load_settings(settings_for(tmp_path, MEMVAULT_MAX_BODY_BYTES="65536", MEMVAULT_MAX_PROVIDER_BODY_BYTES="65536")))
    key, secret = await create_key(deps.db, "test", deps.clock())
    transport = httpx.ASGITransport(app=create_app(deps))
    async with httpx.AsyncClient(transport=transport, base_url="http://memvault.test") as client:
        yield Memvault(deps=deps, client=client, key=secret, key_id=key.id)
    await close_local_deps(deps)
