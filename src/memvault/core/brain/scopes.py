"""Credentials and scope walls. ``auth_of`` is the one chokepoint: every brain route, MCP tool
and resource, RPC method and the portal turn a token (or an email Cloudflare Access vouched for)
into a ``Credential`` here, and every brain read binds ``scope_filter(credential)`` into its SQL.
Credentials come from ``MEMVAULT_BRAIN_CREDENTIALS`` (the deployment's own, for bootstrap) and
from the key store (``memvault brain-token create``); a memory key granted brain scopes stands for
a credential of those scopes (``core/answers/grants.py``), walled by the same SQL."""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from memvault.core.credentials import keys
from memvault.core.credentials.access import AccessIdentity, email_identity
from memvault.core.deps import Deps
from memvault.core.errors import Forbidden, InvalidField, InvalidInput, MemvaultError, Unauthorized
from memvault.core.settings import Settings


class CredentialsMisconfigured(MemvaultError):
    status = 500
    code = "credentials_misconfigured"


@dataclass(frozen=True)
class Credential:
    name: str
    scopes: frozenset[str]
    writer: bool

    def require_writer(self) -> None:
        if not self.writer:
            raise Forbidden("this credential may read but not write; use the write credential")

    def require_scope(self, scope: str) -> None:
        if scope not in self.scopes:
            raise Forbidden(f"this credential may not write to scope {scope!r}")

    @property
    def ordered_scopes(self) -> list[str]:
        return sorted(self.scopes)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def maintenance_credential(settings: Settings) -> Credential:
    """For the nightly cron only: it walks every scope and never answers a caller."""
    return Credential(name="maintenance", scopes=frozenset(settings.brain_scopes), writer=True)


def check_scope(scope: object, settings: Settings) -> str:
    """A scope a write names: one of the deployment's scopes, or bad input."""
    if not isinstance(scope, str) or scope not in settings.brain_scopes:
        raise InvalidField(f"scope must be one of {', '.join(settings.brain_scopes)}")
    return scope


@functools.lru_cache(maxsize=8)
def parse_credentials(raw: str, scopes: tuple[str, ...]) -> dict[str, Credential]:
    try:
        data = json.loads(raw or "{}")
    except ValueError as exc:
        raise CredentialsMisconfigured("MEMVAULT_BRAIN_CREDENTIALS is not valid JSON") from exc
    if not isinstance(data, dict):
        raise CredentialsMisconfigured("MEMVAULT_BRAIN_CREDENTIALS must be a JSON object")
    parsed: dict[str, Credential] = {}
    for digest, spec in data.items():
        parsed[_checked_digest(digest)] = _credential(digest, spec, scopes)
    return parsed


def _checked_digest(digest: Any) -> str:
    text = str(digest).lower()
    if len(text) != 64 or any(c not in "0123456789abcdef" for c in text):
        raise CredentialsMisconfigured("MEMVAULT_BRAIN_CREDENTIALS keys must be sha256 hex digests")
    return text


def _credential(digest: str, spec: Any, known: Sequence[str]) -> Credential:
    if not isinstance(spec, dict):
        raise CredentialsMisconfigured("each brain credential must be an object")
    scopes = spec.get("scopes")
    if not isinstance(scopes, list) or not scopes or any(s not in known for s in scopes):
        raise CredentialsMisconfigured(f"brain credential scopes must be a non-empty subset of {list(known)}")
    writer = spec.get("writer", False)
    if not isinstance(writer, bool):
        raise CredentialsMisconfigured("brain credential `writer` must be true or false")
    name = str(spec.get("name") or digest[:8])
    return Credential(name=name, scopes=frozenset(scopes), writer=writer)


# A stored brain credential's id, as `memvault brain-token list` shows it.
STORED_ID = re.compile(r"key_[0-9a-f]{16}")


@functools.lru_cache(maxsize=8)
def parse_access_users(raw: str, credentials: str, scopes: tuple[str, ...]) -> dict[str, Credential | str]:
    """``MEMVAULT_ACCESS_USERS``: email (``email_identity``) -> the credential of the name it gives in
    ``MEMVAULT_BRAIN_CREDENTIALS``, or the id of a stored brain credential (looked up on each
    request, so revoking it takes the grant away at once)."""
    try:
        data = json.loads(raw or "{}")
    except ValueError as exc:
        raise CredentialsMisconfigured("MEMVAULT_ACCESS_USERS is not valid JSON") from exc
    if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
        raise CredentialsMisconfigured("MEMVAULT_ACCESS_USERS must map emails to brain credential names or ids")
    by_name: dict[str, list[Credential]] = {}
    for credential in parse_credentials(credentials, scopes).values():
        by_name.setdefault(credential.name, []).append(credential)
    users: dict[str, Credential | str] = {}
    for email, name in data.items():
        named = by_name.get(name, [])
        if len(named) > 1 or (not named and not STORED_ID.fullmatch(name)):
            raise CredentialsMisconfigured(
                "each value in MEMVAULT_ACCESS_USERS must name exactly one credential of MEMVAULT_BRAIN_CREDENTIALS"
                " or be the id of a stored brain credential"
            )
        identity, granted = email_identity(str(email)), named[0] if named else name
        if users.get(identity, granted) != granted:
            raise CredentialsMisconfigured(f"MEMVAULT_ACCESS_USERS names {identity} twice, with different credentials")
        users[identity] = granted
    return users


async def auth_of(token: object, deps: Deps) -> Credential:
    """Map a token (taken from the request by the surface that received it), or the identity a
    verified Cloudflare Access token carries, to its credential: one of
    ``MEMVAULT_BRAIN_CREDENTIALS``, else one stored in the key store (read on every call, never
    cached, so a revocation holds at once in every process). Anything but a known token string or
    a mapped identity is refused alike, an unknown token as a revoked one."""
    settings = deps.settings
    if isinstance(token, AccessIdentity):
        granted = parse_access_users(settings.access_users, settings.brain_credentials, settings.brain_scopes).get(token.email)
        if isinstance(granted, str):
            stored = await keys.brain_key(deps.db, "id", granted, deps.clock())
            granted = None if stored is None else _allowed(stored, settings)
        if granted is None:
            # Access proved who the caller is; nobody granted that person any scope.
            raise Forbidden("this Cloudflare Access user is granted no brain credential")
        return granted
    if not isinstance(token, str) or not token.strip():
        raise Unauthorized("a brain credential (or a memory key granted brain scopes) is required")
    digest = token_hash(token)
    found: Credential | None = None
    # Compare against every configured hash, so timing does not reveal which one was close.
    for known, credential in parse_credentials(settings.brain_credentials, settings.brain_scopes).items():
        if hmac.compare_digest(known, digest):
            found = credential
    if found is not None:
        return found
    stored = await keys.brain_key(deps.db, "key_hash", digest, deps.clock()) if token.startswith(keys.BRAIN_PREFIX) else None
    if stored is None:
        raise Unauthorized("unknown brain credential")
    return _allowed(stored, settings)


def _allowed(stored: keys.BrainKey, settings: Settings) -> Credential:
    """A stored credential reads only the scopes it was granted that the deployment still has: a
    scope removed from ``MEMVAULT_BRAIN_SCOPES`` is gone from it too, and one added later never
    joins it."""
    scopes = frozenset(stored.scopes) & frozenset(settings.brain_scopes)
    if not scopes:
        raise Forbidden("this brain credential holds no scope this deployment still has")
    return Credential(name=stored.name, scopes=scopes, writer=stored.writer)


async def create_brain_token(
    deps: Deps, scopes: Any, writer: bool = False, name: str = "",
    also: Callable[[str], Sequence[keys.Statement]] | None = None,
) -> tuple[keys.BrainKey, str]:
    """Issue a brain credential in the key store: the token is returned once, only its hash kept
    (``also``: statements that land with it, from its id)."""
    if not isinstance(scopes, list | tuple) or not scopes or not all(isinstance(s, str) for s in scopes):
        raise InvalidInput(f"scopes must name at least one of {', '.join(deps.settings.brain_scopes)}")
    granted = tuple(dict.fromkeys(check_scope(s.strip(), deps.settings) for s in scopes))
    if not isinstance(name, str) or not name.isprintable():
        raise InvalidInput("name must be printable text (no tabs or line breaks)")
    return await keys.create_brain_key(deps.db, name.strip(), granted, bool(writer), deps.clock(), also)


def scope_filter(credential: Credential, column: str = "scope") -> tuple[str, list[str]]:
    """The wall every brain read carries, with its bound parameters. The scopes travel as one JSON
    array parameter, so a credential of any number of scopes costs one of the statement's 100
    bound parameters (D1's limit) and id lists beside it keep their full batches."""
    return f"{column} IN (SELECT value FROM json_each(?))", [scope_list(credential)]


def scope_list(credential: Credential) -> str:
    """The credential's scopes as the JSON array ``scope_filter`` binds."""
    scopes = credential.ordered_scopes
    if not scopes:
        raise Forbidden("this credential may read no scope")
    return json.dumps(scopes, separators=(",", ":"))
