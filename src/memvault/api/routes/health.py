"""`GET /health`: liveness plus, on Workers, which bindings and secrets are present.

Secrets are reported as booleans only; the verdict (200 or 503) comes from ``core.health`` so the
safe-deploy script and this route agree on what "healthy" means.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse

from memvault.api.dependencies import DepsParam
from memvault.core.operations.health import HealthReport

router = APIRouter(tags=["health"])


@router.get("/health")
async def health(request: Request, deps: DepsParam) -> JSONResponse:
    """Liveness and version; on Workers also bindings, secrets present (booleans), the cron count
    and retired variables still set. 503 when something a deployment needs is missing."""
    # The app factory stamps the package version on the app; reading it here keeps api from
    # importing the top-level package.
    report = HealthReport(version=request.app.version, platform=deps.platform)
    return JSONResponse(report.to_dict(), status_code=report.http_status, headers={"Cache-Control": "no-store"})
