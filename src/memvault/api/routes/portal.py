"""The portal page, its two static files, and who the browser is signed in as. The page is not
part of the API, so it stays out of the OpenAPI document."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from memvault.api.dependencies import DepsParam, caller_tokens
from memvault.api.portal import page_response, static_response
from memvault.core.credentials.callers import Need, resolve_caller

router = APIRouter(tags=["portal"], include_in_schema=False)


@router.get("/portal")
async def page() -> Response:
    return page_response()


@router.get("/portal/static/{name}")
async def static_file(name: str) -> Response:
    return static_response(name)


@router.get("/portal/me")
async def me(request: Request, deps: DepsParam) -> dict[str, Any]:
    """Who the caller is: a memory key (for the conversations tab), else a brain credential or the
    Cloudflare Access identity (for the brain tab), resolved as for every other route."""
    caller = await resolve_caller(deps, caller_tokens(request.headers, method=request.method), Need.EITHER)
    if caller.key is not None:
        return {"kind": "memory", "id": caller.key.id, "name": caller.key.label or caller.key.id}
    credential = caller.credential
    assert credential is not None  # EITHER resolves one or the other, or raises
    return {"kind": "brain", "name": credential.name, "scopes": credential.ordered_scopes, "writer": credential.writer}
