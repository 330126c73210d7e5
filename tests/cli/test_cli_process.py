"""What the `memvault` command sets up for its own process before the library loads."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = (
    "import os, memvault.cli, numpy; "
    "print(os.environ['OPENBLAS_NUM_THREADS'], len(os.listdir('/proc/self/task')))"
)


def probe(env: dict[str, str]) -> tuple[str, int]:
    done = subprocess.run([sys.executable, "-c", PROBE], env=env, capture_output=True, text=True, timeout=120, check=True)
    setting, threads = done.stdout.split()
    return setting, int(threads)


def base_environment() -> dict[str, str]:
    return {name: value for name, value in os.environ.items() if not name.endswith("_NUM_THREADS")}


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts threads through /proc")
def test_numpy_starts_without_blas_helper_threads() -> None:
    # Helper threads spin after each of the search's small products, on cores the model needs.
    assert probe(base_environment()) == ("1", 1)


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="counts threads through /proc")
def test_an_operator_setting_for_blas_threads_is_kept() -> None:
    assert probe({**base_environment(), "OPENBLAS_NUM_THREADS": "2"})[0] == "2"


def test_a_command_that_serves_nothing_loads_no_web_framework() -> None:
    """Each start of `memvault keys …`, `import`, `backup` … pays for what it imports; FastAPI,
    the MCP SDK and the HTTP clients were most of a second of it, and only `serve` and `mcp` (and
    a brain model's calls) use them."""
    loaded = subprocess.run(
        [sys.executable, "-c", "import sys, memvault.cli, memvault.runtime.local; "
                               "print(sorted({'fastapi', 'starlette', 'mcp', 'aiohttp', 'httpx'} & sys.modules.keys()))"],
        capture_output=True, text=True, timeout=120, check=True,
    )
    assert loaded.stdout.strip() == "[]"
