"""scripts/safe_deploy.py end to end with the real pywrangler (workers-py, a dev dependency) in
front of a fake `npx wrangler` that plays Cloudflare's API, and /health served on 127.0.0.1 from the
same state, routed by version as Cloudflare routes it. The rail runs in a copy of the project whose
python_modules/ pywrangler's own sync markers call current, so every pass-through command runs
offline; without them the rail stops at its first step."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from deploy_fakes import CRONS, CURRENT, NEW, REQUIRED, FakeCloudflare, healthy_body

PYWRANGLER = Path(sys.executable).with_name("pywrangler")
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

from safe_deploy import json_in  # noqa: E402


def rail(project: Path, cloudflare: FakeCloudflare, *extra: str, timeout: float = 5) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, str(project / "scripts" / "safe_deploy.py"), "--env", "production", "--url", cloudflare.base_url,
         "--pywrangler", str(PYWRANGLER), "--health-timeout", str(timeout), *extra],
        capture_output=True, text=True, timeout=180, cwd=project,
    )
    print(done.stdout, done.stderr, sep="\n")  # shown with a failure: the run as the operator sees it
    return done


def good_run(project: Path, **changes: object) -> None:
    record = {"version_id": CURRENT, "secrets": [REQUIRED], "crons": CRONS, **changes}
    (project / ".deploy-manifest.json").write_text(json.dumps({"production": record}))


def recorded(project: Path) -> dict[str, object]:
    return dict(json.loads((project / ".deploy-manifest.json").read_text())["production"])


def assert_refused_before_traffic(done: subprocess.CompletedProcess[str], cloudflare: FakeCloudflare) -> None:
    assert done.returncode == 2, done.stdout + done.stderr
    assert "REFUSED" in done.stderr
    assert cloudflare.deployment() == {CURRENT: 100.0}
    assert "triggers deploy" not in cloudflare.commands()


def test_a_good_deploy_syncs_uploads_checks_the_new_version_promotes_and_records(
    project: Path, cloudflare: FakeCloudflare
) -> None:
    good_run(project)
    done = rail(project, cloudflare)
    assert done.returncode == 0, done.stderr
    assert "Sync process completed successfully" in done.stdout  # pywrangler's own sync, a no-op offline
    assert cloudflare.commands() == ["secret list", "deployments status", "versions upload", "versions deploy",
                                     "versions deploy", "triggers deploy"]
    staged, promoted = [call for call in cloudflare.calls() if call[:2] == ["versions", "deploy"]]
    assert staged[2:4] == [f"{CURRENT}@100%", f"{NEW}@0%"] and promoted[2] == f"{NEW}@100%"
    assert cloudflare.overrides_seen[0] == f'memvault-production="{NEW}"'
    assert cloudflare.deployment() == {NEW: 100.0}
    assert recorded(project) == {"version_id": NEW, "secrets": [REQUIRED], "crons": CRONS}
    assert f"version {NEW} is live and healthy" in done.stdout


def test_a_required_secret_not_set_on_the_worker_is_refused_before_anything_is_uploaded(
    project: Path, cloudflare: FakeCloudflare
) -> None:
    cloudflare.reset(secrets=["MEMVAULT_ADMIN_TOKEN"])
    done = rail(project, cloudflare)
    assert_refused_before_traffic(done, cloudflare)
    assert f"required secret {REQUIRED} is not set (`pywrangler secret put {REQUIRED} --env production`)" in done.stderr
    assert "versions upload" not in cloudflare.commands()


def test_a_secret_of_the_last_good_run_that_is_gone_is_refused(project: Path, cloudflare: FakeCloudflare) -> None:
    good_run(project, secrets=[REQUIRED, "MEMVAULT_ADMIN_TOKEN"])
    done = rail(project, cloudflare)
    assert_refused_before_traffic(done, cloudflare)
    assert "secret MEMVAULT_ADMIN_TOKEN was set at the last good deploy and is gone now" in done.stderr


@pytest.mark.parametrize("before", [[], ["17 3 * * *"], [*CRONS, "0 12 * * *"]], ids=["none", "other", "more"])
def test_crons_other_than_the_last_runs_are_refused_unless_the_change_is_accepted(
    project: Path, cloudflare: FakeCloudflare, before: list[str]
) -> None:
    good_run(project, crons=before)
    done = rail(project, cloudflare)
    assert_refused_before_traffic(done, cloudflare)
    assert f"crons change from {sorted(before)} to {sorted(CRONS)}: pass --accept-cron-change" in done.stderr
    accepted = rail(project, cloudflare, "--accept-cron-change")
    assert accepted.returncode == 0, accepted.stderr
    assert recorded(project)["crons"] == CRONS


def test_the_old_version_answering_is_never_taken_for_the_new_one(project: Path, cloudflare: FakeCloudflare) -> None:
    good_run(project)
    cloudflare.overrides_applied = False  # the override has not spread: the current version answers
    done = rail(project, cloudflare, timeout=2)
    assert_refused_before_traffic(done, cloudflare)
    assert f"never answered as version {NEW} within 2s (version {CURRENT} answered)" in done.stderr
    assert cloudflare.calls()[-1][2] == f"{CURRENT}@100%"  # the staged version was withdrawn


def test_a_new_version_missing_a_secret_or_with_other_crons_is_withdrawn(project: Path, cloudflare: FakeCloudflare) -> None:
    good_run(project)
    cloudflare.health[NEW] = (503, healthy_body(status="degraded", secrets={REQUIRED: False}, crons=[],
                                                missing=[f"secret:{REQUIRED}"]))
    done = rail(project, cloudflare)
    assert_refused_before_traffic(done, cloudflare)
    assert f"not promoting version {NEW}" in done.stderr
    assert f"required secret {REQUIRED} is not set for the version" in done.stderr
    assert "the version's bundle holds crons [], wrangler.toml declares ['17,47 3-5 * * *']" in done.stderr


def test_failing_health_after_promotion_rolls_back_by_itself(project: Path, cloudflare: FakeCloudflare) -> None:
    good_run(project)
    cloudflare.unhealthy_when_live = {NEW}
    done = rail(project, cloudflare)
    assert done.returncode == 1, done.stderr
    assert f"production is unhealthy after promoting {NEW}" in done.stderr
    assert f"ROLLED BACK to version {CURRENT}" in done.stderr
    assert cloudflare.calls()[-1][:2] == ["rollback", CURRENT] and "--yes" in cloudflare.calls()[-1]
    assert cloudflare.deployment() == {CURRENT: 100.0}
    assert recorded(project)["version_id"] == CURRENT  # a rolled-back run is not a good run


def test_a_failed_rollback_says_what_to_run(project: Path, cloudflare: FakeCloudflare) -> None:
    good_run(project)
    cloudflare.reset(secrets=[REQUIRED], fail="rollback")
    cloudflare.unhealthy_when_live = {NEW}
    done = rail(project, cloudflare)
    assert done.returncode == 1
    assert f"ROLLBACK FAILED: run `pywrangler rollback {CURRENT}` now" in done.stderr


def test_an_upload_failure_deploys_nothing(project: Path, cloudflare: FakeCloudflare) -> None:
    cloudflare.reset(secrets=[REQUIRED], fail="upload")
    done = rail(project, cloudflare)
    assert_refused_before_traffic(done, cloudflare)
    assert "version upload failed" in done.stderr and "Authentication error" in done.stderr
    assert "versions deploy" not in cloudflare.commands()


def test_the_first_deploy_is_left_to_pywrangler_deploy(project: Path, cloudflare: FakeCloudflare) -> None:
    cloudflare.reset(secrets=[REQUIRED], fail="status")
    done = rail(project, cloudflare)
    assert_refused_before_traffic(done, cloudflare)
    assert "use `pywrangler deploy`" in done.stderr and "has no deployments" in done.stderr


def test_without_pywranglers_sync_markers_the_rail_stops_at_its_first_step(project: Path, cloudflare: FakeCloudflare) -> None:
    (project / "python_modules" / ".synced").unlink()
    done = rail(project, cloudflare)
    assert_refused_before_traffic(done, cloudflare)
    assert "`pywrangler sync` failed" in done.stderr
    assert cloudflare.calls() == []


def test_a_rehearsal_changes_nothing_and_reports_what_changed(project: Path, cloudflare: FakeCloudflare) -> None:
    good_run(project)
    done = rail(project, cloudflare, "--rehearse")
    assert done.returncode == 0, done.stderr
    assert f"rehearsal: version {CURRENT} is live and healthy" in done.stdout
    assert cloudflare.commands() == ["secret list", "deployments status"]
    cloudflare.reset(secrets=[REQUIRED, "MEMVAULT_ADMIN_TOKEN"])
    changed = rail(project, cloudflare, "--rehearse")
    assert changed.returncode == 2 and "secrets set since the last good deploy: MEMVAULT_ADMIN_TOKEN" in changed.stderr
    assert "versions upload" not in cloudflare.commands() and recorded(project)["version_id"] == CURRENT


def test_the_json_is_found_in_what_the_real_pywrangler_prints(project: Path, cloudflare: FakeCloudflare) -> None:
    """Unquieted, pywrangler logs `INFO Passing command to npx wrangler: …` on stdout before
    wrangler's JSON; the rail quiets it and also reads the JSON wherever it starts."""
    loud = {**os.environ, "PYWRANGLER_LOG": "info", "COLUMNS": "60"}
    done = subprocess.run([str(PYWRANGLER), "deployments", "status", "--env", "production", "--json"], cwd=project,
                          env=loud, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Passing command to npx wrangler" in done.stdout and not done.stdout.lstrip().startswith("{")
    assert json_in(done.stdout)["versions"] == [{"version_id": CURRENT, "percentage": 100.0}]
    with pytest.raises(ValueError):
        json_in("INFO nothing here {not json\n")
