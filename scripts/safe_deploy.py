#!/usr/bin/env python3
"""Safe deploy: upload a version without traffic, prove it is the one answering and that nothing
regressed, promote it, and roll back by itself if production is unhealthy afterwards.

Every command goes through pywrangler (workers-py), which hands it to `npx wrangler`:

0.  `pywrangler sync`: python_modules/ from pyproject.toml (pywrangler skips the work when its sync
    markers are newer than pyproject.toml and pylock.toml).
0a. `pywrangler secret list --format json`: the Worker's secrets, names only (the secrets
    manifest). Every name in the environment's `MEMVAULT_REQUIRED_SECRETS` (wrangler.toml, the same
    list /health reports) must be set, and every secret of the last good run must still be.
1.  The environment's `[triggers] crons` in wrangler.toml, as a set, must equal the last good run's
    (wrangler lists no deployed crons); a deliberate change passes only with --accept-cron-change.
2.  `pywrangler deployments status --json`: the version serving now.
3.  `pywrangler versions upload`: the new version, serving no traffic.
4.  It joins the deployment at 0% (`versions deploy <current>@100% <new>@0%`: Cloudflare makes no
    preview URL for a Worker with a Durable Object) and /health is asked with a version-override
    header until it answers as the new version id (until then an older version is answering). It
    must answer 200 with every required secret and wrangler.toml's crons; else the 0% version is
    withdrawn and nothing else happens.
5.  Promote (`versions deploy <new>@100%`), `pywrangler triggers deploy` (versions carry no
    triggers), then production /health must answer as the new version, healthy. If it does not,
    `pywrangler rollback <previous>` runs at once and the script says so and exits 1.
6.  The run is recorded in .deploy-manifest.json (git-ignored): version id, secret names, crons.

`--rehearse` is the no-op deploy: steps 0 to 2 and production /health, nothing uploaded or changed,
and any difference from the last good run (a secret gone or added, crons changed) is reported.
The first deploy of a Worker (and any Durable Object migration) goes through `pywrangler deploy`.
Exit codes: 0 done, 1 rolled back (or could not be), 2 refused before any traffic moved.
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
OVERRIDE_HEADER = "Cloudflare-Workers-Version-Overrides"
REFUSED, ROLLED_BACK = 2, 1


class DeployAborted(Exception):
    """Refused before any traffic moved; the message says why."""


@dataclass
class Health:
    status: int
    body: dict[str, Any]


@dataclass
class Target:
    """What a run deploys to, from the command line and wrangler.toml."""

    env: str | None
    url: str
    worker: str
    crons: frozenset[str]
    required_secrets: tuple[str, ...]
    pywrangler: list[str]
    health_timeout: float
    message: str


def pywrangler_command(explicit: str | None) -> list[str]:
    """pywrangler: as given, else on PATH, else the project venv's (the dev dependency group),
    else through `uv run`."""
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


def run(target: Target, args: list[str], capture: bool = True,
        extra_env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    # pywrangler logs INFO lines on stdout ahead of wrangler's own output; warnings still show.
    env = {**os.environ, "PYWRANGLER_LOG": "warning", **(extra_env or {})}
    return subprocess.run([*target.pywrangler, *args], capture_output=capture, text=True, cwd=ROOT, env=env)


def json_in(text: str) -> Any:
    """The first JSON object or array in ``text`` that starts a line: tools print log lines around
    the JSON they were asked for, and this survives them."""
    decoder = json.JSONDecoder()
    for match in re.finditer(r"^[ \t]*[\[{]", text, re.MULTILINE):
        try:
            return decoder.raw_decode(text, match.end() - 1)[0]
        except json.JSONDecodeError:
            continue
    raise ValueError("no JSON in the output")


def tail(done: subprocess.CompletedProcess[str], lines: int = 4) -> str:
    return "\n  ".join(((done.stderr or "") + (done.stdout or "")).strip().splitlines()[-lines:])


def sync(target: Target) -> None:
    """Its output is the user's to see: what it installed, or that nothing changed."""
    if run(target, ["sync"], capture=False).returncode != 0:
        raise DeployAborted("`pywrangler sync` failed (above); python_modules/ would not match pyproject.toml")


def secret_names(target: Target) -> list[str]:
    done = run(target, ["secret", "list", *env_args(target.env), "--format", "json"])
    if done.returncode != 0:
        raise DeployAborted("cannot list the Worker's secrets:\n  " + tail(done))
    try:
        listed = json_in(done.stdout)
        return sorted(str(item["name"]) for item in listed)
    except (ValueError, TypeError, KeyError):
        raise DeployAborted("`secret list --format json` printed no list of secrets") from None


def current_version(target: Target) -> str:
    done = run(target, ["deployments", "status", *env_args(target.env), "--json"])
    if done.returncode != 0:
        raise DeployAborted("cannot read the current deployment (first deploy? use `pywrangler deploy`):\n  "
                            + tail(done))
    try:
        versions = json_in(done.stdout).get("versions") or []
    except (ValueError, AttributeError):
        raise DeployAborted("`deployments status --json` printed no JSON") from None
    if not versions:
        raise DeployAborted("the Worker has no deployment yet: make the first one with `pywrangler deploy`")
    return str(max(versions, key=lambda v: float(v.get("percentage", 0)))["version_id"])


def upload_version(target: Target) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        output_file = Path(tmp) / "wrangler-output.ndjson"
        done = run(target, ["versions", "upload", *env_args(target.env), "--message", target.message],
                   extra_env={"WRANGLER_OUTPUT_FILE_PATH": str(output_file)})
        if done.returncode != 0:
            raise DeployAborted("version upload failed; nothing was deployed:\n  " + tail(done, 6))
        records = [json.loads(line) for line in output_file.read_text().splitlines()] if output_file.exists() else []
    version = next((r.get("version_id") for r in records if r.get("type") == "version-upload"), None)
    if not version:
        printed = re.search(r"Worker Version ID:\s*(\S+)", done.stdout)
        version = printed.group(1) if printed else None
    if not isinstance(version, str) or not version:
        raise DeployAborted("version upload reported no version id; nothing was deployed")
    return version


def versions_deploy(target: Target, specs: list[str], note: str) -> bool:
    done = run(target, ["versions", "deploy", *specs, *env_args(target.env), "--yes", "--message",
                        f"{target.message} ({note})"])
    return done.returncode == 0


def fetch_health(url: str, timeout: float, headers: dict[str, str] | None = None) -> Health:
    request = urllib.request.Request(url.rstrip("/") + "/health", headers={"Cache-Control": "no-store", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return Health(response.status, json.loads(response.read() or b"{}"))
    except urllib.error.HTTPError as exc:
        try:
            return Health(exc.code, json.loads(exc.read() or b"{}"))
        except json.JSONDecodeError:
            return Health(exc.code, {})


def health_as(target: Target, version: str, override: bool) -> Health:
    """/health as answered by ``version``: asked again until that version answers (or the time is up);
    Cloudflare routes by percentages until an override or a new deployment has spread."""
    headers = {OVERRIDE_HEADER: f'{target.worker}="{version}"'} if override else {}
    deadline = time.monotonic() + target.health_timeout
    seen = "no answer"
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise DeployAborted(f"{target.url}/health never answered as version {version} within "
                                f"{target.health_timeout:g}s ({seen})")
        try:
            health = fetch_health(target.url, min(remaining, 10.0), headers)
            answering = health.body.get("version_id")
            if answering == version:
                return health
            seen = f"version {answering} answered" if answering else f"HTTP {health.status} without a version id"
        except (urllib.error.URLError, TimeoutError, OSError, json.JSONDecodeError) as exc:
            seen = str(getattr(exc, "reason", exc)) or type(exc).__name__
        time.sleep(min(1.0, max(deadline - time.monotonic(), 0)))


def problems_of(target: Target, health: Health) -> list[str]:
    """What is wrong with a version's /health: not 200, a required secret missing, other crons."""
    body, found = health.body, []
    if health.status != 200:
        found.append(f"/health answered HTTP {health.status} (missing: {', '.join(body.get('missing') or []) or '-'})")
    secrets = body.get("secrets") or {}
    found += [f"required secret {name} is not set for the version" for name in target.required_secrets
              if not secrets.get(name)]
    crons = frozenset(body.get("crons") or [])
    if crons != target.crons:
        found.append(f"the version's bundle holds crons {sorted(crons)}, wrangler.toml declares {sorted(target.crons)}")
    return found


def preflight(target: Target, previous: dict[str, Any] | None, accept_cron_change: bool) -> list[str]:
    """Steps 0a and 1: the secrets manifest and the crons, against the committed list and the last run."""
    names = secret_names(target)
    problems = [f"required secret {name} is not set (`pywrangler secret put {name}{' --env ' + target.env if target.env else ''}`)"
                for name in target.required_secrets if name not in names]
    if previous is not None:
        problems += [f"secret {name} was set at the last good deploy and is gone now"
                     for name in previous.get("secrets", []) if name not in names]
        before = frozenset(previous.get("crons", []))
        if before != target.crons and not accept_cron_change:
            problems.append(f"crons change from {sorted(before)} to {sorted(target.crons)}: "
                            "pass --accept-cron-change if that is meant")
    if problems:
        raise DeployAborted("refused before upload:\n  - " + "\n  - ".join(problems))
    print(f"secrets manifest ({len(names)} names): {', '.join(names) or '-'}; crons {sorted(target.crons)}")
    return names


def deploy(target: Target, previous: dict[str, Any] | None, accept_cron_change: bool) -> tuple[int, dict[str, Any]]:
    sync(target)
    names = preflight(target, previous, accept_cron_change)
    current = current_version(target)
    new = upload_version(target)
    print(f"uploaded version {new} (no traffic); production stays on {current}")
    if not versions_deploy(target, [f"{current}@100%", f"{new}@0%"], "staged at 0%"):
        raise DeployAborted(f"`versions deploy {current}@100% {new}@0%` failed; production stays on {current}")
    try:
        problems = problems_of(target, health_as(target, new, override=True))
    except DeployAborted:
        withdraw(target, current, new)
        raise
    if problems:
        withdraw(target, current, new)
        raise DeployAborted(f"not promoting version {new}:\n  - " + "\n  - ".join(problems))
    print(f"version {new} answers /health as itself with every required secret and the crons; promoting")
    if not versions_deploy(target, [f"{new}@100%"], "promoted"):
        withdraw(target, current, new)
        raise DeployAborted(f"promoting {new} failed; production stays on {current}")
    triggers = run(target, ["triggers", "deploy", *env_args(target.env)])
    try:
        live = [] if triggers.returncode == 0 else ["`pywrangler triggers deploy` failed:\n    " + tail(triggers)]
        live += problems_of(target, health_as(target, new, override=False))
    except DeployAborted as exc:
        live = [str(exc)]
    if live:
        return roll_back(target, current, new, live), {}
    print(f"version {new} is live and healthy")
    return 0, {"version_id": new, "secrets": names, "crons": sorted(target.crons)}


def withdraw(target: Target, current: str, new: str) -> None:
    """Take a staged 0% version out again; production never left ``current``."""
    if not versions_deploy(target, [f"{current}@100%"], "withdrawn"):
        print(f"could not withdraw version {new}; it still serves 0% of traffic", file=sys.stderr)


def roll_back(target: Target, previous: str, new: str, problems: list[str]) -> int:
    print(f"production is unhealthy after promoting {new}:\n  - " + "\n  - ".join(problems), file=sys.stderr)
    done = run(target, ["rollback", previous, *env_args(target.env), "--yes", "--message",
                        f"{target.message} (automatic rollback from {new})"])
    if done.returncode != 0:
        print(f"ROLLBACK FAILED: run `pywrangler rollback {previous}` now:\n  {tail(done)}", file=sys.stderr)
        return ROLLED_BACK
    print(f"ROLLED BACK to version {previous}; version {new} serves no traffic", file=sys.stderr)
    return ROLLED_BACK


def rehearse(target: Target, previous: dict[str, Any] | None) -> int:
    sync(target)
    if previous is None:
        raise DeployAborted("no good run recorded for this environment yet: nothing to rehearse against")
    names = preflight(target, previous, accept_cron_change=False)
    added = sorted(set(names) - set(previous.get("secrets", [])))
    current = current_version(target)
    problems = problems_of(target, health_as(target, current, override=False))
    if added:
        problems.append(f"secrets set since the last good deploy: {', '.join(added)}")
    if problems:
        raise DeployAborted("rehearsal found changes:\n  - " + "\n  - ".join(problems))
    print(f"rehearsal: version {current} is live and healthy; secrets and crons are as at the last good deploy; "
          "nothing was deployed")
    return 0


def target_of(args: argparse.Namespace) -> Target:
    config = read_config(ROOT)
    section = config.get("env", {}).get(args.env, {}) if args.env else config
    worker = args.worker or str(section.get("name") or (f"{config['name']}-{args.env}" if args.env else config["name"]))
    listed = str((section.get("vars") or {}).get("MEMVAULT_REQUIRED_SECRETS", ""))
    return Target(
        env=args.env, url=args.url.rstrip("/"), worker=worker, crons=frozenset(declared_crons(config, args.env)),
        required_secrets=tuple(name.strip() for name in listed.split(",") if name.strip()),
        pywrangler=pywrangler_command(args.pywrangler), health_timeout=args.health_timeout, message=args.message,
    )


def load_manifest(path: Path, env: str | None) -> dict[str, Any] | None:
    entry = json.loads(path.read_text()).get(env or "default") if path.exists() else None
    return entry if isinstance(entry, dict) else None


def save_manifest(path: Path, env: str | None, entry: dict[str, Any]) -> None:
    data = json.loads(path.read_text()) if path.exists() else {}
    data[env or "default"] = entry
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--env", help="wrangler environment (staging, production); default: top level")
    parser.add_argument("--url", required=True, help="production base URL, e.g. https://memvault.<subdomain>.workers.dev")
    parser.add_argument("--manifest", type=Path, default=DEFAULT_MANIFEST, help="record of the last good run")
    parser.add_argument("--pywrangler", help="pywrangler command; default: on PATH, then .venv/bin, then `uv run`")
    parser.add_argument("--worker", help="Worker name for the version-override header; default: from wrangler.toml")
    parser.add_argument("--health-timeout", type=float, default=90.0, help="seconds to wait for each /health")
    parser.add_argument("--message", default="safe deploy", help="message attached to the version")
    parser.add_argument("--accept-cron-change", action="store_true", help="deploy crons other than the last run's")
    parser.add_argument("--rehearse", action="store_true", help="check everything, deploy nothing")
    args = parser.parse_args(argv)
    try:
        target = target_of(args)
        previous = load_manifest(args.manifest, args.env)
        if args.rehearse:
            return rehearse(target, previous)
        code, record = deploy(target, previous, args.accept_cron_change)
        if record:
            save_manifest(args.manifest, args.env, record)
            print(f"recorded in {args.manifest.name}")
        return code
    except (DeployAborted, BuildError) as exc:
        print(f"REFUSED: {exc}", file=sys.stderr)
        return REFUSED


if __name__ == "__main__":
    sys.exit(main())
