"""MCP over streamable HTTP at `/mcp` of the real local server (`memvault serve`), with the SDK's
client; each call names its caller in headers, as on the other routes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from mcp_support import answer, create_key, http_session, local_server, refusal, token
from scenarios import check_as_writer, check_reader_walls, check_unknown_secrets_are_refused

from memvault.api.app import create_app
from memvault.core.settings import load_settings
from memvault.runtime.local import build_local_deps, close_local_deps, create_local_app


@pytest.fixture(scope="module", name="served")
def served_fixture(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    data_dir = tmp_path_factory.mktemp("mcp-http")
    with local_server(data_dir) as url:
        yield url, data_dir


async def test_tools_and_resources_over_http(served: tuple[str, Path]) -> None:
    url, data_dir = served
    key = await create_key(data_dir)
    # The memory key as the memory routes take it, the brain credential in its own header.
    async with http_session(
        url, {"Authorization": f"Bearer {key}", "X-Memvault-Brain-Token": token("writer")}
    ) as session:
        facts = await check_as_writer(session, "http")
    # The memory key as the memory router takes it, the brain credential as the brain routes take it.
    async with http_session(
        url, {"X-Memory-Key": key, "Authorization": f"Bearer {token('business-reader')}"}
    ) as reader:
        await check_reader_walls(reader, facts)
        assert answer(await reader.call_tool("memory_search", {"query": "http train", "session_id": "trip"}))["items"]


async def test_unknown_or_missing_secrets_are_tool_errors_over_http(served: tuple[str, Path]) -> None:
    url, _ = served
    async with http_session(url, {"X-Memory-Key": "mk_nobody", "Authorization": "Bearer tok-nobody"}) as session:
        await check_unknown_secrets_are_refused(session)
    async with http_session(url, {"X-Memvault-Brain-Token": "tok-nobody"}) as brain_only:
        assert "a memory key (mk_…) is required" in refusal(await brain_only.call_tool("memory_search", {"query": "x"}))
    async with http_session(url, {"X-Memory-Key": "mk_nobody"}) as memory_only:
        assert "brain credential" in refusal(await memory_only.call_tool("brain_recall", {}))


def test_a_request_with_no_credential_is_refused_before_the_protocol(served: tuple[str, Path]) -> None:
    url, _ = served
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                  "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
    response = httpx.post(url, json=initialize, headers={"Accept": "application/json, text/event-stream"})
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "unauthorized"
    assert response.headers["WWW-Authenticate"] == "Bearer"


def test_plain_http_to_mcp_without_the_protocol_is_refused_not_crashed(served: tuple[str, Path]) -> None:
    url, _ = served
    response = httpx.post(
        url,
        content=b"not json",
        headers={"Accept": "application/json, text/event-stream", "Content-Type": "application/json"},
    )
    assert 400 <= response.status_code < 500, response.text


async def test_a_request_json_rpc_forbids_is_answered_as_over_stdio(served: tuple[str, Path]) -> None:
    url, data_dir = served
    headers = {"X-Memory-Key": await create_key(data_dir), "Accept": "application/json, text/event-stream",
               "Content-Type": "application/json", "MCP-Protocol-Version": "2025-06-18"}
    ping = {"jsonrpc": "2.0", "method": "ping"}
    for request_id in ({"n": 1}, [1], None, 1.5, True):
        response = httpx.post(url, json={**ping, "id": request_id}, headers=headers)
        assert response.status_code == 400, (request_id, response.text)
        assert response.json() == {"jsonrpc": "2.0", "id": None, "error": {
            "code": -32600, "message": "Invalid request: an id is a string or an integer"}}
    for batch in ([{**ping, "id": 1}], []):
        response = httpx.post(url, json=batch, headers=headers)
        assert response.status_code == 400 and response.json()["error"]["code"] == -32600, response.text
        assert "batches" in response.json()["error"]["message"]
    for not_json in (b"  ", b'{"jsonrpc": "2.0", "id": 2, "method": "ping", "params": {"x": "\xff"}}'):
        response = httpx.post(url, content=not_json, headers=headers)
        assert response.json() == {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
    response = httpx.post(url, json={**ping, "id": "still-served"}, headers=headers)
    assert response.json() == {"jsonrpc": "2.0", "id": "still-served", "result": {}}
    unknown_tool = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "no_such_tool", "arguments": {}}}
    assert httpx.post(url, json=unknown_tool, headers=headers).json() == {
        "jsonrpc": "2.0", "id": 3, "error": {"code": -32602, "message": "Unknown tool: no_such_tool"}}


async def test_mcp_is_mounted_by_the_local_root_only(tmp_path: Path) -> None:
    environ = {"MEMVAULT_DATA_DIR": str(tmp_path), "MEMVAULT_EMBEDDER": "hash"}
    local = create_local_app(environ)
    await close_local_deps(local.state.deps)
    deps = build_local_deps(load_settings(environ))
    try:
        shared = create_app(deps)
    finally:
        await close_local_deps(deps)
    assert "/mcp" in {getattr(route, "path", None) for route in local.routes}
    assert "/mcp" not in {getattr(route, "path", None) for route in shared.routes}
