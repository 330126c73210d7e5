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

The cron schedule is stated once, in `[triggers] crons` of wrangler.toml. A Worker cannot read its
own triggers, so the bundle's memvault/adapters/cloudflare/triggers.py is written from the crons of
the environment being built (`--env`, which each wrangler.toml environment's build command passes;
none: the top level); /health counts them.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", "*.pyo", ".*")
# Relative to src/memvault: what only the local composition root uses.
LOCAL_ONLY = ("adapters/local", "api/mcp", "runtime/local.py", "cli", "__main__.py")
TRIGGERS = Path("memvault") / "adapters" / "cloudflare" / "triggers.py"


class BuildError(Exception):
    """The configuration cannot be built; the message says what to fix."""


def declared_crons(config: dict[str, Any], env: str | None) -> tuple[str, ...]:
    """`[triggers] crons` of a wrangler.toml environment (``None``: the top level). wrangler does
    not inherit triggers into an environment, so an environment without its own has none."""
    if env is None:
        section = config
    else:
        section = config.get("env", {}).get(env)
        if section is None:
            raise BuildError(f"wrangler.toml has no [env.{env}]")
    crons = section.get("triggers", {}).get("crons", [])
    if not isinstance(crons, list) or not all(isinstance(c, str) and c.strip() for c in crons):
        raise BuildError(f"[{'env.' + env + '.' if env else ''}triggers] crons must be a list of cron expressions")
    return tuple(crons)


def read_config(root: Path) -> dict[str, Any]:
    return tomllib.loads((root / "wrangler.toml").read_text())


def triggers_module(crons: tuple[str, ...], env: str | None) -> str:
    source = f"[env.{env}.triggers]" if env else "[triggers]"
    return (f'"""The Worker\'s cron triggers: written by scripts/build_worker.py from {source} crons of wrangler.toml."""\n\n'
            f"CRONS: tuple[str, ...] = {crons!r}\n")


def stage(root: Path, out: Path, env: str | None = None) -> list[str]:
    crons = declared_crons(read_config(root), env)
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
    (out / TRIGGERS).write_text(triggers_module(crons, env))
    shutil.copytree(root / "durable_objects", out / "durable_objects", ignore=SKIP)
    (out / "migrations").mkdir()
    for sql in sorted((root / "migrations").glob("[0-9][0-9][0-9][0-9]_*.sql")):
        shutil.copy2(sql, out / "migrations" / sql.name)
    return sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "build" / "worker")
    parser.add_argument("--env", help="the wrangler.toml environment being built (its cron triggers); default: top level")
    args = parser.parse_args(argv)
    try:
        files = stage(ROOT, args.out, args.env)
    except BuildError as exc:
        print(f"build_worker: {exc}", file=sys.stderr)
        return 2
    where = args.out.relative_to(ROOT) if args.out.is_relative_to(ROOT) else args.out
    crons = declared_crons(read_config(ROOT), args.env)
    print(f"staged {len(files)} files in {where}; cron triggers of {args.env or 'the top level'}: {list(crons)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
