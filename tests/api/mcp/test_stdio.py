"""`memvault mcp` over stdio, spawned as an MCP client's config would run it, with the SDK's client."""

from __future__ import annotations

from pathlib import Path

from mcp_support import create_key, refusal, stdio_session, token
from scenarios import check_as_writer, check_reader_walls, check_unknown_secrets_are_refused


async def test_tools_and_resources_over_stdio(tmp_path: Path) -> None:
    key = await create_key(tmp_path)
    async with stdio_session(tmp_path, "--key", key, "--brain-token", token("writer")) as session:
        facts = await check_as_writer(session, "stdio")
    async with stdio_session(tmp_path, "--brain-token", token("business-reader")) as reader:
        await check_reader_walls(reader, facts)
        assert "a memory key (mk_…) is required" in refusal(await reader.call_tool("memory_search", {"query": "x"}))


async def test_unknown_secrets_are_tool_errors_over_stdio(tmp_path: Path) -> None:
    await create_key(tmp_path)  # a key exists, only not the one the process is given
    async with stdio_session(tmp_path, "--key", "mk_nobody", "--brain-token", "tok-nobody") as session:
        await check_unknown_secrets_are_refused(session)
