#!/usr/bin/env python3
"""Stage the Worker bundle in build/worker/ (wrangler.toml's [build] command runs this).

wrangler names every Python module by its path relative to the folder holding `main`. The repo
keeps `memvault` under src/ and the Durable Object under a top-level durable_objects/, so no single
folder of the repo gives both their import names. Staging copies them side by side:

    build/worker/entry.py                  -> module `entry`
    build/worker/memvault/...              -> package `memvault`
    build/worker/durable_objects/...       -> package `durable_objects`
    build/worker/migrations/NNNN_*.sql     -> text modules (the D1 schema the code expects)

Only what the Worker can import goes in: no tests, caches or compiled files, and none of the
local-only modules (embedded stores, the local server and CLI), whose dependencies do not exist on
Workers.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", "*.pyo", ".*")
# Relative to src/memvault: what only the local composition root uses.
LOCAL_ONLY = ("adapters/local", "api/mcp", "runtime/local.py", "cli", "__main__.py")


def stage(root: Path, out: Path) -> list[str]:
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    shutil.copy2(root / "src" / "entry.py", out / "entry.py")
    shutil.copytree(root / "src" / "memvault", out / "memvault", ignore=SKIP)
    for relative in LOCAL_ONLY:
        path = out / "memvault" / relative
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()
    shutil.copytree(root / "durable_objects", out / "durable_objects", ignore=SKIP)
    (out / "migrations").mkdir()
    for sql in sorted((root / "migrations").glob("[0-9][0-9][0-9][0-9]_*.sql")):
        shutil.copy2(sql, out / "migrations" / sql.name)
    return sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "worker")
    args = parser.parse_args(argv)
    files = stage(ROOT, args.out)
    print(f"staged {len(files)} files in {args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
