"""Reading a session nothing was written to answers empty and creates no vault."""

from __future__ import annotations

from pathlib import Path

from memory_support import Memvault


def vault_files(memvault: Memvault) -> set[str]:
    return {p.name for p in (Path(memvault.deps.settings.data_dir) / "vaults").glob("*.sqlite3")}


async def test_reads_of_never_written_sessions_answer_empty_and_create_no_vault(memvault: Memvault) -> None:
    stored = await memvault.client.post(
        "/v1/memory", json={"messages": [{"role": "user", "content": "The red kite nests by the quarry."}]},
        headers=memvault.auth,
    )
    assert stored.status_code == 200
    before = vault_files(memvault)
    for i in range(20):
        read = await memvault.client.get("/v1/memory", params={"session_id": f"new-{i}"}, headers=memvault.auth)
        assert read.status_code == 200 and read.json()["items"] == []
        found = await memvault.client.post(
            "/v1/memory/search", json={"query": "red kite quarry", "session_id": f"new-{i}"}, headers=memvault.auth
        )
        assert found.status_code == 200
        # The core vault still answers beside the session nobody wrote to.
        assert any("red kite" in item["text"] for item in found.json()["items"])
    assert vault_files(memvault) == before


async def test_a_session_written_once_is_read_back(memvault: Memvault) -> None:
    headers = {**memvault.auth, "X-Session-ID": "trip"}
    message = {"role": "user", "content": "The ferry to the island leaves at dawn."}
    assert (await memvault.client.post("/v1/memory", json={"messages": [message]}, headers=headers)).status_code == 200
    read = await memvault.client.get("/v1/memory", params={"session_id": "trip"}, headers=memvault.auth)
    assert [item["content"] for item in read.json()["items"]] == [message["content"]]
    found = await memvault.client.post(
        "/v1/memory/search", json={"query": "ferry island dawn", "session_id": "trip"}, headers=memvault.auth
    )
    assert any("ferry" in item["text"] for item in found.json()["items"])


async def test_clearing_or_forgetting_in_a_never_written_session_creates_no_vault(memvault: Memvault) -> None:
    headers = {**memvault.auth, "X-Session-ID": "kept"}
    message = {"role": "user", "content": "The kettle is descaled every Sunday.", "id": "m-1"}
    assert (await memvault.client.post("/v1/memory", json={"messages": [message]}, headers=headers)).status_code == 200
    before = vault_files(memvault)
    for i in range(10):
        cleared = await memvault.client.delete("/v1/memory", params={"session_id": f"new-{i}"}, headers=memvault.auth)
        assert cleared.status_code == 200 and cleared.json()["cleared_vaults"] == 0
        forgot = await memvault.client.post(
            "/v1/memory/forget", json={"ids": ["m-1"], "session_id": f"new-{i}"}, headers=memvault.auth
        )
        assert forgot.status_code == 200 and forgot.json()["not_found"] == ["m-1"]
        gone = await memvault.client.delete("/v1/memory/m-1", params={"session_id": f"new-{i}"}, headers=memvault.auth)
        assert gone.status_code == 200 and gone.json()["forgotten"] == []
    assert vault_files(memvault) == before
    # The written session is still there to clear and forget in.
    forgot = await memvault.client.post("/v1/memory/forget", json={"ids": ["m-1"], "session_id": "kept"},
                                        headers=memvault.auth)
    assert forgot.json()["forgotten"] == ["m-1"]
    cleared = await memvault.client.delete("/v1/memory", params={"session_id": "kept"}, headers=memvault.auth)
    assert cleared.json()["cleared_vaults"] == 1
