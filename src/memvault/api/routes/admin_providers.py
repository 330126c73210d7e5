"""The admin surface for the provider keys held for memory keys (`/v1/admin/keys/{id}/providers…`):
set, delete and list them, and reseal them under a new sealing secret. Each handler hands the path
and body to one core admin operation, whose parser is the only check."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body

from memvault.api.dependencies import AdminParam, DepsParam
from memvault.api.schemas import documented, error_responses
from memvault.core.admin import (
    DELETE_PROVIDER_KEY,
    LIST_PROVIDER_KEYS,
    RESEAL_PROVIDER_KEYS,
    SET_PROVIDER_KEY,
    perform,
)
from memvault.core.shapes import plain_object

router = APIRouter(prefix="/v1/admin", tags=["admin"], responses=error_responses(400, 401, 404, 413, 422, 503))
JsonBody = Annotated[Any, Body()]


@router.put("/keys/{key_id}/providers/{provider}", response_model=None,
            openapi_extra=documented(SET_PROVIDER_KEY, body=True))
async def set_provider_key(key_id: str, provider: str, deps: DepsParam, admin: AdminParam,
                           body: JsonBody = None) -> dict[str, Any]:
    """Store (or replace) the memory key's key for `provider` (openai, anthropic, gemini), sealed;
    it is never returned. 503 where `MEMVAULT_PROVIDER_KEY_SECRET` is not set."""
    data = {"id": key_id, "provider": provider, "body": body}
    return plain_object(await perform(deps, admin, SET_PROVIDER_KEY, data, text=True))


@router.delete("/keys/{key_id}/providers/{provider}", response_model=None,
               openapi_extra=documented(DELETE_PROVIDER_KEY))
async def delete_provider_key(key_id: str, provider: str, deps: DepsParam, admin: AdminParam) -> dict[str, Any]:
    """Delete the memory key's key for `provider`; 404 when none is stored."""
    data = {"id": key_id, "provider": provider}
    return plain_object(await perform(deps, admin, DELETE_PROVIDER_KEY, data, text=True))


@router.get("/keys/{key_id}/providers", response_model=None, openapi_extra=documented(LIST_PROVIDER_KEYS))
async def list_provider_keys(key_id: str, deps: DepsParam, admin: AdminParam) -> dict[str, Any]:
    """The providers the memory key holds a key for: when each was set and at most its last 4 characters."""
    return plain_object(await perform(deps, admin, LIST_PROVIDER_KEYS, {"id": key_id}, text=True))


@router.post("/provider-keys/reseal", response_model=None, openapi_extra=documented(RESEAL_PROVIDER_KEYS))
async def reseal_provider_keys(deps: DepsParam, admin: AdminParam) -> dict[str, Any]:
    """Seal every stored provider key again under the current `MEMVAULT_PROVIDER_KEY_SECRET` (after
    a rotation, with the earlier secret in `MEMVAULT_PROVIDER_KEY_OLD_SECRETS`)."""
    return plain_object(await perform(deps, admin, RESEAL_PROVIDER_KEYS, {}))
