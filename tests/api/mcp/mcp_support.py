"""Shared by the MCP tests (a plain module, not a conftest): a data folder with a memory key and
brain credentials, `memvault mcp` over stdio and the real local server over streamable HTTP, each
reached with the MCP SDK's own client."""

from __future__ import annotations

import hashlib
import json
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx2
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp_types import CallToolResult

# The local server's own test helpers: they start `memvault serve` as a user would.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from test_local_server import environment, free_port, server

from memvault.core.credentials import keys
from memvault.core.settings import load_settings
from memvault.runtime.local import build_local_deps, close_local_deps

TOOLS = {"memory_store", "memory_search", "memory_forget", "brain_search", "brain_recall", "brain_write", "brain_retire",
         "brain_skill", "brain_skill_register", "brain_skill_propose", "brain_skill_proposals", "brain_skill_confirm",
         "brain_skill_reject"}
# name -> (scopes, writer); the token of credential NAME is "tok-NAME".
CREDENTIALS = {"writer": (["business", "family", "personal", "shared"], True), "business-reader": (["business"], False)}


def token(name: str) -> str:
    return f"tok-{name}"


def mcp_environment(data_dir: Path) -> dict[str, str]:
    hashes = {
        hashlib.sha256(token(name).encode()).hexdigest(): {"name": name, "scopes": scopes, "writer": writer}
        for name, (scopes, writer) in CREDENTIALS.items()
    }
    return {**environment(data_dir), "MEMVAULT_BRAIN_CREDENTIALS": json.dumps(hashes)}


async def create_key(data_dir: Path) -> str:
    deps = build_local_deps(load_settings(mcp_environment(data_dir)))
    try:
        return (await keys.create_key(deps.db, "mcp", time.time()))[1]
    finally:
        await close_local_deps(deps)


@asynccontextmanager
async def stdio_session(data_dir: Path, *args: str) -> AsyncIterator[ClientSession]:
    """A session with `memvault mcp ARGS…` on ``data_dir``, spawned as an MCP client config would."""
    parameters = StdioServerParameters(
        command=sys.executable, args=["-m", "memvault.cli", "mcp", *args], env=mcp_environment(data_dir)
    )
    async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


@contextmanager
def local_server(data_dir: Path) -> Iterator[str]:
    """`memvault serve` on ``data_dir``; yields the URL of its MCP endpoint."""
    with server(data_dir, free_port(), mcp_environment(data_dir)) as url:
        yield f"{url}/mcp"


@asynccontextmanager
async def http_session(url: str, headers: dict[str, str]) -> AsyncIterator[ClientSession]:
    async with (
        httpx2.AsyncClient(headers=headers) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


def answer(result: CallToolResult) -> dict[str, Any]:
    """A successful tool call's structured answer."""
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict)
    return result.structured_content


def refusal(result: CallToolResult) -> str:
    """A refused tool call's message."""
    assert result.is_error, result.structured_content
    return " ".join(getattr(block, "text", "") for block in result.content)
