"""The one caller resolver. Every surface hands over the credentials a request carries, as tokens
(``CallerTokens``: from headers on HTTP and MCP, from arguments and service-binding props over RPC,
from the command line), and ``resolve_caller`` turns them into the caller: the memory key a
conversation-memory call acts for, or the brain credential a brain call reads and writes with
(through ``auth_of``, the brain's chokepoint). Surfaces read their carriers; they never judge what
a token is."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from memvault.core.answers.grants import credential_of
from memvault.core.brain.scopes import Credential, auth_of
from memvault.core.credentials import keys
from memvault.core.credentials.access import AccessIdentity, access_enabled, access_identity
from memvault.core.deps import Deps
from memvault.core.errors import Forbidden, Unauthorized
from memvault.core.usage.limits import admit


@dataclass(frozen=True)
class CallerTokens:
    """What a request presents. A token named for its kind (``memory_key``, ``brain_token``) is
    that kind; a ``bearer`` counts as whichever kind it is where that kind's own is absent."""

    bearer: str | None = None
    memory_key: str | None = None
    # A memory key named by its id, where the platform vouches for the caller (a service binding's
    # props, fixed by whoever deployed the calling Worker); "" when the props name none.
    memory_key_id: str | None = None
    brain_token: str | None = None
    # A Cloudflare Access token: the email it vouches for stands in for a brain credential.
    access_assertion: str | None = None
    # A browser sent this request, one that may change something, for a page of another site. The
    # Access token rides on a cookie the browser attaches by itself, so it says nothing of what
    # the person meant then (cross-site request forgery); a credential sent in the request's own
    # headers is no cookie, and another site's page cannot know it.
    from_other_site: bool = False


class Need(StrEnum):
    MEMORY = "memory"
    BRAIN = "brain"
    EITHER = "either"  # a memory key if one is presented, else a brain credential


@dataclass(frozen=True)
class Caller:
    key: keys.MemoryKey | None = None
    credential: Credential | None = None


async def resolve_caller(deps: Deps, tokens: CallerTokens, need: Need) -> Caller:
    """The caller ``tokens`` name, as far as ``need`` asks; a missing, unknown or revoked
    credential is ``Unauthorized`` (a known brain credential asking beyond its grant, ``Forbidden``)."""
    if need is Need.EITHER:
        need = Need.MEMORY if tokens.memory_key_id is not None or _memory_secret(tokens) else Need.BRAIN
    if need is Need.MEMORY:
        if tokens.memory_key_id is not None:
            return Caller(key=await keys.key_by_id(deps.db, tokens.memory_key_id, deps.key_reads, deps.clock()))
        # A bearer of another kind is refused as a memory key, saying which kind is wanted.
        secret = _memory_secret(tokens) or tokens.bearer
        return Caller(key=await keys.authenticate(deps.db, secret, deps.key_reads, deps.clock()))
    granted = _granted_memory_key(tokens)
    if granted is not None:
        return Caller(credential=await _grant_of(deps, granted))
    return Caller(credential=await auth_of(await _brain_claim(deps, tokens), deps))


async def memory_caller(deps: Deps, tokens: CallerTokens) -> keys.MemoryKey:
    key = (await resolve_caller(deps, tokens, Need.MEMORY)).key
    if key is None:  # resolve_caller answers MEMORY with a key or raises
        raise Unauthorized("a memory key (mk_…) is required")
    return key


async def brain_caller(deps: Deps, tokens: CallerTokens) -> Credential:
    credential = (await resolve_caller(deps, tokens, Need.BRAIN)).credential
    if credential is None:  # resolve_caller answers BRAIN with a credential or raises
        raise Unauthorized("a brain credential (or a memory key granted brain scopes) is required")
    return credential


def _memory_secret(tokens: CallerTokens) -> str | None:
    if tokens.memory_key:
        return tokens.memory_key
    return tokens.bearer if tokens.bearer and keys.is_memory_key(tokens.bearer) else None


def _granted_memory_key(tokens: CallerTokens) -> str | None:
    """A memory key presented for a brain call (as its brain token, or as the bearer where no
    brain token is): it reads and writes the brain as far as its grant goes."""
    token = tokens.brain_token or tokens.bearer
    return token if token and keys.is_memory_key(token) else None


async def _grant_of(deps: Deps, secret: str) -> Credential:
    key = await keys.authenticate(deps.db, secret, deps.key_reads, deps.clock())
    credential = credential_of(key, deps.settings)
    if credential is None:
        # As for any token that is no brain credential: a key without a grant opens no brain.
        raise Unauthorized("a brain credential is required; this memory key is granted no brain scope")
    # A brain call made with a memory key is one of the key's calls: its limits count it.
    await admit(deps.db, key, deps.clock())
    return credential


async def _brain_claim(deps: Deps, tokens: CallerTokens) -> str | AccessIdentity | None:
    """The brain credential presented, else (with Access sign-in configured) the email a verified
    Access token vouches for: a credential wins, so an API client behind Access is still the
    credential it sends."""
    token = tokens.brain_token or tokens.bearer
    if token is None and tokens.access_assertion and access_enabled(deps.settings):
        if tokens.from_other_site:
            raise Forbidden("Cloudflare Access sign-in does not count for a request a page of another site made; "
                            "send a brain credential")
        return await access_identity(deps, tokens.access_assertion)
    return token
