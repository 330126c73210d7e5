"""`GET /health`: liveness plus, on Workers, which bindings and secrets are present."""

from __future__ import annotations

from fastapi import APIRouter
from fastapi.responses import JSONResponse

import memvault
from memvault.api.dependencies import DepsParam
from memvault.core.health import HealthReport

router = APIRouter(tags=["health"])


@router.get("/health")
async def health(deps: DepsParam) -> JSONResponse:
    report = HealthReport(version=memvault.__version__, platform=deps.platform)
    return JSONResponse(report.to_dict(), status_code=report.http_status)
