"""Node for the tests that run it (wrangler, the Pyodide tier): the Node 22 that `npm ci` installs
into node_modules/.bin on Linux x64 (wrangler >= 4.109 refuses older ones) comes first on PATH,
then whatever Node the machine has."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NODE_BIN = ROOT / "node_modules" / ".bin"


def node_path() -> str:
    return f"{NODE_BIN}{os.pathsep}{os.environ.get('PATH', '')}"


def node_env(**extra: str) -> dict[str, str]:
    """The environment for a subprocess that runs Node or a Node tool."""
    return {**os.environ, "PATH": node_path(), **extra}


def node() -> str | None:
    return shutil.which("node", path=node_path())
