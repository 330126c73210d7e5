"""Request dependencies: the deps of the running app, the caller's memory key and the caller's
brain credential. The headers each dependency reads are declared here once as OpenAPI security
schemes, so every route that depends on one documents it and the docs page can authorize."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated

from fastapi import Depends, Request, Security
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from memvault.core.access import AccessIdentity, access_enabled, access_identity
from memvault.core.brain.scopes import Credential, auth_of
from memvault.core.deps import Deps
from memvault.core.errors import Unauthorized
from memvault.core.keys import MemoryKey, authenticate

DEPS_SCOPE_KEY = "memvault.deps"
# Cloudflare Access adds this signed JWT to each request it let through.
ACCESS_JWT_HEADER = "cf-access-jwt-assertion"

# auto_error=False everywhere: a missing header is answered by our own 401, in our error envelope.
MEMORY_KEY_BEARER = HTTPBearer(
    scheme_name="memoryKey", bearerFormat="mk_…", auto_error=False,
    description="A memory key as `Authorization: Bearer mk_…` (`memvault keys create` prints one).",
)
MEMORY_KEY_HEADER = APIKeyHeader(
    name="X-Memory-Key", scheme_name="memoryKeyHeader", auto_error=False,
    description="A memory key in its own header. The memory router reads it only here, since "
    "`Authorization` carries the provider's key there.",
)
SESSION_HEADER = APIKeyHeader(
    name="X-Session-ID", scheme_name="sessionId", auto_error=False,
    description="Optional on the memory router: the session vault a call reads and writes (not a secret).",
)
BRAIN_BEARER = HTTPBearer(
    scheme_name="brainCredential", auto_error=False,
    description="A brain credential as `Authorization: Bearer <token>` (`memvault brain-token create` prints one).",
)
BRAIN_HEADER = APIKeyHeader(
    name="X-Memvault-Brain-Token", scheme_name="brainCredentialHeader", auto_error=False,
    description="A brain credential in its own header.",
)
ACCESS_JWT = APIKeyHeader(
    name="Cf-Access-Jwt-Assertion", scheme_name="cloudflareAccess", auto_error=False,
    description="Set by Cloudflare Access in front of a deployment that signs people in with it; "
    "the email it vouches for maps to a brain credential.",
)


def get_deps(request: Request) -> Deps:
    """This request's deps: bound per request on Workers (see ``app.serve_with``), else the app's."""
    deps: Deps = request.scope.get(DEPS_SCOPE_KEY) or request.app.state.deps
    return deps


def bearer_token(headers: Mapping[str, str]) -> str | None:
    header = headers.get("authorization", "")
    scheme, _, token = header.partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def brain_token(headers: Mapping[str, str]) -> str | None:
    """The brain credential a request carries: `Authorization: Bearer` or `X-Memvault-Brain-Token`.
    Referer, Origin and cookies never identify a caller. ``headers`` looks names up case-insensitively."""
    return bearer_token(headers) or (headers.get("x-memvault-brain-token") or "").strip() or None


async def brain_caller(headers: Mapping[str, str], deps: Deps) -> str | AccessIdentity | None:
    """Who a brain request claims to be: the brain credential it carries, else (with Access
    sign-in configured) the email its verified Access token vouches for. A credential wins, so an
    API client behind Access is still the credential it sends."""
    token = brain_token(headers)
    assertion = (headers.get(ACCESS_JWT_HEADER) or "").strip()
    if token is None and assertion and access_enabled(deps.settings):
        return await access_identity(deps, assertion)
    return token


async def brain_credential(
    request: Request,
    deps: Annotated[Deps, Depends(get_deps)],
    _bearer: Annotated[HTTPAuthorizationCredentials | None, Security(BRAIN_BEARER)],
    _header: Annotated[str | None, Security(BRAIN_HEADER)],
    _access: Annotated[str | None, Security(ACCESS_JWT)],
) -> Credential:
    # The schemes above document the headers; brain_caller reads them, as the portal's sign-in does.
    return await auth_of(await brain_caller(request.headers, deps), deps)


async def memory_key(
    deps: Annotated[Deps, Depends(get_deps)],
    bearer: Annotated[HTTPAuthorizationCredentials | None, Security(MEMORY_KEY_BEARER)],
    header: Annotated[str | None, Security(MEMORY_KEY_HEADER)],
) -> MemoryKey:
    """`Authorization: Bearer mk_…` (or `X-Memory-Key`); unknown or revoked keys get 401."""
    token = (bearer.credentials.strip() if bearer else "") or (header or "").strip()
    if not token:
        raise Unauthorized("send the memory key as `Authorization: Bearer mk_…`")
    return await authenticate(deps.db, token, deps.reads)


def memory_router_headers(
    _key: Annotated[str | None, Security(MEMORY_KEY_HEADER)],
    _session: Annotated[str | None, Security(SESSION_HEADER)],
) -> None:
    """Documents what the memory router reads (``api/forwarding.py`` and ``api/memory_options.py``
    read it, after the body, so an error is rendered in the provider's own envelope)."""


DepsParam = Annotated[Deps, Depends(get_deps)]
KeyParam = Annotated[MemoryKey, Depends(memory_key)]
CredentialParam = Annotated[Credential, Depends(brain_credential)]
