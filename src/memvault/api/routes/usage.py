"""Usage and limits over HTTP: a memory key reads its own usage (`/v1/usage`); the admin reads
every key's and sets a key's limits (`/v1/admin/…`). Each handler hands what the request carries
to one core usage operation, whose parser is the only check."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Request

from memvault.api.dependencies import AdminParam, DepsParam, KeyParam
from memvault.api.schemas import documented, error_responses
from memvault.core.shapes import plain_object
from memvault.core.usage.operations import ADMIN_USAGE, GET_LIMITS, SET_LIMITS, USAGE, perform

router = APIRouter(tags=["memory"], responses=error_responses(401, 422, 503))
admin_router = APIRouter(prefix="/v1/admin", tags=["admin"], responses=error_responses(401, 404, 413, 422, 503))
JsonBody = Annotated[Any, Body()]
QUERY = ("from", "to", "group_by")


@router.get("/v1/usage", response_model=None, openapi_extra=documented(USAGE, query=QUERY))
async def usage(request: Request, deps: DepsParam, key: KeyParam) -> dict[str, Any]:
    """The key's usage per UTC day (or per model), today unless `from`/`to` say otherwise."""
    return plain_object(await perform(deps, key, USAGE, dict(request.query_params), text=True))


@admin_router.get("/usage", response_model=None, openapi_extra=documented(ADMIN_USAGE, query=QUERY))
async def admin_usage(request: Request, deps: DepsParam, admin: AdminParam) -> dict[str, Any]:
    """Every key's usage per UTC day, model or key (`group_by=key`)."""
    return plain_object(await perform(deps, admin, ADMIN_USAGE, dict(request.query_params), text=True))


@admin_router.get("/keys/{key_id}/limits", response_model=None, openapi_extra=documented(GET_LIMITS))
async def get_limits(key_id: str, deps: DepsParam, admin: AdminParam) -> dict[str, Any]:
    """A memory key's limits; 404 when no active key has the id."""
    return plain_object(await perform(deps, admin, GET_LIMITS, {"id": key_id}, text=True))


@admin_router.put("/keys/{key_id}/limits", response_model=None, openapi_extra=documented(SET_LIMITS, body=True))
async def set_limits(key_id: str, deps: DepsParam, admin: AdminParam, body: JsonBody = None) -> dict[str, Any]:
    """Set every limit of a memory key at once (a limit left out or null is removed)."""
    data = {**body, "id": key_id} if isinstance(body, dict) else body
    return plain_object(await perform(deps, admin, SET_LIMITS, data))
