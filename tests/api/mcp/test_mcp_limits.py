"""A memory key over its limit, calling memvault's MCP tools on the real local server through the
SDK's client: the tool call is a tool error (`isError`, the text naming the limit and when to try
again), the session goes on, nothing of the refused call is stored, and another key is unaffected."""

from __future__ import annotations

import uuid
from pathlib import Path

import httpx
from mcp import ClientSession
from mcp_support import answer, http_session, mcp_environment, refusal
from test_local_server import free_port, server

ADMIN = "mcp-limits-admin-" + uuid.uuid4().hex
LIMIT = 2


def new_key(url: str) -> tuple[str, str]:
    made = httpx.post(f"{url}/v1/admin/keys", json={"label": "mcp limits"}, headers={"Authorization": f"Bearer {ADMIN}"})
    assert made.status_code == 200, made.text
    return made.json()["id"], made.json()["key"]


def set_limits(url: str, key_id: str, **limits: int) -> None:
    done = httpx.put(f"{url}/v1/admin/keys/{key_id}/limits", json=limits, headers={"Authorization": f"Bearer {ADMIN}"})
    assert done.status_code == 200, done.text


async def store_until_refused(session: ClientSession) -> tuple[list[str], str, str]:
    """Notes stored one call at a time until the limit refuses one: the notes admitted, the one
    refused and the refusal's text. A minute may turn on the way, admitting one minute's more."""
    admitted: list[str] = []
    for attempt in range(2 * LIMIT + 1):
        text = f"Note {attempt}: the {uuid.uuid4().hex[:6]} crate is in the attic."
        result = await session.call_tool("memory_store", {"note": text})
        if result.is_error:
            return admitted, text, refusal(result)
        admitted.append(text)
    raise AssertionError(f"{len(admitted)} calls admitted under a limit of {LIMIT} a minute")


async def test_a_key_over_its_limit_gets_tool_errors_and_nothing_is_stored(tmp_path: Path) -> None:
    with server(tmp_path, free_port(), {**mcp_environment(tmp_path), "MEMVAULT_ADMIN_TOKEN": ADMIN}) as url:
        key_id, key = new_key(url)
        set_limits(url, key_id, requests_per_minute=LIMIT)
        _, other = new_key(url)
        async with http_session(f"{url}/mcp", {"Authorization": f"Bearer {key}"}) as session:
            admitted, refused_text, refused = await store_until_refused(session)
            assert LIMIT <= len(admitted) <= 2 * LIMIT
            assert f"rate_limited: this memory key's limit of {LIMIT} requests a minute" in refused
            assert "try again in" in refused
            search = await session.call_tool("memory_search", {"query": "crate in the attic"})
            assert search.is_error and "rate_limited" in refusal(search)
            async with http_session(f"{url}/mcp", {"X-Memory-Key": other}) as calm:
                assert answer(await calm.call_tool("memory_store", {"note": "Another key is unaffected."}))
            set_limits(url, key_id)  # no limits: the same session reads what was kept
            page = httpx.get(f"{url}/v1/memory", params={"limit": 50}, headers={"X-Memory-Key": key}).json()
            assert sorted(item["content"] for item in page["items"]) == sorted(admitted)
            assert refused_text not in {item["content"] for item in page["items"]}
            assert answer(await session.call_tool("memory_search", {"query": "crate in the attic"}))["items"]
