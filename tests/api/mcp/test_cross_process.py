"""The local server and a `memvault mcp` stdio process on one data folder, both running: each sees
what the other writes and forgets, the moment the call that wrote it returns."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp import ClientSession
from mcp_support import answer, create_key, http_session, local_server, stdio_session, token

# Enough text to cut chunks, so rows with vectors land in the vault beside the pending buffer.
LOG = [
    {
        "role": "user",
        "content": f"Logbook entry {i}: the lighthouse keeper records storm number {i} "
        "with its wind speed, the swell and the state of the lamp, as every night.",
    }
    for i in range(12)
]


async def texts(session: ClientSession, query: str) -> list[str]:
    found: dict[str, Any] = answer(await session.call_tool("memory_search", {"query": query, "budget_tokens": 4000}))
    return [item["text"] for item in found["items"]]


async def test_the_server_and_a_stdio_process_see_each_others_writes(tmp_path: Path) -> None:
    key = await create_key(tmp_path)
    with local_server(tmp_path) as url:
        async with (
            http_session(url, {"X-Memory-Key": key, "Authorization": f"Bearer {token('writer')}"}) as http,
            stdio_session(tmp_path, "--key", key, "--brain-token", token("writer")) as stdio,
        ):
            answer(await http.call_tool("memory_store", {"note": "The canoe paddles hang in the boathouse."}))
            assert any("boathouse" in text for text in await texts(stdio, "canoe paddles boathouse"))
            answer(await stdio.call_tool("memory_store", {"note": "The tide tables are pinned by the door."}))
            assert any("tide tables" in text for text in await texts(http, "tide tables door"))

            stored = answer(await stdio.call_tool("memory_store", {"messages": LOG}))
            assert stored["chunks_stored"] > 0
            assert any("storm number 7 " in text for text in await texts(http, "lighthouse storm number 7"))
            answer(await stdio.call_tool("memory_forget", {"ids": [stored["message_ids"][7]]}))
            assert not any("storm number 7 " in text for text in await texts(http, "lighthouse storm number 7"))
            answer(
                await http.call_tool(
                    "memory_store", {"messages": [{**LOG[0], "content": LOG[0]["content"].replace("storm", "gale")}]}
                )
            )
            assert any("gale number 0" in text for text in await texts(stdio, "lighthouse gale number 0"))

            from_http = answer(
                await http.call_tool(
                    "brain_write", {"facts": [{"content": "Invoice 30417 is due in May.", "scope": "business"}]}
                )
            )
            assert from_http["ids"] == [
                row["id"] for row in answer(await stdio.call_tool("brain_search", {"q": "30417"}))["results"]
            ]
            from_stdio = answer(
                await stdio.call_tool(
                    "brain_write", {"facts": [{"content": "Invoice 30418 was paid.", "scope": "business"}]}
                )
            )
            assert from_stdio["ids"] == [
                row["id"] for row in answer(await http.call_tool("brain_search", {"q": "30418"}))["results"]
            ]
