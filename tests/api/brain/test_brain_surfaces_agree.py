"""HTTP, the Worker's RPC methods and MCP answer a brain operation alike: the same result for the
same input (the MCP client checking each answer against the tool's published output schema), and
the same refusal for the same bad input."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from brain_env import Brain, brain_fixture, token  # noqa: F401
from mcp import Client
from mcp_types import TextResourceContents

from memvault.api.mcp.tools import mcp_server
from memvault.core import brain as core
from memvault.core.brain.wire import Schemas
from memvault.core.credentials.callers import CallerTokens
from memvault.core.errors import InvalidField
from memvault.runtime import rpc

FACTS = [
    {"content": "The harbour crane was serviced on 3 March.", "source": "notes:crane", "scope": "business"},
    {"content": "Invoice INV-20931 from Acme was paid.", "source": "notes:ledger", "scope": "business", "pinned": True},
    {"content": "The cabin at Lake Orta has a green door. " * 30, "source": "notes:cabin", "scope": "family"},
]


@asynccontextmanager
async def mcp_client(brain: Brain) -> AsyncIterator[Client]:
    """An MCP client of the brain's server in this process, holding the writer credential."""
    server = mcp_server(brain.deps, lambda _ctx: CallerTokens(brain_token=token("writer")))
    async with Client(server) as client:
        yield client


async def http(brain: Brain, method: str, path: str, **kwargs: Any) -> Any:
    response = await brain.client.request(method, path, headers=brain.headers("writer"), **kwargs)
    assert response.status_code == 200, response.text
    return response.json()


async def tool(mcp: Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await mcp.call_tool(name, arguments)
    assert not result.is_error, result.content
    assert isinstance(result.structured_content, dict)
    return result.structured_content


async def resource(mcp: Client, uri: str) -> Any:
    (contents,) = (await mcp.read_resource(uri)).contents
    assert isinstance(contents, TextResourceContents)
    return json.loads(contents.text)


async def test_search_and_recall_answer_alike_everywhere(brain: Brain) -> None:
    async with mcp_client(brain) as mcp:
        await _search_and_recall_answer_alike_everywhere(brain, mcp)


async def _search_and_recall_answer_alike_everywhere(brain: Brain, mcp: Client) -> None:
    for fact in FACTS:
        await http(brain, "POST", "/v1/brain/facts", json=fact)
    writer = token("writer")
    search = {"query": "harbour crane", "mode": "hybrid", "limit": 5}
    found = await http(brain, "POST", "/v1/brain/facts/search", json=search)
    assert found["results"]
    assert found == await rpc.brain_search(brain.deps, writer, "harbour crane", "hybrid", 5)
    assert found == await tool(mcp, "brain_search", search)
    assert found == await tool(mcp, "brain_search", {**search, "q": search.pop("query")})

    recall = {"query": "green door", "budget": 1500}
    recalled = await http(brain, "POST", "/v1/brain/recall", json=recall)
    assert recalled["core"]["entries"] and recalled["recent"]
    assert recalled == await rpc.brain_recall(brain.deps, writer, "green door", None, 1500)
    assert recalled == await tool(mcp, "brain_recall", recall)
    kept = await http(brain, "GET", "/recall", params={"q": "green door", "budget": "1500"})
    kept["as_of"] = kept.pop("asof")
    assert kept == recalled


async def test_writes_and_fact_reads_answer_alike_everywhere(brain: Brain) -> None:
    async with mcp_client(brain) as mcp:
        await _writes_and_fact_reads_answer_alike_everywhere(brain, mcp)


async def _writes_and_fact_reads_answer_alike_everywhere(brain: Brain, mcp: Client) -> None:
    batch = {"source": "notes:boiler", "scope": "shared", "facts": [{"content": "The boiler runs at 1.5 bar."}]}
    written = await http(brain, "POST", "/v1/brain/facts", json=batch)
    assert written["written"] == 1
    again = await rpc.brain_write(brain.deps, token("writer"), batch)
    assert again["unchanged"] == 1 and again["ids"] == written["ids"]
    assert again == await tool(mcp, "brain_write", batch)
    (fact_id,) = written["ids"]
    assert await resource(mcp, f"memvault://facts/{fact_id}/body") == await http(
        brain, "GET", f"/v1/brain/facts/{fact_id}/body")
    assert await resource(mcp, f"memvault://facts/{fact_id}/history") == await http(
        brain, "GET", f"/v1/brain/facts/{fact_id}/history")


async def test_bad_input_is_refused_alike_everywhere(brain: Brain) -> None:
    async with mcp_client(brain) as mcp:
        await _bad_input_is_refused_alike_everywhere(brain, mcp)


async def _bad_input_is_refused_alike_everywhere(brain: Brain, mcp: Client) -> None:
    over_http = await brain.client.post("/v1/brain/facts/search", headers=brain.headers("writer"),
                                        json={"query": "x", "mode": "fuzzy"})
    message = over_http.json()["error"]["message"]
    assert over_http.status_code == 422 and message == "mode must be keyword or hybrid"
    with pytest.raises(InvalidField, match=f"^{message}$"):
        await rpc.brain_search(brain.deps, token("writer"), "x", "fuzzy")
    refused = await mcp.call_tool("brain_search", {"query": "x", "mode": "fuzzy"})
    assert refused.is_error and message in " ".join(getattr(block, "text", "") for block in refused.content)
    with pytest.raises(InvalidField, match=r"^bands must be true or false$"):
        await rpc.brain_write(brain.deps, token("writer"), {"content": "x", "scope": "shared"}, "off")
    assert await brain.count() == 0


def declaration(cls: Any, output: bool) -> dict[str, Any]:
    schemas = Schemas(prefix="#/$defs/")
    return schemas.defs[schemas.of(cls, output)["$ref"].rsplit("/", 1)[1]]


async def test_the_mcp_tools_publish_the_operations_own_schemas(brain: Brain) -> None:
    async with mcp_client(brain) as mcp:
        listed = {t.name: t for t in (await mcp.list_tools()).tools}
    for name, op in (("brain_search", core.SEARCH_FACTS), ("brain_recall", core.RECALL), ("brain_write", core.WRITE_FACTS),
                     ("brain_retire", core.RETIRE_FACT)):
        declared, answered = declaration(op.input, False), declaration(op.output, True)
        published = listed[name].input_schema
        fields = set(declared["properties"])
        aliases = {"q"} if name in ("brain_search", "brain_recall") else set()
        assert set(published["properties"]) - fields == aliases, name
        assert {k: published["properties"][k] for k in fields} == declared["properties"], name
        assert listed[name].output_schema is not None
        assert listed[name].output_schema["properties"] == answered["properties"], name
    assert "Deprecated" in listed["brain_search"].input_schema["properties"]["q"]["description"]
