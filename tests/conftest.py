"""Fixtures every tier shares: memvault's deps over the local stores (real sqlite3 and files) in a
fresh data folder, with the deterministic hash embedder."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from local_deps import MakeDeps
from log_capture import Logs
from memvault.core.deps import Deps
from memvault.core.settings import load_settings
from memvault.core.tuning import Tuning
from memvault.runtime.local import build_local_deps, close_local_deps
from run_summary import WORKER_OUTPUT_KEY
from tls_once import install as share_one_tls_context

share_one_tls_context()

TESTS = Path(__file__).resolve().parent
# Folders whose session fixtures start one stack that serves every module in them (workerd, the
# Pyodide harness): under xdist each folder is one group, so its stack starts once. The two tiers
# may run side by side: a D1 call of the Pyodide tier failed once when they first did on a busy
# machine, and miniflare's D1 setups that fail under load ("fetch failed") are retried since
# (tests/pyodide/harness.mjs); any other module beside it loads the machine as much.
WHOLE_FOLDERS = ("workerd", "pyodide")
# Under xdist the longest groups go out first, so no worker is left with a long one at the end.
LONGEST_FIRST = ("workerd", "pyodide", "browser", "cli", "brain_sync", "docs")


def worker_group(nodeid: str) -> str:
    """The xdist group of a test: its folder for the folders WHOLE_FOLDERS names, else its module."""
    module = nodeid.split("::", 1)[0]
    folder = module.split("/")[1] if module.startswith("tests/") else ""
    return f"tests/{folder}" if folder in WHOLE_FOLDERS else module


def worker_rank(item: pytest.Item) -> int:
    folder = Path(str(item.path)).resolve().relative_to(TESTS).parts[0]
    return LONGEST_FIRST.index(folder) if folder in LONGEST_FIRST else len(LONGEST_FIRST)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """`pytest -n N --dist loadscope`: a module's fixtures are built once, a tier's stack once."""
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class ByGroup(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return worker_group(nodeid)

    return ByGroup(config, log)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if hasattr(config, "workerinput"):  # an xdist worker: the order its scheduler hands groups out in
        items.sort(key=worker_rank)


# What the workers' folders would have printed at the end of the run (tests/run_summary.py).
RELAYED: list[str] = []


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    RELAYED.extend(getattr(node, "workeroutput", {}).get(WORKER_OUTPUT_KEY, []))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    for line in RELAYED:
        terminalreporter.write_line(line)


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
