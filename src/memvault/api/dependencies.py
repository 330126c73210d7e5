"""Request dependencies: the deps of the running app, the caller's memory key and the caller's
brain credential, and the one place headers are read (``header``, ``caller_tokens``): every route,
the memory router and MCP over HTTP read them here. The headers are declared once as OpenAPI
security schemes, so every route that depends on one documents it and the docs page can authorize."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated
from urllib.parse import urlsplit

from fastapi import Depends, Request, Security
from fastapi.security import APIKeyHeader, HTTPAuthorizationCredentials, HTTPBearer

from memvault.core.admin import Admin, admin_caller
from memvault.core.brain.scopes import Credential
from memvault.core.credentials.callers import CallerTokens, brain_caller, memory_caller
from memvault.core.credentials.keys import MemoryKey
from memvault.core.deps import Deps
from memvault.core.errors import InvalidField, InvalidInput

DEPS_SCOPE_KEY = "memvault.deps"
# Cloudflare Access adds this signed JWT to each request it let through.
ACCESS_JWT_HEADER = "Cf-Access-Jwt-Assertion"
SESSION_ID_HEADER = "X-Session-ID"
# Methods that only read: a page of another site may make a browser send them, but never sees the answer.
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})

# auto_error=False everywhere: a missing header is answered by our own 401, in our error envelope.
MEMORY_KEY_BEARER = HTTPBearer(
    scheme_name="memoryKey", bearerFormat="mk_…", auto_error=False,
    description="A memory key as `Authorization: Bearer mk_…` (`memvault keys create` prints one).",
)
MEMORY_KEY_HEADER = APIKeyHeader(
    name="X-Memory-Key", scheme_name="memoryKeyHeader", auto_error=False,
    description="A memory key in its own header. The memory router reads it here, since `Authorization` "
    "carries the provider's key there, or in the provider's key header when that holds a memory key.",
)
SESSION_HEADER = APIKeyHeader(
    name=SESSION_ID_HEADER, scheme_name="sessionId", auto_error=False,
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
    name=ACCESS_JWT_HEADER, scheme_name="cloudflareAccess", auto_error=False,
    description="Set by Cloudflare Access in front of a deployment that signs people in with it; "
    "the email it vouches for maps to a brain credential.",
)

ADMIN_BEARER = HTTPBearer(
    scheme_name="adminToken", auto_error=False,
    description="The admin credential (`MEMVAULT_ADMIN_TOKEN`) as `Authorization: Bearer …`; where it is not "
    "set, every admin route answers 404.",
)


def get_deps(request: Request) -> Deps:
    """This request's deps: bound per request on Workers (see ``app.serve_with``), else the app's."""
    deps: Deps = request.scope.get(DEPS_SCOPE_KEY) or request.app.state.deps
    return deps


async def request_deps(request: Request) -> Deps:
    """``get_deps`` as a route dependency: FastAPI runs a plain function dependency on a worker
    thread, a hop each call would wait for."""
    return get_deps(request)


def header(headers: Mapping[str, str], name: str) -> str | None:
    """The one reader of every header memvault takes: its value as UTF-8 text, trimmed; None when
    absent or blank. The server hands values over decoded as Latin-1 (HTTP carries bytes), so the
    bytes are read again as the UTF-8 clients send. ``headers`` looks names up case-insensitively.
    A header given twice is refused: which one counts would depend on who reads it (the local server
    takes the first, Workers join them with a comma, a proxy in front may take the last), so two
    memory keys, say, would name one caller here and another there."""
    every = getattr(headers, "getlist", None)
    if callable(every) and len(every(name.lower())) > 1:
        raise InvalidInput(f"{name} is given more than once; send it once")
    raw = headers.get(name.lower())
    if raw is None:
        return None
    if name.lower() in _ONE_VALUE and ", " in raw:
        # Workers hands a header given twice over as one value, the two joined by ", ".
        raise InvalidInput(f"{name} is given more than once (a value holding ', ' reads so); send one")
    try:
        text = raw.encode("latin-1").decode("utf-8")
    except UnicodeEncodeError:
        text = raw  # already text beyond Latin-1: handed over decoded
    except UnicodeDecodeError:
        raise InvalidField(f"{name} is not UTF-8 text") from None
    if "\ufffd" in text and name.lower() == SESSION_ID_HEADER.lower():
        # Workers hands bytes that spell no UTF-8 over as U+FFFD: two such ids would name one vault.
        raise InvalidField(f"{name} is not UTF-8 text")
    return text.strip() or None


# Headers that hold one credential or one id: none of them holds ", " (Workers' join of two).
_ONE_VALUE = frozenset(name.lower() for name in (
    "Authorization", "X-Memory-Key", "X-Memvault-Brain-Token", ACCESS_JWT_HEADER, SESSION_ID_HEADER, "X-Provider-Key",
    "x-api-key", "x-goog-api-key",
))


def bearer_token(headers: Mapping[str, str]) -> str | None:
    scheme, _, token = (header(headers, "Authorization") or "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def caller_tokens(headers: Mapping[str, str], *, bearer: bool = True, method: str = "POST") -> CallerTokens:
    """The credentials a request (of ``method``) carries, for ``core.credentials.callers`` to resolve.
    Referer, Origin and cookies never identify a caller. Without ``bearer`` (the memory router, where
    `Authorization` carries the provider's key) only the named headers count."""
    return CallerTokens(
        bearer=bearer_token(headers) if bearer else None,
        memory_key=header(headers, "X-Memory-Key"),
        brain_token=header(headers, "X-Memvault-Brain-Token"),
        access_assertion=header(headers, ACCESS_JWT_HEADER),
        from_other_site=method.upper() not in SAFE_METHODS and from_other_site(headers),
    )


def from_other_site(headers: Mapping[str, str]) -> bool:
    """Whether a browser made the request for a page of another origin: as its `Sec-Fetch-Site` says
    (a sibling subdomain is another site too), or, from a browser that sends none, as an `Origin`
    that is not this host (`null`: a sandboxed frame or a local file) shows."""
    site = header(headers, "Sec-Fetch-Site")
    if site is not None:
        return site.lower() not in ("same-origin", "none")
    origin = header(headers, "Origin")
    if origin is None:
        return False
    return origin.lower() == "null" or urlsplit(origin).netloc.lower() != (header(headers, "Host") or "").lower()


def session_header(headers: Mapping[str, str]) -> str | None:
    return header(headers, SESSION_ID_HEADER)


async def brain_credential(
    request: Request,
    deps: Annotated[Deps, Depends(request_deps)],
    _bearer: Annotated[HTTPAuthorizationCredentials | None, Security(BRAIN_BEARER)],
    _header: Annotated[str | None, Security(BRAIN_HEADER)],
    _access: Annotated[str | None, Security(ACCESS_JWT)],
) -> Credential:
    # The schemes above document the headers; caller_tokens reads them, for every surface alike.
    return await brain_caller(deps, caller_tokens(request.headers, method=request.method))


async def memory_key(
    request: Request,
    deps: Annotated[Deps, Depends(request_deps)],
    _bearer: Annotated[HTTPAuthorizationCredentials | None, Security(MEMORY_KEY_BEARER)],
    _header: Annotated[str | None, Security(MEMORY_KEY_HEADER)],
) -> MemoryKey:
    """`Authorization: Bearer mk_…` (or `X-Memory-Key`); unknown or revoked keys get 401."""
    return await memory_caller(deps, caller_tokens(request.headers, method=request.method))


async def admin(
    request: Request,
    deps: Annotated[Deps, Depends(request_deps)],
    _bearer: Annotated[HTTPAuthorizationCredentials | None, Security(ADMIN_BEARER)],
) -> Admin:
    """The admin token as `Authorization: Bearer …`: 404 where none is set, 401 when it is not this one."""
    return admin_caller(deps.settings, bearer_token(request.headers))


async def memory_router_headers(
    _key: Annotated[str | None, Security(MEMORY_KEY_HEADER)],
    _session: Annotated[str | None, Security(SESSION_HEADER)],
) -> None:
    """Documents what the memory router reads (``api/forwarding.py`` and ``api/memory_options.py``
    read it, after the body, so an error is rendered in the provider's own envelope)."""


DepsParam = Annotated[Deps, Depends(request_deps)]
KeyParam = Annotated[MemoryKey, Depends(memory_key)]
CredentialParam = Annotated[Credential, Depends(brain_credential)]
AdminParam = Annotated[Admin, Depends(admin)]
