"""A session id names the same vault whichever carrier brought it: the `X-Session-ID` header (read as
the UTF-8 a client sends), the body, the query string, RPC arguments."""

from __future__ import annotations

from memory_support import Memvault

from memvault.runtime import rpc

SESSION = "café ☕ chat"


async def test_one_session_by_header_body_query_and_rpc(memvault: Memvault) -> None:
    message = {"role": "user", "content": "The harbour lamp is lit at dusk.", "id": "lamp"}
    # httpx sends a header given as bytes as they are: the UTF-8 of the id.
    headers = {**memvault.auth, "X-Session-ID": SESSION.encode()}
    stored = await memvault.client.post("/v1/memory", json={"messages": [message]}, headers=headers)
    assert stored.status_code == 200, stored.text
    by_body = await memvault.client.post(
        "/v1/memory", json={"messages": [{**message, "id": "again", "content": "Dusk, again."}], "session_id": SESSION},
        headers=memvault.auth,
    )
    assert by_body.status_code == 200, by_body.text
    page = (await memvault.client.get("/v1/memory", params={"session_id": SESSION}, headers=memvault.auth)).json()
    assert page["session_id"] == SESSION and [m["id"] for m in page["items"]] == ["again", "lamp"]
    found = await memvault.client.post("/v1/memory/search", json={"query": "harbour lamp", "session_id": SESSION},
                                       headers=memvault.auth)
    assert any(item["vault"] == "session" for item in found.json()["items"])
    over_rpc = await rpc.get_memory(memvault.deps, memvault.key, SESSION)
    assert over_rpc == page
    stats = (await memvault.client.get("/v1/memory/stats", headers=memvault.auth)).json()
    assert set(stats["vaults"]) == {"core", f"session:{SESSION}"}


async def test_a_header_and_a_body_naming_different_sessions_are_refused(memvault: Memvault) -> None:
    body = {"messages": [{"role": "user", "content": "x"}], "session_id": "one"}
    same = await memvault.client.post("/v1/memory", json=body, headers={**memvault.auth, "X-Session-ID": "one"})
    assert same.status_code == 200
    other = await memvault.client.post("/v1/memory", json=body, headers={**memvault.auth, "X-Session-ID": "two"})
    assert other.status_code == 422 and "session_id" in other.json()["error"]["message"]
    latin = await memvault.client.post("/v1/memory", json={"messages": body["messages"]},
                                       headers={**memvault.auth, "X-Session-ID": b"caf\xe9"})
    assert latin.status_code == 422 and "X-Session-ID is not UTF-8 text" in latin.json()["error"]["message"]
    stats = (await memvault.client.get("/v1/memory/stats", headers=memvault.auth)).json()
    assert set(stats["vaults"]) == {"core", "session:one"}
