"""The privacy walls attacked from a user's seat through `memvault mcp` over stdio and the
`memvault` command line: keys and brain tokens made with the CLI, the server spawned as an MCP
client's config spawns it (the secrets in its environment), and hand-written JSON-RPC lines."""

from __future__ import annotations

import json
import os
import select
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError
from mcp_support import answer, refusal
from test_local_server import MEMVAULT, environment

B_CORE = "Biscuit the terrier sleeps in the laundry basket."
B_TRIP = "The cabin door code is hidden behind the harbour painting."
FAMILY = "Grandma Ines turns ninety on the third of June."
BUSINESS = "Invoice 48213 from the Fenwick bakery is settled."
WAIT = 60.0


@dataclass(frozen=True)
class Folder:
    path: Path
    key_a: str
    key_b: str
    writer: str
    business_reader: str

    def secrets(self) -> list[str]:
        return [self.key_a, self.key_b, self.writer, self.business_reader]


def memvault(folder: Path, *args: str, stdin: str | None = None, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(MEMVAULT), *args], env={**environment(folder), **extra}, input=stdin,
                          capture_output=True, text=True, timeout=WAIT)


def made(folder: Path, *args: str) -> str:
    done = memvault(folder, *args)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def make_folder(path: Path) -> Folder:
    return Folder(
        path=path,
        key_a=made(path, "keys", "create", "--label", "a"),
        key_b=made(path, "keys", "create", "--label", "b"),
        writer=made(path, "brain-token", "create", "--scopes", "business,family,personal,shared", "--writer"),
        business_reader=made(path, "brain-token", "create", "--scopes", "business"),
    )


@asynccontextmanager
async def stdio(folder: Path, errlog: TextIO, key: str = "", token: str = "") -> AsyncIterator[ClientSession]:
    """`memvault mcp` with its secrets in its environment, as the README's client config gives them."""
    env = {**environment(folder), "MEMVAULT_KEY": key, "MEMVAULT_BRAIN_TOKEN": token}
    parameters = StdioServerParameters(command=str(MEMVAULT), args=["mcp"], env=env)
    async with stdio_client(parameters, errlog=errlog) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        yield session


def text_of(result: Any) -> str:
    return json.dumps(result.structured_content) + " ".join(getattr(block, "text", "") for block in result.content)


async def read_error(session: ClientSession, uri: str) -> str:
    with pytest.raises(MCPError) as refused:
        await session.read_resource(uri)
    return str(refused.value)


SESSION_LOOKALIKES = ["trip", "TRIP", "Trip", " trip", "trip/", "trip/..", "../trip", "./trip", "%74rip", "trip%2F",
                      "tr\u0456p", "\uff54\uff52\uff49\uff50", "trip\u200b", "key_b:session:trip", "..", "."]


async def test_key_a_learns_nothing_of_key_b(tmp_path: Path) -> None:
    folder = make_folder(tmp_path)
    log = tmp_path.parent / f"{tmp_path.name}-stderr.log"
    with log.open("w") as errlog:
        async with stdio(tmp_path, errlog, folder.key_b, folder.writer) as b:
            (b_core,) = answer(await b.call_tool("memory_store", {"note": B_CORE}))["message_ids"]
            (b_trip,) = answer(await b.call_tool("memory_store", {"note": B_TRIP, "session_id": "trip"}))["message_ids"]
            family = answer(await b.call_tool("brain_write", {"facts": [{"content": FAMILY, "scope": "family"}]}))
            answer(await b.call_tool("brain_write", {"facts": [{"content": BUSINESS, "scope": "business"}]}))
        (family_id,) = family["ids"]

        async with stdio(tmp_path, errlog, folder.key_a, folder.business_reader) as a:
            seen: list[str] = []
            for session_id in SESSION_LOOKALIKES:
                for query in ("cabin door code harbour painting", "Biscuit terrier laundry"):
                    result = await a.call_tool("memory_search", {"query": query, "session_id": session_id})
                    seen.append(text_of(result))
            for naming_b in ({"key": folder.key_b}, {"memory_key": folder.key_b}, {"X-Memory-Key": folder.key_b}):
                seen.append(text_of(await a.call_tool("memory_search", {"query": "Biscuit terrier", **naming_b})))
            forgot = answer(await a.call_tool("memory_forget", {"ids": [b_core, b_trip]}))
            assert forgot == {"forgotten": [], "not_found": [b_core, b_trip]}
            forgot_in_trip = answer(await a.call_tool("memory_forget", {"ids": [b_trip], "session_id": "trip"}))
            assert forgot_in_trip["forgotten"] == []

            for arguments in ({"q": "Grandma Ines June"}, {"q": "Grandma Ines June", "scope": "family"},
                              {"q": "Grandma Ines June", "mode": "hybrid", "scopes": ["family"]}):
                seen.append(text_of(await a.call_tool("brain_search", arguments)))
            seen.append(text_of(await a.call_tool("brain_recall", {"q": "Grandma Ines June", "budget": 3000})))
            absent = "mem-0000000000000000"
            for part in ("body", "history"):
                assert (await read_error(a, f"memvault://facts/{family_id}/{part}")
                        == await read_error(a, f"memvault://facts/{absent}/{part}"))
            assert (refusal(await a.call_tool("brain_retire", {"id": family_id, "reason": "x"}))
                    == refusal(await a.call_tool("brain_retire", {"id": absent, "reason": "x"})))
            for uri in (f"memvault://facts/{family_id.replace('-', '%2D')}/body", "memvault://facts/..%2F/body",
                        "memvault://memory/core", "memvault://facts//body", "file:///etc/passwd"):
                seen.append(await read_error(a, uri))
            assert (await a.list_resources()).resources == []

        everything_a_saw = "\n".join(seen)
        for private in ("Biscuit", "cabin door", "Grandma", family_id, *folder.secrets()):
            assert private not in everything_a_saw, private
        assert "Fenwick bakery" in everything_a_saw  # the reader's own scope is read

    exported = memvault(tmp_path, "export", "--key", folder.key_b)
    assert exported.returncode == 0 and B_CORE in exported.stdout and B_TRIP in exported.stdout
    logged = log.read_text()
    assert "Traceback" not in logged and not any(secret in logged for secret in folder.secrets())


async def test_a_revoked_key_or_token_is_refused_from_the_next_call(tmp_path: Path) -> None:
    folder = make_folder(tmp_path)
    (key_id, token_id) = (made(tmp_path, "keys", "list").splitlines()[0].split("\t")[0],
                          made(tmp_path, "brain-token", "list").splitlines()[0].split("\t")[0])
    with open(os.devnull, "w") as errlog:
        async with stdio(tmp_path, errlog, folder.key_a, folder.writer) as a:
            answer(await a.call_tool("memory_store", {"note": "The spare tyre is under the boot floor."}))
            answer(await a.call_tool("brain_search", {"q": "tyre"}))
            assert memvault(tmp_path, "keys", "revoke", key_id).returncode == 0
            assert memvault(tmp_path, "brain-token", "revoke", token_id).returncode == 0
            revoked = refusal(await a.call_tool("memory_search", {"query": "spare tyre"}))
            assert "unauthorized" in revoked and "tyre" not in revoked
            assert "unauthorized" in refusal(await a.call_tool("brain_search", {"q": "tyre"}))
        async with stdio(tmp_path, errlog, "mk_" + "x" * 43, "bt_" + "y" * 43) as unknown:
            assert refusal(await unknown.call_tool("memory_search", {"query": "spare tyre"})) == revoked


def test_the_cli_applies_the_same_checks(tmp_path: Path) -> None:
    folder = make_folder(tmp_path)
    stored = memvault(tmp_path, "import", "-", "--key", folder.key_b, "--session", "trip",
                      stdin=json.dumps({"role": "user", "content": B_TRIP, "id": "b1"}) + "\n")
    assert stored.returncode == 0, stored.stderr
    for session_id in ("TRIP", "../trip", "trip/", "tr\u0456p"):
        found = memvault(tmp_path, "search", "cabin door code", "--session", session_id, MEMVAULT_KEY=folder.key_a)
        assert "cabin door" not in found.stdout + found.stderr, session_id
    forgot = memvault(tmp_path, "forget", "b1", "--session", "trip", MEMVAULT_KEY=folder.key_a)
    assert json.loads(forgot.stdout) == {"forgotten": [], "not_found": ["b1"]}
    assert B_TRIP not in memvault(tmp_path, "export", MEMVAULT_KEY=folder.key_a).stdout

    key_b_id = made(tmp_path, "keys", "list").splitlines()[1].split("\t")[0]
    assert memvault(tmp_path, "keys", "revoke", key_b_id).returncode == 0
    refusals: dict[str, set[str]] = {"revoked or unknown": set(), "not a key's shape": set()}
    for kind, key, command in [("revoked or unknown", folder.key_b, ["export"]),
                               ("revoked or unknown", folder.key_b, ["forget", "b1"]),
                               ("revoked or unknown", "mk_" + "z" * 43, ["export"]),
                               ("not a key's shape", folder.writer, ["stats"])]:
        done = memvault(tmp_path, *command, MEMVAULT_KEY=key)
        assert done.returncode == 2 and done.stdout == "", (command, done.stdout)
        assert key not in done.stderr and "Traceback" not in done.stderr
        refusals[kind].add(done.stderr.strip().splitlines()[-1])
    assert all(len(lines) == 1 for lines in refusals.values()), refusals


@contextmanager
def raw_mcp(folder: Folder) -> Iterator[subprocess.Popen[bytes]]:
    env = {**environment(folder.path), "MEMVAULT_KEY": folder.key_a, "MEMVAULT_BRAIN_TOKEN": folder.writer}
    process = subprocess.Popen([str(MEMVAULT), "mcp"], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait(WAIT)
        for stream in (process.stdin, process.stdout, process.stderr):
            if stream is not None:
                stream.close()


def send(process: subprocess.Popen[bytes], line: bytes | dict[str, Any]) -> None:
    assert process.stdin is not None
    process.stdin.write((line if isinstance(line, bytes) else json.dumps(line).encode()) + b"\n")
    process.stdin.flush()


# What each process wrote after the last line read (read straight from its descriptor: a buffered
# reader could hold a line that select no longer sees).
_UNREAD: dict[int, bytes] = {}


def receive(process: subprocess.Popen[bytes]) -> dict[str, Any]:
    assert process.stdout is not None
    descriptor = process.stdout.fileno()
    unread, deadline = _UNREAD.pop(descriptor, b""), time.monotonic() + WAIT
    while b"\n" not in unread:
        ready, _, _ = select.select([descriptor], [], [], max(0.0, deadline - time.monotonic()))
        assert ready, "no answer"
        chunk = os.read(descriptor, 1 << 16)
        assert chunk, "the server closed stdout"
        unread += chunk
    line, _, _UNREAD[descriptor] = unread.partition(b"\n")
    received: dict[str, Any] = json.loads(line)
    return received


def request(number: int, method: str, params: Any = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": number, "method": method, **({} if params is None else {"params": params})}


def test_malformed_json_rpc_is_answered_and_the_session_goes_on(tmp_path: Path) -> None:
    folder = make_folder(tmp_path)
    with raw_mcp(folder) as process:
        send(process, request(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                                "clientInfo": {"name": "attacker", "version": "1"}}))
        assert receive(process)["id"] == 1
        send(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})

        send(process, b"not json at all " + folder.key_b.encode())
        assert receive(process) == {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
        send(process, b"{" + b"a" * 2_000_000)
        assert receive(process)["error"]["code"] == -32600
        for number, shape in [(2, [folder.key_b]), (3, "memory_search"), (4, 7)]:
            send(process, request(number, "tools/call", shape))
            answered = receive(process)
            assert answered["id"] == number and answered["error"]["code"] == -32600, answered
            assert folder.key_b not in json.dumps(answered)
        send(process, b"[1, 2, 3]")
        assert receive(process)["error"]["code"] == -32600
        send(process, request(5, "no/such/method"))
        assert receive(process)["error"]["code"] == -32601
        send(process, request(6, "tools/call", {"name": "memory_search", "arguments": {"query": "x", "budget_tokens": "all"}}))
        assert receive(process)["result"]["isError"] is True
        send(process, request(7, "tools/call", {"name": "memory_search", "arguments": {"query": "x" * 1_000_000}}))
        assert "longer than" in receive(process)["result"]["content"][0]["text"]
        send(process, request(8, "tools/list"))
        assert len(receive(process)["result"]["tools"]) > 0

        send(process, request(9, "tools/call", {"name": "memory_store", "arguments": {"note": "Left mid-call."}}))
        assert process.stdin is not None
        process.stdin.close()
        assert process.wait(WAIT) == 0
        assert process.stderr is not None
        logged = process.stderr.read().decode()
    assert "Traceback" not in logged and not any(secret in logged for secret in folder.secrets())
    checked = memvault(tmp_path, "check")
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_what_json_rpc_or_the_line_limit_forbids_is_answered_and_the_session_goes_on(tmp_path: Path) -> None:
    folder = make_folder(tmp_path)
    bad_id = {"jsonrpc": "2.0", "id": None, "error": {"code": -32600,
                                                      "message": "Invalid request: an id is a string or an integer"}}
    with raw_mcp(folder) as process:
        send(process, request(0, "ping"))
        assert receive(process) == {"jsonrpc": "2.0", "id": 0, "result": {}}
        for method in ("tools/list", "tools/call", "resources/read"):
            send(process, request(0, method, {"name": "memory_search", "arguments": {"query": "x"}}))
            assert receive(process) == {"jsonrpc": "2.0", "id": 0, "error": {
                "code": -32600, "message": "Invalid request: the session is not initialized; send initialize first"}}
        send(process, request(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                                "clientInfo": {"name": "strict", "version": "1"}}))
        assert receive(process)["id"] == 1
        send(process, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        for request_id in ({"n": 1}, [1], None, 1.5, True):
            send(process, {"jsonrpc": "2.0", "id": request_id, "method": "tools/list"})
            assert receive(process) == bad_id, request_id
        for batch in ([request(2, "ping")], []):
            send(process, json.dumps(batch).encode())
            refused = receive(process)
            assert refused["id"] is None and refused["error"]["code"] == -32600 and "batches" in refused["error"]["message"]
        send(process, b'{"jsonrpc": "2.0", "id": 3, "method": "ping", "params": {"x": "\xff"}}')
        assert receive(process) == {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}

        # A note twice the size of the largest request body is refused, not stored.
        send(process, request(4, "tools/call", {"name": "memory_store", "arguments": {"note": "n" * (2 << 20)}}))
        too_long = receive(process)
        assert too_long["id"] is None and too_long["error"]["code"] == -32600, too_long
        assert "larger than 1048576 bytes" in too_long["error"]["message"]
        # Blank lines and an unknown notification get no answer: the next answer is the ping's.
        for unanswered in (b"", b"  \t ", json.dumps({"jsonrpc": "2.0", "method": "notifications/no_such"}).encode()):
            send(process, unanswered)
        send(process, json.dumps(request(5, "ping")).encode() + b"\r")
        assert receive(process) == {"jsonrpc": "2.0", "id": 5, "result": {}}
        send(process, request(6, "tools/call", {"name": "memory_search", "arguments": {"query": "n"}}))
        assert receive(process)["result"]["structuredContent"]["items"] == []
        send(process, request(7, "tools/call", {"name": "no_such_tool", "arguments": {}}))
        assert receive(process) == {"jsonrpc": "2.0", "id": 7, "error": {"code": -32602, "message": "Unknown tool: no_such_tool"}}
        assert process.stdin is not None
        process.stdin.close()
        assert process.wait(WAIT) == 0


def test_secrets_in_argv_are_also_offered_through_the_environment() -> None:
    """`--key` in argv shows in `ps`; every command that takes it takes MEMVAULT_KEY instead."""
    for command in (["mcp"], ["search", "x"], ["export"], ["forget", "x"], ["stats"], ["import", "-"]):
        shown = subprocess.run([str(MEMVAULT), *command, "--help"], capture_output=True, text=True, timeout=WAIT)
        assert "MEMVAULT_KEY" in shown.stdout, command
    assert "MEMVAULT_BRAIN_TOKEN" in subprocess.run([str(MEMVAULT), "mcp", "--help"], capture_output=True, text=True,
                                                    timeout=WAIT).stdout
