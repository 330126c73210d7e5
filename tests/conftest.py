"""Fixtures every tier shares: memvault's deps over the local stores (real sqlite3 and files) in a
fresh data folder, with the deterministic hash embedder."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from pathlib import Path

import pytest

from local_deps import MakeDeps
from log_capture import Logs
from memvault.core.deps import Deps
from memvault.core.settings import load_settings
from memvault.core.tuning import Tuning
from memvault.runtime.local import build_local_deps, close_local_deps


@pytest.fixture
async def make_deps(tmp_path: Path) -> AsyncIterator[MakeDeps]:
    """Builds deps over the test's data folder (or ``data``) from ``MEMVAULT_*`` settings in ``env``,
    with ``tuning`` and a fixed ``clock`` if given; every deps built is closed after the test."""
    built: list[Deps] = []

    def make(
        env: Mapping[str, str] | None = None,
        *,
        tuning: Tuning | None = None,
        clock: Callable[[], float] | None = None,
        data: Path | None = None,
    ) -> Deps:
        settings = load_settings({"MEMVAULT_DATA_DIR": str(data or tmp_path), "MEMVAULT_EMBEDDER": "hash", **(env or {})})
        deps = build_local_deps(settings, tuning)
        if clock is not None:
            deps.clock = clock
        built.append(deps)
        return deps

    yield make
    for deps in reversed(built):
        await close_local_deps(deps)


@pytest.fixture
def deps(make_deps: MakeDeps) -> Deps:
    """Deps with every setting at its default."""
    return make_deps()



@pytest.fixture
def logs() -> Iterator[Logs]:
    """The process's log lines, every level, while the test runs."""
    handler, root = Logs(), logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        yield handler
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
