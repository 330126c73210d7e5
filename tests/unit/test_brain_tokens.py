"""Brain credentials in the key store: issued once, stored as a hash beside the memory keys, read
by ``auth_of`` on every call, walled to the deployment's scopes, and never mistaken for a memory
key (or the other way round)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from local_deps import MakeDeps
from memvault.core import brain
from memvault.core.brain.scopes import CredentialsMisconfigured, token_hash
from memvault.core.credentials import keys
from memvault.core.credentials.access import AccessIdentity
from memvault.core.deps import Deps
from memvault.core.errors import Forbidden, InvalidInput, NotFound, Unauthorized

ENV_CREDENTIALS = {token_hash("env-reader"): {"name": "env-reader", "scopes": ["shared"]}}


@pytest.fixture
def deps(make_deps: MakeDeps) -> Deps:
    return make_deps({"MEMVAULT_BRAIN_CREDENTIALS": json.dumps(ENV_CREDENTIALS)})


def stored_rows(deps: Deps) -> list[dict[str, object]]:
    """The key store as the database file holds it, read beside memvault."""
    with sqlite3.connect(Path(deps.settings.data_dir) / "memvault.sqlite3") as conn:
        conn.row_factory = sqlite3.Row
        return [dict(row) for row in conn.execute("SELECT * FROM memory_keys ORDER BY created_at")]


async def test_a_created_token_is_its_credential_and_only_its_hash_is_stored(deps: Deps) -> None:
    stored, token = await brain.create_brain_token(deps, ["family", "shared"], writer=True, name="alice")
    credential = await brain.auth_of(token, deps)
    assert (credential.name, credential.scopes, credential.writer) == ("alice", frozenset({"family", "shared"}), True)
    assert token.startswith(keys.BRAIN_PREFIX) and len(token) > 40
    (row,) = stored_rows(deps)
    assert row["id"] == stored.id and row["kind"] == "brain" and row["key_hash"] == token_hash(token)
    assert token not in json.dumps(row)
    assert (await brain.auth_of("env-reader", deps)).scopes == frozenset({"shared"})  # the variable still counts


async def test_revoked_and_unknown_tokens_are_refused_alike(deps: Deps) -> None:
    stored, token = await brain.create_brain_token(deps, ["family"])
    await keys.revoke_brain_key(deps.db, stored.id, deps.clock())
    refusals = []
    for guess in (token, token[:-1] + ("A" if token[-1] != "A" else "B"), keys.BRAIN_PREFIX, "bt_" + "x" * 43):
        with pytest.raises(Unauthorized) as refused:
            await brain.auth_of(guess, deps)
        refusals.append(refused.value.message)
    assert set(refusals) == {"unknown brain credential"}
    with pytest.raises(NotFound):
        await keys.revoke_brain_key(deps.db, stored.id, deps.clock())  # revoked once is revoked


async def test_memory_keys_and_brain_credentials_never_open_each_other(deps: Deps) -> None:
    memory_key, secret = await keys.create_key(deps.db, "me", deps.clock())
    stored, token = await brain.create_brain_token(deps, ["family"], writer=True)
    with pytest.raises(Unauthorized):
        await brain.auth_of(secret, deps)
    with pytest.raises(Unauthorized):
        await keys.authenticate(deps.db, token)
    with pytest.raises(Unauthorized):
        await keys.key_by_id(deps.db, stored.id)  # service-binding props naming a brain credential's id
    with pytest.raises(NotFound):
        await keys.revoke_key(deps.db, stored.id, deps.clock())
    with pytest.raises(NotFound):
        await keys.revoke_brain_key(deps.db, memory_key.id, deps.clock())
    assert [k.id for k in await keys.list_keys(deps.db)] == [memory_key.id]
    assert [k.id for k in await keys.list_brain_keys(deps.db)] == [stored.id]
    assert (await keys.key_by_id(deps.db, memory_key.id)).id == memory_key.id


async def test_a_scope_the_deployment_dropped_is_dropped_from_the_credential(deps: Deps) -> None:
    _, wide = await brain.create_brain_token(deps, ["family", "business"], writer=True)
    _, narrow = await brain.create_brain_token(deps, ["business"])
    deps.settings = deps.settings.replace(brain_scopes=("family", "shared", "travel"))
    credential = await brain.auth_of(wide, deps)
    assert credential.scopes == frozenset({"family"})
    with pytest.raises(Forbidden):
        credential.require_scope("travel")  # a scope added later never joins an old credential
    with pytest.raises(Forbidden, match="no scope this deployment still has"):
        await brain.auth_of(narrow, deps)


@pytest.mark.parametrize("scopes", [[], ["work"], ["family", "work"], [""], "family", [7], None])
async def test_creating_with_bad_scopes_is_refused_and_stores_nothing(deps: Deps, scopes: object) -> None:
    with pytest.raises(InvalidInput):
        await brain.create_brain_token(deps, scopes)
    assert stored_rows(deps) == []


@pytest.mark.parametrize("name", ["n" * 201, "two\tcolumns", "two\nlines", "bell\a"])
async def test_a_name_that_would_break_the_listing_is_refused(deps: Deps, name: str) -> None:
    with pytest.raises(InvalidInput):
        await brain.create_brain_token(deps, ["family"], name=name)
    assert stored_rows(deps) == []


async def test_a_stored_row_edited_into_nonsense_grants_nothing(deps: Deps) -> None:
    stored, token = await brain.create_brain_token(deps, ["family"])
    await deps.db.execute("UPDATE memory_keys SET scopes = ? WHERE id = ?", ("not json", stored.id))
    with pytest.raises(Forbidden):
        await brain.auth_of(token, deps)


async def test_access_users_may_name_a_stored_credential_by_id(deps: Deps) -> None:
    stored, _ = await brain.create_brain_token(deps, ["family"], name="family-reader")
    deps.settings = deps.settings.replace(
        access_users=json.dumps({"Alice@Example.com": stored.id, "bob@example.com": "env-reader",
                                 "carol@example.com": "key_0123456789abcdef"}))
    assert (await brain.auth_of(AccessIdentity("alice@example.com"), deps)).scopes == frozenset({"family"})
    assert (await brain.auth_of(AccessIdentity("bob@example.com"), deps)).name == "env-reader"
    with pytest.raises(Forbidden):
        await brain.auth_of(AccessIdentity("carol@example.com"), deps)  # an id nobody stored grants nothing
    await keys.revoke_brain_key(deps.db, stored.id, deps.clock())
    with pytest.raises(Forbidden):
        await brain.auth_of(AccessIdentity("alice@example.com"), deps)


async def test_access_users_naming_neither_a_credential_nor_an_id_is_misconfigured(deps: Deps) -> None:
    deps.settings = deps.settings.replace(access_users=json.dumps({"dave@example.com": "family-reader"}))
    with pytest.raises(CredentialsMisconfigured):
        await brain.auth_of(AccessIdentity("dave@example.com"), deps)


async def test_rpc_methods_take_a_stored_credential_and_drop_it_once_revoked(deps: Deps) -> None:
    from memvault.runtime import rpc

    stored, token = await brain.create_brain_token(deps, ["family"], writer=True)
    written = await rpc.brain_write(deps, token, {"content": "The boiler was serviced in May.", "scope": "family",
                                                  "source": "house"}, bands=False)
    found = await rpc.brain_search(deps, token, "boiler serviced")
    assert [r["id"] for r in found["results"]] == written["ids"]
    await keys.revoke_brain_key(deps.db, stored.id, deps.clock())
    with pytest.raises(Unauthorized):
        await rpc.brain_recall(deps, token, "boiler")
