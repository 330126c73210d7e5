"""Provider keys held for memory keys, over the admin surface in-process on the local stores: set,
replace, list and delete with the admin token; sealed in the database, never answered; refused
with a clear error (and nothing stored) where no sealing secret is set; bound to their row; and
resealed after the secret is rotated."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import httpx
import pytest

from memvault.api.app import create_app
from memvault.core.credentials import provider_keys
from memvault.core.deps import Deps
from memvault.core.errors import Undecryptable
from memvault.core.settings import load_settings
from memvault.runtime.local import build_local_deps, close_local_deps

ADMIN = "b" * 24 + "-admin-token-for-tests"
ADMIN_AUTH = {"Authorization": f"Bearer {ADMIN}"}
SECRET = base64.b64encode(b"k" * 32).decode()
NEXT_SECRET = base64.b64encode(b"n" * 32).decode()
OPENAI_KEY = "sk-proj-held-for-the-bot-9Xq2"
Site = tuple[Deps, httpx.AsyncClient]


@pytest.fixture
async def opened(tmp_path: Path) -> AsyncIterator[Callable[..., Site]]:
    made: list[tuple[Deps, httpx.AsyncClient]] = []

    def open_site(**extra: str) -> Site:
        settings = {"MEMVAULT_DATA_DIR": str(tmp_path), "MEMVAULT_EMBEDDER": "hash", "MEMVAULT_ADMIN_TOKEN": ADMIN,
                    **extra}
        deps = build_local_deps(load_settings(settings))
        client = httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(deps)), base_url="http://memvault.test")
        made.append((deps, client))
        return deps, client

    yield open_site
    for deps, client in reversed(made):
        await client.aclose()
        await close_local_deps(deps)


async def new_key(client: httpx.AsyncClient) -> str:
    made = await client.post("/v1/admin/keys", json={"label": "bot"}, headers=ADMIN_AUTH)
    return str(made.json()["id"])


async def rows(deps: Deps) -> list[dict[str, object]]:
    return await deps.db.query("SELECT * FROM provider_keys ORDER BY key_id, provider")


async def test_a_key_is_set_listed_replaced_and_deleted_and_never_answered(opened: Callable[..., Site]) -> None:
    deps, client = opened(MEMVAULT_PROVIDER_KEY_SECRET=SECRET)
    key_id = await new_key(client)
    path = f"/v1/admin/keys/{key_id}/providers"
    set_ = await client.put(f"{path}/openai", json={"api_key": OPENAI_KEY}, headers=ADMIN_AUTH)
    assert set_.status_code == 200, set_.text
    assert set_.json() == {"id": key_id, "provider": "openai", "created_at": set_.json()["created_at"], "last4": "9Xq2"}
    await client.put(f"{path}/gemini", json={"api_key": "tiny"}, headers=ADMIN_AUTH)
    listed = (await client.get(path, headers=ADMIN_AUTH)).json()
    assert [(p["provider"], p["last4"]) for p in listed["providers"]] == [("openai", "9Xq2"), ("gemini", "")]
    stored = await rows(deps)
    assert OPENAI_KEY not in json.dumps(stored) and "tiny" not in json.dumps(stored)
    assert all(str(row["sealed"]).startswith("v1.") for row in stored)
    assert await provider_keys.key_for_call(deps, key_id, "openai") == OPENAI_KEY

    replaced = await client.put(f"{path}/openai", json={"api_key": "sk-proj-rotated-key-AbCd"}, headers=ADMIN_AUTH)
    assert replaced.json()["last4"] == "AbCd" and len(await rows(deps)) == 2
    assert await provider_keys.key_for_call(deps, key_id, "openai") == "sk-proj-rotated-key-AbCd"

    deleted = await client.delete(f"{path}/openai", headers=ADMIN_AUTH)
    assert deleted.status_code == 200 and deleted.json()["provider"] == "openai"
    assert await provider_keys.key_for_call(deps, key_id, "openai") is None
    again = await client.delete(f"{path}/openai", headers=ADMIN_AUTH)
    assert again.status_code == 404
    events = await deps.db.query("SELECT action, detail FROM event_log WHERE action LIKE 'provider_key.%' ORDER BY seq")
    assert [e["action"] for e in events] == ["provider_key.set", "provider_key.set", "provider_key.list",
                                             "provider_key.set", "provider_key.delete"]
    assert OPENAI_KEY not in json.dumps(events)


async def test_without_the_secret_nothing_is_stored_and_the_error_says_what_to_set(opened: Callable[..., Site]) -> None:
    deps, client = opened()
    key_id = await new_key(client)
    answer = await client.put(f"/v1/admin/keys/{key_id}/providers/openai", json={"api_key": OPENAI_KEY},
                              headers=ADMIN_AUTH)
    assert answer.status_code == 503
    assert answer.json()["error"]["code"] == "not_configured"
    assert "MEMVAULT_PROVIDER_KEY_SECRET" in answer.json()["error"]["message"]
    assert await rows(deps) == []
    assert (await client.get(f"/v1/admin/keys/{key_id}/providers", headers=ADMIN_AUTH)).json()["providers"] == []


@pytest.mark.parametrize(("body", "field"), [
    ({"api_key": "sk has spaces"}, "api_key"),
    ({"api_key": ""}, "api_key"),
    ({"api_key": "x" * 1025}, "api_key"),
    ({"api_key": "sk-\u00e9t\u00e9"}, "api_key"),
    ({"api_key": 12345}, "api_key"),
    ({"api_key": "sk-line\nbreak"}, "api_key"),
    ({}, "api_key"),
])
async def test_a_key_no_header_could_carry_is_refused_without_being_repeated(
    opened: Callable[..., Site], body: dict[str, object], field: str
) -> None:
    deps, client = opened(MEMVAULT_PROVIDER_KEY_SECRET=SECRET)
    key_id = await new_key(client)
    answer = await client.put(f"/v1/admin/keys/{key_id}/providers/openai", json=body, headers=ADMIN_AUTH)
    assert answer.status_code == 422, answer.text
    message = answer.json()["error"]["message"]
    given = body.get("api_key")
    assert field in message and not (isinstance(given, str) and given and given in message)
    assert await rows(deps) == []


async def test_memvault_credentials_unknown_providers_and_keys_are_refused(opened: Callable[..., Site]) -> None:
    deps, client = opened(MEMVAULT_PROVIDER_KEY_SECRET=SECRET)
    key_id = await new_key(client)
    memory_key = (await client.post("/v1/admin/keys", json={}, headers=ADMIN_AUTH)).json()["key"]
    cases = [
        (f"/v1/admin/keys/{key_id}/providers/openai", {"api_key": memory_key}, 422),
        (f"/v1/admin/keys/{key_id}/providers/mistral", {"api_key": OPENAI_KEY}, 422),
        ("/v1/admin/keys/key_nobody/providers/openai", {"api_key": OPENAI_KEY}, 404),
        (f"/v1/admin/keys/{key_id}/providers/openai", ["not", "an", "object"], 400),
    ]
    for path, body, status in cases:
        answer = await client.put(path, json=body, headers=ADMIN_AUTH)
        assert answer.status_code == status, (path, answer.text)
        assert memory_key not in answer.text
    for headers in ({}, {"Authorization": f"Bearer {memory_key}"}, {"X-Memory-Key": memory_key}):
        refused = await client.put(f"/v1/admin/keys/{key_id}/providers/openai", json={"api_key": OPENAI_KEY},
                                   headers=headers)
        assert refused.status_code == 401
        assert (await client.get(f"/v1/admin/keys/{key_id}/providers", headers=headers)).status_code == 401
    assert await rows(deps) == []


async def test_revoking_a_memory_key_deletes_its_provider_keys(opened: Callable[..., Site]) -> None:
    deps, client = opened(MEMVAULT_PROVIDER_KEY_SECRET=SECRET)
    key_id, other = await new_key(client), await new_key(client)
    for owner in (key_id, other):
        await client.put(f"/v1/admin/keys/{owner}/providers/anthropic", json={"api_key": "sk-ant-x-1234567890"},
                         headers=ADMIN_AUTH)
    await client.delete(f"/v1/admin/keys/{key_id}", headers=ADMIN_AUTH)
    assert [row["key_id"] for row in await rows(deps)] == [other]
    late = await client.put(f"/v1/admin/keys/{key_id}/providers/openai", json={"api_key": OPENAI_KEY},
                            headers=ADMIN_AUTH)
    assert late.status_code == 404 and (await client.get(f"/v1/admin/keys/{key_id}/providers",
                                                          headers=ADMIN_AUTH)).status_code == 404


async def test_a_sealed_key_copied_to_another_row_does_not_open(opened: Callable[..., Site]) -> None:
    deps, client = opened(MEMVAULT_PROVIDER_KEY_SECRET=SECRET)
    key_id, thief = await new_key(client), await new_key(client)
    await client.put(f"/v1/admin/keys/{key_id}/providers/openai", json={"api_key": OPENAI_KEY}, headers=ADMIN_AUTH)
    await client.put(f"/v1/admin/keys/{thief}/providers/openai", json={"api_key": "sk-thief-own-key-0000"},
                     headers=ADMIN_AUTH)
    sealed = (await deps.db.query("SELECT sealed FROM provider_keys WHERE key_id = ?", (key_id,)))[0]["sealed"]
    await deps.db.execute("UPDATE provider_keys SET sealed = ? WHERE key_id = ?", (sealed, thief))
    await deps.db.execute("INSERT INTO provider_keys (key_id, provider, sealed, created_at) VALUES (?, 'gemini', ?, 0)",
                          (key_id, sealed))
    for owner, provider in ((thief, "openai"), (key_id, "gemini")):
        with pytest.raises(Undecryptable):
            await provider_keys.key_for_call(deps, owner, provider)
    assert await provider_keys.key_for_call(deps, key_id, "openai") == OPENAI_KEY


async def test_after_a_rotation_old_keys_still_open_and_reseal_moves_them_to_the_new_secret(
    opened: Callable[..., Site],
) -> None:
    _, client = opened(MEMVAULT_PROVIDER_KEY_SECRET=SECRET)
    key_id = await new_key(client)
    await client.put(f"/v1/admin/keys/{key_id}/providers/openai", json={"api_key": OPENAI_KEY}, headers=ADMIN_AUTH)
    rotated, client = opened(MEMVAULT_PROVIDER_KEY_SECRET=NEXT_SECRET, MEMVAULT_PROVIDER_KEY_OLD_SECRETS=SECRET)
    assert await provider_keys.key_for_call(rotated, key_id, "openai") == OPENAI_KEY
    done = (await client.post("/v1/admin/provider-keys/reseal", headers=ADMIN_AUTH)).json()
    assert done["resealed"] == 1 and done["version"] not in (SECRET, NEXT_SECRET)
    assert (await client.post("/v1/admin/provider-keys/reseal", headers=ADMIN_AUTH)).json()["resealed"] == 0
    only_new, _ = opened(MEMVAULT_PROVIDER_KEY_SECRET=NEXT_SECRET)
    assert await provider_keys.key_for_call(only_new, key_id, "openai") == OPENAI_KEY
    only_old, _ = opened(MEMVAULT_PROVIDER_KEY_SECRET=SECRET)
    with pytest.raises(Undecryptable):
        await provider_keys.key_for_call(only_old, key_id, "openai")


@pytest.mark.parametrize("value", ["not base64!", base64.b64encode(b"short").decode(), "a" * 44])
def test_a_secret_that_is_not_32_bytes_of_base64_is_refused_naming_the_setting(value: str) -> None:
    from memvault.core.errors import InvalidInput

    with pytest.raises(InvalidInput, match="MEMVAULT_PROVIDER_KEY_SECRET") as refused:
        load_settings({"MEMVAULT_PROVIDER_KEY_SECRET": value})
    assert value not in refused.value.message
