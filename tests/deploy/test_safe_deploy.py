"""scripts/safe_deploy.py end to end: a fake wrangler on PATH, /health served on 127.0.0.1."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from conftest import FakeWrangler, HealthServer

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "safe_deploy.py"
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


def known_good(path: Path) -> Path:
    path.write_text(json.dumps({"production": {
        "secrets": ["MEMVAULT_BRAIN_CREDENTIALS"], "bindings": sorted(BINDINGS), "cron_triggers": 1,
        "version_id": "previous",
    }}))
    return path


def run(tmp_path: Path, server: HealthServer, *extra: str, timeout: float = 5) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "FAKE_WRANGLER_PREVIEW": server.url("preview")}
    return subprocess.run(
        [sys.executable, str(SCRIPT), "--env", "production", "--manifest", str(tmp_path / "manifest.json"),
         "--production-url", server.url("live"), "--health-timeout", str(timeout), *extra],
        capture_output=True, text=True, env=env, timeout=60,
    )


def test_healthy_version_is_promoted_and_recorded(tmp_path: Path, fake_wrangler: FakeWrangler,
                                                   health_server: HealthServer) -> None:
    manifest = known_good(tmp_path / "manifest.json")
    health_server.sites = {"preview": (200, health()), "live": (200, health())}
    done = run(tmp_path, health_server)
    assert done.returncode == 0, done.stderr
    calls = fake_wrangler.calls()
    assert calls[0][:4] == ["versions", "upload", "--env", "production"]
    assert calls[1][:5] == ["versions", "deploy", "3f2a9c1e-0000-4000-8000-00000000abcd@100%", "--env", "production"]
    assert "--yes" in calls[1]
    assert calls[2] == ["triggers", "deploy", "--env", "production"]
    recorded = json.loads(manifest.read_text())["production"]
    assert recorded["version_id"] == "3f2a9c1e-0000-4000-8000-00000000abcd"
    assert recorded["secrets"] == ["MEMVAULT_BRAIN_CREDENTIALS"] and recorded["cron_triggers"] == 1
    assert "true" not in manifest.read_text().lower()  # names only, no presence values or secrets


def test_missing_secret_aborts_before_promotion(tmp_path: Path, fake_wrangler: FakeWrangler,
                                                 health_server: HealthServer) -> None:
    known_good(tmp_path / "manifest.json")
    unhealthy = health(secrets={"MEMVAULT_BRAIN_CREDENTIALS": False}, status="degraded")
    health_server.sites = {"preview": (503, unhealthy), "live": (200, health())}
    done = run(tmp_path, health_server)
    assert done.returncode == 2
    assert "secret MEMVAULT_BRAIN_CREDENTIALS" in done.stderr and "ABORTED" in done.stderr
    assert not fake_wrangler.promoted()


def test_fewer_crons_aborts(tmp_path: Path, fake_wrangler: FakeWrangler, health_server: HealthServer) -> None:
    known_good(tmp_path / "manifest.json")
    health_server.sites = {"preview": (200, health(crons=0)), "live": (200, health())}
    done = run(tmp_path, health_server)
    assert done.returncode == 2
    assert "fewer cron triggers" in done.stderr
    assert not fake_wrangler.promoted()


def test_upload_failure_aborts(tmp_path: Path, fake_wrangler: FakeWrangler, health_server: HealthServer,
                               monkeypatch: Any) -> None:
    monkeypatch.setenv("FAKE_WRANGLER_FAIL", "upload")
    health_server.sites = {"preview": (200, health()), "live": (200, health())}
    done = run(tmp_path, health_server)
    assert done.returncode == 2
    assert "version upload failed" in done.stderr and "Authentication error" in done.stderr
    assert [call[:2] for call in fake_wrangler.calls()] == [["versions", "upload"]]


def test_health_timeout_aborts(tmp_path: Path, fake_wrangler: FakeWrangler, health_server: HealthServer) -> None:
    known_good(tmp_path / "manifest.json")
    health_server.sites = {"preview": (200, health()), "live": (200, health())}
    health_server.hang_seconds = {"preview": 5.0}
    done = run(tmp_path, health_server, timeout=1.0)
    assert done.returncode == 2
    assert "did not answer within 1s" in done.stderr
    assert not fake_wrangler.promoted()


def test_first_deploy_without_manifest_needs_a_healthy_preview(tmp_path: Path, fake_wrangler: FakeWrangler,
                                                               health_server: HealthServer) -> None:
    health_server.sites = {"preview": (200, health()), "live": (200, health())}
    done = run(tmp_path, health_server)
    assert done.returncode == 0, done.stderr
    assert fake_wrangler.promoted()
    assert (tmp_path / "manifest.json").exists()


def test_dry_run_prints_the_plan_and_calls_nothing(tmp_path: Path, fake_wrangler: FakeWrangler,
                                                   health_server: HealthServer) -> None:
    known_good(tmp_path / "manifest.json")
    done = run(tmp_path, health_server, "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "versions upload --env production" in done.stdout
    assert "cron triggers >= 1" in done.stdout and "versions deploy" in done.stdout
    assert fake_wrangler.calls() == []
