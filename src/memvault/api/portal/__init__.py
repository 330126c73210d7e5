"""The portal: one static page (HTML, CSS and a script, no build step) that reads the brain and
conversation memory through memvault's own API from the browser.

The files ship as package data beside this module (and in the Worker bundle as text modules, which
the Workers runtime puts on Python's file system). They are read on first use, never at import:
Python Workers import modules while taking a memory snapshot. Every portal response carries a
Content-Security-Policy that lets the page run only its own script and style, with Trusted Types
required, so stored text that looks like markup can never execute and read the credential."""

from __future__ import annotations

import functools
from pathlib import Path

from fastapi.responses import Response

from memvault.core.errors import NotFound

PAGE = "index.html"
PAGE_TYPE = "text/html; charset=utf-8"
STATIC_TYPES = {
    "portal.css": "text/css; charset=utf-8",
    "session.js": "text/javascript; charset=utf-8",
    "portal.js": "text/javascript; charset=utf-8",
    "portal_skills.js": "text/javascript; charset=utf-8",
    "portal_actions.js": "text/javascript; charset=utf-8",
    "portal_receipts.js": "text/javascript; charset=utf-8",
    "portal_usage.js": "text/javascript; charset=utf-8",
}
CONTENT_SECURITY_POLICY = "; ".join([
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "connect-src 'self'",
    "img-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
    "require-trusted-types-for 'script'",
    "trusted-types 'none'",
])
SECURITY_HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    # Revalidated on every load, so a deploy never pairs an old page with a new script.
    "Cache-Control": "no-cache",
}


@functools.cache
def _content(name: str) -> bytes:
    return Path(__file__).with_name(name).read_bytes()


def page_response() -> Response:
    return _response(PAGE, PAGE_TYPE)


def static_response(name: str) -> Response:
    """The page's stylesheet or script; any other name is a 404."""
    if name not in STATIC_TYPES:
        raise NotFound("no such portal file")
    return _response(name, STATIC_TYPES[name])


def _response(name: str, content_type: str) -> Response:
    return Response(_content(name), media_type=content_type, headers=SECURITY_HEADERS)
