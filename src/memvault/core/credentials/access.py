"""Sign-in by Cloudflare Access. Access hands every request it lets through a JWT signed with one
of the team's keys; ``access_identity`` checks it against the key set the team publishes (fetched
through the ``HttpClient`` port and kept for ``MEMVAULT_ACCESS_KEYS_TTL_SECONDS``) and returns the
email it vouches for. What that email may read is decided by ``auth_of``, as for any caller."""

from __future__ import annotations

import asyncio
import json
import string
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memvault.core.credentials.jwt import InvalidToken, RsaPublicKey, parse_rs256, verified_claims
from memvault.core.errors import MemvaultError
from memvault.core.ports import HttpClient
from memvault.core.settings import Settings

if TYPE_CHECKING:
    from memvault.core.deps import Deps

CERTS_PATH = "/cdn-cgi/access/certs"
MAX_KEY_SET_BYTES = 256 * 1024
FETCH_TIMEOUT_SECONDS = 10.0
# Access rotates its keys: a token naming a key id we do not hold refetches the set, at most this
# often, so tokens with made-up key ids cannot make us fetch on every request.
REFETCH_INTERVAL_SECONDS = 60.0


class AccessMisconfigured(MemvaultError, status=500, code="access_misconfigured"):
    """Access sign-in is half configured."""


class AccessUnavailable(MemvaultError, status=503, code="access_unavailable"):
    """The team's key set could not be fetched, so no Access token can be checked."""


# Emails are compared exactly but for the case of ASCII letters (domains are ASCII-case-insensitive,
# and providers treat local parts alike): Unicode case folding would make `straße@` and `strasse@`,
# two mailboxes, one user.
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def email_identity(email: str) -> str:
    """The form an email is compared in: trimmed, ASCII letters lower-cased, nothing else changed."""
    return email.strip().translate(_ASCII_LOWER)


@dataclass(frozen=True)
class AccessIdentity:
    """An email a verified Access token vouches for (in ``email_identity`` form)."""

    email: str


def access_enabled(settings: Settings) -> bool:
    return bool(settings.access_team_domain.strip())


def team_issuer(settings: Settings) -> str:
    """The team domain as Access writes it in ``iss``: ``https://<team>.cloudflareaccess.com``."""
    domain = settings.access_team_domain.strip().rstrip("/")
    return domain if "://" in domain else f"https://{domain}"


@dataclass
class AccessKeys:
    """The team's key set as last fetched; one per process (per isolate on Workers)."""

    keys: dict[str, RsaPublicKey] = field(default_factory=dict)
    issuer: str = ""
    fetched_at: float = float("-inf")

    async def key(self, http: HttpClient, issuer: str, key_id: str, now: float, ttl_seconds: float) -> RsaPublicKey:
        expired = issuer != self.issuer or now - self.fetched_at >= ttl_seconds
        if expired or (key_id not in self.keys and now - self.fetched_at >= REFETCH_INTERVAL_SECONDS):
            self.keys = await fetch_key_set(http, issuer)
            self.issuer, self.fetched_at = issuer, now
        found = self.keys.get(key_id)
        if found is None:
            raise InvalidToken("the token was signed with a key the Access team does not publish")
        return found


async def fetch_key_set(http: HttpClient, issuer: str) -> dict[str, RsaPublicKey]:
    """The team's RS256 keys by key id, from its certs URL; keys of other kinds are left out."""
    try:
        data = json.loads(await asyncio.wait_for(_get(http, issuer + CERTS_PATH), FETCH_TIMEOUT_SECONDS))
    except AccessUnavailable:
        raise
    except Exception as exc:  # any failure to fetch or parse means no key can be trusted
        raise AccessUnavailable(f"the Access key set could not be fetched: {type(exc).__name__}") from exc
    listed = data.get("keys") if isinstance(data, dict) else None
    keys: dict[str, RsaPublicKey] = {}
    for jwk in listed if isinstance(listed, list) else []:
        if isinstance(jwk, dict) and isinstance(jwk.get("kid"), str):
            try:
                keys[jwk["kid"]] = RsaPublicKey.from_jwk(jwk)
            except (ValueError, KeyError):
                continue
    if not keys:
        raise AccessUnavailable("the Access key set holds no RS256 key")
    return keys


async def _get(http: HttpClient, url: str) -> bytes:
    response = await http.send("GET", url, [("accept", "application/json")], b"")
    try:
        if response.status != 200:
            raise AccessUnavailable(f"the Access key set answered {response.status}")
        body = bytearray()
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > MAX_KEY_SET_BYTES:
                raise AccessUnavailable("the Access key set is too large")
        return bytes(body)
    finally:
        await response.aclose()


async def access_identity(deps: Deps, assertion: str) -> AccessIdentity:
    """The email a Cloudflare Access token vouches for, once its algorithm, key, signature,
    issuer, audience and lifetime are checked; any failure is a 401."""
    settings, now = deps.settings, deps.clock()
    if not settings.access_aud:
        raise AccessMisconfigured("MEMVAULT_ACCESS_TEAM_DOMAIN is set but MEMVAULT_ACCESS_AUD is not")
    token = parse_rs256(assertion)
    issuer = team_issuer(settings)
    key = await deps.access_keys.key(deps.http, issuer, token.key_id, now, settings.access_keys_ttl_seconds)
    claims: dict[str, Any] = verified_claims(token, key, issuer, settings.access_aud, now)
    email = claims.get("email")
    if not isinstance(email, str) or "@" not in email:
        raise InvalidToken("the Access token names no user email")
    return AccessIdentity(email_identity(email))
