"""The scope walls, property-tested: facts land in random scopes, a random credential reads them
through every read path (HTTP and the core functions the RPC methods call), and nothing outside
the credential's scopes ever comes back. Referer and friends never identify anyone."""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from brain_env import ALL_SCOPES, CREDENTIALS, Brain, brain_fixture, close_brain, open_brain  # noqa: F401
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memvault.core import brain as core
from memvault.core.brain.scopes import auth_of
from memvault.core.errors import NotFound

WORDS = ["invoice", "20028", "NVDA", "Okonkwo", "garden", "passport", "roof", "ledger", "piano", "tax"]

fact_strategy = st.tuples(
    st.sampled_from(ALL_SCOPES),
    st.sampled_from(WORDS),
    st.sampled_from(WORDS),
    st.booleans(),  # pinned
    st.booleans(),  # long enough to go to the blob store
    st.booleans(),  # superseded by a later version
)


def _scopes_of(payload: Any) -> list[str]:
    """Every scope mentioned by any fact-shaped object in a response."""
    found: list[str] = []
    if isinstance(payload, dict):
        if "scope" in payload and "id" in payload:
            found.append(payload["scope"])
        for value in payload.values():
            found += _scopes_of(value)
    elif isinstance(payload, list):
        for value in payload:
            found += _scopes_of(value)
    return found


async def _populate(brain: Brain, facts: list[tuple[str, str, str, bool, bool, bool]]) -> dict[str, str]:
    ids: dict[str, str] = {}
    for n, (scope, w1, w2, pinned, long, superseded) in enumerate(facts):
        text = f"{w1} {w2} note {n}" + (" filler" * 200 if long else "")
        result = await brain.write({"content": text, "scope": scope, "source": f"src:{n}", "pinned": pinned})
        ids[result["ids"][0]] = scope
        if superseded:
            brain.clock.advance(5)
            newer = await brain.write({"content": f"{w2} {w1} revised {n}", "scope": scope, "source": f"src:{n}",
                                       "supersedes": result["ids"][0]})
            ids[newer["ids"][0]] = scope
        brain.clock.advance(5)
    return ids


async def _every_read(brain: Brain, reader: str, query: str, as_of: float) -> list[Any]:
    """Every read path over HTTP and through the core (RPC) functions, each response."""
    http = [
        (await brain.get("/memory/search", reader, q=query, mode=mode, as_of=when)).json()
        for mode in ("keyword", "hybrid") for when in (None, as_of)
    ]
    http.append((await brain.get("/recall", reader, q=query)).json())
    http.append((await brain.get("/recall", reader, q=query, as_of=as_of, budget=500)).json())
    http.append((await brain.get("/memory/skill", reader)).json())
    export = await brain.get("/memory/export", reader)
    http.append([json.loads(line) for line in export.text.splitlines()])
    credential = auth_of(f"tok-{reader}", brain.deps.settings)
    rpc = [
        await core.search_brain(brain.deps, credential, query, "hybrid", None, None, 50),
        await core.search_brain(brain.deps, credential, query, "keyword", as_of, None, 50),
        await core.recall(brain.deps, credential, query, None, None),
        await core.export_rows(brain.deps, credential),
        await core.sync(brain.deps, credential, {"direction": "pull", "source": "src:"}),
    ]
    return [*http, *rpc]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(facts=st.lists(fact_strategy, min_size=1, max_size=7), reader=st.sampled_from(sorted(CREDENTIALS)),
       query=st.sampled_from(WORDS))
def test_no_read_path_returns_a_row_outside_the_credentials_scopes(
    facts: list[tuple[str, str, str, bool, bool, bool]], reader: str, query: str
) -> None:
    allowed = set(CREDENTIALS[reader][0])

    async def scenario(data_dir: Path) -> None:
        brain = await open_brain(data_dir)
        try:
            ids = await _populate(brain, facts)
            as_of = brain.clock.now - 7
            for response in await _every_read(brain, reader, query, as_of):
                assert set(_scopes_of(response)) <= allowed, response
            for fact_id, scope in ids.items():
                body = await brain.get("/memory/body", reader, id=fact_id)
                chain = await brain.get("/memory/history", reader, id=fact_id)
                assert body.status_code == chain.status_code == (200 if scope in allowed else 404)
                if chain.status_code == 200:
                    assert set(_scopes_of(chain.json())) <= allowed
                credential = auth_of(f"tok-{reader}", brain.deps.settings)
                if scope not in allowed:
                    with pytest.raises(NotFound):
                        await core.get_body(brain.deps, credential, fact_id)
                    with pytest.raises(NotFound):
                        await core.history(brain.deps, credential, fact_id)
            # The wall is not over-tight either: export holds exactly the readable rows.
            exported = await core.export_rows(brain.deps, auth_of(f"tok-{reader}", brain.deps.settings))
            assert sorted(r["id"] for r in exported) == sorted(i for i, s in ids.items() if s in allowed)
        finally:
            await close_brain(brain)

    with tempfile.TemporaryDirectory() as data_dir:
        asyncio.run(scenario(Path(data_dir)))


READ_ROUTES = [
    ("GET", "/memory/search?q=invoice"),
    ("GET", "/memory/search?q=invoice&mode=hybrid"),
    ("GET", "/recall?q=invoice"),
    ("GET", "/memory/body?id=mem-0000000000000000"),
    ("GET", "/memory/history?id=mem-0000000000000000"),
    ("GET", "/memory/export"),
    ("GET", "/memory/skill"),
    ("POST", "/memory/sync"),
    ("POST", "/memory/write"),
    ("POST", "/memory/skill"),
]
FORGED = [
    {"Referer": "https://brain.example.com/dashboard"},
    {"Referer": "https://brain.example.com/", "Origin": "https://brain.example.com"},
    {"Referer": "https://brain.example.com/", "Authorization": "Bearer not-a-real-token"},
    {"Referer": "https://brain.example.com/", "Authorization": "Basic dG9rLXdyaXRlcjo="},
    {"Referer": "https://brain.example.com/", "Cookie": "token=tok-writer"},
]


@pytest.mark.parametrize("headers", FORGED, ids=range(len(FORGED)))
@pytest.mark.parametrize(("method", "path"), READ_ROUTES)
async def test_a_forged_referer_gets_nothing(brain: Brain, method: str, path: str, headers: dict[str, str]) -> None:
    await brain.write({"content": "invoice 20028 secret plans", "scope": "business"})
    body = {"direction": "pull", "source": "api"} if path == "/memory/sync" else {"content": "x", "scope": "business"}
    if path == "/memory/skill" and method == "POST":
        body = {"slug": "s", "content": "x", "scope": "business"}
    response = await brain.client.request(method, path, headers=headers, json=body if method == "POST" else None)
    assert response.status_code == 401
    assert "invoice" not in response.text
    assert await brain.count() == 1


async def test_the_token_in_a_query_string_is_ignored(brain: Brain) -> None:
    response = await brain.client.get("/memory/export?token=tok-reader-all&authorization=Bearer%20tok-reader-all")
    assert response.status_code == 401


async def test_the_dedicated_token_header_works_for_rpc_style_callers(brain: Brain) -> None:
    await brain.write({"content": "ledger balanced", "scope": "business"})
    response = await brain.client.get("/memory/search", params={"q": "ledger"},
                                      headers={"X-Memvault-Brain-Token": "tok-business"})
    assert response.status_code == 200 and len(response.json()["results"]) == 1


class RecordingDatabase:
    """Delegates to the real database and remembers every statement it was given."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.seen: list[str] = []

    async def query(self, sql: str, params: Any = ()) -> Any:
        self.seen.append(sql)
        return await self.inner.query(sql, params)

    async def execute(self, sql: str, params: Any = ()) -> Any:
        self.seen.append(sql)
        return await self.inner.execute(sql, params)

    async def batch(self, statements: Any) -> Any:
        self.seen.extend(sql for sql, _ in statements)
        return await self.inner.batch(statements)


async def test_every_read_statement_carries_the_scope_clause(brain: Brain) -> None:
    first = (await brain.write({"content": "invoice 20028 roof", "scope": "business", "source": "files:a.md",
                                "pinned": True}))["ids"][0]
    await brain.write({"content": "invoice 20028 roof, revised", "scope": "business", "source": "files:a.md",
                       "supersedes": first})
    await brain.client.post("/memory/skill", headers=brain.headers("writer"),
                            json={"slug": "s", "content": "invoice steps", "scope": "business"})
    recorder = RecordingDatabase(brain.deps.db)
    brain.deps.db = recorder  # type: ignore[assignment]
    await _every_read(brain, "shared+business", "invoice", brain.clock.now)
    for path in ("/memory/body", "/memory/history"):
        assert (await brain.get(path, "shared+business", id=first)).status_code == 200
    await brain.get("/memory/skill", "shared+business", slug="s")
    reads = [sql for sql in recorder.seen if sql.lstrip().upper().startswith("SELECT")]
    assert len(reads) >= 15
    for sql in reads:
        assert "scope IN (" in sql, sql
