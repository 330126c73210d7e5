"""The portal as HTTP serves it: the page at /portal itself (no redirect), its stylesheet and
script with their content types, all under a Content-Security-Policy that allows only the page's
own script and style; the page holds no inline script, style or handler; the script never parses
text as markup; and /portal/me answers who a credential is."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import httpx
import pytest
from brain_env import Brain, brain_fixture  # noqa: F401

PORTAL = Path(__file__).resolve().parents[3] / "src" / "memvault" / "api" / "portal"
SCRIPTS = ("session.js", "portal.js", "portal_actions.js", "portal_receipts.js", "portal_skills.js", "portal_usage.js")
REQUIRED_POLICY = {
    "default-src": "'none'",
    "script-src": "'self'",
    "style-src": "'self'",
    "connect-src": "'self'",
    "img-src": "'self'",
    "base-uri": "'none'",
    "form-action": "'none'",
    "frame-ancestors": "'none'",
    "require-trusted-types-for": "'script'",
}


class PageParts(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.resources: list[str] = []
        self.inline: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = dict(attrs)
        self._in_script = tag == "script"
        if tag == "style" or "style" in named or any(name.startswith("on") for name in named):
            self.inline.append(f"<{tag}> with {sorted(named)}")
        if tag == "script":
            self.resources.append(named.get("src") or "")
        if tag == "link":
            self.resources.append(named.get("href") or "")

    def handle_data(self, data: str) -> None:
        if self._in_script and data.strip():
            self.inline.append("inline script")

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False


def assert_locked_down(headers: httpx.Headers) -> None:
    policy = dict(part.strip().split(" ", 1) for part in headers.get("content-security-policy", "").split(";"))
    for directive, value in REQUIRED_POLICY.items():
        assert policy.get(directive) == value, (directive, policy)
    assert headers.get("x-content-type-options") == "nosniff"
    assert headers.get("referrer-policy") == "no-referrer"


async def test_the_page_is_served_at_portal_with_only_its_own_script_and_style(brain: Brain) -> None:
    page = await brain.client.get("/portal", follow_redirects=False)
    assert page.status_code == 200
    assert page.headers["content-type"] == "text/html; charset=utf-8"
    assert_locked_down(page.headers)
    parts = PageParts()
    parts.feed(page.text)
    assert parts.inline == []
    assert sorted(parts.resources) == ["/portal/static/portal.css", "/portal/static/portal.js",
                                       "/portal/static/portal_actions.js", "/portal/static/portal_receipts.js",
                                       "/portal/static/portal_skills.js", "/portal/static/portal_usage.js",
                                       "/portal/static/session.js"]
    for path, kind in zip(sorted(parts.resources), ["text/css", *["text/javascript"] * 6], strict=True):
        served = await brain.client.get(path)
        assert served.status_code == 200 and served.headers["content-type"] == f"{kind}; charset=utf-8"
        assert_locked_down(served.headers)


@pytest.mark.parametrize("path", ["/portal/static/index.html", "/portal/static/missing.js", "/portal/static/..%2fportal.py"])
async def test_nothing_else_is_served_from_the_portal_folder(brain: Brain, path: str) -> None:
    assert (await brain.client.get(path)).status_code == 404


@pytest.mark.parametrize("script", SCRIPTS)
def test_the_scripts_never_parse_text_as_markup(script: str) -> None:
    source = (PORTAL / script).read_text()
    sinks = re.findall(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|setAttribute\(\"on", source)
    assert sinks == []
    # Actions are confirmed in the page's own dialog, never in the browser's.
    assert re.findall(r"(?<![\w.])(?:window\.)?(?:confirm|alert|prompt)\(", source) == []
    # Credentials are kept for the tab only, never in localStorage or cookies.
    assert "localStorage" not in source and "document.cookie" not in source


async def test_me_names_the_credential_or_refuses(brain: Brain) -> None:
    me = await brain.client.get("/portal/me", headers=brain.headers("family+personal"))
    assert me.json() == {"kind": "brain", "name": "family+personal", "scopes": ["family", "personal"], "writer": False}
    assert (await brain.client.get("/portal/me")).status_code == 401
    assert (await brain.client.get("/portal/me", headers={"Authorization": "Bearer tok-nobody"})).status_code == 401


async def test_me_names_a_memory_key_for_the_conversations_tab(brain: Brain) -> None:
    from memvault.core.credentials import keys

    key, secret = await keys.create_key(brain.deps.db, "phone", brain.clock.now)
    me = await brain.client.get("/portal/me", headers={"Authorization": f"Bearer {secret}"})
    assert me.json() == {"kind": "memory", "id": key.id, "name": "phone"}
    await keys.revoke_key(brain.deps.db, key.id, brain.clock.now, brain.deps.reads)
    assert (await brain.client.get("/portal/me", headers={"Authorization": f"Bearer {secret}"})).status_code == 401
    # A memory key never stands in for a brain credential, on the brain's own routes either.
    _, other = await keys.create_key(brain.deps.db, "other", brain.clock.now)
    assert (await brain.client.get("/recall", headers={"Authorization": f"Bearer {other}"})).status_code == 401
