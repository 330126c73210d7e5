"""The KV read cache in real workerd: a repeated search is answered from KV once its first answer
is kept there, and a write to the vault is seen at once by the next search."""

from __future__ import annotations

import time
import uuid

from tier_stack import MainStack


def test_a_repeated_search_comes_from_kv_and_a_write_invalidates_it(stack: MainStack) -> None:
    sid = "cache-" + uuid.uuid4().hex[:8]
    key, headers = stack.secrets.memory_key, {"X-Session-ID": sid}
    stored = stack.api("POST", "/v1/memory", key, json={"messages": [{"role": "user", "content": "The spare key is under the blue pot."}]},
                       headers=headers)
    assert stored.status_code == 200, stored.text
    query = {"query": "where is the spare key?", "session_id": sid}
    first = stack.api("POST", "/v1/memory/search", key, json=query).json()
    assert not first["metrics"].get("cached")
    # The answer is kept in KV after it went out (waitUntil): the next search may come first.
    deadline = time.monotonic() + 30
    while not (again := stack.api("POST", "/v1/memory/search", key, json=query).json())["metrics"].get("cached"):
        assert time.monotonic() < deadline, "a repeated search never came from KV"
    assert [i["text"] for i in again["items"]] == [i["text"] for i in first["items"]]

    moved = stack.api("POST", "/v1/memory", key, json={"messages": [{"role": "user", "content": "I moved the spare key to the shed."}]},
                      headers=headers)
    assert moved.status_code == 200, moved.text
    after = stack.api("POST", "/v1/memory/search", key, json=query).json()
    assert not after["metrics"].get("cached")
    assert "I moved the spare key to the shed." in [i["text"] for i in after["items"]]
    stats = stack.api("GET", "/v1/memory/stats", key).json()["cache"]
    assert stats["hits"] >= 1
