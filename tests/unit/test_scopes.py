"""Credentials: parsed from one setting, matched by token hash, and turned into SQL walls."""

from __future__ import annotations

import hashlib
import json

import pytest
from starlette.datastructures import Headers

from memvault.api.dependencies import brain_token
from memvault.core.brain.scopes import (
    CredentialsMisconfigured,
    auth_of,
    parse_credentials,
    scope_filter,
    token_hash,
)
from memvault.core.errors import Forbidden, Unauthorized
from memvault.core.settings import Settings, load_settings


def _settings(spec: dict[str, object]) -> Settings:
    return load_settings({"MEMVAULT_BRAIN_CREDENTIALS": json.dumps(spec)})


SETTINGS = _settings({
    token_hash("reader"): {"name": "reader", "scopes": ["family", "business"]},
    token_hash("writer"): {"name": "writer", "scopes": ["business"], "writer": True},
})


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
def test_headers_carry_the_token(headers: dict[str, str]) -> None:
    credential = auth_of(brain_token(headers_of(headers)), SETTINGS)
    assert credential.name == "reader"
    assert credential.scopes == frozenset({"family", "business"})
    assert not credential.writer


def test_a_bare_token_is_accepted_for_rpc() -> None:
    assert auth_of("writer", SETTINGS).writer


@pytest.mark.parametrize("source", [
    None, {}, "", {"Referer": "https://memvault.example/"}, {"Authorization": "Bearer "},
    {"Authorization": "Basic cmVhZGVy"}, {"Authorization": "Bearer nope"}, "nope",
    {"Cookie": "token=reader"}, {"Origin": "https://memvault.example"},
])
def test_anything_else_is_unauthorized(source: object) -> None:
    token = brain_token(headers_of(source)) if isinstance(source, dict) else source
    with pytest.raises(Unauthorized):
        auth_of(token, SETTINGS)


@pytest.mark.parametrize("token", [["reader"], 7, 7.5, True, {"token": "reader"}, b"reader"])
def test_a_token_that_is_not_text_is_unauthorized(token: object) -> None:
    with pytest.raises(Unauthorized):
        auth_of(token, SETTINGS)


def test_no_credentials_configured_means_nobody_gets_in() -> None:
    with pytest.raises(Unauthorized):
        auth_of("reader", load_settings({}))


def test_writers_and_scopes_are_enforced() -> None:
    with pytest.raises(Forbidden):
        auth_of("reader", SETTINGS).require_writer()
    writer = auth_of("writer", SETTINGS)
    writer.require_writer()
    writer.require_scope("business")
    with pytest.raises(Forbidden):
        writer.require_scope("family")


def test_scope_filter_binds_every_scope_as_one_parameter() -> None:
    sql, params = scope_filter(auth_of("reader", SETTINGS), "m.scope")
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
        parse_credentials(raw, SETTINGS.brain_scopes)
