"""The API's reference pages, `/docs` (Swagger UI) and `/redoc` (ReDoc), over `/openapi.json`.

Given a folder holding the pages' scripts and stylesheet (the local composition root finds it in
an installed package), the pages load them from this server, so they render with no network. Without
one (the Worker, whose bundle stays small) the app keeps FastAPI's own pages, whose assets the
reader's browser loads from a CDN. Either way the document is the same: every operation described,
tagged, and secured by the schemes ``api/dependencies.py`` declares."""

from __future__ import annotations

import functools
from pathlib import Path

from fastapi import APIRouter, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse, Response

from memvault.core.errors import NotFound

ASSETS_PATH = "/docs/assets"
ASSET_TYPES = {
    "swagger-ui-bundle.js": "text/javascript; charset=utf-8",
    "swagger-ui.css": "text/css; charset=utf-8",
    "redoc.standalone.js": "text/javascript; charset=utf-8",
    "favicon.png": "image/png",
}


def docs_router(assets: Path, title: str) -> APIRouter:
    router = APIRouter(include_in_schema=False)
    read = functools.cache(lambda name: (assets / name).read_bytes())

    @router.get("/docs")
    async def swagger(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return get_swagger_ui_html(
            openapi_url=f"{root}/openapi.json", title=f"{title} API",
            swagger_js_url=f"{root}{ASSETS_PATH}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{ASSETS_PATH}/swagger-ui.css",
            swagger_favicon_url=f"{root}{ASSETS_PATH}/favicon.png",
        )

    @router.get("/redoc")
    async def redoc(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return get_redoc_html(
            openapi_url=f"{root}/openapi.json", title=f"{title} API",
            redoc_js_url=f"{root}{ASSETS_PATH}/redoc.standalone.js",
            redoc_favicon_url=f"{root}{ASSETS_PATH}/favicon.png", with_google_fonts=False,
        )

    @router.get(ASSETS_PATH + "/{name}")
    async def asset(name: str) -> Response:
        if name not in ASSET_TYPES:
            raise NotFound("no such documentation asset")
        return Response(read(name), media_type=ASSET_TYPES[name], headers={"Cache-Control": "public, max-age=3600"})

    return router
