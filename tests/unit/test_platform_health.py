"""`/health` on the Workers composition root: presence booleans from the Worker's env, never values.

The env is a plain object standing in for the Worker's ``env`` (attributes for vars, secrets and
bindings); the app, routes and stores are the real local ones."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from fastapi.testclient import TestClient

from memvault.adapters.cloudflare.env import env_settings, env_value, platform_report
from memvault.api.app import create_app
from memvault.core.settings import load_settings
from memvault.runtime.local import build_local_deps

SECRET = '{"0f3c": {"name": "ops", "scopes": ["business"], "writer": true}}'
BINDINGS = ("DB", "VAULT", "VECTORIZE", "BODIES", "AI", "CACHE")


def worker_env(**overrides: Any) -> SimpleNamespace:
    values: dict[str, Any] = {name: object() for name in BINDINGS}
    values |= {
        "MEMVAULT_CRON_SCHEDULES": "17 3 * * *",
        "MEMVAULT_REQUIRED_SECRETS": "MEMVAULT_BRAIN_CREDENTIALS",
        "MEMVAULT_BRAIN_CREDENTIALS": SECRET,
        "MEMVAULT_SEARCH_LIMIT": "7",
    }
    values |= overrides
    return SimpleNamespace(**{k: v for k, v in values.items() if v is not None})


@pytest.fixture
def client_for(tmp_path: Path) -> Iterator[Any]:
    clients: list[TestClient] = []

    def make(env: SimpleNamespace | None) -> TestClient:
        deps = build_local_deps(load_settings({"MEMVAULT_DATA_DIR": str(tmp_path), "MEMVAULT_EMBEDDER": "hash"}))
        if env is not None:
            deps.platform = platform_report(env, env_settings(env))
        client = TestClient(create_app(deps))
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


def test_settings_come_from_worker_vars_with_defaults_for_the_rest() -> None:
    settings = env_settings(worker_env())
    assert settings.search_limit == 7
    assert settings.cron_schedules == ("17 3 * * *",)
    assert settings.chunk_tokens == 300
    assert env_value(worker_env(), "NOT_BOUND") is None


def test_healthy_worker_reports_presence_only(client_for: Any) -> None:
    response = client_for(worker_env()).get("/health")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok" and body["runtime"] == "workers"
    assert body["bindings"] == {name: True for name in BINDINGS}
    assert body["secrets"] == {"MEMVAULT_BRAIN_CREDENTIALS": True}
    assert body["cron_triggers"] == 1 and body["missing"] == []
    assert "0f3c" not in response.text and "scopes" not in response.text


@pytest.mark.parametrize(
    ("overrides", "missing"),
    [
        ({"MEMVAULT_BRAIN_CREDENTIALS": None}, "secret:MEMVAULT_BRAIN_CREDENTIALS"),
        ({"MEMVAULT_BRAIN_CREDENTIALS": "  "}, "secret:MEMVAULT_BRAIN_CREDENTIALS"),
        ({"CACHE": None}, "binding:CACHE"),
        ({"VAULT": None}, "binding:VAULT"),
        ({"MEMVAULT_CRON_SCHEDULES": None}, "cron_triggers"),
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
