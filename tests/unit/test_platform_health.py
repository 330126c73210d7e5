"""`/health` on the Workers composition root: presence booleans from the Worker's env, never values;
the cron triggers its bundle was built with; retired variables the env still sets, by name.

The env is a plain object standing in for the Worker's ``env`` (attributes for vars, secrets and
bindings); the app, routes and stores are the real local ones."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from fastapi.testclient import TestClient

from memvault.adapters.cloudflare import triggers
from memvault.adapters.cloudflare.env import env_settings, env_value, platform_report
from memvault.api.app import create_app
from memvault.core.settings import RETIRED, load_settings
from memvault.runtime import workers
from memvault.runtime.local import build_local_deps

SECRET = '{"0f3c": {"name": "ops", "scopes": ["business"], "writer": true}}'
BINDINGS = ("DB", "VAULT", "VECTORIZE", "BODIES", "AI", "CACHE")
NIGHTLY = ("17 3 * * *",)


def worker_env(**overrides: Any) -> SimpleNamespace:
    values: dict[str, Any] = {name: object() for name in BINDINGS}
    values |= {
        "MEMVAULT_REQUIRED_SECRETS": "MEMVAULT_BRAIN_CREDENTIALS",
        "MEMVAULT_BRAIN_CREDENTIALS": SECRET,
        "MEMVAULT_SEARCH_LIMIT": "7",
    }
    values |= overrides
    return SimpleNamespace(**{k: v for k, v in values.items() if v is not None})


@pytest.fixture
def client_for(tmp_path: Path) -> Iterator[Any]:
    clients: list[TestClient] = []

    def make(env: SimpleNamespace | None, crons: tuple[str, ...] = NIGHTLY) -> TestClient:
        deps = build_local_deps(load_settings({"MEMVAULT_DATA_DIR": str(tmp_path), "MEMVAULT_EMBEDDER": "hash"}))
        if env is not None:
            deps.platform = platform_report(env, env_settings(env), crons)
        client = TestClient(create_app(deps))
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


def test_settings_come_from_worker_vars_with_defaults_for_the_rest() -> None:
    settings = env_settings(worker_env())
    assert settings.search_limit == 7
    assert settings.read_page_size == 50
    assert env_value(worker_env(), "NOT_BOUND") is None


def test_healthy_worker_reports_presence_only(client_for: Any) -> None:
    response = client_for(worker_env()).get("/health")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok" and body["runtime"] == "workers"
    assert body["bindings"] == {name: True for name in BINDINGS}
    assert body["secrets"] == {"MEMVAULT_BRAIN_CREDENTIALS": True}
    assert body["cron_triggers"] == 1 and body["missing"] == [] and body["retired_settings"] == []
    assert "0f3c" not in response.text and "scopes" not in response.text


@pytest.mark.parametrize(
    ("overrides", "missing"),
    [
        ({"MEMVAULT_BRAIN_CREDENTIALS": None}, "secret:MEMVAULT_BRAIN_CREDENTIALS"),
        ({"MEMVAULT_BRAIN_CREDENTIALS": "  "}, "secret:MEMVAULT_BRAIN_CREDENTIALS"),
        ({"CACHE": None}, "binding:CACHE"),
        ({"VAULT": None}, "binding:VAULT"),
    ],
)
def test_anything_required_missing_answers_503_and_names_it(
    client_for: Any, overrides: dict[str, Any], missing: str
) -> None:
    response = client_for(worker_env(**overrides)).get("/health")
    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "degraded"
    assert missing in body["missing"]


def test_local_mode_has_no_platform_to_report(client_for: Any) -> None:
    response = client_for(None).get("/health")
    assert response.status_code == 200
    assert response.json()["runtime"] == "local"


def test_a_bundle_built_without_crons_answers_503_and_names_them(client_for: Any) -> None:
    response = client_for(worker_env(), crons=()).get("/health")
    assert response.status_code == 503 and response.json()["missing"] == ["cron_triggers"]


def test_the_bundle_counts_the_crons_it_was_built_with_and_a_var_cannot_fake_them(client_for: Any) -> None:
    stale = worker_env(MEMVAULT_CRON_SCHEDULES="17 3 * * *;47 3 * * *")
    body = client_for(stale, crons=("17,47 3-5 * * *",)).get("/health").json()
    assert body["cron_triggers"] == 1
    # Outside a bundle the source tree's module declares none: only scripts/build_worker.py writes them.
    assert triggers.CRONS == ()


def test_retired_variables_are_named_without_values_and_do_not_fail_health(client_for: Any) -> None:
    env = worker_env(MEMVAULT_HOT_WINDOW_HOURS="2", MEMVAULT_CHUNK_TOKENS="120", MEMVAULT_CRON_SCHEDULES="17 3 * * *")
    response = client_for(env).get("/health")
    assert response.status_code == 200 and response.json()["status"] == "ok"
    body = response.json()
    assert body["retired_settings"] == ["MEMVAULT_HOT_WINDOW_HOURS", "MEMVAULT_CRON_SCHEDULES", "MEMVAULT_CHUNK_TOKENS"]
    assert set(body["retired_settings"]) <= set(RETIRED) and "120" not in response.text
    assert env_settings(env) == env_settings(worker_env())  # what they set changes nothing


def test_the_worker_logs_each_retired_variable_once_per_isolate(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(workers, "_ISOLATE", {})
    env = worker_env(MEMVAULT_RECENCY_WEIGHT="0")
    with caplog.at_level("WARNING", logger="memvault.runtime.workers"):
        for _ in range(3):  # three requests of one isolate
            workers.report_retired(platform_report(env, env_settings(env), NIGHTLY).retired_settings)
    warned = [r.getMessage() for r in caplog.records if "MEMVAULT_RECENCY_WEIGHT" in r.getMessage()]
    assert warned == ["MEMVAULT_RECENCY_WEIGHT is set but no longer read: a tuning constant now "
                      "(`Tuning.recency_weight` in core/tuning.py), no longer read from the environment; "
                      "remove it (docs/settings.md)"]


def test_health_names_the_version_answering_and_the_bundles_crons(client_for: Any) -> None:
    """Safe deploy waits for /health to answer as the version it uploaded: the id comes from the
    version-metadata binding (an object with ``id``; a dict where the SDK converted it)."""
    version = "3f2a9c1e-0000-4000-8000-00000000abcd"
    for metadata in (SimpleNamespace(id=version, tag="", timestamp="0"), {"id": version, "tag": ""}):
        body = client_for(worker_env(CF_VERSION_METADATA=metadata)).get("/health").json()
        assert body["version_id"] == version and body["crons"] == list(NIGHTLY)
    for missing in (None, SimpleNamespace(tag="x"), {"id": ""}):
        assert client_for(worker_env(CF_VERSION_METADATA=missing)).get("/health").json()["version_id"] is None
    local = client_for(None).get("/health").json()
    assert local["version_id"] is None and local["crons"] == []
