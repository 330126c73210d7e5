"""The admin surface over HTTP, in-process over the local stores: keys and brain credentials made,
listed and revoked with the admin token, each action in the event log, and nothing at all where no
admin token is set."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from memvault.api.app import create_app
from memvault.core.deps import Deps
from memvault.core.errors import InvalidInput
from memvault.core.settings import load_settings
from memvault.runtime.local import build_local_deps, close_local_deps

ADMIN = "a" * 24 + "-admin-token-for-tests"
ROUTES = [("POST", "/v1/admin/keys"), ("GET", "/v1/admin/keys"), ("DELETE", "/v1/admin/keys/key_x"),
          ("POST", "/v1/admin/credentials"), ("GET", "/v1/admin/credentials"),
          ("DELETE", "/v1/admin/credentials/key_x")]


@dataclass
class Site:
    deps: Deps
    client: httpx.AsyncClient

    async def events(self) -> list[dict[str, object]]:
        return await self.deps.db.query("SELECT actor, action, memory_id, source, detail FROM event_log ORDER BY seq")

    async def key_rows(self) -> int:
        return int((await self.deps.db.query("SELECT COUNT(*) AS n FROM memory_keys"))[0]["n"])


async def _site(tmp_path: Path, **extra: str) -> AsyncIterator[Site]:
    settings = {"MEMVAULT_DATA_DIR": str(tmp_path), "MEMVAULT_EMBEDDER": "hash", **extra}
    deps = build_local_deps(load_settings(settings))
    transport = httpx.ASGITransport(app=create_app(deps))
    async with httpx.AsyncClient(transport=transport, base_url="http://memvault.test") as client:
        yield Site(deps, client)
    await close_local_deps(deps)


@pytest.fixture
async def site(tmp_path: Path) -> AsyncIterator[Site]:
    async for made in _site(tmp_path, MEMVAULT_ADMIN_TOKEN=ADMIN):
        yield made


@pytest.fixture
async def closed_site(tmp_path: Path) -> AsyncIterator[Site]:
    async for made in _site(tmp_path):
        yield made


ADMIN_AUTH = {"Authorization": f"Bearer {ADMIN}"}


@pytest.mark.parametrize(("method", "path"), ROUTES)
async def test_without_an_admin_token_every_admin_route_is_a_route_that_does_not_exist(
    closed_site: Site, method: str, path: str
) -> None:
    unknown = await closed_site.client.request(method, "/v1/admin/nothing-here")
    for headers in ({}, ADMIN_AUTH, {"Authorization": "Bearer "}):
        answer = await closed_site.client.request(method, path, headers=headers, json={"label": "x", "scopes": ["family"]})
        assert answer.status_code == 404, answer.text
        assert answer.json() == unknown.json()
    assert await closed_site.key_rows() == 0 and await closed_site.events() == []


@pytest.mark.parametrize(("method", "path"), ROUTES)
async def test_a_missing_or_wrong_admin_token_is_refused_and_changes_nothing(site: Site, method: str, path: str) -> None:
    key = (await site.client.post("/v1/admin/keys", json={"label": "real"}, headers=ADMIN_AUTH)).json()["key"]
    before = await site.events()
    for headers in ({}, {"Authorization": f"Bearer {ADMIN[:-1]}"}, {"Authorization": f"Bearer {ADMIN}x"},
                    {"Authorization": f"Bearer {key}"}, {"Authorization": ADMIN}, {"X-Memory-Key": ADMIN}):
        answer = await site.client.request(method, path, headers=headers, json={"label": "x", "scopes": ["family"]})
        assert answer.status_code == 401, (headers, answer.text)
        assert answer.json()["error"]["code"] == "unauthorized"
    assert await site.key_rows() == 1 and await site.events() == before


async def test_a_key_made_over_http_works_is_listed_with_its_last_use_and_is_refused_once_revoked(site: Site) -> None:
    made = (await site.client.post("/v1/admin/keys", json={"label": "bot", "keep_archive": True}, headers=ADMIN_AUTH)).json()
    assert made["key"].startswith("mk_") and made["id"].startswith("key_") and made["label"] == "bot"
    assert made["keep_archive"] is True
    auth = {"Authorization": f"Bearer {made['key']}"}
    listed = (await site.client.get("/v1/admin/keys", headers=ADMIN_AUTH)).json()["keys"]
    assert [(k["id"], k["state"], k["last_used_at"]) for k in listed] == [(made["id"], "active", None)]
    assert made["key"] not in json.dumps(listed)
    stored = await site.client.post("/v1/memory", json={"messages": [{"role": "user", "content": "hello"}]}, headers=auth)
    assert stored.status_code == 200, stored.text
    used = (await site.client.get("/v1/admin/keys", headers=ADMIN_AUTH)).json()["keys"][0]["last_used_at"]
    assert used is not None and used >= made["created_at"]
    revoked = await site.client.delete(f"/v1/admin/keys/{made['id']}", headers=ADMIN_AUTH)
    assert revoked.status_code == 200 and revoked.json()["id"] == made["id"]
    refused = await site.client.post("/v1/memory/search", json={"query": "hello"}, headers=auth)
    assert refused.status_code == 401
    assert (await site.client.get("/v1/admin/keys", headers=ADMIN_AUTH)).json()["keys"][0]["state"] == "revoked"
    again = await site.client.delete(f"/v1/admin/keys/{made['id']}", headers=ADMIN_AUTH)
    assert again.status_code == 404 and made["id"] in again.json()["error"]["message"]


async def test_a_credential_made_over_http_reads_its_scopes_and_is_refused_once_revoked(site: Site) -> None:
    body = {"name": "bot", "scopes": ["family"], "writer": True}
    made = (await site.client.post("/v1/admin/credentials", json=body, headers=ADMIN_AUTH)).json()
    assert made["token"].startswith("bt_") and made["scopes"] == ["family"] and made["writer"] is True
    auth = {"Authorization": f"Bearer {made['token']}"}
    wrote = await site.client.post("/v1/brain/facts", json={"fact": "The boat is blue.", "scope": "family",
                                                             "source": "test"}, headers=auth)
    assert wrote.status_code == 200, wrote.text
    walled = await site.client.post("/v1/brain/facts", json={"fact": "Invoice 7.", "scope": "business",
                                                              "source": "test"}, headers=auth)
    assert walled.status_code == 403
    listed = (await site.client.get("/v1/admin/credentials", headers=ADMIN_AUTH)).json()["credentials"]
    assert [(c["id"], c["name"], c["state"]) for c in listed] == [(made["id"], "bot", "active")]
    assert listed[0]["last_used_at"] is not None and made["token"] not in json.dumps(listed)
    assert (await site.client.delete(f"/v1/admin/credentials/{made['id']}", headers=ADMIN_AUTH)).status_code == 200
    found = await site.client.post("/v1/brain/facts/search", json={"query": "boat"}, headers=auth)
    assert found.status_code == 401
    # A memory key's id is not a credential's, and the other way round.
    key_id = (await site.client.post("/v1/admin/keys", json={}, headers=ADMIN_AUTH)).json()["id"]
    assert (await site.client.delete(f"/v1/admin/credentials/{key_id}", headers=ADMIN_AUTH)).status_code == 404
    assert (await site.client.delete(f"/v1/admin/keys/{made['id']}", headers=ADMIN_AUTH)).status_code == 404


@pytest.mark.parametrize(("path", "body", "field"), [
    ("/v1/admin/keys", ["label"], "request body"),
    ("/v1/admin/keys", {"label": "x" * 201}, "label"),
    ("/v1/admin/keys", {"keep_archive": "yes"}, "keep_archive"),
    ("/v1/admin/credentials", {"name": "x"}, "scopes"),
    ("/v1/admin/credentials", {"scopes": []}, "scopes"),
    ("/v1/admin/credentials", {"scopes": ["family"], "writer": 1}, "writer"),
    ("/v1/admin/credentials", {"scopes": ["family", "nope"]}, "scope must be one of"),
    ("/v1/admin/credentials", {"scopes": ["family"], "name": "two\nlines"}, "name"),
])
async def test_bad_input_is_refused_naming_it_and_stores_nothing(site: Site, path: str, body: object, field: str) -> None:
    answer = await site.client.post(path, json=body, headers=ADMIN_AUTH)
    assert answer.status_code in (400, 422), answer.text
    assert field in answer.json()["error"]["message"]
    assert await site.key_rows() == 0 and await site.events() == []


async def test_every_admin_action_lands_in_the_event_log_without_labels_or_secrets(site: Site) -> None:
    key = (await site.client.post("/v1/admin/keys", json={"label": "private label"}, headers=ADMIN_AUTH)).json()
    await site.client.get("/v1/admin/keys", headers=ADMIN_AUTH)
    await site.client.delete(f"/v1/admin/keys/{key['id']}", headers=ADMIN_AUTH)
    await site.client.delete(f"/v1/admin/keys/{key['id']}", headers=ADMIN_AUTH)  # refused: no second event
    made = (await site.client.post("/v1/admin/credentials", json={"name": "private name", "scopes": ["family"]},
                                   headers=ADMIN_AUTH)).json()
    await site.client.get("/v1/admin/credentials", headers=ADMIN_AUTH)
    await site.client.delete(f"/v1/admin/credentials/{made['id']}", headers=ADMIN_AUTH)
    events = await site.events()
    assert [(e["actor"], e["action"], e["source"]) for e in events] == [
        ("admin-token", action, "admin") for action in (
            "key.create", "key.list", "key.revoke", "credential.create", "credential.list", "credential.revoke")]
    assert [json.loads(str(e["detail"])).get("id") for e in events] == [
        key["id"], None, key["id"], made["id"], None, made["id"]]
    logged = json.dumps(events)
    for secret_or_label in (key["key"], made["token"], "private label", "private name", ADMIN):
        assert secret_or_label not in logged


def test_a_short_admin_token_is_refused_as_a_setting() -> None:
    with pytest.raises(InvalidInput, match="MEMVAULT_ADMIN_TOKEN: must be at least 32 characters"):
        load_settings({"MEMVAULT_ADMIN_TOKEN": "hunter2"})


async def test_the_document_describes_the_admin_operations_and_their_credential(site: Site) -> None:
    document = (await site.client.get("/openapi.json")).json()
    create = document["paths"]["/v1/admin/keys"]["post"]
    assert create["requestBody"]["content"]["application/json"]["schema"]["$ref"].endswith("/CreateKeyRequest")
    assert {"adminToken": []} in create["security"]
    schemas = document["components"]["schemas"]
    assert schemas["IssuedMemoryKey"]["required"] == ["id", "label", "created_at", "keep_archive", "key",
                                                      "brain_scopes", "brain_writer"]
    assert "last_used_at" in schemas["CredentialInfo"]["properties"]
