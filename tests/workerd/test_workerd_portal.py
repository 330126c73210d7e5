"""The portal and the API documents from the Worker in real workerd: the page and its stylesheet and
scripts are read from Python's file system, where the runtime puts the bundle's text modules."""

from __future__ import annotations

from pathlib import Path

from tier_stack import MainStack

PORTAL = Path(__file__).resolve().parents[2] / "src" / "memvault" / "api" / "portal"


def test_the_portal_page_and_its_files_are_served_as_bundled(stack: MainStack) -> None:
    page = stack.api("GET", "/portal")
    assert page.status_code == 200 and page.text == (PORTAL / "index.html").read_text()
    for name in ("portal.css", "session.js", "portal.js", "portal_actions.js", "portal_receipts.js", "portal_skills.js",
                 "portal_usage.js"):
        served = stack.api("GET", f"/portal/static/{name}")
        assert served.status_code == 200, name
        assert served.text == (PORTAL / name).read_text(), name
    assert stack.api("GET", "/portal/static/index.py").status_code == 404
    me = stack.api("GET", "/portal/me", stack.secrets.family_writer)
    assert me.json() == {"kind": "brain", "name": "family-writer", "scopes": ["family"], "writer": True}


def test_the_openapi_document_and_its_pages_are_served(stack: MainStack) -> None:
    document = stack.api("GET", "/openapi.json")
    assert document.status_code == 200 and "/v1/memory/search" in document.json()["paths"]
    assert "swagger" in stack.api("GET", "/docs").text.lower()
