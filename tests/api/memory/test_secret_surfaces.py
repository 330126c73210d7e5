"""The secret gate on every surface that writes conversation memory: a sample of the secret
corpus (every family, both splits) sent over HTTP, RPC, MCP and the CLI import — as a message's
content, its model, its metadata (as text, as JSON text inside text, a card as a JSON number) — is
gone from everything the data folder holds and from every log line, while the look-alikes come back
verbatim. A session id carrying a secret is refused on every read and write path of every surface
before a vault is opened or named."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from memory_support import Memvault

from log_capture import Logs
from memvault import cli
from memvault.api.mcp.tools import mcp_server
from memvault.core import memory
from memvault.core.credentials.callers import CallerTokens
from memvault.core.errors import InvalidInput
from memvault.core.memory.metadata import MAX_METADATA_CHARS
from memvault.runtime import rpc

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from secret_corpus import HARMLESS, SECRETS, Case, gated, leaks, sample

SECRET_SAMPLE = sample(gated(SECRETS))
KEPT_SAMPLE = sample(HARMLESS)
CARD_AS_NUMBER = 4111111111111111


def messages_of(cases: list[Case]) -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": case.text, "id": f"m{n}", "model": case.text[:200],
         "metadata": {"note": case.text, "nested": json.dumps({"inner": case.text}), "card": CARD_AS_NUMBER}}
        for n, case in enumerate(cases)
    ]


# A run of printable characters in a file: a stored text is one (SQLite keeps a value's bytes
# together), where three digits between two binary bytes (a search index's numbers) are chance.
_TEXT_RUN = re.compile(r"[^\x00-\x1f\x7f\ufffd]{4,}")


def stored(data_dir: Path) -> str:
    """Everything the data folder holds, as the runs of text in each file, under its name."""
    return "\n".join(f"{path.name}\n" + "\n".join(_TEXT_RUN.findall(path.read_bytes().decode("utf-8", "replace")))
                     for path in sorted(data_dir.rglob("*")) if path.is_file())


async def exported(memvault: Memvault) -> str:
    return json.dumps([record async for record in memory.export_memory(memvault.deps, memvault.key_id)],
                      ensure_ascii=False)


def _mcp(memvault: Memvault) -> Any:
    return mcp_server(memvault.deps, lambda _: CallerTokens(memory_key=memvault.key))


def batches(messages: list[dict[str, Any]], size: int = 20) -> list[list[dict[str, Any]]]:
    """The messages in requests each under the server's body limit, as a client splits a long import."""
    return [messages[start:start + size] for start in range(0, len(messages), size)]


async def via_http(memvault: Memvault, messages: list[dict[str, Any]]) -> None:
    for batch in batches(messages):
        response = await memvault.client.post("/v1/memory", json={"messages": batch}, headers=memvault.auth)
        assert response.status_code == 200, response.text


async def via_rpc(memvault: Memvault, messages: list[dict[str, Any]]) -> None:
    await rpc.save_memory(memvault.deps, memvault.key, None, messages, None)


async def via_mcp(memvault: Memvault, messages: list[dict[str, Any]]) -> None:
    await _mcp(memvault).call_tool("memory_store", {"messages": messages})


STORE_SURFACES: dict[str, Callable[[Memvault, list[dict[str, Any]]], Awaitable[None]]] = {
    "http": via_http, "rpc": via_rpc, "mcp": via_mcp,
}


@pytest.mark.parametrize("surface", STORE_SURFACES)
async def test_no_secret_of_the_sample_is_stored_or_logged(
    memvault: Memvault, logs: Logs, tmp_path: Path, surface: str
) -> None:
    await STORE_SURFACES[surface](memvault, messages_of(SECRET_SAMPLE))
    held = await exported(memvault)
    assert leaks(SECRET_SAMPLE, held) == []
    read = await memvault.client.get("/v1/memory", params={"limit": 500}, headers=memvault.auth)
    found = await memvault.client.post("/v1/memory/search", json={"query": "password token key secret card", "limit": 50},
                                       headers=memvault.auth)
    assert read.status_code == found.status_code == 200, (read.text, found.text)
    assert "[redacted:" in found.text and leaks(SECRET_SAMPLE, read.text + found.text) == []
    assert str(CARD_AS_NUMBER) not in held
    assert leaks(SECRET_SAMPLE, stored(tmp_path)) == []
    assert leaks(SECRET_SAMPLE, "\n".join(logs.lines)) == []
    assert held.count("[redacted:") >= 3 * len(SECRET_SAMPLE)


@pytest.mark.parametrize("surface", STORE_SURFACES)
async def test_the_look_alikes_are_stored_verbatim(memvault: Memvault, surface: str) -> None:
    # A text longer than a message's metadata may hold (a very long line) goes as its content alone.
    messages = [{"role": "user", "content": case.text, "metadata": _note(case.text)} for case in KEPT_SAMPLE]
    await STORE_SURFACES[surface](memvault, messages)
    records = [r async for r in memory.export_memory(memvault.deps, memvault.key_id) if r["type"] != "chunk"]
    # Texts that differ only in case and spacing are one message said again under another id.
    assert {r.get("content", r.get("text")) for r in records} <= {c.text for c in KEPT_SAMPLE}
    assert sum(1 + len(r["said_again"]) for r in records) == len(KEPT_SAMPLE)
    assert [r["metadata"] for r in records] == [_note(r.get("content", r.get("text"))) for r in records]


def _note(text: str) -> dict[str, str] | None:
    note = {"note": text}
    return note if len(json.dumps(note, ensure_ascii=False)) <= MAX_METADATA_CHARS else None


def test_no_secret_of_the_sample_is_stored_by_the_cli_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], logs: Logs
) -> None:
    data = tmp_path / "data"
    monkeypatch.setenv("MEMVAULT_DATA_DIR", str(data))
    monkeypatch.setenv("MEMVAULT_EMBEDDER", "hash")
    assert cli.main(["keys", "create", "--label", "cli"]) == 0
    key = capsys.readouterr().out.strip()
    source = tmp_path / "chat.jsonl"
    source.write_text("\n".join(json.dumps(m) for m in messages_of(SECRET_SAMPLE)) + "\n", encoding="utf-8")
    assert cli.main(["import", str(source), "--key", key]) == 0
    printed = capsys.readouterr()
    assert cli.main(["export", "--key", key]) == 0
    held = capsys.readouterr().out
    assert held.count("[redacted:") >= 3 * len(SECRET_SAMPLE)
    for text in (held, stored(data), printed.out + printed.err, "\n".join(logs.lines)):
        assert leaks(SECRET_SAMPLE, text) == []


# Texts of the sample that are printable and short enough to be ids, so only the gate refuses them
# (as an id: a secret is known by its context, as in any text).
SESSION_SECRETS = [case for case in SECRET_SAMPLE if case.text.isprintable() and len(case.text) <= 200]


def _http_calls(memvault: Memvault, session: str) -> list[Callable[[], Awaitable[Any]]]:
    # A header carries UTF-8 bytes (the server decodes them as its id rule says).
    auth, header = memvault.auth, {**memvault.auth, "X-Session-ID": session.encode()}
    note = {"messages": [{"role": "user", "content": "hello"}]}
    client = memvault.client
    return [
        lambda: client.post("/v1/memory", json=note, headers=header),
        lambda: client.post("/v1/memory", json={**note, "session_id": session}, headers=auth),
        lambda: client.get("/v1/memory", params={"session_id": session}, headers=auth),
        lambda: client.post("/v1/memory/search", json={"query": "hello", "session_id": session}, headers=auth),
        lambda: client.request("DELETE", "/v1/memory", params={"session_id": session}, headers=auth),
        lambda: client.request("DELETE", "/v1/memory/m1", params={"session_id": session}, headers=auth),
    ]


def _core_calls(memvault: Memvault, server: Any, session: str) -> list[Callable[[], Awaitable[Any]]]:
    deps, key = memvault.deps, memvault.key
    note = [{"role": "user", "content": "hello"}]
    return [
        lambda: rpc.save_memory(deps, key, session, note, None),
        lambda: rpc.get_memory(deps, key, session),
        lambda: rpc.search_memory(deps, key, "hello", None, session),
        lambda: rpc.forget_memory(deps, key, ["m1"], session),
        lambda: server.call_tool("memory_store", {"note": "hello", "session_id": session}),
        lambda: server.call_tool("memory_search", {"query": "hello", "session_id": session}),
        lambda: server.call_tool("memory_forget", {"ids": ["m1"], "session_id": session}),
    ]


# The cases in groups, each group on one server: a server per case cost more than its checks.
SESSION_GROUPS = [SESSION_SECRETS[start : start + 16] for start in range(0, len(SESSION_SECRETS), 16)]


@pytest.mark.parametrize("cases", SESSION_GROUPS, ids=[f"{group[0].family}-{group[-1].family}" for group in SESSION_GROUPS])
async def test_a_session_id_carrying_a_secret_is_refused_on_every_path_before_a_vault_is_named(
    memvault: Memvault, logs: Logs, tmp_path: Path, cases: list[Case]
) -> None:
    # One MCP server answers every case, as one serves every call it gets (making one takes 70 ms).
    server = _mcp(memvault)
    for case in cases:
        for index, call in enumerate(_http_calls(memvault, case.text)):
            response = await call()
            if index == 0 and ", " in case.text:
                # In the header, ", " reads as the header given twice (Workers' join of two): refused first.
                assert response.status_code == 400 and "more than once" in response.json()["error"]["message"]
            else:
                assert response.status_code == 422, (case.family, response.text)
                assert "session_id" in response.json()["error"]["message"]
            assert leaks([case], response.text) == []
        for call in _core_calls(memvault, server, case.text):
            # RPC raises the refusal; MCP called in process raises it as a tool error. MCP hands a
            # tool an argument that is JSON text parsed, so a JSON object is refused as not text.
            with pytest.raises(Exception, match=r"session_id (?:looks like it contains a secret|must be text)") as refused:
                await call()
            assert isinstance(refused.value, InvalidInput) or "invalid_request" in str(refused.value), case.family
            assert leaks([case], str(refused.value)) == []
    assert await memory.vaults_of(memvault.deps, memvault.key_id) == [f"{memvault.key_id}:core"]
    assert leaks(cases, stored(tmp_path)) == []
    assert leaks(cases, "\n".join(logs.lines)) == []
