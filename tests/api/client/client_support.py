"""An in-process memvault (local mode, hash embedder) that clients reach through the real HTTP app,
a network stand-in that can go down, and counters that show which ports a client touched."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

from memvault.adapters.local.background import AsyncioBackground
from memvault.adapters.local.http_client import HttpxClient
from memvault.adapters.local.sqlite_sql import SqliteSql
from memvault.api.app import create_app
from memvault.client import HttpTransport, MemoryClient
from memvault.core.credentials import keys
from memvault.core.deps import Deps
from memvault.core.errors import UpstreamUnavailable
from memvault.core.ports import Row, UpstreamResponse
from memvault.core.settings import load_settings
from memvault.runtime import rpc
from memvault.runtime.local import build_local_deps, close_local_deps

T = TypeVar("T")
BASE_URL = "http://memvault.test"


class PlainAnswer:
    """An answer that is not memvault's: a status and a plain-text body, as a proxy gives."""

    def __init__(self, status: int, body: bytes) -> None:
        self.status, self.headers, self._body = status, [("content-type", "text/plain")], body

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        yield self._body

    async def aclose(self) -> None:
        return None


class Network:
    """The HTTP client a transport is given: the real app behind it, unless the network is down
    (every request fails as an unreachable host does), answers are lost after memvault acted, or
    something in between answers 400 itself before memvault saw the request."""

    def __init__(self, inner: HttpxClient) -> None:
        self.inner = inner
        self.down = False
        self.lose_answers = 0
        self.garble = 0
        self.sent: list[tuple[str, str]] = []

    async def send(self, method: str, url: str, headers: Sequence[tuple[str, str]], body: bytes) -> UpstreamResponse:
        self.sent.append((method, url))
        if self.down:
            raise UpstreamUnavailable("upstream unreachable: ConnectError")
        if self.garble:
            self.garble -= 1
            return PlainAnswer(400, b"Invalid HTTP request received.")
        response = await self.inner.send(method, url, headers, body)
        if self.lose_answers:
            self.lose_answers -= 1
            await response.aclose()
            raise UpstreamUnavailable("upstream body interrupted: ReadError")
        return response


class CountingSql:
    """A ``SyncSql`` that counts what reaches it."""

    def __init__(self, inner: SqliteSql) -> None:
        self.inner = inner
        self.calls = 0

    def execute(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        self.calls += 1
        return self.inner.execute(sql, params)

    def transaction(self, work: Callable[[], T]) -> T:
        self.calls += 1
        return self.inner.transaction(work)


class CountingBackground:
    def __init__(self) -> None:
        self.inner = AsyncioBackground()
        self.calls = 0

    def run(self, work: Callable[[], Awaitable[None]]) -> None:
        self.calls += 1
        self.inner.run(work)

    async def drain(self) -> None:
        await self.inner.drain()


@dataclass
class Sleeps:
    """A sleep that records each wait and returns at once."""

    waits: list[float] = field(default_factory=list)

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
        await asyncio.sleep(0)


@dataclass
class Memvault:
    deps: Deps
    network: Network
    key: str
    key_id: str
    data_dir: Path

    def client(self, **options: Any) -> MemoryClient:
        return MemoryClient(HttpTransport(self.network, BASE_URL, self.key), **options)

    async def page(self, session_id: str | None) -> list[dict[str, Any]]:
        """The session's messages as memvault holds them, oldest first."""
        found = await rpc.get_bound_memory(self.deps, {rpc.MEMORY_KEY_PROP: self.key_id}, session_id, {"limit": 500})
        return list(reversed(found["items"]))


@pytest.fixture
async def memvault(tmp_path: Path) -> AsyncIterator[Memvault]:
    deps = build_local_deps(load_settings({"MEMVAULT_DATA_DIR": str(tmp_path / "memvault"), "MEMVAULT_EMBEDDER": "hash"}))
    key, secret = await keys.create_key(deps.db, "bot", deps.clock())
    http = httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(deps)))
    yield Memvault(deps, Network(HttpxClient(http)), secret, key.id, tmp_path)
    await http.aclose()
    await close_local_deps(deps)


def plain(value: Any) -> Any:
    """What crosses a service binding: structured-cloneable data, here JSON."""
    return json.loads(json.dumps(value))
