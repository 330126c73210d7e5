"""Workers keep one app per isolate and bind each invocation's deps to its request."""

from __future__ import annotations

from pathlib import Path

import httpx
from memory_support import settings_for

from memvault.api.app import create_app, serve_with
from memvault.core.credentials.keys import create_key
from memvault.core.settings import load_settings
from memvault.runtime.local import build_local_deps, close_local_deps


async def test_a_bound_request_uses_its_own_deps_and_the_app_keeps_its_own(tmp_path: Path) -> None:
    first = build_local_deps(load_settings(settings_for(tmp_path / "first")))
    second = build_local_deps(load_settings(settings_for(tmp_path / "second")))
    app = create_app(first)
    _, secret = await create_key(second.db, "second", second.clock())
    body = {"messages": [{"role": "user", "content": "Bound to the second deps."}]}
    headers = {"Authorization": f"Bearer {secret}"}
    try:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=serve_with(app, second)), base_url="http://w") as bound:
            assert (await bound.post("/v1/memory", json=body, headers=headers)).status_code == 200
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://w") as plain:
            assert (await plain.post("/v1/memory", json=body, headers=headers)).status_code == 401
    finally:
        await close_local_deps(first)
        await close_local_deps(second)
