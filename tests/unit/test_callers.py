"""The one caller resolver: whatever carried the credentials (headers, a service binding's props,
arguments), the same tokens resolve to the same caller, and a token counts only as the kind it is."""

from __future__ import annotations

import json

import pytest
from starlette.datastructures import Headers

from local_deps import MakeDeps
from memvault.api.dependencies import caller_tokens, header
from memvault.core.brain.scopes import create_brain_token, token_hash
from memvault.core.credentials import keys
from memvault.core.credentials.callers import CallerTokens, Need, brain_caller, memory_caller, resolve_caller
from memvault.core.deps import Deps
from memvault.core.errors import InvalidField, Unauthorized

READER = "configured-reader"


@pytest.fixture
def deps(make_deps: MakeDeps) -> Deps:
    credentials = {token_hash(READER): {"name": "reader", "scopes": ["family"]}}
    return make_deps({"MEMVAULT_BRAIN_CREDENTIALS": json.dumps(credentials)})


def wire(headers: dict[str, str]) -> Headers:
    """Headers as the server hands them over: the bytes a client sent (UTF-8), decoded as Latin-1."""
    return Headers(raw=[(name.lower().encode(), value.encode("utf-8")) for name, value in headers.items()])


async def test_a_token_named_for_its_kind_wins_and_a_bearer_counts_as_the_kind_it_is(deps: Deps) -> None:
    mine, my_secret = await keys.create_key(deps.db, "mine", deps.clock())
    other, other_secret = await keys.create_key(deps.db, "other", deps.clock())
    _, brain_token = await create_brain_token(deps, ["shared"], writer=True, name="stored")
    cases = [
        ({"Authorization": f"Bearer {my_secret}"}, mine.id, None),
        ({"X-Memory-Key": my_secret}, mine.id, None),
        ({"X-Memory-Key": my_secret, "Authorization": f"Bearer {other_secret}"}, mine.id, None),
        ({"X-Memory-Key": my_secret, "Authorization": f"Bearer {READER}"}, mine.id, "reader"),
        ({"Authorization": f"Bearer {other_secret}", "X-Memvault-Brain-Token": brain_token}, other.id, "stored"),
        ({"authorization": f"bearer {READER}"}, None, "reader"),
        ({"X-Memvault-Brain-Token": READER, "Authorization": f"Bearer {brain_token}"}, None, "reader"),
    ]
    for headers, key_id, credential in cases:
        tokens = caller_tokens(wire(headers))
        if key_id is None:
            with pytest.raises(Unauthorized):
                await memory_caller(deps, tokens)
        else:
            assert (await memory_caller(deps, tokens)).id == key_id, headers
        if credential is None:
            with pytest.raises(Unauthorized):
                await brain_caller(deps, tokens)
        else:
            assert (await brain_caller(deps, tokens)).name == credential, headers


async def test_the_memory_router_reads_no_credential_from_authorization(deps: Deps) -> None:
    _, secret = await keys.create_key(deps.db, "router", deps.clock())
    # There Authorization carries the provider's key: even a memory key in it names no caller.
    with pytest.raises(Unauthorized, match="memory key"):
        await memory_caller(deps, caller_tokens(wire({"Authorization": f"Bearer {secret}"}), bearer=False))
    key = await memory_caller(deps, caller_tokens(wire({"X-Memory-Key": secret, "Authorization": "Bearer sk-x"}),
                                                  bearer=False))
    assert key.label == "router"


async def test_a_service_binding_names_its_key_by_id_and_only_a_memory_keys_id(deps: Deps) -> None:
    key, _ = await keys.create_key(deps.db, "bot", deps.clock())
    stored, _ = await create_brain_token(deps, ["family"])
    assert (await memory_caller(deps, CallerTokens(memory_key_id=key.id))).label == "bot"
    for named in ("", "key_0000000000000000", stored.id):
        with pytest.raises(Unauthorized):
            await memory_caller(deps, CallerTokens(memory_key_id=named))
    await keys.revoke_key(deps.db, key.id, deps.clock(), deps.reads)
    with pytest.raises(Unauthorized, match="revoked"):
        await memory_caller(deps, CallerTokens(memory_key_id=key.id))


async def test_either_is_the_memory_key_when_one_is_presented_else_the_brain_credential(deps: Deps) -> None:
    key, secret = await keys.create_key(deps.db, "portal", deps.clock())
    memory = await resolve_caller(deps, CallerTokens(bearer=secret), Need.EITHER)
    assert memory.key is not None and memory.key.id == key.id and memory.credential is None
    brain = await resolve_caller(deps, CallerTokens(bearer=READER), Need.EITHER)
    assert brain.key is None and brain.credential is not None and brain.credential.name == "reader"
    for nothing in (CallerTokens(), CallerTokens(bearer="mk_nobody"), CallerTokens(bearer="nobody")):
        with pytest.raises(Unauthorized):
            await resolve_caller(deps, nothing, Need.EITHER)


def test_headers_are_read_as_the_utf8_clients_send_and_blank_is_absent() -> None:
    assert header(wire({"X-Session-ID": "café ☕"}), "X-Session-ID") == "café ☕"
    assert header(wire({"X-Session-ID": "  "}), "X-Session-ID") is None
    assert header(wire({}), "X-Session-ID") is None
    assert header({"x-session-id": "plain"}, "X-Session-ID") == "plain"
    broken = Headers(raw=[(b"x-session-id", b"caf\xe9")])  # Latin-1 bytes, not UTF-8
    with pytest.raises(InvalidField, match="X-Session-ID is not UTF-8 text"):
        header(broken, "X-Session-ID")
    assert caller_tokens(wire({"Referer": "https://x/?token=t", "Cookie": "token=t"})) == CallerTokens()
