"""memvault's Worker under `wrangler dev` on this machine (scripts/workers-dev runs this).

    scripts/workers-dev [--remote-bindings] [wrangler dev options…]   prepare, then serve on 127.0.0.1:8787
    scripts/workers-dev key [--label NAME]                             a memory key on the local Worker

Preparing is what a deploy does before it uploads: `python_modules/` filled (pywrangler where it
can run, else PyPI's Pyodide wheels of `[project].dependencies`), the D1 migrations applied (to the
local database), and secrets in `.dev.vars` (copied from `.dev.vars.example` the first time). Then
`wrangler dev --local` starts the Worker in the workerd the pinned wrangler ships; where Cloudflare
cannot be reached it runs on the offline Pyodide bundle beside the repository (scripts/workerd_runtime.py).
Workers AI and Vectorize have no local simulation: locally memvault serves without them (keyword
search; hybrid brain search answers `degraded: ["vector"]`); `--remote-bindings` uses the real
ones instead, which needs `npx wrangler login`.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))

from workerd_runtime import WRANGLER, Runtime, find_runtime, vendor_python_modules  # noqa: E402

from memvault.core.credentials.keys import create_brain_key, create_key  # noqa: E402

DEV_VARS_EXAMPLE = ".dev.vars.example"
WRAPPER = ROOT / ".cache" / "workerd-offline"


class StatementRecorder:
    """Stands where core's key functions expect the database: keeps each statement they run, with
    its parameters written in as SQL literals, for `wrangler d1 execute --command`."""

    def __init__(self) -> None:
        self.statements: list[str] = []

    async def execute(self, sql: str, params: Sequence[Any] = ()) -> int:
        pieces = sql.split("?")
        if len(pieces) != len(params) + 1:
            raise ValueError("each ? must have one parameter")
        self.statements.append(pieces[0] + "".join(sql_literal(p) + rest for p, rest in zip(params, pieces[1:], strict=True)))
        return 1

    async def batch(self, statements: Sequence[tuple[str, Sequence[Any]]]) -> None:
        for sql, params in statements:
            await self.execute(sql, params)


def sql_literal(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, int | float):
        return repr(value)
    return "'" + str(value).replace("'", "''") + "'"


def memory_key_sql(label: str) -> tuple[str, str, str]:
    """A new memory key as the key store writes it: (statement, key id, mk_ secret)."""
    recorder = StatementRecorder()
    key, secret = asyncio.run(create_key(recorder, label, time.time()))  # type: ignore[arg-type]
    return recorder.statements[0], key.id, secret


def brain_key_sql(name: str, scopes: tuple[str, ...], writer: bool) -> tuple[str, str, str]:
    """A new brain credential as the key store writes it: (statement, id, bt_ secret)."""
    recorder = StatementRecorder()
    key, secret = asyncio.run(create_brain_key(recorder, name, scopes, writer, time.time()))  # type: ignore[arg-type]
    return recorder.statements[0], key.id, secret


def wrangler(args: list[str], cwd: Path = ROOT, env: dict[str, str] | None = None) -> str:
    """Run the pinned wrangler; its output, or SystemExit with it when it fails."""
    done = subprocess.run([str(WRANGLER), *args], cwd=cwd, env=env or node_env(), capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"wrangler {' '.join(args[:3])} failed:\n{done.stdout}{done.stderr}")
    return done.stdout


def node_env(**extra: str) -> dict[str, str]:
    """The environment wrangler runs in: the Node 22 `npm ci` installs comes first on PATH, and
    Node keeps the compiled code of wrangler's 15 MB CLI between runs (about 0.4 s of CPU less
    for each wrangler command; Node checks each cached entry against its source)."""
    path = f"{ROOT / 'node_modules' / '.bin'}{os.pathsep}{os.environ.get('PATH', '')}"
    compiled = os.environ.get("NODE_COMPILE_CACHE", str(ROOT / ".cache" / "node-compile"))
    return {**os.environ, "PATH": path, "WRANGLER_SEND_METRICS": "false", "NODE_COMPILE_CACHE": compiled, **extra}


def config_of(config: Path) -> dict[str, Any]:
    if config.suffix == ".toml":
        return tomllib.loads(config.read_text())
    return dict(json.loads(config.read_text()))


def database_name(config: Path) -> str:
    return str(config_of(config)["d1_databases"][0]["database_name"])


def prepare_python_modules(project: Path) -> None:
    """pywrangler's own sync where it can run (it needs `uv`, and the internet for CPython and the
    Pyodide index); else the Pyodide wheels PyPI has."""
    if shutil.which("uv") and shutil.which("pywrangler"):
        if subprocess.run(["pywrangler", "sync"], cwd=project).returncode == 0:
            return
        print("pywrangler sync failed; vendoring the Pyodide wheels from PyPI instead", file=sys.stderr)
    print("\n".join(vendor_python_modules(project).lines()))


def prepare(config: Path, migrated_cache: Path | None = None) -> None:
    """What a deploy does before it uploads, for the Worker of ``config`` (run from its folder);
    ``migrated_cache`` as ``apply_migrations`` takes it."""
    project = config.parent
    prepare_python_modules(project)
    dev_vars = project / ".dev.vars"
    if not dev_vars.exists():
        shutil.copyfile(project / DEV_VARS_EXAMPLE, dev_vars)
        print(f"wrote .dev.vars from {DEV_VARS_EXAMPLE} (the Worker's secrets for wrangler dev)")
    apply_migrations(config, migrated_cache)
    print("D1 migrations applied to the local database (.wrangler/state)")


# Where wrangler keeps a project's local D1 databases.
LOCAL_D1 = Path(".wrangler") / "state" / "v3" / "d1"


def migrations_key(config: Path) -> str:
    """What a freshly migrated local D1 of ``config``'s Worker is made from: the database's settings,
    each migration's name and text, and the pinned wrangler that applies them."""
    database = config_of(config)["d1_databases"][0]
    folder = config.parent / database.get("migrations_dir", "migrations")
    digest = hashlib.sha256(json.dumps(database, sort_keys=True).encode())
    pinned = ROOT / "node_modules" / "wrangler" / "package.json"
    digest.update(pinned.read_bytes() if pinned.is_file() else b"")
    for migration in sorted(folder.glob("*.sql")):
        digest.update(f"\0{migration.name}\0".encode() + migration.read_bytes())
    return digest.hexdigest()[:32]


def apply_migrations(config: Path, migrated_cache: Path | None = None) -> None:
    """`wrangler d1 migrations apply` on the local database of ``config``'s Worker (about 20 s of
    CPU for a new one: wrangler starts its local runtime for each migration). With
    ``migrated_cache``, for a project with no local D1 yet: the migrated database is kept there
    under ``migrations_key`` and copied in whenever the key is the same, so only a change of what
    it is made from applies the migrations again."""
    project = config.parent
    apply = ["d1", "migrations", "apply", database_name(config), "--local", "-c", config.name]
    if migrated_cache is None:
        wrangler(apply, cwd=project)
        return
    if (project / LOCAL_D1).exists():
        raise ValueError(f"{project} has a local D1 already: the cache holds only freshly migrated ones")
    kept = migrated_cache / migrations_key(config)
    if not kept.is_dir():
        wrangler(apply, cwd=project)
        migrated_cache.mkdir(parents=True, exist_ok=True)
        staged = Path(tempfile.mkdtemp(dir=migrated_cache, prefix=".staged-"))
        shutil.copytree(project / LOCAL_D1, staged, dirs_exist_ok=True)
        for older in migrated_cache.iterdir():
            if older != staged:
                shutil.rmtree(older, ignore_errors=True)
        staged.rename(kept)
        return
    shutil.copytree(kept, project / LOCAL_D1)


def dev_command(config: Path, runtime: Runtime, remote_bindings: bool = False, wrapper: Path = WRAPPER,
                workerd_args: Sequence[str] = (), snapshot: bool = False) -> tuple[list[str], dict[str, str]]:
    """`wrangler dev` for the Worker of ``config`` on ``runtime`` (workerd given ``workerd_args``;
    ``snapshot`` for a run that takes or loads a deploy-style snapshot), and its environment."""
    env = node_env()
    command = [str(WRANGLER), "dev", "-c", config.name, *([] if remote_bindings else ["--local"])]
    wrapper.parent.mkdir(parents=True, exist_ok=True)
    written = runtime.workerd_wrapper(wrapper, workerd_args)
    if written is not None:
        env["MINIFLARE_WORKERD_PATH"] = str(written)
    flags = config_of(config)["compatibility_flags"]
    wanted = runtime.compatibility_flags(flags, snapshot=snapshot)
    if wanted != flags:
        command += [arg for flag in wanted for arg in ("--compatibility-flags", flag)]
    return command, env


def serve(config: Path, remote_bindings: bool, passthrough: list[str]) -> int:
    runtime = find_runtime()
    if isinstance(runtime, str):
        print(f"cannot start the Worker: {runtime}", file=sys.stderr)
        return 1
    prepare(config)
    command, env = dev_command(config, runtime, remote_bindings)
    if not any(arg.startswith("--ip") for arg in passthrough):
        command += ["--ip", "127.0.0.1"]
    print(f"starting the Worker with {runtime.describe()}")
    os.chdir(config.parent)
    os.execve(command[0], [*command, *passthrough], env)


def add_key(config: Path, label: str) -> int:
    statement, _key_id, secret = memory_key_sql(label)
    wrangler(["d1", "execute", database_name(config), "--local", "-c", config.name, "--command", statement],
             cwd=config.parent)
    print(secret)
    return 0


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["key"]:
        parser = argparse.ArgumentParser(prog="scripts/workers-dev key", description="A memory key on the local Worker's D1; prints the mk_ key once.")
        parser.add_argument("--label", default="")
        return add_key(ROOT / "wrangler.toml", parser.parse_args(args[1:]).label)
    remote = "--remote-bindings" in args
    return serve(ROOT / "wrangler.toml", remote, [a for a in args if a != "--remote-bindings"])


if __name__ == "__main__":
    sys.exit(main())
