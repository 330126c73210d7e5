"""scripts/safe_deploy.py end to end: a fake pywrangler first on PATH, /health served on 127.0.0.1.
Every command goes through pywrangler (never bare wrangler), so the upload is always vendored.

memvault implements a Durable Object, so Cloudflare gives its versions no preview URL: the script
stages the new version at 0% and asks /health with a version-override header. The preview-URL path
(a Worker without Durable Objects) is covered once as well."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from deploy_fakes import FakeWrangler, HealthServer

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "safe_deploy.py"
NEW = "3f2a9c1e-0000-4000-8000-00000000abcd"
CURRENT = "0b1d2e3f-0000-4000-8000-000000000001"
SECRETS = {"MEMVAULT_BRAIN_CREDENTIALS": True}
BINDINGS = {name: True for name in ("DB", "VAULT", "VECTORIZE", "BODIES", "AI", "CACHE")}


def health(secrets: dict[str, bool] | None = None, crons: int = 1, status: str = "ok") -> dict[str, Any]:
    return {
        "status": status,
        "version": "0.1.0",
        "runtime": "workers",
        "bindings": BINDINGS,
        "secrets": SECRETS if secrets is None else secrets,
        "cron_triggers": crons,
        "missing": [],
    }


def known_good(tmp_path: Path) -> Path:
    path = tmp_path / "manifest.json"
    path.write_text(json.dumps({"production": {
        "secrets": ["MEMVAULT_BRAIN_CREDENTIALS"], "bindings": sorted(BINDINGS), "cron_triggers": 1,
        "version_id": CURRENT,
    }}))
    return path


def run(tmp_path: Path, server: HealthServer, *extra: str, preview: bool = False,
        timeout: float = 5) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "FAKE_WRANGLER_PREVIEW": server.url("preview") if preview else ""}
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--env", "production", "--manifest", str(tmp_path / "manifest.json"),
         "--url", server.url("live"), "--health-timeout", str(timeout), *extra],
        capture_output=True, text=True, env=env, timeout=60,
    )


def assert_aborted_without_promotion(done: subprocess.CompletedProcess[str], fake: FakeWrangler) -> None:
    assert done.returncode == 2, done.stdout + done.stderr
    assert "ABORTED" in done.stderr
    assert not fake.promoted(NEW)
    assert ["triggers", "deploy", "--env", "production"] not in fake.calls()


def test_healthy_version_is_staged_checked_promoted_and_recorded(
    tmp_path: Path, fake_wrangler: FakeWrangler, health_server: HealthServer
) -> None:
    manifest = known_good(tmp_path)
    health_server.sites = {"candidate": (200, health()), "live": (200, health())}
    done = run(tmp_path, health_server)
    assert done.returncode == 0, done.stderr
    calls = fake_wrangler.calls()
    assert calls[0] == ["deployments", "status", "--env", "production", "--json"]
    assert calls[1][:4] == ["versions", "upload", "--env", "production"]
    assert fake_wrangler.deploys()[0][:2] == [f"{CURRENT}@100%", f"{NEW}@0%"]
    assert fake_wrangler.deploys()[1][0] == f"{NEW}@100%" and "--yes" in fake_wrangler.deploys()[1]
    assert calls[-1] == ["triggers", "deploy", "--env", "production"]
    # pywrangler vendored python_modules/ right before the upload, and nothing went around it.
    assert fake_wrangler.synced_before(calls[1])
    assert fake_wrangler.bare_wrangler_calls() == []
    assert health_server.overrides_seen and health_server.overrides_seen[0] == f'memvault-production="{NEW}"'
    recorded = json.loads(manifest.read_text())["production"]
    assert recorded == {"secrets": ["MEMVAULT_BRAIN_CREDENTIALS"], "bindings": sorted(BINDINGS),
                        "cron_triggers": 1, "version_id": NEW}


def test_missing_secret_aborts_and_withdraws_the_staged_version(
    tmp_path: Path, fake_wrangler: FakeWrangler, health_server: HealthServer
) -> None:
    known_good(tmp_path)
    unhealthy = health(secrets={"MEMVAULT_BRAIN_CREDENTIALS": False}, status="degraded")
    health_server.sites = {"candidate": (503, unhealthy), "live": (200, health())}
    done = run(tmp_path, health_server)
    assert_aborted_without_promotion(done, fake_wrangler)
    assert "secret MEMVAULT_BRAIN_CREDENTIALS was set in the last good deploy and is missing now" in done.stderr
    assert fake_wrangler.deploys()[-1][0] == f"{CURRENT}@100%"  # the 0% version is taken out again


def test_fewer_crons_aborts(tmp_path: Path, fake_wrangler: FakeWrangler, health_server: HealthServer) -> None:
    known_good(tmp_path)
    health_server.sites = {"candidate": (200, health(crons=0)), "live": (200, health())}
    done = run(tmp_path, health_server)
    assert_aborted_without_promotion(done, fake_wrangler)
    assert "fewer cron triggers than the last good deploy (0 < 1)" in done.stderr


def test_a_bundle_not_built_from_wrangler_toml_aborts_even_without_a_manifest(
    tmp_path: Path, fake_wrangler: FakeWrangler, health_server: HealthServer
) -> None:
    """wrangler.toml declares one cron for production; a version counting two (or none, with no
    known-good manifest to compare) was not built from it."""
    for crons in (2, 0):
        health_server.sites = {"candidate": (200, health(crons=crons)), "live": (200, health())}
        done = run(tmp_path, health_server)
        assert_aborted_without_promotion(done, fake_wrangler)
        assert f"the version counts {crons} cron triggers where wrangler.toml declares 1" in done.stderr


def test_retired_variables_are_named_and_the_version_is_still_promoted(
    tmp_path: Path, fake_wrangler: FakeWrangler, health_server: HealthServer
) -> None:
    known_good(tmp_path)
    stale = {**health(), "retired_settings": ["MEMVAULT_CRON_SCHEDULES", "MEMVAULT_CHUNK_TOKENS"]}
    health_server.sites = {"candidate": (200, stale), "live": (200, stale)}
    done = run(tmp_path, health_server)
    assert done.returncode == 0, done.stderr
    assert fake_wrangler.promoted(NEW)
    for name in ("MEMVAULT_CRON_SCHEDULES", "MEMVAULT_CHUNK_TOKENS"):
        assert f"warning: the Worker's env still sets {name}, which memvault no longer reads" in done.stderr


def test_upload_failure_aborts_before_anything_is_deployed(
    tmp_path: Path, fake_wrangler: FakeWrangler, health_server: HealthServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_WRANGLER_FAIL", "upload")
    health_server.sites = {"candidate": (200, health()), "live": (200, health())}
    done = run(tmp_path, health_server)
    assert_aborted_without_promotion(done, fake_wrangler)
    assert "version upload failed" in done.stderr and "Authentication error" in done.stderr
    assert fake_wrangler.deploys() == []


def test_first_deploy_is_left_to_wrangler_deploy(
    tmp_path: Path, fake_wrangler: FakeWrangler, health_server: HealthServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAKE_WRANGLER_FAIL", "status")
    done = run(tmp_path, health_server)
    assert_aborted_without_promotion(done, fake_wrangler)
    assert "use `pywrangler deploy`" in done.stderr and "has no deployments" in done.stderr
    assert [call[:2] for call in fake_wrangler.calls()] == [["deployments", "status"]]


def test_health_timeout_aborts(tmp_path: Path, fake_wrangler: FakeWrangler, health_server: HealthServer) -> None:
    known_good(tmp_path)
    health_server.sites = {"candidate": (200, health()), "live": (200, health())}
    health_server.hang_seconds = {"candidate": 5.0}
    done = run(tmp_path, health_server, timeout=1.0)
    assert_aborted_without_promotion(done, fake_wrangler)
    assert "did not answer within 1s" in done.stderr
    assert fake_wrangler.deploys()[-1][0] == f"{CURRENT}@100%"


def test_preview_url_is_used_when_the_version_has_one(
    tmp_path: Path, fake_wrangler: FakeWrangler, health_server: HealthServer
) -> None:
    health_server.sites = {"preview": (200, health()), "live": (200, health())}
    done = run(tmp_path, health_server, preview=True)
    assert done.returncode == 0, done.stderr
    assert fake_wrangler.deploys()[0][0] == f"{NEW}@100%"  # no 0% staging step needed
    assert health_server.overrides_seen == []
    assert (tmp_path / "manifest.json").exists()  # first deploy without a manifest records one


def test_dry_run_prints_the_plan_and_calls_nothing(
    tmp_path: Path, fake_wrangler: FakeWrangler, health_server: HealthServer
) -> None:
    known_good(tmp_path)
    done = run(tmp_path, health_server, "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "pywrangler versions upload --env production" in done.stdout
    assert "'<current>@100%' '<new>@0%'" in done.stdout and "Cloudflare-Workers-Version-Overrides" in done.stdout
    assert "cron triggers >= 1 and == 1 (wrangler.toml)" in done.stdout
    assert fake_wrangler.calls() == []
