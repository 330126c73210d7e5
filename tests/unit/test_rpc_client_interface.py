"""The client interface of the RPC surface: getMemory, saveMemory, searchMemory and forgetMemory
with the memory key bound by the caller's service-binding props, over the real runtime and local
stores; they answer as the HTTP API does."""

from __future__ import annotations

import json
from typing import Any

import pytest

from memvault.core.credentials import keys
from memvault.core.deps import Deps
from memvault.core.errors import InvalidField, InvalidInput, Unauthorized
from memvault.runtime import rpc


async def bot_props(deps: Deps) -> dict[str, Any]:
    key, _ = await keys.create_key(deps.db, "telegram-bot", deps.clock())
    return {rpc.MEMORY_KEY_PROP: key.id}


def structured_clone(value: Any) -> Any:
    """What crosses the RPC boundary: plain JSON-shaped data only (anything else fails here)."""
    return json.loads(json.dumps(value, allow_nan=False))


async def test_save_get_and_search_speak_the_client_interface(deps: Deps) -> None:
    props = await bot_props(deps)
    messages = [
        {"role": "user", "content": "My sister Ana lives in Porto.", "id": "u1", "metadata": {"update_id": 9}},
        {"role": "assistant", "content": "Noted: Ana lives in Porto.", "id": "a1"},
    ]
    ack = await rpc.save_bound_memory(deps, props, "chat-7", messages, {"chat_id": 7})
    assert structured_clone(ack) == ack
    assert ack["message_ids"] == ["u1", "a1"] and ack["messages_accepted"] == 2 and ack["updated_at"] > 0

    page = await rpc.get_bound_memory(deps, props, "chat-7", {"limit": 1, "offset": 0})
    assert structured_clone(page) == page
    assert (page["session_id"], page["limit"], page["offset"]) == ("chat-7", 1, 0)
    [newest] = page["items"]
    assert newest["id"] == "a1" and newest["metadata"] == {"chat_id": 7}
    older = (await rpc.get_bound_memory(deps, props, "chat-7", {"limit": 5.0, "offset": 1}))["items"]
    assert [m["metadata"] for m in older] == [{"chat_id": 7, "update_id": 9}]

    found = await rpc.search_bound_memory(deps, props, "where does Ana live", {"limit": 3, "sessionId": "chat-7"})
    assert structured_clone(found) == found
    assert any("Porto" in r["text"] for r in found["items"])
    assert len(found["items"]) <= 3 and found["tokens"] > 0


async def test_a_resent_batch_names_its_ids_again_and_is_stored_once(deps: Deps) -> None:
    props = await bot_props(deps)
    batch = [{"role": "user", "content": "The boiler code is 4417.", "id": "same"}, {"role": "user", "content": "x", "memory": False}]
    first = await rpc.save_bound_memory(deps, props, None, batch)
    again = await rpc.save_bound_memory(deps, props, None, batch)
    assert first["message_ids"] == again["message_ids"] == ["same", None]
    assert (first["messages_accepted"], again["messages_accepted"]) == (1, 0)
    page = await rpc.get_bound_memory(deps, props, None)
    assert [m["id"] for m in page["items"]] == ["same"]


@pytest.mark.parametrize("props", [None, {}, {"memoryKeyId": ""}, {"memoryKeyId": "key_unknown"}, "key_x"])
async def test_a_binding_without_a_known_key_gets_nothing(deps: Deps, props: Any) -> None:
    with pytest.raises(Unauthorized):
        await rpc.get_bound_memory(deps, props, None)


async def test_a_revoked_key_stops_the_binding(deps: Deps) -> None:
    props = await bot_props(deps)
    await rpc.save_bound_memory(deps, props, None, [{"role": "user", "content": "hi"}])
    await keys.revoke_key(deps.db, props[rpc.MEMORY_KEY_PROP], deps.clock(), deps.reads)
    with pytest.raises(Unauthorized):
        await rpc.search_bound_memory(deps, props, "hi")


@pytest.mark.parametrize(
    "options", [{"limit": 0}, {"limit": 1.5}, {"limit": True}, {"limit": "5"}, {"offset": -1}]
)
async def test_options_must_be_whole_numbers(deps: Deps, options: dict[str, Any]) -> None:
    props = await bot_props(deps)
    with pytest.raises(InvalidField):
        await rpc.get_bound_memory(deps, props, None, options)


async def test_an_offset_past_what_the_store_can_count_is_bad_input(deps: Deps) -> None:
    props = await bot_props(deps)
    with pytest.raises(InvalidInput):
        await rpc.get_bound_memory(deps, props, None, {"offset": 3 * 10**30})


async def test_session_id_follows_the_one_id_rule(deps: Deps) -> None:
    props = await bot_props(deps)
    for bad in ("", " ", "x" * 201, "tab\there", 4.5, True, ["a"]):
        with pytest.raises(InvalidField, match="session_id"):
            await rpc.save_bound_memory(deps, props, bad, [{"role": "user", "content": "hi"}])
        with pytest.raises(InvalidField, match="session_id"):
            await rpc.search_bound_memory(deps, props, "hi", {"sessionId": bad})
    # A JS number is the id its digits spell, as on every surface.
    saved = await rpc.save_bound_memory(deps, props, 42, [{"role": "user", "content": "hi"}])
    assert (await rpc.get_bound_memory(deps, props, "42"))["items"][0]["id"] == saved["message_ids"][0]
