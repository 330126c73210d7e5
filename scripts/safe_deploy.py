#!/usr/bin/env python3
"""Safe deploy: upload a version without traffic, check its /health, promote only if nothing regressed.

Every command goes through pywrangler (workers-py), which passes it on to wrangler; before
`versions upload` it vendors pyproject.toml's dependencies and the runtime SDK into python_modules/
(`pywrangler sync`), so no version goes up without the packages the Worker imports.

1. `pywrangler deployments status --json`: the version serving production now.
2. `pywrangler versions upload`: the new version, serving no traffic.
3. Reach the new version's /health without giving it traffic. Cloudflare generates no preview URL
   for a Worker that implements a Durable Object (memvault does: the Vault), so the new version
   joins the deployment at 0% (`versions deploy <current>@100% <new>@0%`) and /health is asked
   with a `Cloudflare-Workers-Version-Overrides` header naming it. A preview URL, when one exists,
   is used instead.
4. Compare secret presence, bindings and the cron-trigger count with the last known-good manifest
   (.deploy-manifest.json: names and counts only, never a value; git-ignored), and the cron-trigger
   count with the environment's `[triggers] crons` in wrangler.toml (which the bundle was built
   from). If anything regressed: withdraw the 0% version (`versions deploy <current>@100%`) and
   abort. Retired variables the version's env still sets are named as warnings, never a reason to
   stop.
5. Promote (`versions deploy <new>@100%`), then `pywrangler triggers deploy` (versions do not carry
   cron triggers), then check production /health and record the new known-good manifest.

The first deploy of a Worker (and any Durable Object migration) goes through `pywrangler deploy`:
versions cannot carry Durable Object migrations. `--dry-run` prints the plan and runs nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from build_worker import BuildError, declared_crons, read_config

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_MANIFEST = ROOT / ".deploy-manifest.json"


class DeployAborted(Exception):
    """Raised before any traffic moves; the message says what regressed."""


@dataclass
class Upload:
    version_id: str
    preview_url: str | None


@dataclass
class Health:
    status: int
    body: dict[str, Any]


def pywrangler_command(explicit: str | None) -> list[str]:
    """pywrangler: as given, else on PATH (`uv tool install workers-py`), else the project venv's
    (the dev dependency group), else through `uv run`."""
    if explicit:
        return shlex.split(explicit)
    found = shutil.which("pywrangler")
    if found:
        return [found]
    local = ROOT / ".venv" / "bin" / "pywrangler"
    if local.exists():
        return [str(local)]
    if shutil.which("uv"):
        return ["uv", "run", "pywrangler"]
    raise DeployAborted("pywrangler not found: install the dev dependency group (workers-py) or pass --pywrangler")


def env_args(env: str | None) -> list[str]:
    return ["--env", env] if env else []


def current_version(pywrangler: list[str], env: str | None) -> str:
    done = subprocess.run(
        [*pywrangler, "deployments", "status", *env_args(env), "--json"], capture_output=True, text=True, cwd=ROOT
    )
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise DeployAborted("cannot read the current deployment (first deploy? use `pywrangler deploy`):\n  "
                            + "\n  ".join(tail))
    try:
        versions = json.loads(done.stdout).get("versions") or []
    except (json.JSONDecodeError, AttributeError):
        raise DeployAborted("`deployments status --json` printed no JSON") from None
    if not versions:
        raise DeployAborted("the Worker has no deployment yet: make the first one with `pywrangler deploy`")
    return str(max(versions, key=lambda v: float(v.get("percentage", 0)))["version_id"])


def versions_deploy(pywrangler: list[str], env: str | None, specs: list[str], message: str) -> None:
    command = [*pywrangler, "versions", "deploy", *specs, *env_args(env), "--yes", "--message", message]
    if subprocess.run(command, cwd=ROOT).returncode != 0:
        raise DeployAborted(f"`versions deploy {' '.join(specs)}` failed")


def upload_version(pywrangler: list[str], env: str | None, message: str) -> Upload:
    with tempfile.TemporaryDirectory() as tmp:
        output_file = Path(tmp) / "wrangler-output.ndjson"
        command = [*pywrangler, "versions", "upload", *env_args(env), "--message", message]
        done = subprocess.run(
            command, capture_output=True, text=True, cwd=ROOT,
            env={**os.environ, "WRANGLER_OUTPUT_FILE_PATH": str(output_file)},
        )
        if done.returncode != 0:
            tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
            raise DeployAborted("version upload failed; nothing was deployed:\n  " + "\n  ".join(tail))
        record = _output_record(output_file, "version-upload")
    version_id = record.get("version_id") or _search(r"Worker Version ID:\s*(\S+)", done.stdout)
    preview_url = record.get("preview_url") or _search(r"Version Preview URL:\s*(\S+)", done.stdout)
    if not version_id:
        raise DeployAborted("version upload reported no version id; nothing was deployed")
    return Upload(version_id=version_id, preview_url=preview_url)


def _output_record(path: Path, kind: str) -> dict[str, Any]:
    if not path.exists():
        return {}
    for line in path.read_text().splitlines():
        try:
            entry = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(entry, dict) and entry.get("type") == kind:
            return entry
    return {}


def _search(pattern: str, text: str) -> str | None:
    match = re.search(pattern, text)
    return match.group(1) if match else None


def fetch_health(base_url: str, timeout: float, headers: dict[str, str] | None = None, interval: float = 1.0) -> Health:
    """Poll <base_url>/health until it answers with JSON; a 503 with a body is an answer too."""
    url = base_url.rstrip("/") + "/health"
    request = urllib.request.Request(url, headers={"Cache-Control": "no-store", **(headers or {})})
    deadline = time.monotonic() + timeout
    last_error = "no answer"
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise DeployAborted(f"{url} did not answer within {timeout:g}s ({last_error})")
        try:
            with urllib.request.urlopen(request, timeout=min(remaining, 10.0)) as response:
                return Health(response.status, json.loads(response.read() or b"{}"))
        except urllib.error.HTTPError as exc:
            try:
                return Health(exc.code, json.loads(exc.read() or b"{}"))
            except json.JSONDecodeError:
                last_error = f"HTTP {exc.code}"
        except (urllib.error.URLError, TimeoutError, OSError, json.JSONDecodeError) as exc:
            last_error = str(getattr(exc, "reason", exc)) or type(exc).__name__
        time.sleep(min(interval, max(deadline - time.monotonic(), 0)))


def summarize(health: Health) -> dict[str, Any]:
    """The known-good facts kept between deploys: names and counts, never values."""
    body = health.body
    return {
        "secrets": sorted(name for name, present in (body.get("secrets") or {}).items() if present),
        "bindings": sorted(name for name, present in (body.get("bindings") or {}).items() if present),
        "cron_triggers": int(body.get("cron_triggers") or 0),
    }


def regressions(previous: dict[str, Any] | None, health: Health, declared: int | None = None) -> list[str]:
    """What is worse than the last good deploy, or than wrangler.toml's ``declared`` cron count."""
    problems: list[str] = []
    body = health.body
    secrets = body.get("secrets") or {}
    bindings = body.get("bindings") or {}
    crons = int(body.get("cron_triggers") or 0)
    if health.status != 200:
        missing = ", ".join(body.get("missing") or []) or "no details"
        problems.append(f"the new version is unhealthy (HTTP {health.status}; missing: {missing})")
    for name in (previous or {}).get("secrets", []):
        if not secrets.get(name):
            problems.append(f"secret {name} was set in the last good deploy and is missing now")
    for name in (previous or {}).get("bindings", []):
        if not bindings.get(name):
            problems.append(f"binding {name} was present in the last good deploy and is missing now")
    before = int((previous or {}).get("cron_triggers", 0))
    if crons < before:
        problems.append(f"fewer cron triggers than the last good deploy ({crons} < {before})")
    if declared is not None and crons != declared:
        problems.append(f"the version counts {crons} cron triggers where wrangler.toml declares {declared} "
                        "(its bundle was not built by scripts/build_worker.py for this environment)")
    return problems


def warn_retired(health: Health) -> None:
    for name in health.body.get("retired_settings") or []:
        print(f"warning: the Worker's env still sets {name}, which memvault no longer reads; "
              "remove it (docs/settings.md says where its value went)", file=sys.stderr)


def worker_name(env: str | None) -> str:
    """The Worker's name for ``env``: wrangler.toml's [env.<env>] name, else the top-level one."""
    config = read_config(ROOT)
    section = config.get("env", {}).get(env, {}) if env else {}
    return str(section.get("name") or (f"{config['name']}-{env}" if env else config["name"]))


def load_manifest(path: Path, env: str | None) -> dict[str, Any] | None:
    if not path.exists():
        return None
    data = json.loads(path.read_text())
    entry = data.get(env or "default")
    return entry if isinstance(entry, dict) else None


def save_manifest(path: Path, env: str | None, entry: dict[str, Any]) -> None:
    data = json.loads(path.read_text()) if path.exists() else {}
    data[env or "default"] = entry
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")


def override_header(worker: str, version_id: str) -> dict[str, str]:
    return {"Cloudflare-Workers-Version-Overrides": f'{worker}="{version_id}"'}


def print_plan(args: argparse.Namespace, pywrangler: list[str], previous: dict[str, Any] | None) -> None:
    env = env_args(args.env)
    deploy = [*pywrangler, "versions", "deploy"]
    print("safe deploy plan (dry run: nothing will run)")
    print(f"  1. {shlex.join([*pywrangler, 'deployments', 'status', *env, '--json'])}  -> <current>")
    print(f"  2. {shlex.join([*pywrangler, 'versions', 'upload', *env, '--message', args.message])}  -> <new>")
    print(f"  3. {shlex.join([*deploy, '<current>@100%', '<new>@0%', *env, '--yes'])}  (no traffic)")
    print(f"     GET {args.url}/health with Cloudflare-Workers-Version-Overrides: {args.worker}=\"<new>\", "
          f"waiting up to {args.health_timeout:g}s")
    if previous is None:
        print(f"  4. no known-good manifest for '{args.env or 'default'}' in {args.manifest.name}: require HTTP 200 "
              f"and cron triggers == {args.crons} (wrangler.toml)")
    else:
        print(f"  4. compare with the last good deploy: secrets {previous.get('secrets', [])}, "
              f"bindings {previous.get('bindings', [])}, cron triggers >= {previous.get('cron_triggers', 0)} "
              f"and == {args.crons} (wrangler.toml); "
              f"on a regression: {shlex.join([*deploy, '<current>@100%', *env, '--yes'])} and stop")
    print(f"  5. {shlex.join([*deploy, '<new>@100%', *env, '--yes'])}")
    print(f"  6. {shlex.join([*pywrangler, 'triggers', 'deploy', *env])}")
    print(f"  7. GET {args.url}/health, then record {args.manifest.name}")


def check_candidate(args: argparse.Namespace, pywrangler: list[str], current: str, upload: Upload) -> Health:
    """/health of the new version while it serves no traffic."""
    if upload.preview_url:
        return fetch_health(upload.preview_url, args.health_timeout)
    versions_deploy(pywrangler, args.env, [f"{current}@100%", f"{upload.version_id}@0%"], args.message + " (staged, 0%)")
    return fetch_health(args.url, args.health_timeout, override_header(args.worker, upload.version_id))


def deploy(args: argparse.Namespace) -> int:
    pywrangler = pywrangler_command(args.pywrangler)
    previous = load_manifest(args.manifest, args.env)
    if args.dry_run:
        print_plan(args, pywrangler, previous)
        return 0
    current = current_version(pywrangler, args.env)
    upload = upload_version(pywrangler, args.env, args.message)
    print(f"uploaded version {upload.version_id} (no traffic); production stays on {current}")
    try:
        candidate = check_candidate(args, pywrangler, current, upload)
        problems = regressions(previous, candidate, args.crons)
        warn_retired(candidate)
    except DeployAborted:
        withdraw(pywrangler, args, current, upload)
        raise
    if problems:
        withdraw(pywrangler, args, current, upload)
        raise DeployAborted("not promoting version " + upload.version_id + ":\n  - " + "\n  - ".join(problems))
    print("the new version's /health matches the last good deploy; promoting")
    versions_deploy(pywrangler, args.env, [f"{upload.version_id}@100%"], args.message)
    # Versions carry code, bindings and vars; cron triggers are deployed separately.
    if subprocess.run([*pywrangler, "triggers", "deploy", *env_args(args.env)], cwd=ROOT).returncode != 0:
        print("promoted, but `pywrangler triggers deploy` failed: cron triggers may be stale", file=sys.stderr)
        return 1
    live = fetch_health(args.url, args.health_timeout)
    live_problems = regressions(previous, live, args.crons)
    if live_problems:
        print(f"PROMOTED, BUT production /health regressed - roll back with `pywrangler rollback {current}`:\n  - "
              + "\n  - ".join(live_problems), file=sys.stderr)
        return 1
    save_manifest(args.manifest, args.env, {**summarize(live), "version_id": upload.version_id})
    print(f"version {upload.version_id} is live and healthy; recorded in {args.manifest.name}")
    return 0


def withdraw(pywrangler: list[str], args: argparse.Namespace, current: str, upload: Upload) -> None:
    """Take a staged 0% version out of the deployment again; production never left ``current``."""
    if upload.preview_url:
        return
    try:
        versions_deploy(pywrangler, args.env, [f"{current}@100%"], args.message + " (withdrawn)")
    except DeployAborted:
        print(f"could not withdraw version {upload.version_id}; it still serves 0% of traffic", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--env", help="wrangler environment (staging, production); default: top level")
    parser.add_argument("--manifest", type=Path, default=DEFAULT_MANIFEST, help="known-good manifest file")
    parser.add_argument("--pywrangler", help="pywrangler command; default: pywrangler on PATH, then .venv/bin, then `uv run pywrangler`")
    parser.add_argument("--health-timeout", type=float, default=90.0, help="seconds to wait for /health")
    parser.add_argument("--url", required=True, help="production base URL, e.g. https://memvault.<subdomain>.workers.dev")
    parser.add_argument("--worker", help="Worker name for the version-override header; default: from wrangler.toml")
    parser.add_argument("--message", default="safe deploy", help="message attached to the version")
    parser.add_argument("--dry-run", action="store_true", help="print the plan and run nothing")
    args = parser.parse_args(argv)
    args.url = args.url.rstrip("/")
    args.worker = args.worker or worker_name(args.env)
    try:
        args.crons = len(declared_crons(read_config(ROOT), args.env))
        return deploy(args)
    except (DeployAborted, BuildError) as exc:
        print(f"ABORTED: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
