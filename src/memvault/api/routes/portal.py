"""The portal page, its two static files, and who the browser is signed in as. The page is not
part of the API, so it stays out of the OpenAPI document."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.responses import Response

from memvault.api.dependencies import CredentialParam
from memvault.api.portal import page_response, static_response

router = APIRouter(tags=["portal"], include_in_schema=False)


@router.get("/portal")
async def page() -> Response:
    return page_response()


@router.get("/portal/static/{name}")
async def static_file(name: str) -> Response:
    return static_response(name)


@router.get("/portal/me")
async def me(credential: CredentialParam) -> dict[str, Any]:
    """The credential the request resolves to (a brain credential, or Cloudflare Access)."""
    return {"name": credential.name, "scopes": credential.ordered_scopes, "writer": credential.writer}
