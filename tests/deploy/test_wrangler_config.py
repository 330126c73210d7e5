"""wrangler.toml stays consistent with what /health reports (every environment binds every required
binding, and builds its bundle with its own cron triggers, which /health counts), sets settings
memvault reads, and agrees with what pywrangler reads from it and from pyproject.toml: the
compatibility date picks the Python the Pyodide tier runs, and the dependencies it vendors are the
ones the Worker imports."""

from __future__ import annotations

import json
import shlex
import sys
import tomllib
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from pywrangler.metadata import PYTHON_COMPAT_VERSIONS

from memvault.adapters.cloudflare.env import REQUIRED_BINDINGS
from memvault.core.settings import RETIRED, SETTINGS, load_settings

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

from build_worker import declared_crons

ROOT = Path(__file__).resolve().parents[2]
CONFIG = tomllib.loads((ROOT / "wrangler.toml").read_text())
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
ENVIRONMENTS = {"top level": CONFIG, **{name: section for name, section in CONFIG["env"].items()}}


def bindings_of(section: dict[str, Any]) -> set[str]:
    found = {b["binding"] for key in ("d1_databases", "vectorize", "r2_buckets", "kv_namespaces") for b in section.get(key, [])}
    found |= {b["name"] for b in section.get("durable_objects", {}).get("bindings", [])}
    if "ai" in section:
        found.add(section["ai"]["binding"])
    return found


@pytest.mark.parametrize("name", sorted(ENVIRONMENTS))
def test_every_environment_binds_what_health_requires(name: str) -> None:
    assert bindings_of(ENVIRONMENTS[name]) == set(REQUIRED_BINDINGS)
    assert all(db["migrations_dir"] == "migrations" for db in ENVIRONMENTS[name]["d1_databases"])


@pytest.mark.parametrize("name", sorted(ENVIRONMENTS))
def test_each_environment_builds_its_bundle_with_its_own_crons(name: str) -> None:
    """wrangler runs an environment's own [build] (else the top level's) and tells the command
    nothing about the environment: so each names itself, and the bundle counts its crons."""
    section = ENVIRONMENTS[name]
    env = None if name == "top level" else name
    command = shlex.split(section["build"]["command"])
    assert command[:2] == ["python3", "scripts/build_worker.py"]
    assert command[2:] == ([] if env is None else ["--env", env])
    assert section["build"]["watch_dir"] == CONFIG["build"]["watch_dir"]
    assert declared_crons(CONFIG, env) == tuple(section["triggers"]["crons"])
    assert len(section["triggers"]["crons"]) == 1  # one nightly run does all maintenance


@pytest.mark.parametrize("name", sorted(ENVIRONMENTS))
def test_every_var_is_a_setting_memvault_reads(name: str) -> None:
    variables = set(ENVIRONMENTS[name]["vars"])
    assert variables <= {s.name for s in SETTINGS}, variables - {s.name for s in SETTINGS}
    assert not variables & set(RETIRED)
    load_settings(ENVIRONMENTS[name]["vars"])  # each parses


def test_vault_is_a_sqlite_durable_object_in_the_entry_module() -> None:
    assert CONFIG["main"] == "build/worker/entry.py"
    assert CONFIG["compatibility_flags"] == ["python_workers", "enable_request_signal"]
    assert any("Vault" in m.get("new_sqlite_classes", []) for m in CONFIG["migrations"])
    assert {"staging", "production"} <= set(CONFIG["env"])


@pytest.mark.parametrize("name", sorted(ENVIRONMENTS))
def test_logs_are_kept_and_bindings_without_a_local_simulation_are_remote_in_dev(name: str) -> None:
    section = ENVIRONMENTS[name]
    assert section["observability"]["enabled"] is True  # keeps the cron's JSON report
    assert all(index["remote"] is True for index in section["vectorize"])
    assert section["ai"]["remote"] is True
    # Everything else has a local simulation in `wrangler dev`.
    assert not [b for key in ("d1_databases", "r2_buckets", "kv_namespaces") for b in section[key] if b.get("remote")]


def production_python(config: dict[str, Any]) -> str:
    """The Python a compatibility date and flags give a Worker, by pywrangler's own table (the one
    `pywrangler sync` picks its Pyodide wheels by)."""
    date = datetime.strptime(config["compatibility_date"], "%Y-%m-%d")
    for entry in sorted(PYTHON_COMPAT_VERSIONS, key=lambda v: v.version, reverse=True):
        if entry.experimental:
            continue
        if entry.compat_flag in config["compatibility_flags"] or (entry.compat_date and date >= entry.compat_date):
            return entry.version
    raise AssertionError("no Python for this compatibility date")


def test_the_compatibility_date_gives_production_the_python_the_pyodide_tier_runs() -> None:
    pinned = json.loads((ROOT / "package.json").read_text())["devDependencies"]["pyodide"]
    # Pyodide numbers its Python 3.14 builds 314.x; the tier itself asserts the Python it ran.
    assert production_python(CONFIG) == "3.14" and pinned.startswith("314.")
    # From 2026-04-21 `import workers` comes from the vendored SDK, which pywrangler always adds.
    assert CONFIG["compatibility_date"] >= "2026-04-21"


def test_pywrangler_vendors_what_the_worker_imports_and_the_tools_are_dev_only() -> None:
    shipped = {dep.split(">")[0].split("=")[0].split("<")[0].strip() for dep in PYPROJECT["project"]["dependencies"]}
    assert shipped == {"fastapi", "numpy"}
    dev = " ".join(PYPROJECT["dependency-groups"]["dev"])
    assert "workers-py" in dev and "workers-runtime-sdk" in dev
    # pywrangler's `dev` refuses a wrangler older than this; package.json pins the one the tests run.
    wrangler = tuple(int(x) for x in json.loads((ROOT / "package.json").read_text())["devDependencies"]["wrangler"].split("."))
    assert wrangler >= (4, 127, 1)


def test_the_bot_is_its_own_pywrangler_project_on_the_same_python() -> None:
    """pywrangler, run in the bot's folder, reads the bot's pyproject.toml and vendors into the bot's
    python_modules/ (without one it would climb to the repository root's); its date gives the SDK
    from python_modules/ and Python 3.14, as memvault's does."""
    bot = ROOT / "examples" / "telegram_bot"
    config = tomllib.loads((bot / "wrangler.toml").read_text())
    project = tomllib.loads((bot / "pyproject.toml").read_text())["project"]
    assert project["name"] and project["dependencies"] == []
    assert production_python(config) == production_python(CONFIG)
    assert config["compatibility_date"] >= "2026-04-21"
