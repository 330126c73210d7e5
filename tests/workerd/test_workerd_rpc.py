"""memvault's RPC methods in real workerd, called by another Worker over a service binding (the
tier's JavaScript caller): the client interface, whose memory key is the one the binding's props
name; the credential-first methods; and what a caller without props, with a wrong key or with bad
input gets back. Arguments and results cross real RPC, as structured clones."""

from __future__ import annotations

import uuid
from typing import Any

from tier_stack import MainStack


def result_of(answer: dict[str, Any]) -> Any:
    assert "error" not in answer, answer["error"][-600:]
    return answer["result"]


def test_the_client_interface_uses_the_key_its_props_name(stack: MainStack) -> None:
    sid = "rpc-" + uuid.uuid4().hex[:8]
    saved = result_of(stack.rpc("saveMemory", sid, [{"role": "user", "content": "The gate code is 4821."},
                                                   {"role": "assistant", "content": "Noted.", "memory": False}],
                                {"source": "rpc"}))
    assert saved["messages_accepted"] == 1 and saved["message_ids"][1] is None
    page = result_of(stack.rpc("getMemory", sid, {"limit": 10}))
    assert page["session_id"] == sid
    assert [(m["role"], m["content"], m["metadata"]) for m in page["items"]] == [("user", "The gate code is 4821.", {"source": "rpc"})]
    found = result_of(stack.rpc("searchMemory", "what is the gate code?", {"sessionId": sid, "limit": 3}))
    assert found["items"] and found["items"][0]["text"] == "The gate code is 4821."
    # The props named the tier's key: the same memory over HTTP with that key's secret.
    over_http = stack.api("GET", "/v1/memory", stack.secrets.memory_key, params={"session_id": sid}).json()
    assert [m["content"] for m in over_http["items"]] == ["The gate code is 4821."]


def test_the_credential_first_methods_store_search_list_and_forget(stack: MainStack) -> None:
    sid = "rpc-" + uuid.uuid4().hex[:8]
    key = stack.secrets.memory_key
    saved = result_of(stack.rpc("save_memory", key, sid, [{"role": "user", "content": "The spare tyre is in the loft."},
                                                          {"role": "user", "content": "The jack is in the boot."}]))
    tyre, jack = saved["message_ids"]
    found = result_of(stack.rpc("search_memory", key, "where is the spare tyre?", 5, sid))
    assert found["items"][0]["text"] == "The spare tyre is in the loft."
    assert result_of(stack.rpc("forget_memory", key, [tyre], sid)) == {"forgotten": [tyre], "not_found": []}
    listed = result_of(stack.rpc("get_memory", key, sid))
    assert [m["id"] for m in listed["items"]] == [jack]


def test_callers_without_a_valid_key_or_with_bad_input_get_the_domain_error_and_nothing_changes(stack: MainStack) -> None:
    sid = "rpc-" + uuid.uuid4().hex[:8]
    unbound = stack.rpc("getMemory", sid, bound=False)
    assert "Unauthorized" in unbound.get("error", "") and "memory key id" in unbound["error"]
    wrong = stack.rpc("save_memory", "mk_not-a-key", sid, [{"role": "user", "content": "sneaky"}])
    assert "Unauthorized" in wrong.get("error", "")
    bad = stack.rpc("saveMemory", sid, [{"role": "robot", "content": "beep"}])
    assert "InvalidField" in bad.get("error", "") or "InvalidInput" in bad.get("error", "")
    bad_option = stack.rpc("searchMemory", "beep", {"limit": 0.5})
    assert "limit must be a whole number" in bad_option.get("error", ""), bad_option
    # Half a surrogate pair, as a JavaScript string holds one when it is cut inside an emoji.
    halved = stack.rpc("saveMemory", sid, [{"role": "user", "content": "cut \ud83d"}])
    assert "messages[0].content holds a lone UTF-16 surrogate" in halved.get("error", ""), halved
    assert "lone UTF-16 surrogate" in stack.rpc("searchMemory", "\udc00 where", {}).get("error", "")
    assert result_of(stack.rpc("get_memory", stack.secrets.memory_key, sid))["items"] == []
    walled = stack.rpc("brain_search", "bt_not-a-credential", "anything")
    assert "Unauthorized" in walled.get("error", "")
