"""Credentials: from one setting or the key store, matched by token hash, and turned into SQL walls."""

from __future__ import annotations

import hashlib
import json

import pytest
from starlette.datastructures import Headers

from local_deps import MakeDeps
from memvault.api.dependencies import caller_tokens
from memvault.core.brain.scopes import (
    CredentialsMisconfigured,
    auth_of,
    parse_credentials,
    scope_filter,
    token_hash,
)
from memvault.core.credentials.callers import brain_caller
from memvault.core.deps import Deps
from memvault.core.errors import Forbidden, Unauthorized
from memvault.core.settings import load_settings

CREDENTIALS = {
    token_hash("reader"): {"name": "reader", "scopes": ["family", "business"]},
    token_hash("writer"): {"name": "writer", "scopes": ["business"], "writer": True},
}


@pytest.fixture
def deps(make_deps: MakeDeps) -> Deps:
    return make_deps({"MEMVAULT_BRAIN_CREDENTIALS": json.dumps(CREDENTIALS)})


def headers_of(raw: dict[str, str]) -> Headers:
    """Request headers as the API layer sees them (names looked up case-insensitively)."""
    return Headers(raw)


def test_token_hash_is_sha256_hex() -> None:
    assert token_hash("abc") == hashlib.sha256(b"abc").hexdigest()


@pytest.mark.parametrize("headers", [
    {"Authorization": "Bearer reader"},
    {"authorization": "bearer reader"},
    {"X-Memvault-Brain-Token": "reader"},
])
async def test_headers_carry_the_token(headers: dict[str, str], deps: Deps) -> None:
    credential = await brain_caller(deps, caller_tokens(headers_of(headers)))
    assert credential.name == "reader"
    assert credential.scopes == frozenset({"family", "business"})
    assert not credential.writer


async def test_a_bare_token_is_accepted_for_rpc(deps: Deps) -> None:
    assert (await auth_of("writer", deps)).writer


@pytest.mark.parametrize("source", [
    None, {}, "", {"Referer": "https://memvault.example/"}, {"Authorization": "Bearer "},
    {"Authorization": "Basic cmVhZGVy"}, {"Authorization": "Bearer nope"}, "nope",
    {"Cookie": "token=reader"}, {"Origin": "https://memvault.example"},
])
async def test_anything_else_is_unauthorized(source: object, deps: Deps) -> None:
    with pytest.raises(Unauthorized):
        if isinstance(source, dict):
            await brain_caller(deps, caller_tokens(headers_of(source)))
        else:
            await auth_of(source, deps)


@pytest.mark.parametrize("token", [["reader"], 7, 7.5, True, {"token": "reader"}, b"reader"])
async def test_a_token_that_is_not_text_is_unauthorized(token: object, deps: Deps) -> None:
    with pytest.raises(Unauthorized):
        await auth_of(token, deps)


async def test_no_credentials_configured_means_nobody_gets_in(deps: Deps) -> None:
    deps.settings = deps.settings.replace(brain_credentials="{}")
    with pytest.raises(Unauthorized):
        await auth_of("reader", deps)


async def test_writers_and_scopes_are_enforced(deps: Deps) -> None:
    with pytest.raises(Forbidden):
        (await auth_of("reader", deps)).require_writer()
    writer = await auth_of("writer", deps)
    writer.require_writer()
    writer.require_scope("business")
    with pytest.raises(Forbidden):
        writer.require_scope("family")


async def test_scope_filter_binds_every_scope_as_one_parameter(deps: Deps) -> None:
    sql, params = scope_filter(await auth_of("reader", deps), "m.scope")
    assert sql == "m.scope IN (SELECT value FROM json_each(?))"
    assert params == ['["business","family"]']


@pytest.mark.parametrize("raw", [
    "not json",
    "[]",
    json.dumps({"short": {"scopes": ["family"]}}),
    json.dumps({token_hash("x"): {"scopes": []}}),
    json.dumps({token_hash("x"): {"scopes": ["work"]}}),
    json.dumps({token_hash("x"): {"scopes": ["family"], "writer": "yes"}}),
    json.dumps({token_hash("x"): ["family"]}),
])
def test_misconfiguration_is_loud(raw: str) -> None:
    with pytest.raises(CredentialsMisconfigured):
        parse_credentials(raw, load_settings({}).brain_scopes)
