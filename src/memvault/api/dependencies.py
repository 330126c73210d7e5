"""Request dependencies: the deps of the running app, the caller's memory key and the caller's
brain credential."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated

from fastapi import Depends, Request

from memvault.core.access import AccessIdentity, access_enabled, access_identity
from memvault.core.brain.scopes import Credential, auth_of
from memvault.core.deps import Deps
from memvault.core.errors import Unauthorized
from memvault.core.keys import MemoryKey, authenticate

DEPS_SCOPE_KEY = "memvault.deps"
# Cloudflare Access adds this signed JWT to each request it let through.
ACCESS_JWT_HEADER = "cf-access-jwt-assertion"


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


async def brain_credential(request: Request, deps: Annotated[Deps, Depends(get_deps)]) -> Credential:
    return await auth_of(await brain_caller(request.headers, deps), deps)


async def memory_key(request: Request, deps: Annotated[Deps, Depends(get_deps)]) -> MemoryKey:
    """`Authorization: Bearer mk_…` (or `X-Memory-Key`); unknown or revoked keys get 401."""
    token = bearer_token(request.headers) or request.headers.get("x-memory-key")
    if token is None:
        raise Unauthorized("send the memory key as `Authorization: Bearer mk_…`")
    return await authenticate(deps.db, token, deps.reads)


DepsParam = Annotated[Deps, Depends(get_deps)]
KeyParam = Annotated[MemoryKey, Depends(memory_key)]
CredentialParam = Annotated[Credential, Depends(brain_credential)]
