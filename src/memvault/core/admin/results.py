"""What each admin operation answers, on every surface (HTTP, the CLI): secrets appear once, in
the answer of the call that created them, and never in a list."""

from __future__ import annotations

from dataclasses import dataclass, field

from memvault.core.credentials import keys
from memvault.core.shapes import doc

_STATE = "active or revoked."
_BRAIN_SCOPES = "The brain scopes whose facts its memory search and the memory router recall (empty: none)."
_BRAIN_WRITER = "Whether it may also write facts to those scopes."
_LAST_USED = ("When a request last authenticated with it, in epoch seconds, to within a minute (a memory key "
              "answered from the read cache is noted when the cached lookup runs out); null if never.")


@dataclass(frozen=True)
class MemoryKeyInfo:
    """A memory key as the key store holds it (never its secret)."""

    id: str = field(metadata=doc("The key's id (key_…), which revokes it."))
    label: str = field(metadata=doc("The name it was given."))
    state: str = field(metadata=doc(_STATE))
    created_at: float = field(metadata=doc("When it was created, in epoch seconds."))
    revoked_at: float | None = field(metadata=doc("When it was revoked, or null."))
    last_used_at: float | None = field(metadata=doc(_LAST_USED))
    keep_archive: bool = field(metadata=doc("Whether the nightly purge leaves its old memory alone."))
    brain_scopes: tuple[str, ...] = field(default=(), metadata=doc(_BRAIN_SCOPES))
    brain_writer: bool = field(default=False, metadata=doc(_BRAIN_WRITER))


@dataclass(frozen=True)
class IssuedMemoryKey:
    """A new memory key: ``key`` is its secret, shown this once (only its hash is stored)."""

    id: str = field(metadata=doc("The key's id (key_…)."))
    label: str = field(metadata=doc("The name it was given."))
    created_at: float = field(metadata=doc("When it was created, in epoch seconds."))
    keep_archive: bool = field(metadata=doc("Whether the nightly purge leaves its old memory alone."))
    key: str = field(metadata=doc("The secret (mk_…): keep it, it is never shown again."))
    brain_scopes: tuple[str, ...] = field(default=(), metadata=doc(_BRAIN_SCOPES))
    brain_writer: bool = field(default=False, metadata=doc(_BRAIN_WRITER))


@dataclass(frozen=True)
class MemoryKeyList:
    keys: tuple[MemoryKeyInfo, ...] = field(metadata=doc("Every memory key, oldest first."))


@dataclass(frozen=True)
class CredentialInfo:
    """A brain credential as the key store holds it (never its token)."""

    id: str = field(metadata=doc("The credential's id (key_…), which revokes it."))
    name: str = field(metadata=doc("The name it was given (its id when none was)."))
    scopes: tuple[str, ...] = field(metadata=doc("The scopes it was granted."))
    writer: bool = field(metadata=doc("Whether it may write facts."))
    state: str = field(metadata=doc(_STATE))
    created_at: float = field(metadata=doc("When it was created, in epoch seconds."))
    revoked_at: float | None = field(metadata=doc("When it was revoked, or null."))
    last_used_at: float | None = field(metadata=doc(_LAST_USED))


@dataclass(frozen=True)
class IssuedCredential:
    """A new brain credential: ``token`` is its secret, shown this once (only its hash is stored)."""

    id: str = field(metadata=doc("The credential's id (key_…)."))
    name: str = field(metadata=doc("The name it was given (its id when none was)."))
    scopes: tuple[str, ...] = field(metadata=doc("The scopes it was granted."))
    writer: bool = field(metadata=doc("Whether it may write facts."))
    state: str = field(metadata=doc(_STATE))
    created_at: float = field(metadata=doc("When it was created, in epoch seconds."))
    token: str = field(metadata=doc("The secret (bt_…): keep it, it is never shown again."))


@dataclass(frozen=True)
class CredentialList:
    credentials: tuple[CredentialInfo, ...] = field(metadata=doc("Every brain credential in the key store, oldest first."))


@dataclass(frozen=True)
class Revoked:
    id: str = field(metadata=doc("The id revoked."))
    revoked_at: float = field(metadata=doc("When, in epoch seconds; it is refused from then on."))


def state(revoked_at: float | None) -> str:
    return "active" if revoked_at is None else "revoked"


def key_info(key: keys.MemoryKey) -> MemoryKeyInfo:
    return MemoryKeyInfo(key.id, key.label, state(key.revoked_at), key.created_at, key.revoked_at, key.last_used_at,
                         key.keep_archive, key.brain_scopes, key.brain_writer)


def credential_info(stored: keys.BrainKey) -> CredentialInfo:
    return CredentialInfo(stored.id, stored.name, stored.scopes, stored.writer, state(stored.revoked_at),
                          stored.created_at, stored.revoked_at, stored.last_used_at)
