"""The admin operations as every surface calls them: ``perform(deps, admin, OPERATION, data)``
parses ``data`` with the operation's one parser and runs it. Each action writes its event log row
in the same batch as its change (a list, which changes nothing, writes its row alone); the row
names the actor, the action and the id, never a label or a secret."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar

from memvault.core.admin import commands as c
from memvault.core.admin.credential import Admin
from memvault.core.admin.results import (
    CredentialList,
    IssuedCredential,
    IssuedMemoryKey,
    MemoryKeyList,
    Revoked,
    credential_info,
    key_info,
    state,
)
from memvault.core.brain.scopes import create_brain_token
from memvault.core.contract import Spec
from memvault.core.credentials import keys, provider_keys
from memvault.core.deps import Deps
from memvault.core.errors import InvalidField

C = TypeVar("C")
R = TypeVar("R")
Kind = Literal["memory", "brain"]
_EVENT = "INSERT INTO event_log (at, actor, action, memory_id, scope, source, detail) "


@dataclass(frozen=True)
class AdminOperation(Generic[C, R]):
    """One admin operation: its name, what it takes (``request``), its one parser, what it does,
    and what it answers (``result``)."""

    name: str
    request: Spec
    parse: c.Parser[C]
    run: Callable[[Deps, Admin, C], Awaitable[R]]
    result: type


async def perform(deps: Deps, admin: Admin, operation: AdminOperation[C, R], data: object, text: bool = False) -> R:
    """Parse ``data`` as ``operation`` takes it (nothing runs if it is refused), then run it."""
    return await operation.run(deps, admin, operation.parse(data, text))


def _event(at: float, admin: Admin, action: str, kind: Kind, key_id: str | None = None) -> keys.Statement:
    detail = json.dumps({"kind": kind, **({"id": key_id} if key_id else {})}, sort_keys=True)
    return _EVENT + "VALUES (?, ?, ?, NULL, NULL, 'admin', ?)", (at, admin.actor, action, detail)


def _revoke_event(at: float, admin: Admin, action: str, kind: Kind, key_id: str) -> keys.Statement:
    """Runs before the revoking update in its batch: written only if the row is still active then."""
    detail = json.dumps({"id": key_id, "kind": kind}, sort_keys=True)
    return (_EVENT + "SELECT ?, ?, ?, NULL, NULL, 'admin', ? WHERE EXISTS "
            "(SELECT 1 FROM memory_keys WHERE id = ? AND kind = ? AND revoked_at IS NULL)",
            (at, admin.actor, action, detail, key_id, kind))


def _created(at: float, admin: Admin, action: str, kind: Kind) -> Callable[[str], Sequence[keys.Statement]]:
    return lambda key_id: [_event(at, admin, action, kind, key_id)]


async def _create_key(deps: Deps, admin: Admin, command: c.CreateKey) -> IssuedMemoryKey:
    now = deps.clock()
    scopes = _granted_scopes(command.brain_scopes or (), deps)
    key, secret = await keys.create_key(deps.db, command.label, now, command.keep_archive,
                                        also=_created(now, admin, "key.create", "memory"), brain_scopes=scopes,
                                        brain_writer=command.brain_writer)
    return IssuedMemoryKey(key.id, key.label, key.created_at, key.keep_archive, secret, key.brain_scopes,
                           key.brain_writer)


def _granted_scopes(scopes: tuple[str, ...], deps: Deps) -> tuple[str, ...]:
    for index, scope in enumerate(scopes):
        if scope not in deps.settings.brain_scopes:
            raise InvalidField(f"brain_scopes[{index}] must be one of {', '.join(deps.settings.brain_scopes)}")
    return scopes


async def _list_keys(deps: Deps, admin: Admin, command: c.ListAll) -> MemoryKeyList:
    await deps.db.batch([_event(deps.clock(), admin, "key.list", "memory")])
    return MemoryKeyList(tuple(key_info(key) for key in await keys.list_keys(deps.db)))


async def _revoke_key(deps: Deps, admin: Admin, command: c.Revoke) -> Revoked:
    now = deps.clock()
    await keys.revoke_key(deps.db, command.id, now, deps.reads,
                          also=[_revoke_event(now, admin, "key.revoke", "memory", command.id),
                                provider_keys.forget_all(command.id)])
    return Revoked(command.id, now)


async def _create_credential(deps: Deps, admin: Admin, command: c.CreateCredential) -> IssuedCredential:
    now = deps.clock()
    stored, token = await create_brain_token(deps, list(command.scopes), command.writer, command.name,
                                             also=_created(now, admin, "credential.create", "brain"))
    return IssuedCredential(stored.id, stored.name, stored.scopes, stored.writer, state(stored.revoked_at),
                            stored.created_at, token)


async def _list_credentials(deps: Deps, admin: Admin, command: c.ListAll) -> CredentialList:
    await deps.db.batch([_event(deps.clock(), admin, "credential.list", "brain")])
    return CredentialList(tuple(credential_info(stored) for stored in await keys.list_brain_keys(deps.db)))


async def _revoke_credential(deps: Deps, admin: Admin, command: c.Revoke) -> Revoked:
    now = deps.clock()
    await keys.revoke_brain_key(deps.db, command.id, now,
                                also=[_revoke_event(now, admin, "credential.revoke", "brain", command.id)])
    return Revoked(command.id, now)


CREATE_KEY = AdminOperation("create_key", c.CREATE_KEY_REQUEST, c.parse_create_key, _create_key, IssuedMemoryKey)
LIST_KEYS = AdminOperation("list_keys", c.LIST_REQUEST, c.parse_list, _list_keys, MemoryKeyList)
REVOKE_KEY = AdminOperation("revoke_key", c.REVOKE_REQUEST, c.parse_revoke, _revoke_key, Revoked)
CREATE_CREDENTIAL = AdminOperation("create_credential", c.CREATE_CREDENTIAL_REQUEST, c.parse_create_credential,
                                   _create_credential, IssuedCredential)
LIST_CREDENTIALS = AdminOperation("list_credentials", c.LIST_REQUEST, c.parse_list, _list_credentials,
                                  CredentialList)
REVOKE_CREDENTIAL = AdminOperation("revoke_credential", c.REVOKE_REQUEST, c.parse_revoke, _revoke_credential, Revoked)
OPERATIONS: tuple[AdminOperation[Any, Any], ...] = (
    CREATE_KEY, LIST_KEYS, REVOKE_KEY, CREATE_CREDENTIAL, LIST_CREDENTIALS, REVOKE_CREDENTIAL)
