"""The brain over HTTP: `/v1/brain/…`, one path and one method per operation, and the paths the
brain had before (`/memory/…`, `/recall`), kept for their callers as deprecated aliases of the same
operations with their own field names. Every handler gets the credential through the
``CredentialParam`` dependency and makes one call into ``memvault.core.brain``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from fastapi import APIRouter, Request
from fastapi.responses import Response

from memvault.api.brain_http import BrainRoute, Dialect, brain_answer, brain_input
from memvault.api.brain_schemas import answer, openapi_extra
from memvault.api.dependencies import CredentialParam, DepsParam
from memvault.api.schemas import error_responses
from memvault.core import brain
from memvault.core.errors import InvalidField

router = APIRouter(tags=["brain"], responses=error_responses(401, 403, 404, 409, 413, 422, 503, 507))

KEPT = Dialect()
ROUTES = (
    BrainRoute("POST", "/v1/brain/facts", brain.WRITE_FACTS),
    BrainRoute("POST", "/v1/brain/facts/search", brain.SEARCH_FACTS),
    BrainRoute("GET", "/v1/brain/facts/{id}/body", brain.FACT_BODY),
    BrainRoute("GET", "/v1/brain/facts/{id}/history", brain.FACT_HISTORY),
    BrainRoute("POST", "/v1/brain/facts/{id}/retire", brain.RETIRE_FACT),
    BrainRoute("POST", "/v1/brain/recall", brain.RECALL),
    BrainRoute("GET", "/v1/brain/export", brain.EXPORT_FACTS),
    BrainRoute("POST", "/v1/brain/skills", brain.REGISTER_SKILL),
    BrainRoute("GET", "/v1/brain/skills", brain.LIST_SKILLS),
    # Before /v1/brain/skills/{slug}, which would take `proposals` for a slug.
    BrainRoute("POST", "/v1/brain/skills/proposals", brain.PROPOSE_SKILL, status=201),
    BrainRoute("GET", "/v1/brain/skills/proposals", brain.LIST_SKILL_PROPOSALS),
    BrainRoute("POST", "/v1/brain/skills/proposals/{id}/confirm", brain.CONFIRM_SKILL_PROPOSAL),
    BrainRoute("POST", "/v1/brain/skills/proposals/{id}/reject", brain.REJECT_SKILL_PROPOSAL),
    BrainRoute("GET", "/v1/brain/skills/{slug}", brain.GET_SKILL),
    BrainRoute("POST", "/v1/brain/sync", brain.SYNC),
    BrainRoute("POST", "/v1/brain/consolidate", brain.CONSOLIDATE),
    BrainRoute("GET", "/v1/brain/proposals", brain.LIST_PROPOSALS),
    BrainRoute("POST", "/v1/brain/proposals/{id}/accept", brain.ACCEPT_PROPOSAL),
    BrainRoute("POST", "/v1/brain/proposals/{id}/reject", brain.REJECT_PROPOSAL),
    # The seed API's paths and names.
    BrainRoute("POST", "/memory/write", brain.WRITE_FACTS, Dialect(choices={"bands": {"on": True, "off": False}})),
    BrainRoute("POST", "/memory/ingest", brain.WRITE_FACTS, Dialect(choices={"bands": {"on": True, "off": False}})),
    BrainRoute("GET", "/memory/search", brain.SEARCH_FACTS, Dialect(renames={"q": "query", "type": "entry_type"})),
    BrainRoute("GET", "/recall", brain.RECALL, Dialect(renames={"q": "query"}, answers={"as_of": "asof"})),
    BrainRoute("GET", "/memory/body", brain.FACT_BODY, KEPT),
    BrainRoute("GET", "/memory/history", brain.FACT_HISTORY, KEPT),
    BrainRoute("GET", "/memory/export", brain.EXPORT_FACTS, KEPT),
    BrainRoute("POST", "/memory/skill", brain.REGISTER_SKILL, KEPT),
    BrainRoute("GET", "/memory/skill", brain.LIST_SKILLS, KEPT, when_given=("slug", brain.GET_SKILL)),
    BrainRoute("POST", "/memory/sync", brain.SYNC, KEPT),
    BrainRoute("POST", "/memory/consolidate", brain.CONSOLIDATE,
               Dialect(renames={"dryRun": "dry_run"}, answers={"dry_run": "dryRun"})),
    BrainRoute("GET", "/memory/proposals", brain.LIST_PROPOSALS, KEPT),
    BrainRoute("POST", "/memory/proposals/{proposal_id}/accept", brain.ACCEPT_PROPOSAL,
               Dialect(renames={"proposal_id": "id"})),
    BrainRoute("POST", "/memory/proposals/{proposal_id}/reject", brain.REJECT_PROPOSAL,
               Dialect(renames={"proposal_id": "id"})),
)


def handler(route: BrainRoute) -> Callable[[Request, DepsParam, CredentialParam], Awaitable[Response]]:
    """The one handler of an operation's path: the request's plain input, the operation, its answer."""

    async def handle(request: Request, deps: DepsParam, credential: CredentialParam) -> Response:
        op, data = await brain_input(request, route)
        try:
            result = await op.perform(deps, credential, data, text=route.in_query)
        except InvalidField as refused:
            raise refused if route.dialect is None else route.dialect.refusal(refused) from None
        return brain_answer(route, result)

    handle.__name__ = route.op.name
    return handle


for _route in ROUTES:
    router.add_api_route(
        _route.path, handler(_route), methods=[_route.method], name=_route.op.name, description=_route.op.summary,
        summary=_route.op.name.replace("_", " ").capitalize(), deprecated=_route.deprecated or None,
        openapi_extra=openapi_extra(_route), responses=answer(_route), response_class=Response,
        status_code=_route.status,
    )
