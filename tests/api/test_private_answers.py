"""The walls where they meet HTTP itself, attacked over the real local server: what a shared cache
or the browser may keep of an answer, a credential header given twice, and memvault's own secrets
pasted into what it stores."""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest

from local_http import memvault_serve

ADMIN = "admin-" + "q7Rz" * 8
MCP_INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "walls", "version": "1"}}}


@dataclass(frozen=True)
class Server:
    url: str
    victim: str  # a memory key granted the family scope, writer
    attacker: str  # a memory key granted the business scope, writer
    brain: str  # a brain credential for business

    def call(self, method: str, path: str, secret: str | None = None, headers: list[tuple[str, str]] | None = None,
             **kwargs: object) -> httpx.Response:
        sent = [("Authorization", f"Bearer {secret}")] if secret else []
        return httpx.request(method, self.url + path, headers=sent + (headers or []), timeout=30, **kwargs)  # type: ignore[arg-type]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    data = tmp_path_factory.mktemp("walls")
    env = {**os.environ, "MEMVAULT_DATA_DIR": str(data), "MEMVAULT_EMBEDDER": "hash", "MEMVAULT_ADMIN_TOKEN": ADMIN,
           # Nothing here may reach a provider: a routed call that got past its refusal fails to connect.
           "MEMVAULT_OPENAI_BASE_URL": "http://127.0.0.1:9"}
    with memvault_serve(env) as url:
        def created(path: str, body: dict[str, object], field: str) -> str:
            answer = httpx.post(url + path, json=body, headers={"Authorization": f"Bearer {ADMIN}"}, timeout=30)
            assert answer.status_code == 200, answer.text
            return str(answer.json()[field])

        yield Server(url,
                     created("/v1/admin/keys", {"label": "victim", "brain_scopes": ["family"], "brain_writer": True}, "key"),
                     created("/v1/admin/keys", {"label": "attacker", "brain_scopes": ["business"], "brain_writer": True},
                             "key"),
                     created("/v1/admin/credentials", {"name": "b", "scopes": ["business"], "writer": True}, "token"))


def test_no_answer_that_holds_a_callers_data_may_be_kept_by_a_cache(server: Server) -> None:
    """A shared cache keys an answer by its URL; `X-Memory-Key` is not `Authorization`, so only
    `no-store` keeps one key's answer from being handed to the next caller of the same URL (and
    keeps a new key's secret out of the browser's disk cache)."""
    stored = server.call("POST", "/v1/memory", server.victim, json={"messages": [
        {"role": "user", "content": "The spare key is under the blue flowerpot."}]})
    assert stored.status_code == 200, stored.text
    searched = server.call("POST", "/v1/memory/search", headers=[("X-Memory-Key", server.victim)],
                           json={"query": "where is the spare key"})
    assert "flowerpot" in searched.text
    receipt = searched.headers["X-Memory-Receipt"]
    fact = server.call("POST", "/v1/brain/facts", server.victim,
                       json={"source": "notes", "scope": "family", "content": "The alarm code changes on Mondays."})
    assert fact.status_code == 200, fact.text
    fact_id = fact.json()["ids"][0]
    answers = {
        "store": stored, "search": searched,
        "read": server.call("GET", "/v1/memory", headers=[("X-Memory-Key", server.victim)]),
        "stats": server.call("GET", "/v1/memory/stats", server.victim),
        "receipt": server.call("GET", f"/v1/memory/receipts/{receipt}", server.victim),
        "receipts": server.call("GET", "/v1/memory/receipts", server.victim),
        "usage": server.call("GET", "/v1/usage", server.victim),
        "me": server.call("GET", "/portal/me", server.victim),
        "brain write": fact,
        "brain search": server.call("POST", "/v1/brain/facts/search", server.victim, json={"query": "alarm code"}),
        "brain recall": server.call("POST", "/v1/brain/recall", server.victim, json={"query": "alarm code"}),
        "fact body": server.call("GET", f"/v1/brain/facts/{fact_id}/body", server.victim),
        "fact history": server.call("GET", f"/v1/brain/facts/{fact_id}/history", server.victim),
        "export": server.call("GET", "/v1/brain/export", server.victim),
        "proposals": server.call("GET", "/v1/brain/proposals", server.victim),
        "new key": server.call("POST", "/v1/admin/keys", ADMIN, json={"label": "fresh"}),
        "keys": server.call("GET", "/v1/admin/keys", ADMIN),
        "admin usage": server.call("GET", "/v1/admin/usage", ADMIN),
        "refusal": server.call("GET", f"/v1/memory/receipts/{receipt}", server.attacker),
        "routed refusal": server.call("POST", "/v1/chat/completions", headers=[("X-Memory-Key", "mk_" + "x" * 43)],
                                      json={"model": "m", "messages": [{"role": "user", "content": "hi"}]}),
        "mcp": server.call("POST", "/mcp", server.victim, json=MCP_INITIALIZE,
                           headers=[("Accept", "application/json, text/event-stream")]),
    }
    assert all(answer.status_code < 500 for answer in answers.values()), {n: a.status_code for n, a in answers.items()}
    kept = {name: answer.headers.get("Cache-Control") for name, answer in answers.items()
            if answer.headers.get("Cache-Control") != "no-store"}
    assert not kept, kept
    # What is public may be cached as it says: the portal's page is revalidated, never stored blind.
    assert server.call("GET", "/portal").headers["Cache-Control"] == "no-cache"


@pytest.mark.parametrize("name", ["X-Memory-Key", "x-memory-key", "Authorization"])
def test_a_memory_key_given_twice_is_refused_whichever_comes_first(server: Server, name: str) -> None:
    """Two values of one credential header name two callers: the local server would take the first,
    Workers join them with a comma, a proxy in front may check the last. None of them is chosen."""
    def value(secret: str) -> str:
        return f"Bearer {secret}" if name == "Authorization" else secret

    for first, second in ((server.attacker, server.victim), (server.victim, server.attacker)):
        for method, path, body in (("GET", "/v1/memory", None), ("POST", "/v1/memory/search", {"query": "spare key"}),
                                   ("GET", "/v1/usage", None), ("GET", "/portal/me", None)):
            answer = server.call(method, path, headers=[(name, value(first)), (name, value(second))], json=body)
            assert answer.status_code == 400, (path, answer.text)
            assert answer.json()["error"]["code"] == "invalid_request"
            assert "more than once" in answer.json()["error"]["message"]
            assert "flowerpot" not in answer.text


def test_a_brain_credential_or_session_given_twice_is_refused_on_every_surface(server: Server) -> None:
    twice = [("X-Memvault-Brain-Token", server.brain), ("X-Memvault-Brain-Token", server.victim)]
    brain = server.call("POST", "/v1/brain/facts/search", headers=twice, json={"query": "alarm code"})
    assert brain.status_code == 400 and "alarm" not in brain.text
    mcp = server.call("POST", "/mcp", json=MCP_INITIALIZE, headers=[
        ("Accept", "application/json, text/event-stream"), ("X-Memory-Key", server.attacker),
        ("X-Memory-Key", server.victim)])
    assert mcp.status_code == 400, mcp.text
    # The memory router answers in the provider's own envelope, before anything is forwarded.
    routed = server.call("POST", "/v1/chat/completions", headers=[
        ("X-Memory-Key", server.attacker), ("X-Memory-Key", server.victim)],
        json={"model": "m", "messages": [{"role": "user", "content": "where is the spare key?"}]})
    assert routed.status_code == 400, routed.text
    assert "more than once" in routed.json()["error"]["message"]
    session = server.call("POST", "/v1/memory", server.attacker, headers=[("X-Session-ID", "a"), ("X-Session-ID", "b")],
                          json={"messages": [{"role": "user", "content": "two sessions at once"}]})
    assert session.status_code == 400, session.text
    assert server.call("GET", "/v1/memory", server.attacker, params={"session_id": "a, b"}).json()["items"] == []


def test_a_header_given_twice_as_workers_hands_it_over_is_refused_too(server: Server) -> None:
    """Workers joins a header given twice into one value, the two with ", " between: read so, it
    is refused as two, and never names a caller or a vault neither value named."""
    joined = f"{server.attacker}, {server.victim}"
    for name, value in (("X-Memory-Key", joined), ("Authorization", f"Bearer {joined}")):
        answer = server.call("GET", "/v1/memory", headers=[(name, value)])
        assert answer.status_code == 400 and "more than once" in answer.json()["error"]["message"], answer.text
    session = server.call("POST", "/v1/memory", server.attacker, headers=[("X-Session-ID", "a, b")],
                          json={"messages": [{"role": "user", "content": "two sessions joined"}]})
    assert session.status_code == 400, session.text
    # Bytes that spell no UTF-8 reach a Worker as U+FFFD: such an id is refused wherever it comes from.
    replaced = server.call("POST", "/v1/memory", server.attacker,
                           headers=[("X-Session-ID", "\ufffd\ufffd".encode())],
                           json={"messages": [{"role": "user", "content": "an id of replacement characters"}]})
    assert replaced.status_code == 422, replaced.text
    assert server.call("GET", "/v1/memory", server.attacker, params={"session_id": "a, b"}).json()["items"] == []


def test_memvaults_own_credentials_never_come_back_from_what_it_stores(server: Server) -> None:
    """A key pasted into a chat or a note is a secret like any vendor's: stored, recalled, or read
    by another holder of the scope, it shows only its breadcrumb."""
    pasted = {"memory key": "mk_" + secrets.token_urlsafe(32), "brain credential": "bt_" + secrets.token_urlsafe(32)}
    for kind, secret in pasted.items():
        text = f"For the deploy bot use {secret} until Friday."
        stored = server.call("POST", "/v1/memory", server.attacker, json={"messages": [{"role": "user", "content": text}]})
        assert stored.status_code == 200, stored.text
        fact = server.call("POST", "/v1/brain/facts", server.attacker,
                           json={"source": f"notes:{kind}", "scope": "business", "content": text})
        assert fact.status_code == 200, fact.text
        read_back = [
            server.call("GET", "/v1/memory", server.attacker).text,
            server.call("POST", "/v1/memory/search", server.attacker, json={"query": "deploy bot Friday"}).text,
            server.call("POST", "/v1/brain/facts/search", server.brain, json={"query": "deploy bot Friday"}).text,
            server.call("GET", "/v1/brain/export", server.brain).text,
        ]
        assert "deploy bot" in read_back[0] and "deploy bot" in read_back[2], read_back
        assert not [answer for answer in read_back if secret in answer], kind
