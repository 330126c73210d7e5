"""The MCP configs of the README and docs/mcp.md, followed literally. The README's stdio config: a
memory key from `memvault keys create`, a brain credential from `memvault brain-token create`, and
`memvault mcp` started exactly as the config says (command, args, env; nothing else of the test's
environment), reached with the MCP SDK's own stdio client. docs/mcp.md's HTTP config: its URL and
headers, with the reader's key and token in place, against the real local server's `/mcp`. Each
config is read from its page, so the page is what is tested."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp_support import answer, create_key, http_session, local_server, refusal, token

ROOT = Path(__file__).resolve().parents[3]
README = ROOT / "README.md"
MCP_PAGE = ROOT / "docs" / "mcp.md"
# What the README writes where a reader puts their own values.
CHECKOUT = "/path/to/memvault"


def readme_stdio_config() -> dict[str, Any]:
    """The `memvault` entry of the first `mcpServers` JSON block of the README's MCP section."""
    section = README.read_text(encoding="utf-8").split("\n## MCP\n", 1)[1].split("\n## ", 1)[0]
    for block in re.findall(r"```json\n(.*?)```", section, flags=re.DOTALL):
        entry: dict[str, Any] = json.loads(block)["mcpServers"]["memvault"]
        if "command" in entry:
            return entry
    raise AssertionError("the README's MCP section holds no stdio mcpServers config")


def cli(data_dir: Path, *args: str) -> list[str]:
    """A `memvault` command as a reader runs it from their shell; its stdout's lines."""
    env = {**os.environ, "MEMVAULT_DATA_DIR": str(data_dir)}
    done = subprocess.run([str(ROOT / ".venv" / "bin" / "memvault"), *args], env=env, capture_output=True, text=True,
                          check=True, timeout=120)
    return done.stdout.splitlines()


def filled_in(config: dict[str, Any], values: dict[str, str]) -> StdioServerParameters:
    """The config with the reader's own values where the README shows placeholders."""
    assert set(config["env"]) == set(values), config["env"]
    command = str(config["command"])
    assert command.startswith(CHECKOUT + "/"), command
    command = str(ROOT) + command.removeprefix(CHECKOUT)
    assert Path(command).is_file(), command
    # The SDK's client passes only a default environment (PATH, HOME, …) and the config's env.
    return StdioServerParameters(command=command, args=list(config["args"]), env=values)


async def test_the_readme_mcp_config_works_as_written(tmp_path: Path) -> None:
    data = tmp_path / "memvault-data"
    key = cli(data, "keys", "create", "--label", "claude")[-1]
    token = cli(data, "brain-token", "create", "--scopes", "family,shared", "--writer", "--name", "claude")[-1]
    config = readme_stdio_config()
    assert config["env"]["MEMVAULT_KEY"].startswith("mk_")
    parameters = filled_in(config, {"MEMVAULT_KEY": key, "MEMVAULT_BRAIN_TOKEN": token, "MEMVAULT_DATA_DIR": str(data)})

    async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        written = answer(await session.call_tool("brain_write", {
            "facts": [{"content": "The allotment key hangs behind the blue shed door."}],
            "source": "notes:garden", "scope": "family",
        }))
        found = answer(await session.call_tool("brain_search", {"q": "allotment key"}))
        assert [r["id"] for r in found["results"]] == written["ids"]

        answer(await session.call_tool("memory_store", {"note": "My sister Ines lives in Porto."}))
        remembered = answer(await session.call_tool("memory_search", {"query": "where does Ines live?"}))
        assert any("Porto" in item["text"] for item in remembered["items"]), remembered

        # Revoked from the shell while the client keeps its process: refused at the next call.
        (listed,) = cli(data, "brain-token", "list")
        assert token not in listed
        assert cli(data, "brain-token", "revoke", listed.split("\t")[0]) == []
        assert "unknown brain credential" in refusal(await session.call_tool("brain_search", {"q": "allotment key"}))
        assert answer(await session.call_tool("memory_search", {"query": "Ines"}))["items"]



def docs_http_config() -> dict[str, Any]:
    """The `memvault` entry of docs/mcp.md's Streamable HTTP config."""
    section = MCP_PAGE.read_text(encoding="utf-8").split("\n## Streamable HTTP\n", 1)[1].split("\n## ", 1)[0]
    (block,) = re.findall(r"```json\n(.*?)```", section, flags=re.DOTALL)
    entry: dict[str, Any] = json.loads(block)["mcpServers"]["memvault"]
    return entry


async def test_the_docs_http_config_works_as_written(tmp_path: Path) -> None:
    config = docs_http_config()
    assert config["type"] == "http" and config["url"] == "http://127.0.0.1:8787/mcp"
    # The reader's own values where the page shows placeholders.
    values = {"mk_…": await create_key(tmp_path), "<brain token>": token("writer")}
    headers = {name: value for name, value in config["headers"].items()}
    for placeholder, value in values.items():
        headers = {name: text.replace(placeholder, value) for name, text in headers.items()}
    assert headers != config["headers"]
    with local_server(tmp_path) as url:
        assert url.endswith("/mcp")
        async with http_session(url, headers) as session:
            answer(await session.call_tool("memory_store", {"note": "The canoe is stored at the boathouse."}))
            found = answer(await session.call_tool("memory_search", {"query": "where is the canoe?"}))
            assert any("boathouse" in item["text"] for item in found["items"]), found
            written = answer(await session.call_tool("brain_write", {
                "facts": [{"content": "The boathouse code is kept in the family binder."}],
                "source": "notes:boathouse", "scope": "family"}))
            assert written["ids"]
