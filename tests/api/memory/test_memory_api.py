"""The memory API through HTTP: store, search, clear, purge, stats, auth and bad input."""

from __future__ import annotations

import asyncio
from typing import Any

from memory_support import Memvault

from memvault.core.tokens import estimate_tokens

DAY = 86400.0
NOW = 1_800_000_000.0


def turn(i: int, ts: float, topic: str = "gardening") -> dict[str, Any]:
    return {"role": "user" if i % 2 == 0 else "assistant", "content": f"Note {i} about {topic}: the tomatoes need water number {i}.", "timestamp": ts, "id": f"t{i}"}


async def store(mv: Memvault, messages: list[dict[str, Any]], session: str | None = None) -> dict[str, Any]:
    headers = {**mv.auth, **({"X-Session-ID": session} if session else {})}
    response = await mv.client.post("/v1/memory", json={"messages": messages}, headers=headers)
    assert response.status_code == 200, response.text
    return dict(response.json())


async def search(mv: Memvault, query: str, **extra: Any) -> dict[str, Any]:
    response = await mv.client.post("/v1/memory/search", json={"query": query, "now": NOW, **extra}, headers=mv.auth)
    assert response.status_code == 200, response.text
    return dict(response.json())


async def test_short_message_is_searchable_at_once_from_the_buffer(memvault: Memvault) -> None:
    result = await store(memvault, [{"role": "user", "content": "My locker code is on the green card.", "timestamp": NOW - 60}])
    assert result["tokens_buffered"] > 0 and result["chunks_stored"] == 0
    found = await search(memvault, "where is my locker code")
    assert found["items"][0]["text"] == "My locker code is on the green card."
    assert found["items"][0]["origin"] == "buffer"


async def test_stored_text_comes_back_from_the_vault(memvault: Memvault) -> None:
    await store(memvault, [turn(i, NOW - 10 * DAY + i) for i in range(60)])
    found = await search(memvault, "tomatoes water number 17", budget_tokens=400)
    texts = [item["text"] for item in found["items"]]
    assert any("number 17." in text for text in texts)
    assert found["tokens"] <= 400
    assert found["metrics"]["vaults"][f"{memvault.key_id}:core"]["winner"] == "vault"


async def test_a_search_at_the_ends_of_the_calendar_answers_whatever_times_the_query_names(memvault: Memvault) -> None:
    await store(memvault, [{"role": "user", "content": "Last week I planted the tomatoes.", "timestamp": NOW}])
    for now in ("0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999999Z", 253402300799.99997):
        found = await search(memvault, "what did I plant last week, yesterday and 999 years ago?", now=now)
        assert found["items"][0]["text"] == "Last week I planted the tomatoes."


async def test_concurrent_stores_to_one_key_lose_nothing(memvault: Memvault) -> None:
    batches = [[turn(b * 10 + i, NOW - DAY + b * 10 + i, topic=f"batch{b}") for i in range(10)] for b in range(24)]
    await asyncio.gather(*(store(memvault, batch) for batch in batches))
    sent_tokens = sum(estimate_tokens(m["content"]) for batch in batches for m in batch)
    stats = (await memvault.client.get("/v1/memory/stats", headers=memvault.auth)).json()
    core = stats["vaults"]["core"]
    exported = [r for r in await export(memvault) if r["type"] == "message"]
    assert sum(r["token_count"] for r in exported) + core["vault"]["buffered_tokens"] == sent_tokens
    assert core["vault"]["messages"] + core["vault"]["buffered_messages"] == 240
    assert core["mirror"]["rows"] == core["vault"]["messages"] + core["vault"]["chunks"]
    assert core["mirror"]["buffered_tokens"] == core["vault"]["buffered_tokens"]


async def export(mv: Memvault) -> list[dict[str, Any]]:
    from memvault.core.memory.read.export import export_memory

    return [record async for record in export_memory(mv.deps, mv.key_id)]


async def test_old_timestamps_land_in_their_window(memvault: Memvault) -> None:
    ages = {"hot": 3600.0, "working": 2 * DAY, "long_term": 30 * DAY, "archive": 200 * DAY}
    for window, age in ages.items():
        await store(memvault, [{"role": "user", "content": f"The {window} marker word is zebra{window}.", "timestamp": NOW - age, "id": window}])
    await memvault.deps.vaults.vault(f"{memvault.key_id}:core").flush()
    for window in ages:
        found = await search(memvault, f"zebra{window}", limit=1)
        assert found["items"][0]["window"] == window, (window, found["items"])


async def test_session_memory_is_kept_apart_and_cleared_alone(memvault: Memvault) -> None:
    await store(memvault, [{"role": "user", "content": "Core fact: the boat is called Marlin.", "timestamp": NOW}])
    await store(memvault, [{"role": "user", "content": "Session fact: the kayak is called Otter.", "timestamp": NOW}], session="s1")
    assert not any("Otter" in i["text"] for i in (await search(memvault, "kayak Otter"))["items"])
    assert any("Otter" in i["text"] for i in (await search(memvault, "kayak Otter", session_id="s1"))["items"])
    response = await memvault.client.delete("/v1/memory", params={"session_id": "s1"}, headers=memvault.auth)
    assert response.status_code == 200
    assert not any("Otter" in i["text"] for i in (await search(memvault, "kayak Otter", session_id="s1"))["items"])
    assert any("Marlin" in i["text"] for i in (await search(memvault, "boat Marlin"))["items"])


async def test_memory_false_messages_are_not_stored(memvault: Memvault) -> None:
    result = await store(memvault, [
        {"role": "user", "content": "public remark about kites", "timestamp": NOW},
        {"role": "user", "content": "secret remark about kites", "timestamp": NOW, "memory": False},
    ])
    assert result["messages_accepted"] == 1
    texts = [i["text"] for i in (await search(memvault, "remark kites"))["items"]]
    assert texts == ["public remark about kites"]


async def test_unknown_or_revoked_key_gets_401_and_stores_nothing(memvault: Memvault) -> None:
    from memvault.core.credentials.keys import revoke_key

    bad = {"Authorization": "Bearer mk_not_a_key"}
    body = {"messages": [{"role": "user", "content": "x"}]}
    assert (await memvault.client.post("/v1/memory", json=body, headers=bad)).status_code == 401
    assert (await memvault.client.post("/v1/memory", json=body)).status_code == 401
    assert (await memvault.client.post("/v1/memory", json=body, headers=memvault.auth)).status_code == 200
    # Revoked through memvault, the key's cached lookup goes with it: refused at once.
    await revoke_key(memvault.deps.db, memvault.key_id, NOW, memvault.deps.reads)
    response = await memvault.client.post("/v1/memory", json=body, headers=memvault.auth)
    assert response.status_code == 401 and response.json()["error"]["code"] == "unauthorized"
    assert (await memvault.deps.vaults.vault(f"{memvault.key_id}:core").stats()).buffered_messages == 1


async def test_bad_input_is_a_named_4xx_and_stores_nothing(memvault: Memvault) -> None:
    cases = [
        ({"messages": [{"role": "wizard", "content": "x"}]}, "role"),
        ({"messages": [{"role": "user", "content": 42}]}, "content"),
        ({"messages": [{"role": "user"}]}, "content"),
        ({"messages": []}, "messages"),
        ({"messages": [{"role": "user", "content": "ok"}, {"role": "user", "content": "x", "timestamp": "yesterday"}]}, "timestamp"),
        ({}, "messages"),
    ]
    for body, field in cases:
        response = await memvault.client.post("/v1/memory", json=body, headers=memvault.auth)
        assert 400 <= response.status_code < 500, body
        assert field in response.json()["error"]["message"], (body, response.json())
    big = {"messages": [{"role": "user", "content": "y" * 70_000}]}
    response = await memvault.client.post("/v1/memory", json=big, headers=memvault.auth)
    assert response.status_code == 413 and response.json()["error"]["code"] == "payload_too_large"
    stats = await memvault.deps.vaults.vault(f"{memvault.key_id}:core").stats()
    assert (stats.messages, stats.buffered_messages) == (0, 0)
    response = await memvault.client.post("/v1/memory/search", json={"query": ""}, headers=memvault.auth)
    assert response.status_code in (400, 422)


async def test_secrets_in_conversation_are_redacted_before_storage(memvault: Memvault) -> None:
    result = await store(memvault, [{"role": "user", "content": "my card is 4111 1111 1111 1111 ok", "timestamp": NOW}])
    assert result["redactions"] == ["card_number"]
    texts = [i["text"] for i in (await search(memvault, "my card"))["items"]]
    assert texts and "4111" not in texts[0]


async def test_a_pin_given_as_the_answer_to_the_message_before_is_redacted_before_storage(memvault: Memvault) -> None:
    asked = "Happy to help with the alarm. What is the alarm code?"
    result = await store(memvault, [{"role": "assistant", "content": asked, "timestamp": NOW},
                                    {"role": "user", "content": "7305", "timestamp": NOW + 1},
                                    {"role": "user", "content": "and my zip code is 10001", "timestamp": NOW + 2}])
    assert result["redactions"] == ["password"]
    response = await memvault.client.get("/v1/memory", headers=memvault.auth)
    contents = [item["content"] for item in response.json()["items"]]
    assert "[redacted:password]" in contents and asked in contents and "and my zip code is 10001" in contents
    assert not any("7305" in content for content in contents)


async def test_identity_numbers_codes_and_split_keys_are_redacted_before_storage_and_never_searched_back(
    memvault: Memvault,
) -> None:
    said = ["For the tax form my SIN is 046 454 286, and the Steam Guard code: 4HQ7T",
            "Here's the config: TOKEN = (\"ghp_Xq7Lm2Vb9Nc4\"\n  \"Rk1Wp3Hy6Zt8Qm2Lx9Vb4Nc7Rk1W\")",
            "And the security code on the back?\nCaller: 482."]
    result = await store(memvault, [{"role": "user", "content": text, "timestamp": NOW + i} for i, text in enumerate(said)])
    assert {"national_id", "one_time_code", "api_key", "password"} <= set(result["redactions"])
    found = await memvault.client.post("/v1/memory/search", json={"query": "SIN Steam Guard token security code"},
                                       headers=memvault.auth)
    listed = await memvault.client.get("/v1/memory", headers=memvault.auth)
    everything = found.text + listed.text
    for secret in ("046 454 286", "4HQ7T", "Rk1Wp3Hy6Zt8Qm2Lx9Vb4Nc7Rk1W", "482."):
        assert secret not in everything


async def test_oversized_provider_call_is_refused_in_the_providers_own_envelope(memvault: Memvault) -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "z" * 70_000}]}
    response = await memvault.client.post("/v1/chat/completions", json=body, headers={"X-Memory-Key": memvault.key})
    assert response.status_code == 413
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error" and "larger than" in error["message"]


async def test_read_memory_pages_messages_newest_first_pending_included(memvault: Memvault) -> None:
    from memvault.core.memory.read.page import read_memory

    await store(memvault, [turn(i, NOW - DAY + i) for i in range(50)])
    page = await read_memory(memvault.deps, memvault.key_id, None, 100, 0)
    assert [entry["id"] for entry in page] == [f"t{i}" for i in reversed(range(50))]
    assert {entry["state"] for entry in page} == {"pending", "stored"}
    assert [e["id"] for e in await read_memory(memvault.deps, memvault.key_id, None, 5, 10)] == [f"t{i}" for i in range(39, 34, -1)]

