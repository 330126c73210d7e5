"""Conversation memory in real workerd: /health, the memory API through the Vault Durable Object,
the D1 mirror following each vault change, and purge, with a key stored in local D1."""

from __future__ import annotations

import uuid
from typing import Any

from tier_stack import MainStack
from wrangler_dev import wait_for

# Enough text for the pending buffer to cut chunks (about 300 tokens each), so rows reach the mirror.
LONG_TURN = " ".join(f"On day {n} the lighthouse keeper logged calm seas, a passing ferry and gulls." for n in range(40))


def session() -> str:
    return "s-" + uuid.uuid4().hex[:12]


def store(stack: MainStack, session_id: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    done = stack.api("POST", "/v1/memory", stack.secrets.memory_key, json={"messages": messages},
                     headers={"X-Session-ID": session_id})
    assert done.status_code == 200, done.text
    return dict(done.json())


def search(stack: MainStack, session_id: str, query: str) -> dict[str, Any]:
    done = stack.api("POST", "/v1/memory/search", stack.secrets.memory_key,
                     json={"query": query, "session_id": session_id})
    assert done.status_code == 200, done.text
    return dict(done.json())


def vault_stats(stack: MainStack, session_id: str) -> dict[str, int]:
    """Rows the session's vault holds (messages and chunks) beside the rows its mirror in D1 holds."""
    done = stack.api("GET", "/v1/memory/stats", stack.secrets.memory_key)
    assert done.status_code == 200, done.text
    found = done.json()["vaults"].get(f"session:{session_id}")
    if found is None:
        return {}
    vault, mirror = found["vault"], found["mirror"]
    return {"vault_rows": vault["messages"] + vault["chunks"], "mirror_rows": mirror["rows"],
            "vault_buffered": vault["buffered_tokens"], "mirror_buffered": mirror["buffered_tokens"]}


def test_health_names_every_binding_secret_and_the_cron(stack: MainStack) -> None:
    answer = stack.api("GET", "/health")
    assert answer.status_code == 200, answer.text
    body = answer.json()
    assert body["runtime"] == "workers" and body["missing"] == []
    assert all(body["bindings"].values()) and set(body["bindings"]) == {"DB", "VAULT", "VECTORIZE", "BODIES", "AI", "CACHE"}
    assert body["secrets"] == {"MEMVAULT_BRAIN_CREDENTIALS": True} and body["cron_triggers"] == 1
    assert body["crons"] == stack.settings["triggers"]["crons"]
    # The version-metadata binding names the version answering, which safe deploy waits for.
    assert isinstance(body["version_id"], str) and body["version_id"]


def test_an_unknown_key_is_refused_and_nothing_is_stored(stack: MainStack) -> None:
    refused = stack.api("POST", "/v1/memory", "mk_not-a-key", json={"messages": [{"role": "user", "content": "hi"}]})
    assert refused.status_code == 401 and refused.json()["error"]["code"]
    bad = stack.api("POST", "/v1/memory", stack.secrets.memory_key, json={"messages": [{"role": "robot", "content": "x"}]})
    assert bad.status_code == 422, bad.text


def test_store_search_list_forget_and_clear_through_the_vault(stack: MainStack) -> None:
    sid = session()
    stored = store(stack, sid, [{"role": "user", "content": "My cat is called Biscuit."},
                                {"role": "assistant", "content": "Biscuit is a lovely name for a cat."},
                                {"role": "user", "content": "The invoice number is INV-77120."}])
    assert stored["messages_accepted"] == 3
    cat_id, _, invoice_id = stored["message_ids"]
    found = search(stack, sid, "what is my cat called?")["items"]
    assert found and "Biscuit" in found[0]["text"]
    listed = stack.api("GET", "/v1/memory", stack.secrets.memory_key, params={"session_id": sid}).json()["items"]
    assert listed[0]["content"] == "The invoice number is INV-77120."

    forgotten = stack.api("DELETE", f"/v1/memory/{invoice_id}", stack.secrets.memory_key, params={"session_id": sid})
    assert forgotten.json() == {"forgotten": [invoice_id], "not_found": []}
    assert not [i for i in search(stack, sid, "INV-77120 invoice")["items"] if "INV-77120" in i["text"]]
    listed = stack.api("GET", "/v1/memory", stack.secrets.memory_key, params={"session_id": sid}).json()["items"]
    assert invoice_id not in {m["id"] for m in listed} and cat_id in {m["id"] for m in listed}

    cleared = stack.api("DELETE", "/v1/memory", stack.secrets.memory_key, params={"session_id": sid})
    assert cleared.status_code == 200, cleared.text
    assert search(stack, sid, "Biscuit")["items"] == []
    assert stack.api("GET", "/v1/memory", stack.secrets.memory_key, params={"session_id": sid}).json()["items"] == []


def test_the_mirror_in_d1_follows_the_vault(stack: MainStack) -> None:
    sid = session()
    stored = store(stack, sid, [{"role": "user", "content": LONG_TURN},
                                {"role": "assistant", "content": "What a steady log of quiet days."}])
    assert stored["chunks_stored"] >= 1

    def mirrored() -> dict[str, int] | None:
        stats = vault_stats(stack, sid)
        in_step = stats and stats["vault_rows"] == stats["mirror_rows"] > 0
        return stats if in_step and stats["vault_buffered"] == stats["mirror_buffered"] else None

    before = wait_for("the mirror to hold the vault's rows", mirrored, 60)
    forgotten = stack.api("DELETE", f"/v1/memory/{stored['message_ids'][1]}", stack.secrets.memory_key,
                          params={"session_id": sid})
    assert forgotten.json()["forgotten"] == [stored["message_ids"][1]]
    after = wait_for("the mirror to follow the forget", lambda: (s := mirrored()) and s != before and s, 60)
    assert after["mirror_rows"] == after["vault_rows"] and after["mirror_buffered"] == after["vault_buffered"]


def test_purge_removes_older_memory_from_vault_and_mirror(stack: MainStack) -> None:
    sid = session()
    store(stack, sid, [{"role": "user", "content": LONG_TURN, "timestamp": "2021-03-01T10:00:00Z"},
                       {"role": "assistant", "content": "Those were calm weeks.", "timestamp": "2021-03-01T10:01:00Z"}])
    wait_for("the mirror to hold the old rows",
             lambda: (s := vault_stats(stack, sid)) and s["mirror_rows"] == s["vault_rows"] > 0, 60)
    purged = stack.api("POST", "/v1/memory/purge", stack.secrets.memory_key, json={"older_than": "2022-01-01T00:00:00Z"})
    assert purged.status_code == 200, purged.text
    stats = wait_for("the purge to reach the mirror",
                     lambda: (s := vault_stats(stack, sid)) and s["mirror_rows"] == s["vault_rows"] and s, 60)
    assert stats["vault_rows"] == 0
    assert search(stack, sid, "lighthouse keeper")["items"] == []


def test_a_non_ascii_session_header_names_the_vault_the_same_id_names_elsewhere(stack: MainStack) -> None:
    session_id = f"café ☕ {uuid.uuid4().hex[:8]}"
    stored = stack.api("POST", "/v1/memory", stack.secrets.memory_key,
                       json={"messages": [{"role": "user", "content": "The kettle is on the stove.", "id": "k/1?"}]},
                       headers={"X-Session-ID": session_id.encode()})  # the UTF-8 bytes, as clients send them
    assert stored.status_code == 200, stored.text
    page = stack.api("GET", "/v1/memory", stack.secrets.memory_key, params={"session_id": session_id})
    assert page.status_code == 200 and [m["id"] for m in page.json()["items"]] == ["k/1?"], page.text
    forgotten = stack.api("DELETE", "/v1/memory/k%2F1%3F", stack.secrets.memory_key, params={"session_id": session_id})
    assert forgotten.json() == {"forgotten": ["k/1?"], "not_found": []}, forgotten.text
