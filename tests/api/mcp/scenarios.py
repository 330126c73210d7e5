"""What the MCP tests check over each transport (stdio and streamable HTTP), written once: a
session's tools and resources, memory round trips, refusals as tool errors, and the brain's walls."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
from mcp import ClientSession
from mcp.shared.exceptions import MCPError
from mcp_support import TOOLS, answer, refusal
from mcp_types import TextResourceContents

BUSINESS = "Okonkwo audits the NVDA ledger; invoice 20028 is settled."
FAMILY = "Okonkwo tunes the family piano every March."
# Longer than the inline hook, so its full text lives in the blob store and only the body resource has it all.
LONG_BODY = "Okonkwo's audit notes: " + " ".join(f"line {i} of the quarterly review." for i in range(60))


async def check_listing(session: ClientSession) -> None:
    assert {tool.name for tool in (await session.list_tools()).tools} == TOOLS
    templates = {t.uri_template for t in (await session.list_resource_templates()).resource_templates}
    assert templates == {"memvault://facts/{fact_id}/body", "memvault://facts/{fact_id}/history"}


async def check_memory_round_trip(session: ClientSession, word: str) -> None:
    """Store a note and a session's messages, find them, forget the note, and no longer find it."""
    stored = answer(
        await session.call_tool("memory_store", {"note": f"The {word} spare key is under the blue flowerpot."})
    )
    assert stored["messages_accepted"] == 1 and stored["mirrored"] is True
    (note_id,) = stored["message_ids"]
    messages = [
        {"role": "user", "content": f"Which {word} train goes to Fenwick?"},
        {"role": "assistant", "content": f"The {word} train leaves from platform nine."},
    ]
    in_session = answer(await session.call_tool("memory_store", {"messages": messages, "session_id": "trip"}))
    assert in_session["messages_accepted"] == 2

    found = answer(
        await session.call_tool("memory_search", {"query": f"{word} spare key flowerpot", "budget_tokens": 500})
    )
    assert any(note_id in item["source_ids"] for item in found["items"]), found
    trip = answer(await session.call_tool("memory_search", {"query": f"{word} train platform", "session_id": "trip"}))
    assert any("platform nine" in item["text"] and item["vault"] == "session" for item in trip["items"]), trip

    forgotten = answer(await session.call_tool("memory_forget", {"ids": [note_id]}))
    assert forgotten["forgotten"] == [note_id]
    after = answer(await session.call_tool("memory_search", {"query": f"{word} spare key flowerpot"}))
    assert not any("flowerpot" in item["text"] for item in after["items"]), after


async def check_bad_input_is_refused(session: ClientSession) -> None:
    """Input the SDK's schema check or core refuses comes back as a tool error or a JSON-RPC error."""
    assert "give either messages or a note" in refusal(await session.call_tool("memory_store", {}))
    assert "budget_tokens" in refusal(await session.call_tool("memory_search", {"query": "x", "budget_tokens": "lots"}))
    assert "keyword or hybrid" in refusal(await session.call_tool("brain_search", {"q": "x", "mode": "fuzzy"}))
    assert "scope" in refusal(await session.call_tool("brain_write", {"facts": [{"content": "x", "scope": "garden"}]}))
    with pytest.raises(MCPError, match="fact id"):
        await session.read_resource("memvault://facts/nope/body")


async def check_unknown_secrets_are_refused(session: ClientSession) -> None:
    """A session whose memory key and brain credential nobody issued: every call is refused with a
    clear message, and the session keeps answering."""
    for name, arguments in [
        ("memory_store", {"note": "hello"}),
        ("memory_search", {"query": "hello"}),
        ("memory_forget", {"ids": ["x"]}),
    ]:
        assert "unauthorized" in refusal(await session.call_tool(name, arguments)), name
    for name, arguments in [
        ("brain_search", {"q": "hello"}),
        ("brain_recall", {}),
        ("brain_write", {"facts": [{"content": "x", "scope": "business"}]}),
        ("brain_skill_proposals", {}),
        ("brain_skill_confirm", {"id": "sprop-0000000000000000"}),
    ]:
        assert "unknown brain credential" in refusal(await session.call_tool(name, arguments)), name
    with pytest.raises(MCPError, match="unknown brain credential"):
        await session.read_resource("memvault://facts/mem-0000000000000000/body")
    await check_listing(session)


@dataclass(frozen=True)
class Facts:
    business: str
    long_body: str
    family: str


async def write_facts(writer: ClientSession) -> Facts:
    business = answer(
        await writer.call_tool(
            "brain_write",
            {"source": "notes:work", "scope": "business", "facts": [{"content": BUSINESS}, {"content": LONG_BODY}]},
        )
    )
    family = answer(await writer.call_tool("brain_write", {"facts": [{"content": FAMILY, "scope": "family"}]}))
    assert business["written"] == 2 and family["written"] == 1
    found = answer(await writer.call_tool("brain_search", {"q": "Okonkwo"}))
    assert {row["id"] for row in found["results"]} == {*business["ids"], *family["ids"]}
    return Facts(business=business["ids"][0], long_body=business["ids"][1], family=family["ids"][0])


async def check_as_writer(session: ClientSession, word: str) -> Facts:
    """Everything a session holding a memory key and the writer credential checks; returns the facts
    it wrote for a reader to look for."""
    await check_listing(session)
    await check_memory_round_trip(session, word)
    await check_bad_input_is_refused(session)
    return await write_facts(session)


async def resource_text(session: ClientSession, uri: str) -> str:
    (contents,) = (await session.read_resource(uri)).contents
    assert isinstance(contents, TextResourceContents)
    return contents.text


async def check_reader_walls(reader: ClientSession, facts: Facts) -> None:
    """A business-only reader: the family fact is absent from search, recall and resources, and the
    reader cannot write."""
    for mode in ("keyword", "hybrid"):
        found = answer(await reader.call_tool("brain_search", {"q": "Okonkwo piano", "mode": mode}))
        assert facts.business in {row["id"] for row in found["results"]}, mode
        assert facts.family not in json.dumps(found) and "piano" not in json.dumps(found), mode
    recalled = answer(await reader.call_tool("brain_recall", {"q": "Okonkwo family piano", "budget": 3000}))
    assert facts.family not in json.dumps(recalled) and "piano" not in json.dumps(recalled)
    for part in ("body", "history"):
        with pytest.raises(MCPError, match="no such fact"):
            await reader.read_resource(f"memvault://facts/{facts.family}/{part}")

    body = json.loads(await resource_text(reader, f"memvault://facts/{facts.long_body}/body"))
    assert body == {"id": facts.long_body, "content_hash": body["content_hash"], "body": LONG_BODY}
    history = json.loads(await resource_text(reader, f"memvault://facts/{facts.business}/history"))
    assert [row["id"] for row in history["chain"]] == [facts.business]

    refused = refusal(await reader.call_tool("brain_write", {"facts": [{"content": "x", "scope": "business"}]}))
    assert "forbidden" in refused and "may read but not write" in refused
