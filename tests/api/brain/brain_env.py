"""Shared by the brain tests (a plain module, not a conftest, so it cannot shadow another
directory's conftest). The brain in local mode: real SQLite (FTS5), files, the local vector index and the hash
embedder, behind the real app, reached in-process through httpx's ASGI transport. The clock is
ours, so time travel (``as_of``) is exact."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from memvault.api.app import create_app
from memvault.core.brain.scopes import Credential, auth_of
from memvault.core.deps import Deps
from memvault.core.settings import load_settings
from memvault.core.tuning import Tuning
from memvault.runtime.local import build_local_deps, close_local_deps

ALL_SCOPES = ["business", "family", "personal", "shared"]  # the default scopes
# name -> (scopes, writer). The token of credential NAME is "tok-NAME".
CREDENTIALS: dict[str, tuple[list[str], bool]] = {
    "writer": (ALL_SCOPES, True),
    "biz-writer": (["business"], True),
    "family+shared-writer": (["family", "shared"], True),
    "business": (["business"], False),
    "family": (["family"], False),
    "personal": (["personal"], False),
    "shared+business": (["shared", "business"], False),
    "family+personal": (["family", "personal"], False),
    "reader-all": (ALL_SCOPES, False),
}


def token(name: str) -> str:
    return f"tok-{name}"


def credentials_setting() -> str:
    return json.dumps({
        hashlib.sha256(token(name).encode()).hexdigest(): {"name": name, "scopes": scopes, "writer": writer}
        for name, (scopes, writer) in CREDENTIALS.items()
    })


class Clock:
    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> float:
        self.now += seconds
        return self.now


@dataclasses.dataclass
class Brain:
    deps: Deps
    client: httpx.AsyncClient
    clock: Clock
    transport: httpx.ASGITransport

    def headers(self, name: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {token(name)}"}

    async def credential(self, name: str) -> Credential:
        return await auth_of(token(name), self.deps)

    async def write(
        self, payload: dict[str, Any], as_: str = "writer", expect: int = 200, bands: str = "on"
    ) -> dict[str, Any]:
        response = await self.client.post("/memory/write", json=payload, headers=self.headers(as_),
                                          params={"bands": bands})
        assert response.status_code == expect, response.text
        body: dict[str, Any] = response.json()
        return body

    async def get(self, path: str, as_: str, **params: Any) -> httpx.Response:
        clean = {k: v for k, v in params.items() if v is not None}
        return await self.client.get(path, params=clean, headers=self.headers(as_))

    async def count(self, where: str = "1 = 1", params: tuple[Any, ...] = ()) -> int:
        rows = await self.deps.db.query(f"SELECT COUNT(*) AS n FROM memory WHERE {where}", params)
        return int(rows[0]["n"])

    async def events(self) -> int:
        rows = await self.deps.db.query("SELECT COUNT(*) AS n FROM event_log")
        return int(rows[0]["n"])


async def open_brain(data_dir: Path, tuning: Tuning | None = None, **overrides: str) -> Brain:
    env = {
        "MEMVAULT_DATA_DIR": str(data_dir),
        "MEMVAULT_EMBEDDER": "hash",
        "MEMVAULT_BRAIN_CREDENTIALS": credentials_setting(),
        **overrides,
    }
    clock = Clock()
    deps = dataclasses.replace(build_local_deps(load_settings(env), tuning), clock=clock)
    transport = httpx.ASGITransport(app=create_app(deps))
    client = httpx.AsyncClient(transport=transport, base_url="http://brain.test")
    return Brain(deps=deps, client=client, clock=clock, transport=transport)


async def close_brain(brain: Brain) -> None:
    await brain.client.aclose()
    await close_local_deps(brain.deps)


@pytest.fixture(name="brain")
async def brain_fixture(tmp_path: Path) -> AsyncIterator[Brain]:
    opened = await open_brain(tmp_path)
    try:
        yield opened
    finally:
        await close_brain(opened)
