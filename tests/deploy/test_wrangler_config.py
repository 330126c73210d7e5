"""wrangler.toml stays consistent with what /health reports: every environment binds every
required binding, and its cron triggers equal the MEMVAULT_CRON_SCHEDULES var /health counts."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import pytest

from memvault.adapters.cloudflare.env import REQUIRED_BINDINGS
from memvault.core.settings import load_settings

CONFIG = tomllib.loads((Path(__file__).resolve().parents[2] / "wrangler.toml").read_text())
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
def test_cron_var_mirrors_the_triggers(name: str) -> None:
    section = ENVIRONMENTS[name]
    settings = load_settings(section["vars"])
    assert list(settings.cron_schedules) == section["triggers"]["crons"]
    assert len(section["triggers"]["crons"]) == 1  # one nightly run does all maintenance


def test_vault_is_a_sqlite_durable_object_in_the_entry_module() -> None:
    assert CONFIG["main"] == "build/worker/entry.py"
    assert CONFIG["compatibility_flags"] == ["python_workers"]
    assert any("Vault" in m.get("new_sqlite_classes", []) for m in CONFIG["migrations"])
    assert {"staging", "production"} <= set(CONFIG["env"])
