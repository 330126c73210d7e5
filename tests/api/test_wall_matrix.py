"""The walls, attacked alike over every surface: the same attacks made over HTTP, over the Worker's
RPC methods and over MCP, by a caller holding its own memory key (granted the business scope of
the brain) and its own brain credential (business, writer), against another key's conversation
memory and the family scope. Each attack must be refused the same way on every surface that has
the operation, or answered with nothing of the other key's or the walled scope's; nothing of the
victim's may change; and no answer may carry the victim's text."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from memvault.api.app import create_app
from memvault.api.mcp.tools import mcp_server
from memvault.core.credentials import keys
from memvault.core.credentials.callers import CallerTokens
from memvault.core.deps import Deps
from memvault.core.errors import MemvaultError
from memvault.core.settings import load_settings
from memvault.runtime import rpc
from memvault.runtime.local import build_local_deps, close_local_deps

SURFACES = ("http", "rpc", "mcp")
MESSAGE = "The harbour gate code word is PELICAN."
FACT = "The family safe key hangs behind the lighthouse painting."
# What no answer to the attacker may hold.
VICTIMS_TEXT = ("PELICAN", "lighthouse")
# Names that only look like the walled scope, and shapes a scope must not take.
LOOKALIKES: tuple[Any, ...] = ("Family", "family ", " family", "ｆａｍｉｌｙ", "famіly", "family\u200b", "*", "",
                               "business/../family", "business,family", ["family"], {"scope": "family"}, 7)


@dataclass(frozen=True)
class Outcome:
    code: str | None  # the error's code; None for an answer
    text: str


@dataclass
class World:
    deps: Deps
    http: httpx.AsyncClient
    mcp: Client | None
    victim: str
    attacker: str
    attacker_id: str
    token: str  # the attacker's brain credential
    brain_token_id: str
    message_ids: list[str]
    fact_id: str
    receipt: str
    mcp_tokens: CallerTokens = field(default_factory=CallerTokens)

    async def over_http(self, method: str, path: str, secret: str, **kwargs: Any) -> Outcome:
        response = await self.http.request(method, path, headers={"Authorization": f"Bearer {secret}"}, **kwargs)
        code = None if response.is_success else response.json()["error"]["code"]
        return Outcome(code, response.text)

    async def over_rpc(self, call: Awaitable[dict[str, Any]]) -> Outcome:
        try:
            return Outcome(None, json.dumps(await call, ensure_ascii=False))
        except MemvaultError as refused:
            return Outcome(refused.code, refused.message)

    async def over_mcp(self, tokens: CallerTokens, tool: str, arguments: dict[str, Any]) -> Outcome:
        self.mcp_tokens = tokens
        assert self.mcp is not None
        result = await self.mcp.call_tool(tool, arguments)
        text = json.dumps(result.structured_content, ensure_ascii=False) if not result.is_error else str(result.content)
        if not result.is_error:
            return Outcome(None, text)
        refusal = result.content[0].text  # type: ignore[union-attr]
        # The SDK puts "Error executing tool NAME: " before the refusal ("code: message").
        return Outcome(refusal.rsplit(f"{tool}: ", 1)[-1].split(":", 1)[0], refusal)

    async def mcp_resource(self, tokens: CallerTokens, uri: str) -> Outcome:
        self.mcp_tokens = tokens
        assert self.mcp is not None
        try:
            return Outcome(None, str((await self.mcp.read_resource(uri)).contents))
        except MCPError as refused:
            return Outcome(str((refused.error.data or {}).get("code")), refused.error.message)


Attack = Callable[[World], Awaitable[Outcome]]


@dataclass(frozen=True)
class Row:
    """One attack: what it must come to (an error code, or None for an answer that shows nothing
    of the victim's), and how it is made on each surface that has the operation."""

    name: str
    expect: str | None
    http: Attack | None = None
    rpc: Attack | None = None
    mcp: Attack | None = None


def memory_rows() -> list[Row]:
    def key(w: World) -> CallerTokens:
        return CallerTokens(memory_key=w.attacker)

    def bound(w: World) -> dict[str, str]:
        return {rpc.MEMORY_KEY_PROP: w.attacker_id}

    search = {"query": "harbour gate code word PELICAN", "session_id": "trip"}
    return [
        Row("search the victim's session by its name", None,
            http=lambda w: w.over_http("POST", "/v1/memory/search", w.attacker, json=search),
            rpc=lambda w: w.over_rpc(rpc.search_bound_memory(w.deps, bound(w), search["query"], {"sessionId": "trip"})),
            mcp=lambda w: w.over_mcp(key(w), "memory_search", search)),
        Row("read the victim's session by its name", None,
            http=lambda w: w.over_http("GET", "/v1/memory", w.attacker, params={"session_id": "trip"}),
            rpc=lambda w: w.over_rpc(rpc.get_memory(w.deps, w.attacker, "trip"))),
        Row("forget the victim's message ids", None,
            http=lambda w: w.over_http("POST", "/v1/memory/forget", w.attacker, json={"ids": w.message_ids}),
            rpc=lambda w: w.over_rpc(rpc.forget_bound_memory(w.deps, bound(w), w.message_ids)),
            mcp=lambda w: w.over_mcp(key(w), "memory_forget", {"ids": w.message_ids})),
        Row("forget the victim's message ids in its session", None,
            http=lambda w: w.over_http("DELETE", f"/v1/memory/{w.message_ids[1]}", w.attacker, params={"session_id": "trip"}),
            rpc=lambda w: w.over_rpc(rpc.forget_memory(w.deps, w.attacker, w.message_ids, "trip")),
            mcp=lambda w: w.over_mcp(key(w), "memory_forget", {"ids": w.message_ids, "session_id": "trip"})),
        Row("clear the victim's session by its name", None,
            http=lambda w: w.over_http("DELETE", "/v1/memory", w.attacker, params={"session_id": "trip"})),
        Row("the victim's receipt by its id", "not_found",
            http=lambda w: w.over_http("GET", f"/v1/memory/receipts/{w.receipt}", w.attacker)),
        Row("a brain credential as a memory key", "unauthorized",
            http=lambda w: w.over_http("POST", "/v1/memory/search", w.token, json=search),
            rpc=lambda w: w.over_rpc(rpc.search_memory(w.deps, w.token, search["query"])),
            mcp=lambda w: w.over_mcp(CallerTokens(memory_key=w.token), "memory_search", search)),
        Row("the attacker's key id in place of its secret", "unauthorized",
            http=lambda w: w.over_http("POST", "/v1/memory/search", w.attacker_id, json=search),
            rpc=lambda w: w.over_rpc(rpc.search_memory(w.deps, w.attacker_id, search["query"])),
            mcp=lambda w: w.over_mcp(CallerTokens(memory_key=w.attacker_id), "memory_search", search)),
        Row("binding props naming a brain credential's id", "unauthorized",
            rpc=lambda w: w.over_rpc(rpc.search_bound_memory(w.deps, {rpc.MEMORY_KEY_PROP: w.brain_token_id}, "x"))),
        Row("binding props naming the key as a number", "unauthorized",
            rpc=lambda w: w.over_rpc(rpc.search_bound_memory(w.deps, {rpc.MEMORY_KEY_PROP: 1}, "x"))),
    ]


def brain_rows(holder: str) -> list[Row]:
    """The attacks on the family scope, made with the attacker's memory key (``holder`` "key", its
    brain grant) or its brain credential ("token")."""

    def secret(w: World) -> str:
        return w.attacker if holder == "key" else w.token

    def tokens(w: World) -> CallerTokens:
        return CallerTokens(brain_token=secret(w))

    def write_row(name: str, expect: str, payload: Callable[[World], dict[str, Any]]) -> Row:
        return Row(f"{name} ({holder})", expect,
                   http=lambda w: w.over_http("POST", "/v1/brain/facts", secret(w), json=payload(w)),
                   rpc=lambda w: w.over_rpc(rpc.brain_write(w.deps, secret(w), payload(w))),
                   mcp=lambda w: w.over_mcp(tokens(w), "brain_write", payload(w)))

    query = "family safe key lighthouse painting"
    rows = [
        Row(f"search the walled scope, hybrid ({holder})", None,
            http=lambda w: w.over_http("POST", "/v1/brain/facts/search", secret(w), json={"query": query, "mode": "hybrid"}),
            rpc=lambda w: w.over_rpc(rpc.brain_search(w.deps, secret(w), query, "hybrid", 50)),
            mcp=lambda w: w.over_mcp(tokens(w), "brain_search", {"query": query, "mode": "hybrid"})),
        Row(f"recall the walled scope ({holder})", None,
            http=lambda w: w.over_http("POST", "/v1/brain/recall", secret(w), json={"query": query}),
            rpc=lambda w: w.over_rpc(rpc.brain_recall(w.deps, secret(w), query)),
            mcp=lambda w: w.over_mcp(tokens(w), "brain_recall", {"query": query})),
        Row(f"retire the walled fact ({holder})", "not_found",
            http=lambda w: w.over_http("POST", f"/v1/brain/facts/{w.fact_id}/retire", secret(w), json={"reason": "x"}),
            rpc=lambda w: w.over_rpc(rpc.brain_retire(w.deps, secret(w), w.fact_id, "x")),
            mcp=lambda w: w.over_mcp(tokens(w), "brain_retire", {"id": w.fact_id, "reason": "x"})),
        Row(f"the walled fact's body ({holder})", "not_found",
            http=lambda w: w.over_http("GET", f"/v1/brain/facts/{w.fact_id}/body", secret(w)),
            mcp=lambda w: w.mcp_resource(tokens(w), f"memvault://facts/{w.fact_id}/body")),
        Row(f"the walled fact's history ({holder})", "not_found",
            http=lambda w: w.over_http("GET", f"/v1/brain/facts/{w.fact_id}/history", secret(w)),
            mcp=lambda w: w.mcp_resource(tokens(w), f"memvault://facts/{w.fact_id}/history")),
        Row(f"export ({holder})", None, http=lambda w: w.over_http("GET", "/v1/brain/export", secret(w))),
        Row(f"pull the walled source ({holder})", None,
            http=lambda w: w.over_http("POST", "/v1/brain/sync", secret(w),
                                       json={"direction": "pull", "source": "notes:family", "since": 0})),
        Row(f"push the walled source empty ({holder})", None,
            http=lambda w: w.over_http("POST", "/v1/brain/sync", secret(w),
                                       json={"direction": "push", "source": "notes:family", "items": []})),
        write_row("write into the walled scope", "forbidden", lambda w: {
            "source": "forged", "scope": "family", "facts": [{"content": "The safe moved."}]}),
        write_row("one fact of a batch naming the walled scope", "forbidden", lambda w: {
            "source": "forged", "scope": "business", "facts": [{"content": "ok"}, {"content": "no", "scope": "family"}]}),
        write_row("reconcile the walled source from an own scope", None, lambda w: {
            "source": "notes:family", "scope": "business", "reconcile": True, "facts": [{"content": "decoy"}]}),
        write_row("supersede the walled fact", "invalid_request", lambda w: {
            "source": "forged", "scope": "business", "facts": [{"content": "The safe moved.", "supersedes": w.fact_id}]}),
    ]
    for lookalike in LOOKALIKES:
        rows.append(write_row(f"scope {lookalike!r}", "invalid_request", lambda w, scope=lookalike: {
            "source": "forged", "scope": scope, "facts": [{"content": "The safe moved."}]}))
    return rows


ROWS = [*memory_rows(), *brain_rows("key"), *brain_rows("token")]


@pytest.fixture
async def world(tmp_path: Path) -> AsyncIterator[World]:
    deps = build_local_deps(load_settings({"MEMVAULT_DATA_DIR": str(tmp_path), "MEMVAULT_EMBEDDER": "hash"}))
    try:
        _, victim = await keys.create_key(deps.db, "victim", deps.clock(), brain_scopes=("family",), brain_writer=True)
        attacker, attacker_secret = await keys.create_key(deps.db, "attacker", deps.clock(), brain_scopes=("business",),
                                                          brain_writer=True)
        stored, token = await keys.create_brain_key(deps.db, "attacker", ("business",), True, deps.clock())
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=create_app(deps)), base_url="http://walls.test") as http:
            world = World(deps, http, None, victim, attacker_secret, attacker.id, token, stored.id, [], "", "")
            await _seed(world)
            yield world
    finally:
        await close_local_deps(deps)


async def _seed(w: World) -> None:
    auth = {"Authorization": f"Bearer {w.victim}"}
    for session in (None, "trip"):
        stored = await w.http.post("/v1/memory", json={"messages": [{"role": "user", "content": MESSAGE}],
                                                       "session_id": session}, headers=auth)
        w.message_ids += stored.json()["message_ids"]
    written = await w.http.post("/v1/brain/facts", json={"source": "notes:family", "scope": "family", "content": FACT},
                                headers=auth)
    w.fact_id = written.json()["ids"][0]
    searched = await w.http.post("/v1/memory/search", json={"query": "where does the family safe key hang? lighthouse painting"}, headers=auth)
    w.receipt = searched.headers["X-Memory-Receipt"]
    assert "lighthouse" in searched.text  # what the attacks must never see


async def _victims_memory_is_intact(w: World) -> None:
    auth = {"Authorization": f"Bearer {w.victim}"}
    for session in (None, "trip"):
        page = (await w.http.get("/v1/memory", params={"session_id": session} if session else {}, headers=auth)).json()
        assert [item["content"] for item in page["items"]] == [MESSAGE], session
    history = (await w.http.get(f"/v1/brain/facts/{w.fact_id}/history", headers=auth)).json()
    assert [version["current"] for version in history["chain"]] == [True]
    family = await w.deps.db.query("SELECT id FROM memory WHERE scope = 'family'")
    assert [row["id"] for row in family] == [w.fact_id]
    receipt = await w.http.get(f"/v1/memory/receipts/{w.receipt}", headers=auth)
    assert receipt.status_code == 200 and "lighthouse" in receipt.text


@pytest.mark.parametrize("surface", SURFACES)
async def test_every_attack_is_refused_alike_and_shows_nothing_on(world: World, surface: str) -> None:
    async with Client(mcp_server(world.deps, lambda _ctx: world.mcp_tokens)) as mcp:
        world.mcp = mcp  # an MCP client in this process; the calls pass the tokens each attack sets
        failures = [failure for row in ROWS for failure in await _attacked(world, row, surface)]
    assert not failures, "\n".join(failures)
    assert sum(getattr(row, surface) is not None for row in ROWS) >= 20
    await _victims_memory_is_intact(world)


async def _attacked(world: World, row: Row, surface: str) -> list[str]:
    """What went wrong when ``row``'s attack was made over ``surface`` (nothing, if it has no such call)."""
    attack = getattr(row, surface)
    if attack is None:
        return []
    failures = []
    outcome = await attack(world)
    if outcome.code != row.expect:
        failures.append(f"{row.name}: expected {row.expect}, got {outcome.code}: {outcome.text[:200]}")
    leaked = [text for text in VICTIMS_TEXT if text in outcome.text]
    if leaked:
        failures.append(f"{row.name}: the answer holds {leaked}: {outcome.text[:200]}")
    return failures


async def test_a_walled_fact_and_one_that_never_was_are_refused_in_the_same_words(world: World) -> None:
    never = "mem-" + "0" * 16
    for secret in (world.attacker, world.token):
        for path in ("/v1/brain/facts/{}/body", "/v1/brain/facts/{}/history"):
            walled = await world.over_http("GET", path.format(world.fact_id), secret)
            absent = await world.over_http("GET", path.format(never), secret)
            assert walled == absent
        walled = await world.over_rpc(rpc.brain_retire(world.deps, secret, world.fact_id, "x"))
        absent = await world.over_rpc(rpc.brain_retire(world.deps, secret, never, "x"))
        assert walled == absent
        supersede = {"source": "s", "scope": "business", "facts": [{"content": "c", "supersedes": world.fact_id}]}
        walled = await world.over_rpc(rpc.brain_write(world.deps, secret, supersede))
        absent = await world.over_rpc(rpc.brain_write(world.deps, secret, {**supersede, "facts": [
            {"content": "c", "supersedes": never}]}))
        assert walled.code == absent.code and walled.text.replace(world.fact_id, never) == absent.text
    receipt = await world.over_http("GET", f"/v1/memory/receipts/{world.receipt}", world.attacker)
    assert receipt == await world.over_http("GET", "/v1/memory/receipts/" + "0" * 32, world.attacker)
