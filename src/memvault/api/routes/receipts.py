"""Receipts over HTTP: what a routed call or a search recalled, for the memory key that made it
(another key's receipt is a 404, as an absent one is). Each handler hands the path or query to the
one core operation and answers with its result."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request

from memvault.api.dependencies import DepsParam, KeyParam
from memvault.api.schemas import documented, error_responses
from memvault.core.answers import RECEIPT
from memvault.core.memory.operations import RECEIPTS, perform
from memvault.core.shapes import plain_object

router = APIRouter(prefix="/v1/memory/receipts", tags=["memory"], responses=error_responses(400, 401, 404, 422, 503))


@router.get("", response_model=None, openapi_extra=documented(RECEIPTS, query=("day", "limit")))
async def receipts_of_day(request: Request, deps: DepsParam, key: KeyParam) -> dict[str, Any]:
    """The key's receipts of one UTC day (`day=YYYY-MM-DD`, default today), newest first."""
    return plain_object(await perform(deps, key, RECEIPTS, dict(request.query_params), text=True))


@router.get("/{receipt_id}", response_model=None, openapi_extra=documented(RECEIPT))
async def receipt(receipt_id: str, deps: DepsParam, key: KeyParam) -> dict[str, Any]:
    """One receipt (the `X-Memory-Receipt` header's id), with the facts and messages it names as stored now."""
    return plain_object(await perform(deps, key, RECEIPT, {"id": receipt_id}, text=True))
