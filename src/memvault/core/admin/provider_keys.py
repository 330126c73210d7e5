"""The admin operations on the provider keys held for memory keys: set (or replace), delete, list,
and reseal under a new sealing secret. Only the admin caller runs them: a memory key cannot set
its own provider key, since whoever holds a leaked memory key could then point the owner's calls
at a provider account of their choosing. Each writes its event log row (actor, action, key id and
provider, never the key) in the batch of its change."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from memvault.core.admin.credential import Admin
from memvault.core.admin.operations import AdminOperation
from memvault.core.contract import Choice, Identifier, Rule, Spec
from memvault.core.credentials import keys
from memvault.core.credentials import provider_keys as store
from memvault.core.deps import Deps
from memvault.core.errors import InvalidField
from memvault.core.shapes import doc

MAX_API_KEY_CHARS = 1024
_EVENT = ("INSERT INTO event_log (at, actor, action, memory_id, scope, source, detail) "
          "SELECT ?, ?, ?, NULL, NULL, 'admin', ? WHERE ")


@dataclass(frozen=True)
class ProviderSecret(Rule):
    """A provider's API key as it travels in a header: printable ASCII without spaces. The message
    of a refusal never repeats the value."""

    def parse(self, value: object, where: str) -> str:
        if not isinstance(value, str) or not 1 <= len(value) <= MAX_API_KEY_CHARS or not all(
            "!" <= c <= "~" for c in value
        ):
            raise InvalidField(f"{where} must be 1 to {MAX_API_KEY_CHARS} printable ASCII characters without spaces")
        if keys.is_memory_key(value) or value.startswith(keys.BRAIN_PREFIX):
            raise InvalidField(f"{where} is a memvault credential, not a provider's key")
        return value

    def schema(self) -> dict[str, Any]:
        return {"type": "string", "minLength": 1, "maxLength": MAX_API_KEY_CHARS, "pattern": "^[!-~]+$"}


_KEY_ID = Identifier("id", "The memory key's id (key_…), as `memvault keys list` shows it.", required=True,
                     stored=True)
_PROVIDER = Choice("provider", "The provider the key is for.", required=True, options=store.PROVIDERS)
SET_BODY = Spec("SetProviderKeyRequest", (
    ProviderSecret("api_key", "The provider's API key; stored sealed, never shown again.", required=True),
), examples=({"api_key": "sk-…"},))
PROVIDER_REQUEST = Spec("ProviderKeyRequest", (_KEY_ID, _PROVIDER))
KEY_REQUEST = Spec("ProviderKeysRequest", (_KEY_ID,))
RESEAL_REQUEST = Spec("ResealRequest", ())


@dataclass(frozen=True)
class SetProviderKey:
    id: str
    provider: str
    api_key: str = field(repr=False)


@dataclass(frozen=True)
class ProviderOf:
    id: str
    provider: str


@dataclass(frozen=True)
class KeyOf:
    id: str


@dataclass(frozen=True)
class Reseal:
    pass


def parse_set(data: object, text: bool = False) -> SetProviderKey:
    """``{"id", "provider", "body"}``: the path's two fields and the request body."""
    where = PROVIDER_REQUEST.values(data, text=text)
    body = data.get("body") if isinstance(data, dict) else None
    return SetProviderKey(where["id"], where["provider"], SET_BODY.values(body)["api_key"])


def parse_provider(data: object, text: bool = False) -> ProviderOf:
    return ProviderOf(**PROVIDER_REQUEST.values(data, text=text))


def parse_key(data: object, text: bool = False) -> KeyOf:
    return KeyOf(**KEY_REQUEST.values(data, text=text))


def parse_reseal(data: object, text: bool = False) -> Reseal:
    RESEAL_REQUEST.values(data, text=text)
    return Reseal()


_TAIL = "At most the key's last 4 characters (none for a key shorter than 12), to tell keys apart."


@dataclass(frozen=True)
class ProviderKeyInfo:
    """A provider key held for a memory key, as any answer shows it: never the key."""

    provider: str = field(metadata=doc("openai, anthropic or gemini."))
    created_at: float = field(metadata=doc("When it was set (or last replaced), in epoch seconds."))
    last4: str = field(metadata=doc(_TAIL))


@dataclass(frozen=True)
class ProviderKeySet:
    id: str = field(metadata=doc("The memory key's id."))
    provider: str = field(metadata=doc("openai, anthropic or gemini."))
    created_at: float = field(metadata=doc("When it was set, in epoch seconds."))
    last4: str = field(metadata=doc(_TAIL))


@dataclass(frozen=True)
class ProviderKeyList:
    id: str = field(metadata=doc("The memory key's id."))
    providers: tuple[ProviderKeyInfo, ...] = field(metadata=doc("The providers it holds a key for."))


@dataclass(frozen=True)
class ProviderKeyDeleted:
    id: str = field(metadata=doc("The memory key's id."))
    provider: str = field(metadata=doc("The provider whose key was deleted."))
    deleted_at: float = field(metadata=doc("When, in epoch seconds; calls carry their own key from then on."))


@dataclass(frozen=True)
class Resealed:
    resealed: int = field(metadata=doc("How many stored keys were sealed under an earlier secret and are now "
                                       "sealed under the current one."))
    version: str = field(metadata=doc("The current sealing secret's version (a fingerprint, not the secret)."))


def _event(deps: Deps, admin: Admin, action: str, detail: dict[str, str], key_id: str | None) -> keys.Statement:
    """The event row; with ``key_id`` written only while that memory key is active."""
    at, text = deps.clock(), json.dumps(detail, sort_keys=True)
    if key_id is None:
        return _EVENT + "1", (at, admin.actor, action, text)
    return _EVENT + store.ACTIVE_MEMORY_KEY, (at, admin.actor, action, text, key_id)


async def _set(deps: Deps, admin: Admin, command: SetProviderKey) -> ProviderKeySet:
    event = _event(deps, admin, "provider_key.set", {"id": command.id, "provider": command.provider}, command.id)
    stored = await store.set_key(deps, command.id, command.provider, command.api_key, also=[event])
    return ProviderKeySet(command.id, stored.provider, stored.created_at, stored.last4)


async def _delete(deps: Deps, admin: Admin, command: ProviderOf) -> ProviderKeyDeleted:
    event = _event(deps, admin, "provider_key.delete", {"id": command.id, "provider": command.provider}, None)
    await store.delete_key(deps, command.id, command.provider, also=[event])
    return ProviderKeyDeleted(command.id, command.provider, deps.clock())


async def _list(deps: Deps, admin: Admin, command: KeyOf) -> ProviderKeyList:
    found = await store.list_keys(deps, command.id)
    await deps.db.batch([_event(deps, admin, "provider_key.list", {"id": command.id}, None)])
    return ProviderKeyList(command.id, tuple(ProviderKeyInfo(k.provider, k.created_at, k.last4) for k in found))


async def _reseal(deps: Deps, admin: Admin, command: Reseal) -> Resealed:
    count, version = await store.reseal_all(deps, also=[_event(deps, admin, "provider_key.reseal", {}, None)])
    return Resealed(count, version)


SET_PROVIDER_KEY = AdminOperation("set_provider_key", SET_BODY, parse_set, _set, ProviderKeySet)
DELETE_PROVIDER_KEY = AdminOperation("delete_provider_key", PROVIDER_REQUEST, parse_provider, _delete,
                                     ProviderKeyDeleted)
LIST_PROVIDER_KEYS = AdminOperation("list_provider_keys", KEY_REQUEST, parse_key, _list, ProviderKeyList)
RESEAL_PROVIDER_KEYS = AdminOperation("reseal_provider_keys", RESEAL_REQUEST, parse_reseal, _reseal, Resealed)
PROVIDER_KEY_OPERATIONS: tuple[AdminOperation[Any, Any], ...] = (
    SET_PROVIDER_KEY, DELETE_PROVIDER_KEY, LIST_PROVIDER_KEYS, RESEAL_PROVIDER_KEYS)
