"""HTTP, RPC and the CLI import turn raw messages into memory by the same rules."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from memory_support import Memvault

from memvault import cli
from memvault.core import memory
from memvault.core.errors import InvalidField
from memvault.runtime import rpc


async def exported(memvault: Memvault) -> list[dict[str, object]]:
    return [record async for record in memory.export_memory(memvault.deps, memvault.key_id)]


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, 1e300, "2024-13-45"])
async def test_http_refuses_a_non_finite_or_impossible_timestamp_naming_it(memvault: Memvault, bad: object) -> None:
    body = {"messages": [{"role": "user", "content": "fine"}, {"role": "user", "content": "x", "timestamp": bad}]}
    response = await memvault.client.post(
        "/v1/memory", content=json.dumps(body), headers={**memvault.auth, "content-type": "application/json"}
    )
    assert response.status_code == 422, response.text
    assert "messages[1].timestamp" in response.json()["error"]["message"]
    assert await exported(memvault) == []


async def test_http_search_and_purge_times_go_through_the_same_parser(memvault: Memvault) -> None:
    headers = {**memvault.auth, "content-type": "application/json"}
    search = await memvault.client.post("/v1/memory/search", content='{"query": "x", "now": NaN}', headers=headers)
    assert search.status_code == 422 and "now" in search.json()["error"]["message"]
    purge = await memvault.client.post("/v1/memory/purge", content='{"older_than": Infinity}', headers=headers)
    assert purge.status_code == 422 and "older_than" in purge.json()["error"]["message"]
    purge = await memvault.client.post("/v1/memory/purge", json={"older_than": "1970-01-01T00:00:00"}, headers=headers)
    assert purge.status_code == 200


async def test_http_store_lists_every_message_id_in_order(memvault: Memvault) -> None:
    body = {
        "messages": [
            {"role": "user", "content": "first", "id": "mine-1"},
            {"role": "user", "content": "not kept", "memory": False},
            {"role": "assistant", "content": "second"},
        ]
    }
    result = (await memvault.client.post("/v1/memory", json=body, headers=memvault.auth)).json()
    first, skipped, assigned = result["message_ids"]
    assert (first, skipped) == ("mine-1", None) and isinstance(assigned, str) and assigned
    pending = [r for r in await exported(memvault) if r["type"] == "pending"]
    assert [r["id"] for r in pending] == ["mine-1", assigned]


async def test_rpc_honours_memory_false_iso_timestamps_and_zero(memvault: Memvault) -> None:
    messages = [
        {"role": "user", "content": "iso time", "timestamp": "2024-01-01T00:00:00"},
        {"role": "user", "content": "epoch zero", "timestamp": 0},
        {"role": "user", "content": "never kept", "memory": False},
    ]
    result = await rpc.save_memory(memvault.deps, memvault.key, None, messages, None)
    assert result["message_ids"][2] is None
    kept = {r["content"]: r["timestamp"] for r in await exported(memvault) if r["type"] == "pending"}
    assert kept == {"iso time": 1_704_067_200.0, "epoch zero": 0.0}
    with pytest.raises(InvalidField, match=r"messages\[0\].timestamp"):
        await rpc.save_memory(memvault.deps, memvault.key, None, [{"role": "user", "content": "x", "timestamp": math.nan}], None)


def test_cli_import_takes_timestamp_zero_and_skips_memory_false(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("MEMVAULT_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("MEMVAULT_EMBEDDER", "hash")
    assert cli.main(["keys", "create", "--label", "cli"]) == 0
    key = capsys.readouterr().out.strip()
    source = tmp_path / "chat.jsonl"
    lines = [
        {"role": "user", "content": "at the epoch", "timestamp": 0, "id": "z"},
        {"role": "user", "content": "skip me", "memory": False},
        {"role": "assistant", "content": "an iso one", "timestamp": "2024-01-01"},
    ]
    source.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    assert cli.main(["import", str(source), "--key", key]) == 0
    capsys.readouterr()
    assert cli.main(["export", "--key", key]) == 0
    records = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {r["content"]: r["timestamp"] for r in records} == {"at the epoch": 0.0, "an iso one": 1_704_067_200.0}
    source.write_text(json.dumps({"role": "user", "content": "x", "timestamp": "NaN"}) + "\n")
    assert cli.main(["import", str(source), "--key", key]) == 2
    assert "line 1: timestamp" in capsys.readouterr().err


async def test_identifiers_carrying_a_secret_are_refused_before_anything_is_stored(memvault: Memvault) -> None:
    key_like = "sk-proj-Ab12Cd34Ef56Gh78Ij90KlMnOp"
    body = {"messages": [{"role": "user", "content": "fine", "id": key_like}]}
    response = await memvault.client.post("/v1/memory", json=body, headers=memvault.auth)
    assert response.status_code == 422 and "messages[0].id" in response.json()["error"]["message"]
    assert key_like not in response.text
    card_session = {**memvault.auth, "X-Session-ID": "4111 1111 1111 1111"}
    response = await memvault.client.post("/v1/memory", json={"messages": [{"role": "user", "content": "x"}]}, headers=card_session)
    assert response.status_code == 422 and "session_id" in response.json()["error"]["message"]
    assert await memory.vaults_of(memvault.deps, memvault.key_id) == [f"{memvault.key_id}:core"]
    assert await exported(memvault) == []
