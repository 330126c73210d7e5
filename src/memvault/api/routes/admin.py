"""The admin surface over HTTP (`/v1/admin/…`): memory keys and brain credentials, for the holder
of the admin token. Each handler hands what the request carries to one core admin operation,
whose parser is the only check; without `MEMVAULT_ADMIN_TOKEN` set every route here answers 404."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body

from memvault.api.dependencies import AdminParam, DepsParam
from memvault.api.schemas import documented, error_responses
from memvault.core.admin import (
    CREATE_CREDENTIAL,
    CREATE_KEY,
    LIST_CREDENTIALS,
    LIST_KEYS,
    REVOKE_CREDENTIAL,
    REVOKE_KEY,
    perform,
)
from memvault.core.shapes import plain_object

router = APIRouter(prefix="/v1/admin", tags=["admin"], responses=error_responses(400, 401, 404, 413, 422, 503))
JsonBody = Annotated[Any, Body()]


@router.post("/keys", response_model=None, openapi_extra=documented(CREATE_KEY, body=True))
async def create_key(deps: DepsParam, admin: AdminParam, body: JsonBody = None) -> dict[str, Any]:
    """Create a memory key: its secret (`key`) is in this answer only."""
    return plain_object(await perform(deps, admin, CREATE_KEY, body))


@router.get("/keys", response_model=None, openapi_extra=documented(LIST_KEYS))
async def list_keys(deps: DepsParam, admin: AdminParam) -> dict[str, Any]:
    """Every memory key, oldest first, never a secret."""
    return plain_object(await perform(deps, admin, LIST_KEYS, {}))


@router.delete("/keys/{key_id}", response_model=None, openapi_extra=documented(REVOKE_KEY))
async def revoke_key(key_id: str, deps: DepsParam, admin: AdminParam) -> dict[str, Any]:
    """Revoke a memory key by id; 404 when no active key has it."""
    return plain_object(await perform(deps, admin, REVOKE_KEY, {"id": key_id}, text=True))


@router.post("/credentials", response_model=None, openapi_extra=documented(CREATE_CREDENTIAL, body=True))
async def create_credential(deps: DepsParam, admin: AdminParam, body: JsonBody = None) -> dict[str, Any]:
    """Create a brain credential: its secret (`token`) is in this answer only."""
    return plain_object(await perform(deps, admin, CREATE_CREDENTIAL, body))


@router.get("/credentials", response_model=None, openapi_extra=documented(LIST_CREDENTIALS))
async def list_credentials(deps: DepsParam, admin: AdminParam) -> dict[str, Any]:
    """Every brain credential of the key store, oldest first, never a token."""
    return plain_object(await perform(deps, admin, LIST_CREDENTIALS, {}))


@router.delete("/credentials/{key_id}", response_model=None, openapi_extra=documented(REVOKE_CREDENTIAL))
async def revoke_credential(key_id: str, deps: DepsParam, admin: AdminParam) -> dict[str, Any]:
    """Revoke a brain credential by id; 404 when no active credential has it."""
    return plain_object(await perform(deps, admin, REVOKE_CREDENTIAL, {"id": key_id}, text=True))
