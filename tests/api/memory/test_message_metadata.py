"""Metadata kept with messages: stored beside each message (pending or stored), returned when the
vault is read, passed through the secret gate, refused when it is not a small JSON object."""

from __future__ import annotations

import json
from typing import Any

import pytest
from memory_support import Memvault

from memvault.core import memory
from memvault.core.memory.metadata import MAX_METADATA_CHARS, redact_metadata
from memvault.runtime import rpc

WORDS = "the quarterly review of the Lisbon office moved to the second week of March "


async def page(memvault: Memvault, session_id: str | None = None) -> list[dict[str, Any]]:
    return await memory.read_memory(memvault.deps, memvault.key_id, session_id, 50, 0)


async def test_batch_and_message_metadata_are_kept_with_each_message(memvault: Memvault) -> None:
    body = {
        "messages": [
            {"role": "user", "content": "hello there", "id": "u1", "metadata": {"reply_to": 7, "lang": "pt"}},
            {"role": "assistant", "content": "hi, how can I help?", "id": "a1"},
        ],
        "metadata": {"chat_id": 42, "lang": "en", "model": "bot-1"},
    }
    response = await memvault.client.post("/v1/memory", json=body, headers={**memvault.auth, "X-Session-ID": "chat-42"})
    assert response.status_code == 200, response.text
    found = {item["id"]: item for item in await page(memvault, "chat-42")}
    assert found["u1"]["metadata"] == {"chat_id": 42, "lang": "pt", "model": "bot-1", "reply_to": 7}
    assert found["a1"]["metadata"] == {"chat_id": 42, "lang": "en", "model": "bot-1"}
    # The batch's model stands in for messages that give none, as before.
    assert found["a1"]["model"] == "bot-1"


async def test_metadata_survives_the_move_from_buffer_to_stored_rows(memvault: Memvault) -> None:
    messages = [
        {"role": "user", "content": f"{WORDS}({i})", "id": f"m{i}", "metadata": {"n": i}} for i in range(40)
    ]
    await rpc.save_memory(memvault.deps, memvault.key, None, messages, {"source": "import"})
    items = await page(memvault)
    states = {item["state"] for item in items}
    assert "stored" in states, "the test needs messages cut into stored rows"
    assert all(item["metadata"] == {"n": int(item["id"][1:]), "source": "import"} for item in items)


async def test_a_secret_in_metadata_is_redacted_and_reported(memvault: Memvault) -> None:
    metadata = {"note": "card 4111 1111 1111 1111", "password": "hunter2-horse"}
    stored = await rpc.save_memory(
        memvault.deps, memvault.key, "s1", [{"role": "user", "content": "nothing secret here", "id": "x"}], metadata
    )
    assert set(stored["redactions"]) >= {"card_number", "password"}
    [item] = await page(memvault, "s1")
    text = json.dumps(item["metadata"])
    assert "4111 1111 1111 1111" not in text and "hunter2-horse" not in text
    assert "[redacted:" in item["metadata"]["note"]


def test_redaction_keeps_the_metadata_valid_json() -> None:
    text = json.dumps({"token": 'sk-ant-api03-' + "A" * 90, "quote": 'say "hi"'}, sort_keys=True)
    gate = redact_metadata(text)
    assert gate.kinds and json.loads(gate.text)["quote"] == 'say "hi"'


@pytest.mark.parametrize(
    ("metadata", "where"),
    [
        ("not an object", "messages[0].metadata"),
        ({"x": "y" * MAX_METADATA_CHARS}, "messages[0].metadata"),
        ({"nested": {"n": float("nan")}}, "messages[0].metadata"),
    ],
)
async def test_bad_metadata_is_refused_naming_the_message(memvault: Memvault, metadata: object, where: str) -> None:
    body = {"messages": [{"role": "user", "content": "fine", "metadata": metadata}]}
    response = await memvault.client.post(
        "/v1/memory", content=json.dumps(body), headers={**memvault.auth, "content-type": "application/json"}
    )
    assert response.status_code == 422, response.text
    assert where in response.json()["error"]["message"]
    assert await page(memvault) == []


async def test_rpc_refuses_batch_metadata_that_is_not_an_object(memvault: Memvault) -> None:
    from memvault.core.errors import InvalidField

    with pytest.raises(InvalidField, match="metadata"):
        await rpc.save_memory(memvault.deps, memvault.key, None, [{"role": "user", "content": "x"}], ["a", "list"])


async def test_http_reads_a_page_of_the_vault_with_metadata(memvault: Memvault) -> None:
    headers = {**memvault.auth, "X-Session-ID": "s9"}
    stored = await memvault.client.post(
        "/v1/memory", json={"messages": [{"role": "user", "content": f"note {i}", "id": f"n{i}"} for i in range(3)],
                            "metadata": {"via": "http"}}, headers=headers,
    )
    assert stored.status_code == 200 and stored.json()["updated_at"] > 0
    response = await memvault.client.get("/v1/memory", params={"session_id": "s9", "limit": 2, "offset": 1},
                                         headers=memvault.auth)
    assert response.status_code == 200, response.text
    body = response.json()
    assert (body["session_id"], body["limit"], body["offset"]) == ("s9", 2, 1)
    assert [item["id"] for item in body["items"]] == ["n1", "n0"]
    assert all(item["metadata"] == {"via": "http"} for item in body["items"])
    assert (await memvault.client.get("/v1/memory", params={"limit": 0}, headers=memvault.auth)).status_code == 422
    # Past SQLite's 64-bit LIMIT/OFFSET: refused as bad input, never a store failure.
    huge = {"offset": 3 * 10**30}
    assert (await memvault.client.get("/v1/memory", params=huge, headers=memvault.auth)).status_code == 422
    assert (await memvault.client.get("/v1/memory")).status_code == 401
