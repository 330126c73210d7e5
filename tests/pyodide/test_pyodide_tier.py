"""The Pyodide fidelity tier under pytest: runs tests/pyodide/harness.mjs once per session (real
Pyodide in Node, miniflare's D1/R2/KV, stand-ins for DO SQL, Workers AI and Vectorize) and turns
each (suite, check) it ran into one test, so a failure names its check.

The checks are listed here by reading each suite's ``CHECKS`` from source (the suites import
nothing that needs Pyodide, but listing them must not depend on the run)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from node_tools import node, node_env

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SUITES = ROOT / "tests" / "contract" / "suites"
HARNESS = HERE / "harness.mjs"
TIMEOUT_SECONDS = 600
NODE_PACKAGES = ("pyodide", "miniflare")
WHEELS = ROOT / ".venv" / "pyodide-wheels"
# The Cloudflare-only check modules runner.py runs after the shared suites.
EXTRA_CHECKS = ("cloudflare_checks", "cloudflare_runtime_checks", "client_checks", "limits_checks")


def check_names(path: Path) -> list[str]:
    """The function names listed in a module's ``CHECKS = [...]``, in order."""
    for statement in ast.parse(path.read_text()).body:
        target = statement.target if isinstance(statement, ast.AnnAssign) else (statement.targets[0] if isinstance(statement, ast.Assign) else None)
        if isinstance(target, ast.Name) and target.id == "CHECKS" and isinstance(statement.value, ast.List):
            return [item.id for item in statement.value.elts if isinstance(item, ast.Name)]
    return []


def all_checks() -> list[tuple[str, str]]:
    pairs = [
        (path.stem, name)
        for path in sorted(SUITES.glob("*.py"))
        if not path.name.startswith("_")
        for name in check_names(path)
    ]
    extra = [(module, name) for module in EXTRA_CHECKS for name in check_names(HERE / f"{module}.py")]
    return pairs + extra


def missing_tools() -> str | None:
    if node() is None:
        return "node is not on PATH: the Pyodide tier needs Node 22+ (`npm ci` installs it on Linux x64)"
    absent = [p for p in NODE_PACKAGES if not (ROOT / "node_modules" / p / "package.json").is_file()]
    if absent:
        return f"node_modules lacks {', '.join(absent)}: run `npm ci` at the repo root (scripts/test does)"
    if not list(WHEELS.glob("workers_runtime_sdk-*.whl")):
        return f"{WHEELS} holds no runtime SDK wheel: run `.venv/bin/python scripts/pyodide_wheels.py` (scripts/test does)"
    return None


@pytest.fixture(scope="session")
def tier_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    problem = missing_tools()
    if problem:
        pytest.fail(problem, pytrace=False)
    out = tmp_path_factory.mktemp("pyodide") / "report.json"
    env = node_env(MEMVAULT_HOST_PYTHON=sys.executable, MEMVAULT_PYODIDE_WHEELS=str(WHEELS))
    started = time.perf_counter()
    try:
        done = subprocess.run(
            [str(node()), str(HARNESS), "--out", str(out)],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"the Pyodide harness ran past {TIMEOUT_SECONDS} s", pytrace=False)
    if done.returncode != 0 or not out.is_file():
        pytest.fail(f"the Pyodide harness failed ({done.returncode}):\n{done.stderr[-4000:]}", pytrace=False)
    report: dict[str, Any] = json.loads(out.read_text())
    report["timing"]["wall_seconds"] = round(time.perf_counter() - started, 2)
    TIER_TIMING.update(report["timing"])
    TIER_TIMING["entry_import_seconds"] = report["entry_import"]["seconds"]
    return report


# Filled by the fixture, printed at the end of the run by conftest.py.
TIER_TIMING: dict[str, float] = {}


@pytest.mark.parametrize(("suite", "check"), all_checks(), ids=[f"{s}::{c}" for s, c in all_checks()])
def test_check_passes_in_pyodide(tier_report: dict[str, Any], suite: str, check: str) -> None:
    if suite in tier_report["suites_without_adapter"]:
        pytest.skip(f"suite {suite!r} has no Cloudflare adapter in tests/pyodide/runner.py")
    found = [r for r in tier_report["results"] if r["suite"] == suite and r["check"] in {check, "<import>"}]
    assert found, f"{suite}.{check} did not run in Pyodide"
    result = found[0]
    assert result["ok"], f"{suite}.{check} failed in Pyodide {tier_report['pyodide']}:\n{result['error']}"


def test_runs_on_the_pinned_pyodide(tier_report: dict[str, Any]) -> None:
    lock = json.loads((ROOT / "package-lock.json").read_text())
    pinned = lock["packages"]["node_modules/pyodide"]["version"]
    assert tier_report["pyodide"] == pinned
    # The Python production runs for wrangler.toml's compatibility date (3.14 from 2026-09-08).
    assert tier_report["python"].startswith("3.14")


def test_runs_on_the_real_runtime_sdk_of_this_venv(tier_report: dict[str, Any]) -> None:
    from importlib.metadata import version

    assert f"workers_runtime_sdk-{version('workers-runtime-sdk')}-py3-none-any.whl" in tier_report["wheels"]
    assert not (HERE / "standin_modules").exists()  # no hand-written `workers` module shadows it


def test_importing_the_entry_brings_the_app_into_the_snapshot(tier_report: dict[str, Any]) -> None:
    """The entry imports FastAPI, pydantic and the app's modules at its top, so the deploy-time
    snapshot holds them; the import time is printed at the end of the run, never asserted."""
    loaded = set(tier_report["entry_import"]["loaded"])
    assert {"fastapi", "pydantic", "pydantic_core", "memvault.api.app", "workers", "durable_objects.vault"} <= loaded


def test_every_suite_has_a_cloudflare_adapter(tier_report: dict[str, Any]) -> None:
    # A new contract suite must be wired into runner.py, not silently left out of this tier.
    assert tier_report["suites_without_adapter"] == []


async def test_cpython_opens_what_webcrypto_sealed_in_pyodide(tier_report: dict[str, Any]) -> None:
    if str(SUITES.parent) not in sys.path:
        sys.path.insert(0, str(SUITES.parent))
    from suites.cipher import BINDING, SEALED_HERE_PLAINTEXT, SECRET_TEXT

    from memvault.adapters.local.cipher import AesGcmCipher
    from memvault.core.credentials.sealing import sealing_secret, unseal

    sealed = tier_report["artifacts"]["cipher"]["sealed"]
    assert await unseal(AesGcmCipher(), [sealing_secret(SECRET_TEXT)], sealed, BINDING) == SEALED_HERE_PLAINTEXT
