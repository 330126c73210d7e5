"""The brain over HTTP. Each handler resolves the credential through ``auth_of`` (the one
chokepoint, reached by the ``CredentialParam`` dependency) and makes one call into
``memvault.core.brain``."""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query
from fastapi.responses import Response

from memvault.api.brain_schemas import ConsolidateRequest, SkillIn, SyncRequest, WriteRequest
from memvault.api.dependencies import CredentialParam, DepsParam
from memvault.api.schemas import NDJSON, error_responses
from memvault.core import brain

router = APIRouter(tags=["brain"], responses=error_responses(400, 401, 403, 404, 409, 413, 422, 503, 507))

Bands = Annotated[Literal["on", "off"], Query(description="`off` skips the write-time bands (bulk imports).")]
AsOf = Annotated[str | None, Query(description="Unix seconds or ISO 8601: read the brain as it was then.")]


@router.post("/memory/write")
@router.post("/memory/ingest")
async def write(body: WriteRequest, deps: DepsParam, credential: CredentialParam, bands: Bands = "on") -> dict[str, Any]:
    """Write one fact or a batch (writer credentials, within their scopes); idempotent per source and text."""
    return await brain.ingest_facts(deps, credential, body.model_dump(exclude_unset=True), bands == "on")


@router.get("/memory/search")
async def search(
    deps: DepsParam, credential: CredentialParam, q: str = "", mode: str = "keyword", as_of: AsOf = None,
    entry_type: Annotated[str | None, Query(alias="type")] = None, limit: int | None = None,
) -> dict[str, Any]:
    """Search the facts the credential may read: `keyword` (exact tokens count) or `hybrid`."""
    return await brain.search_brain(deps, credential, q, mode, as_of, entry_type, limit)


@router.get("/recall")
async def recall(
    deps: DepsParam, credential: CredentialParam, q: str | None = None, as_of: AsOf = None, budget: int | None = None
) -> dict[str, Any]:
    """One envelope within a token budget: pinned core, recent facts, and what matches `q`."""
    return await brain.recall(deps, credential, q, as_of, budget)


@router.get("/memory/body")
async def body(deps: DepsParam, credential: CredentialParam, id: str = "") -> dict[str, Any]:
    """A fact's full text (hook and body); absent and walled facts are both 404."""
    return await brain.get_body(deps, credential, id)


@router.get("/memory/history")
async def history(deps: DepsParam, credential: CredentialParam, id: str = "") -> dict[str, Any]:
    """A fact's supersession chain, oldest first, within the credential's scopes."""
    return await brain.history(deps, credential, id)


@router.get(
    "/memory/export",
    response_class=Response,
    responses={200: {"description": "Every fact the credential may read, one JSON object per line.", "content": NDJSON}},
)
async def export(deps: DepsParam, credential: CredentialParam, source_prefix: str | None = None) -> Response:
    """Every fact the credential may read, superseded ones included, as JSON lines."""
    rows = await brain.export_rows(deps, credential, source_prefix)
    lines = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    return Response(lines, media_type="application/x-ndjson")


@router.post("/memory/skill")
async def register_skill(body: SkillIn, deps: DepsParam, credential: CredentialParam) -> dict[str, Any]:
    """Register a skill (a named procedure) or a new version of one; writer credentials only."""
    return await brain.register_skill(deps, credential, body.model_dump(exclude_unset=True))


@router.get("/memory/skill")
async def skill(
    deps: DepsParam, credential: CredentialParam, slug: str | None = None, scope: str | None = None,
    version: int | None = None,
) -> dict[str, Any]:
    """Without `slug`, the skills the credential may read; with it, that skill (latest or `version`)."""
    if slug is None:
        return await brain.list_skills(deps, credential)
    return await brain.get_skill(deps, credential, slug, scope, version)


@router.post("/memory/sync")
async def sync(body: SyncRequest, deps: DepsParam, credential: CredentialParam) -> dict[str, Any]:
    """Keep a folder of notes in step: `push` reconciles its facts, `pull` returns what changed since."""
    return await brain.sync(deps, credential, body.model_dump(exclude_unset=True))


@router.post("/memory/consolidate")
async def consolidate(deps: DepsParam, credential: CredentialParam, body: ConsolidateRequest | None = None) -> dict[str, Any]:
    """Find duplicates, updates, merges and broken chains, as proposals (a dry run unless `dryRun` is false)."""
    return await brain.consolidate(deps, credential, body.model_dump(exclude_unset=True) if body else {})


@router.get("/memory/proposals")
async def proposals(
    deps: DepsParam, credential: CredentialParam,
    status: Annotated[str | None, Query(description="open (default), accepted, rejected, stale or all.")] = None,
    limit: int | None = None,
) -> dict[str, Any]:
    """Consolidation proposals over the credential's scopes, newest first."""
    return await brain.list_proposals(deps, credential, status, limit)


@router.post("/memory/proposals/{proposal_id}/accept")
async def accept_proposal(proposal_id: str, deps: DepsParam, credential: CredentialParam) -> dict[str, Any]:
    """Apply a proposal (writers of its scope): supersede, never delete; 409 if a fact changed since."""
    return await brain.accept_proposal(deps, credential, proposal_id)


@router.post("/memory/proposals/{proposal_id}/reject")
async def reject_proposal(proposal_id: str, deps: DepsParam, credential: CredentialParam) -> dict[str, Any]:
    """Mark a proposal rejected; nothing else changes."""
    return await brain.reject_proposal(deps, credential, proposal_id)
