#!/usr/bin/env python3
"""Fetch the wheels the Pyodide test tier loads into the pinned npm `pyodide`, once, before the tests.

The tier runs the Worker entry as production imports it: the real Python Workers SDK
(workers-runtime-sdk) and FastAPI with pydantic, whose compiled core exists as a wheel for
Pyodide's own platform. The versions are the ones this venv installed, so both tiers test the same
code; the platform and Python come from node_modules/pyodide/pyodide-lock.json. The tests
themselves read the folder offline.

    .venv/bin/python scripts/pyodide_wheels.py [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_OUT = ROOT / ".venv" / "pyodide-wheels"
LOCK = ROOT / "node_modules" / "pyodide" / "pyodide-lock.json"
# The top-level distributions the tier needs; pip resolves what they depend on for the platform.
DISTRIBUTIONS = ("workers-runtime-sdk", "fastapi", "pydantic")
STAMP = ".requirements"


def requirements() -> list[str]:
    return [f"{name}=={version(name)}" for name in DISTRIBUTIONS]


def platform() -> tuple[str, str]:
    """Pyodide's wheel platform tag and its Python's major.minor."""
    info = json.loads(LOCK.read_text())["info"]
    python = ".".join(info["python"].split(".")[:2])
    return f"pyemscripten_{info['abi_version']}_{info['arch']}", python


def fetch(out: Path) -> bool:
    """Download the wheels into ``out`` unless it already holds these requirements; True if it did."""
    tag, python = platform()
    wanted = "\n".join([tag, python, *requirements()])
    stamp = out / STAMP
    if stamp.is_file() and stamp.read_text() == wanted:
        return False
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.whl"):
        old.unlink()
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--only-binary=:all:", "--platform", tag,
         "--python-version", python, "--implementation", "cp", "--dest", str(out), *requirements()],
        check=True,
    )
    stamp.write_text(wanted)
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    if not LOCK.is_file():
        print(f"{LOCK.relative_to(ROOT)} is missing: run `npm ci` first", file=sys.stderr)
        return 1
    fetched = fetch(args.out)
    names = sorted(p.name for p in args.out.glob("*.whl"))
    print(f"{'fetched' if fetched else 'kept'} {len(names)} wheels for the Pyodide tier in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
