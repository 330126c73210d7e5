"""The Workers env helpers inside real Pyodide, reading a real JS object as ``env``: JS ``null``,
``undefined`` and absent entries all count as missing, defaults apply, and no secret value leaves
``env``. (CPython covers the same helpers with a plain object in tests/unit.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from node_tools import node, node_env

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(__file__).with_name("entry_env_check.mjs")


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    executable = node()
    if executable is None or not (ROOT / "node_modules" / "pyodide").exists():
        pytest.skip("node or node_modules/pyodide is missing: run `npm ci` (scripts/test does)")
    done = subprocess.run([executable, str(SCRIPT)], cwd=ROOT, capture_output=True, text=True, timeout=180,
                          env=node_env())
    assert done.returncode == 0, done.stderr[-2000:]
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def test_runs_on_pyodide_python(report: dict[str, Any]) -> None:
    assert report["python"].startswith("3.14")


def test_complete_env_is_healthy_and_reports_presence_only(report: dict[str, Any]) -> None:
    case = report["results"]["complete"]
    assert case["status"] == 200 and case["body"]["missing"] == []
    assert case["body"]["secrets"] == {"MEMVAULT_BRAIN_CREDENTIALS": True}
    assert case["search_limit"] == 7 and case["unbound"] is None
    assert "value-that-must-not-leak" not in json.dumps(case)


def test_js_null_binding_is_missing(report: dict[str, Any]) -> None:
    case = report["results"]["nullBinding"]
    assert case["status"] == 503 and case["body"]["missing"] == ["binding:CACHE"]


def test_undefined_values_are_missing_and_fall_back_to_defaults(report: dict[str, Any]) -> None:
    case = report["results"]["undefinedValues"]
    assert case["body"]["missing"] == ["secret:MEMVAULT_BRAIN_CREDENTIALS"]
    assert case["search_limit"] == 20


def test_empty_secret_and_no_cron_are_both_named(report: dict[str, Any]) -> None:
    case = report["results"]["emptySecretNoCron"]
    assert case["status"] == 503
    assert case["body"]["missing"] == ["secret:MEMVAULT_BRAIN_CREDENTIALS", "cron_triggers"]


def test_retired_variables_set_are_named_and_null_ones_are_not(report: dict[str, Any]) -> None:
    case = report["results"]["retired"]
    assert case["status"] == 200 and case["body"]["missing"] == []
    assert case["body"]["retired_settings"] == ["MEMVAULT_CRON_SCHEDULES", "MEMVAULT_RECENCY_WEIGHT"]
    assert report["results"]["undefinedValues"]["body"]["retired_settings"] == []
