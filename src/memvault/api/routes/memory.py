"""Conversation memory over HTTP: each handler translates one request into one core call."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Header, Query

from memvault.api.dependencies import DepsParam, KeyParam
from memvault.api.schemas import (
    MemoryPage,
    PurgeRequest,
    SearchRequest,
    SearchResponse,
    StoreRequest,
    StoreResponse,
    error_responses,
)
from memvault.core import memory
from memvault.core.memory.messages import messages_from
from memvault.core.memory.read import MAX_OFFSET, MAX_PAGE
from memvault.core.times import parse_time, require_time

router = APIRouter(prefix="/v1/memory", tags=["memory"], responses=error_responses(400, 401, 409, 413, 422, 503, 507))
SessionHeader = Annotated[str | None, Header(alias="X-Session-ID", max_length=200)]


@router.post("", response_model=StoreResponse)
async def store(body: StoreRequest, deps: DepsParam, key: KeyParam, session_id: SessionHeader = None) -> StoreResponse:
    """Store messages in order (`X-Session-ID` writes to a session vault); each is findable at once."""
    plain = body.model_dump(by_alias=True)
    messages = messages_from(plain["messages"], deps.clock(), plain["metadata"])
    result = await memory.store_conversation(deps, key.id, [m for m in messages if m], session_id)
    return StoreResponse(
        message_ids=[None if m is None else m.id for m in messages],
        messages_accepted=result.messages_accepted,
        messages_stored=result.rows_stored,
        chunks_stored=result.chunks_stored,
        tokens_buffered=result.tokens_buffered,
        updated_at=result.updated_at,
        redactions=list(result.redactions),
        mirrored=result.mirrored,
    )


@router.get("", response_model=MemoryPage)
async def read(
    deps: DepsParam,
    key: KeyParam,
    session_id: Annotated[str | None, Query(min_length=1, max_length=200)] = None,
    limit: Annotated[int | None, Query(ge=1, le=MAX_PAGE)] = None,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
) -> dict[str, object]:
    """One page of a vault's messages, newest first, read from the vault itself (never behind)."""
    return await memory.memory_page(deps, key.id, session_id, limit, offset)


@router.post("/search", response_model=SearchResponse)
async def search(body: SearchRequest, deps: DepsParam, key: KeyParam) -> SearchResponse:
    """Hybrid search (keyword and vector) of the key's memory: the best messages that fit the budget."""
    result = await memory.search_memory(
        deps,
        key.id,
        body.query,
        limit=body.limit,
        budget_tokens=body.budget_tokens,
        now=parse_time(body.now, "now"),
        session_id=body.session_id,
    )
    return SearchResponse(items=result.items, tokens=result.tokens, metrics=result.metrics)


@router.delete("")
async def clear(
    deps: DepsParam,
    key: KeyParam,
    session_id: Annotated[str | None, Query(min_length=1, max_length=200)] = None,
    reset: bool = False,
) -> dict[str, object]:
    """Clear every vault of the key, or one session's; `reset=true` also forgets the embedding dimension."""
    cleared = await memory.clear_memory(deps, key.id, session_id, reset)
    return {"cleared_vaults": len(cleared), "reset": reset}


@router.delete("/{message_id}")
async def forget(
    message_id: str,
    deps: DepsParam,
    key: KeyParam,
    session_id: Annotated[str | None, Query(min_length=1, max_length=200)] = None,
) -> dict[str, list[str]]:
    """Forget one message (its id as stored, or as search items list it in `source_ids`)."""
    return await memory.forget(deps, key.id, [message_id], session_id)


@router.post("/purge")
async def purge(body: PurgeRequest, deps: DepsParam, key: KeyParam) -> dict[str, int]:
    """Delete memory older than `older_than` from vault and mirror together."""
    removed = await memory.purge_old_memory(deps, key.id, require_time(body.older_than, "older_than"))
    return {"rows_deleted": removed}


@router.get("/stats")
async def stats(deps: DepsParam, key: KeyParam) -> dict[str, object]:
    """Counts per vault, vault and mirror side by side, and the read cache's hits and misses."""
    return await memory.memory_stats(deps, key.id)
