"""The portal page, its two static files, and who the browser is signed in as. The page is not
part of the API, so it stays out of the OpenAPI document."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import Response

from memvault.api.dependencies import DepsParam, bearer_token, brain_caller
from memvault.api.portal import page_response, static_response
from memvault.core.brain.scopes import auth_of
from memvault.core.keys import PREFIX, authenticate

router = APIRouter(tags=["portal"], include_in_schema=False)


@router.get("/portal")
async def page() -> Response:
    return page_response()


@router.get("/portal/static/{name}")
async def static_file(name: str) -> Response:
    return static_response(name)


@router.get("/portal/me")
async def me(request: Request, deps: DepsParam) -> dict[str, Any]:
    """Who a bearer is: a memory key (``mk_…``, for the conversations tab), else a brain credential
    or the Cloudflare Access identity (for the brain tab), each checked as the API routes check it."""
    token = bearer_token(request.headers)
    if token is not None and token.startswith(PREFIX):
        key = await authenticate(deps.db, token, deps.reads)
        return {"kind": "memory", "id": key.id, "name": key.label or key.id}
    credential = await auth_of(await brain_caller(request.headers, deps), deps)
    return {"kind": "brain", "name": credential.name, "scopes": credential.ordered_scopes, "writer": credential.writer}
