"""What each admin operation takes, checked in one place (``Spec.values``): plain data from a JSON
body, a path, or argv becomes a typed command, or ``InvalidField`` naming the field."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

from memvault.core.contract import Flag, Identifier, IdList, Spec, Text
from memvault.core.credentials.keys import MAX_LABEL

C = TypeVar("C")
MAX_SCOPES = 64

CREATE_KEY_REQUEST = Spec("CreateKeyRequest", (
    Text("label", "A name to tell the key apart by.", max_chars=MAX_LABEL, blank=True, default=""),
    Flag("keep_archive", "Never purge this key's old memory (the nightly purge skips it).", default=False),
    IdList("brain_scopes", "Brain scopes (from MEMVAULT_BRAIN_SCOPES) whose facts its memory search and the memory "
           "router recall beside conversation memory.", most=MAX_SCOPES),
    Flag("brain_writer", "It may also write facts to its brain scopes.", default=False),
), examples=({"label": "telegram-bot", "brain_scopes": ["family", "shared"], "brain_writer": True},))
CREATE_CREDENTIAL_REQUEST = Spec("CreateCredentialRequest", (
    Text("name", "A name to recognise the credential by (default: its id).", max_chars=MAX_LABEL, blank=True,
         default=""),
    IdList("scopes", "The brain scopes it may read (from MEMVAULT_BRAIN_SCOPES).", required=True, most=MAX_SCOPES),
    Flag("writer", "It may also write facts to those scopes.", default=False),
), examples=({"name": "telegram-bot", "scopes": ["family"], "writer": True},))
REVOKE_REQUEST = Spec("RevokeRequest", (
    Identifier("id", "The id the list shows (key_…).", required=True, stored=True),
))
LIST_REQUEST = Spec("ListRequest", ())


@dataclass(frozen=True)
class CreateKey:
    label: str = ""
    keep_archive: bool = False
    brain_scopes: tuple[str, ...] | None = None
    brain_writer: bool = False


@dataclass(frozen=True)
class CreateCredential:
    scopes: tuple[str, ...]
    name: str = ""
    writer: bool = False


@dataclass(frozen=True)
class Revoke:
    id: str


@dataclass(frozen=True)
class ListAll:
    pass


Parser = Callable[[object, bool], C]


def _fields_of(spec: Spec, kind: Callable[..., C]) -> Parser[C]:
    def parse(data: object, text: bool = False) -> C:
        return kind(**spec.values(data, text=text))

    return parse


parse_create_key = _fields_of(CREATE_KEY_REQUEST, CreateKey)
parse_create_credential = _fields_of(CREATE_CREDENTIAL_REQUEST, CreateCredential)
parse_revoke = _fields_of(REVOKE_REQUEST, Revoke)
parse_list = _fields_of(LIST_REQUEST, ListAll)
