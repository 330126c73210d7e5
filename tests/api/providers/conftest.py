"""A fake provider upstream and a real memvault server (local mode, uvicorn, temp data dir) in
front of it, both on 127.0.0.1. SDK clients talk to memvault with only their base URL changed.

Turns are stored in the background after the answer: a test waits for the texts it expects to
appear in the vault, and before it claims something was not stored it waits for an event that
shows the server has decided (the request's handling ended, a later turn stored)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import pytest
from fake_upstream import FakeUpstream, LoopCapture, ServerThread

from memvault.adapters.local.background import AsyncioBackground
from memvault.api.app import create_app
from memvault.core.credentials.keys import create_key
from memvault.core.deps import Deps
from memvault.core.memory.names import vault_name
from memvault.core.settings import load_settings
from memvault.runtime.local import build_local_deps, close_local_deps

T = TypeVar("T")
# Generous: the suite must pass with every core busy.
DEADLINE_SECONDS = 30.0


def wait_until(condition: Callable[[], T], what: str, seconds: float = DEADLINE_SECONDS) -> T:
    """Poll ``condition`` until it is truthy; its value. Fails, naming ``what``, at the deadline."""
    deadline = time.monotonic() + seconds
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {seconds:.0f} s for {what}")
        time.sleep(0.02)


@dataclass
class Router:
    url: str
    deps: Deps
    capture: LoopCapture
    upstream: FakeUpstream
    upstream_url: str
    data_dir: Path

    def run(self, make: Callable[[], Awaitable[T]]) -> T:
        assert self.capture.loop is not None, "no request has reached the server yet"

        async def call() -> T:
            return await make()

        return asyncio.run_coroutine_threadsafe(call(), self.capture.loop).result(timeout=30)

    def new_key(self) -> tuple[str, str]:
        """A fresh memory key: (key id, secret)."""
        key, secret = asyncio.run(create_key(self.deps.db, "provider-tests", self.deps.clock()))
        return key.id, secret

    def stored_texts(self, key_id: str, session_id: str | None = None) -> list[str]:
        """Everything the key's vault holds now: rows and the pending buffer."""
        vault = self.deps.vaults.vault(vault_name(key_id, session_id))

        async def read() -> list[str]:
            rows = await vault.rows(None, 10_000)
            pending = await vault.pending()
            return [row.text for row in rows] + [message.content for message in pending]

        return self.run(read)

    def wait_stored(self, key_id: str, *texts: str, session_id: str | None = None) -> list[str]:
        """Wait until the key's vault holds each of ``texts`` and the server's background work is
        done (the store goes on to the mirror, which answers a search when the vault is slow);
        everything the vault holds then."""

        def holds() -> list[str]:
            stored = self.stored_texts(key_id, session_id)
            return stored if all(text in stored for text in texts) else []

        stored = wait_until(holds, f"{texts} stored")
        wait_until(lambda: self.background.pending == 0, "the server's background work done")
        return stored

    @property
    def background(self) -> AsyncioBackground:
        assert isinstance(self.deps.background, AsyncioBackground)
        return self.deps.background

    def served(self, secret: str) -> int:
        """How many requests carrying this memory key the server has finished handling."""
        return self.capture.served.count(secret)

    def wait_served(self, secret: str, count: int) -> None:
        """Wait until the server has finished handling ``count`` requests with this key: by then
        it has decided whether each turn is stored (and scheduled the store if so)."""
        wait_until(lambda: self.served(secret) >= count, f"{count} requests served")


@pytest.fixture(scope="session")
def router(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Router]:
    upstream = FakeUpstream()
    data_dir = tmp_path_factory.mktemp("memvault-data")
    with ServerThread(upstream) as fake:
        settings = load_settings(
            {
                "MEMVAULT_DATA_DIR": str(data_dir),
                "MEMVAULT_EMBEDDER": "hash",
                "MEMVAULT_OPENAI_BASE_URL": fake.url,
                "MEMVAULT_ANTHROPIC_BASE_URL": fake.url,
                "MEMVAULT_GEMINI_BASE_URL": fake.url,
            }
        )
        deps = build_local_deps(settings)
        capture = LoopCapture(create_app(deps))
        with ServerThread(capture) as server:
            yield Router(server.url, deps, capture, upstream, fake.url, data_dir)
            if capture.loop is not None:
                asyncio.run_coroutine_threadsafe(close_local_deps(deps), capture.loop).result(timeout=30)


@pytest.fixture
def key(router: Router) -> tuple[str, str]:
    return router.new_key()
