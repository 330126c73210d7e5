"""Conversation memory over HTTP: each handler hands what the request carries (its JSON body, or
its query and path) to one core operation, whose parser is the only check, and answers with the
operation's result as it is."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Request, Response

from memvault.api.dependencies import DepsParam, KeyParam, session_header
from memvault.api.memory_options import RECEIPT_HEADER
from memvault.api.schemas import documented, error_responses
from memvault.core.answers import SEARCH
from memvault.core.errors import InvalidField
from memvault.core.memory.operations import CLEAR, FORGET, PURGE, READ, STATS, STORE, perform
from memvault.core.shapes import plain_object

router = APIRouter(prefix="/v1/memory", tags=["memory"], responses=error_responses(400, 401, 409, 413, 422, 503, 507))

# The body as JSON, unchecked: the operation's parser checks it (and names what is wrong).
JsonBody = Annotated[Any, Body()]


def _with_session(body: object, session_id: str | None) -> object:
    """The body with the session `X-Session-ID` names, which must be the one the body names, if any."""
    if session_id is None or not isinstance(body, dict):
        return body
    if body.get("session_id") not in (None, session_id):
        raise InvalidField("session_id: X-Session-ID and the body name different sessions")
    return {**body, "session_id": session_id}


@router.post("", response_model=None, openapi_extra=documented(STORE, body=True))
async def store(request: Request, deps: DepsParam, key: KeyParam, body: JsonBody = None) -> dict[str, Any]:
    """Store messages in order (`X-Session-ID`, or `session_id`, writes to a session vault); each is findable at once."""
    data = _with_session(body, session_header(request.headers))
    return plain_object(await perform(deps, key, STORE, data))


@router.get("", response_model=None, openapi_extra=documented(READ, query=("session_id", "limit", "offset")))
async def read(request: Request, deps: DepsParam, key: KeyParam) -> dict[str, Any]:
    """One page of a vault's messages, newest first, read from the vault itself (never behind)."""
    return plain_object(await perform(deps, key, READ, dict(request.query_params), text=True))


@router.post("/search", response_model=None, openapi_extra=documented(SEARCH, body=True))
async def search(response: Response, deps: DepsParam, key: KeyParam, body: JsonBody = None) -> dict[str, Any]:
    """Hybrid search (keyword and vector) of the key's memory: the best messages that fit the budget
    (`X-Memory-Receipt` names the search's receipt)."""
    result = await perform(deps, key, SEARCH, body)
    if result.receipt is not None:
        response.headers[RECEIPT_HEADER] = result.receipt
    return plain_object(result)


@router.delete("", response_model=None, openapi_extra=documented(CLEAR, query=("session_id", "reset")))
async def clear(request: Request, deps: DepsParam, key: KeyParam) -> dict[str, Any]:
    """Clear every vault of the key, or one session's; `reset=true` also forgets the embedding dimension."""
    return plain_object(await perform(deps, key, CLEAR, dict(request.query_params), text=True))


@router.post("/forget", response_model=None, openapi_extra=documented(FORGET, body=True))
async def forget_many(deps: DepsParam, key: KeyParam, body: JsonBody = None) -> dict[str, Any]:
    """Forget messages by id (as stored, or as search items list them in `source_ids`); any id, as JSON text."""
    return plain_object(await perform(deps, key, FORGET, body))


@router.delete("/{message_id:any_text}", response_model=None, openapi_extra=documented(FORGET, query=("session_id",)))
async def forget(message_id: str, request: Request, deps: DepsParam, key: KeyParam) -> dict[str, Any]:
    """Forget one message (its id as stored, or as search items list it in `source_ids`), percent-encoded in the path."""
    if not message_id:
        raise InvalidField("DELETE /v1/memory/ needs a message id after the slash; DELETE /v1/memory clears all memory")
    data = {**request.query_params, "ids": [message_id]}
    return plain_object(await perform(deps, key, FORGET, data, text=True))


@router.post("/purge", response_model=None, openapi_extra=documented(PURGE, body=True))
async def purge(deps: DepsParam, key: KeyParam, body: JsonBody = None) -> dict[str, Any]:
    """Delete memory older than `older_than` from vault and mirror together."""
    return plain_object(await perform(deps, key, PURGE, body))


@router.get("/stats", response_model=None, openapi_extra=documented(STATS))
async def stats(deps: DepsParam, key: KeyParam) -> dict[str, Any]:
    """Counts per vault, vault and mirror side by side, and the read cache's hits and misses."""
    return plain_object(await perform(deps, key, STATS, {}))
